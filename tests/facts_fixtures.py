"""Shared by the fact tests: a memory holding scripted conversations, compiled with real spaCy clauses."""

from __future__ import annotations

from pathlib import Path

from markmem import Memory

Turns = dict[str, list[tuple[str, str, str]]]  # user -> [(role, occurred_at, text)]


def scripted_memory(root: Path, scenarios: Turns, **options: object) -> Memory:
    """Each user's turns added one message at a time, in order, then one flush. ``options`` override the
    defaults (regex gate, no vectors, spaCy clauses)."""
    settings: dict[str, object] = {"pii_engine": "regex", "vector_model": None, "background": False,
                                   "clause_parser": "spacy"}
    m = Memory(root, **(settings | options))  # type: ignore[arg-type]
    for user, turns in scenarios.items():
        for role, when, text in turns:
            m.add([{"role": role, "content": text}], user_id=user, occurred_at=when)
    m.flush()
    return m
