"""The memory block for the agent's system prompt: assembly within a budget, the prompt-injection
scanner, and rendering of recalled entries.
"""
