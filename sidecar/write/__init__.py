"""Writing memory for the agent: path rules, caps, durable writes, reading a file back under the
same rules, and whether the memory sink is usable at all.
"""
