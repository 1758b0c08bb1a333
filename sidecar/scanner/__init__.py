"""The prompt-injection scanner: memory text judged at write and again at load.

``scan.verdict`` and ``scan.scan_text`` are its entry points; the text the rules read is built by
``normalise``, the rules live in ``intent``, ``covert`` and ``patterns``, and ``sections`` splits a
file into the heading sections the scanner judges and the block withholds.
"""
