"""What a crew shares, behind one interface (``base.CrewStore``): the crew tier's chunks and
vectors today, the crew journal and the knowledge graph beside them later. ``sqlite`` reads the
lead's embedded index (the default, the files on the lead's disk); ``postgres`` keeps the same
chunks in PostgreSQL with tsvector and pgvector, so members on other hosts search the crew
directly."""
