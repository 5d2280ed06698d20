"""The Porter stemmer as FTS5 applies it: lives in ``index.stem`` (the lexicon needs it too)."""

from __future__ import annotations

from ..index.stem import stem

__all__ = ["stem"]
