"""Shared by the fact tests: a memory holding scripted conversations, compiled with real spaCy clauses."""

from __future__ import annotations

from pathlib import Path

from markmem import Memory

Turns = dict[str, list[tuple[str, str, str]]]  # user -> [(role, occurred_at, text)]


def scripted_memory(root: Path, scenarios: Turns) -> Memory:
    """Each user's turns added one message at a time, in order, then one flush."""
    m = Memory(root, pii_engine="regex", vector_model=None, background=False, clause_parser="spacy")
    for user, turns in scenarios.items():
        for role, when, text in turns:
            m.add([{"role": role, "content": text}], user_id=user, occurred_at=when)
    m.flush()
    return m
