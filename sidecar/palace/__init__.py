"""The memory palace over the files and the journal: where each memory lives (wings and rooms),
the layers of the memory block (identity, essentials, rooms on demand, search), the ingest of
conversation turns (noise filter, classifier), the per-agent diary and the per-agent settings file.

Everything here is plain functions over text, paths and values: the routes (``http/palace.py``)
and the block (``prompt/block.py``) call them, and writes go through the write service.
"""
