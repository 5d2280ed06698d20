"""Shared by the ledger tests: the default extractor over a few turns with real spaCy clauses."""

from __future__ import annotations

from collections.abc import Sequence

from markmem.model import Candidate, RawEntry
from markmem.write.clauses import load_splitter
from markmem.write.extract import HeuristicExtractor


def extract_turns(turns: Sequence[tuple[str, str]], role: str = "user") -> list[list[Candidate]]:
    """Each ``(occurred_at, text)`` turn of user "u" (ids r0, r1, ...) through one extractor, in order: the
    candidates of each turn. Fails when spaCy's parser is not the one loaded (no silent regex fallback)."""
    splitter, name = load_splitter("spacy", "en_core_web_sm")
    assert name == "spacy"
    ex = HeuristicExtractor(splitter)
    out: list[list[Candidate]] = []
    for i, (when, text) in enumerate(turns):
        entry = RawEntry(id=f"r{i}", user_id="u", role=role, content=text, recorded_at=when, occurred_at=when)
        out.append(ex.extract([entry]).candidates)
    return out
