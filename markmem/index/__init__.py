"""DERIVED state: the SQLite cache (FTS5 + vectors). Rebuildable from the repo at any time."""
