"""One tier's keyword index and how it stays fresh: tier files, chunks, the FTS5 database, the
in-memory BM25 postings, the reindex queue and the file watcher.
"""
