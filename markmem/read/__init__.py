"""The read path: lanes (fts, vectors) -> fuse -> pack."""
