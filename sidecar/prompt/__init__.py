"""The memory block for the agent's system prompt: assembly within a budget and rendering of
recalled entries (the injection scanner it runs is ``sidecar.scanner``).
"""
