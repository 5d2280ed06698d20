"""settle() gathers the facts a "Y, not X" correction may name only when extract_fix.contrasted can act on the
turn (h-compile3: the gathering was a fifth of compile's CPU). Real spaCy, the real extractor: with the gate
open on every turn the candidates must be the same, so a change to contrasted that reads more than its gate
says fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from markmem.model import RawEntry
from markmem.write import revise
from markmem.write.clauses import load_splitter
from markmem.write.extract import HeuristicExtractor
from markmem.write.extract_fix import contrasted, may_contrast

DATA = Path(__file__).resolve().parent.parent / "bench" / "data"


def _extract_all(turns: list[dict]) -> list[tuple]:
    splitter, name = load_splitter("spacy", "en_core_web_sm")
    assert name == "spacy"
    ex = HeuristicExtractor(splitter)
    out = []
    for i, t in enumerate(turns):
        entry = RawEntry(id=f"r{i}", user_id=t["user_id"], role=t["role"], content=t["content"],
                         recorded_at=t["occurred_at"], occurred_at=t["occurred_at"])
        out += [(i, c.subject, c.predicate, c.value, c.text, c.confidence, c.negated, c.valid_from, c.valid_until)
                for c in ex.extract([entry]).candidates]
    return out


@pytest.mark.parametrize("name", ["tune19", "tune2", "tune5"])
def test_the_gate_changes_no_candidate(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [t for line in (DATA / f"facts_{name}.jsonl").read_text("utf-8").splitlines() if line.strip()
             for t in json.loads(line)["turns"]]
    assert sum(" not " in f" {t['content'].casefold()} " for t in turns if t["role"] == "user") >= 5
    gated = _extract_all(turns)
    monkeypatch.setattr(revise, "may_contrast", lambda turn, parse: parse is not None)  # gather on every turn
    assert _extract_all(turns) == gated


def test_may_contrast_reads_a_not_word_and_needs_the_parse() -> None:
    parse = load_splitter("spacy", "en_core_web_sm")[0].parse
    assert may_contrast("I'm at KPMG, not Deloitte", parse)
    assert may_contrast("Not Leeds, Bradford", parse)
    assert not may_contrast("I'm at KPMG, not Deloitte", None)
    assert not may_contrast("nothing new, knotted my scarf", parse)
    assert contrasted("nothing new, knotted my scarf", [object()], parse) == []  # type: ignore[list-item]
