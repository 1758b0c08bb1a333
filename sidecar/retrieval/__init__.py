"""Finding memory: scopes and the one search answer, hybrid BM25 + dense ranking, fusion, chunk
vectors, the embedders and the background embedding batcher.
"""
