"""The word gate before :func:`markmem.write.extract_shift.shifted` parses a whole turn (issue #12
pt 6, compile speed): a turn the gate skips is one neither rule could act on, so skipping its parse
changes no output. Real spaCy, no mocked parser; the turns are the tuning sets' own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from markmem.model import RawEntry
from markmem.write import extract_shift as shift
from markmem.write.clauses import load_splitter
from markmem.write.extract import HeuristicExtractor
from markmem.write.extract_time import _SCHEDULE

pytest.importorskip("spacy")

DATA = Path(__file__).resolve().parent.parent / "bench" / "data"


def _nlp():  # type: ignore[no-untyped-def]
    splitter, name = load_splitter("spacy", "en_core_web_sm")
    assert name == "spacy"
    return splitter


@pytest.mark.parametrize("text", [
    "ok sounds good", "lol that movie was wild (12)", "I had a long day at work honestly", "I live in Lisbon",
    "thanks, that helps a lot", "what do you think about the weather today?",
])
def test_small_talk_and_plain_facts_skip_the_parse(text: str) -> None:
    assert not shift.may_shift(text)


@pytest.mark.parametrize("text", [
    "I quit my job", "not doing keto anymore", "we're divorced now", "jumped ship to Three",
    "got rid of the car", "so no more bass for me", "moving to Oslo next month", "Biscuit passed away, he's dead",
    "gave up smoking", "Marco and I called off the engagement", "I'm with Monzo these days",
    "I start at Ostara on March 3", "café tips?",  # non-ASCII: always parsed
])
def test_a_sign_of_a_change_or_an_end_parses(text: str) -> None:
    assert shift.may_shift(text)


def test_every_word_of_the_lemma_classes_opens_the_gate() -> None:
    """The gate is built from the classes: a word added to ENDING or CHANGING is gated with it."""
    words = shift.ENDING | shift.CHANGING | shift.ENDED_STATE | {v for v, _ in shift._ENDING_PARTICLE}
    assert all(shift.may_shift(f"well I {w} it") for w in words)
    assert all(shift.may_shift(f"I {w.upper()} it") for w in words)


def _turns(name: str) -> list[str]:
    rows = (json.loads(line) for line in (DATA / f"facts_{name}.jsonl").read_text("utf-8").splitlines() if line.strip())
    return [t["content"][:600] for sc in rows for t in sc["turns"]]


def test_no_turn_the_gate_skips_has_an_end_or_a_change_sign_in_its_parse() -> None:
    """Soundness on real chat: for every tuning-set turn the gate skips, the parse holds no ending verb
    (what :func:`ends` needs) and no change sign (what :func:`replacements` needs first)."""
    parse = _nlp().parse
    texts = sorted({t for name in ("tune", "tune2", "tune7") for t in _turns(name)})
    skipped = [t for t in texts if not shift.may_shift(t)]
    assert len(skipped) > 100  # the gate does skip most small talk
    assert len(skipped) < len(texts)
    for text in skipped:
        doc = parse(text)
        assert not shift._ending_verbs(doc), text
        assert not shift._NOW.search(doc.text), text
        assert not any(shift.lemma(t) in shift.CHANGING for t in doc if t.pos_ == "VERB"), text
        assert not any(_SCHEDULE.search(s.text) for s in doc.sents), text


def test_a_gated_turn_still_ends_and_replaces() -> None:
    """End to end through the extractor: the turns that matter still reach both rules."""
    ex = HeuristicExtractor(_nlp())
    turns = [("2026-01-01T10:00:00Z", "my bank is Nationwide"), ("2026-01-01T11:00:00Z", "ok sounds good"),
             ("2026-02-01T10:00:00Z", "finally moved my savings over to Starling"),
             ("2026-03-01T10:00:00Z", "i'm on the paleo diet at the moment"),
             ("2026-04-01T10:00:00Z", "not doing paleo anymore, too much meat")]
    out = []
    for i, (when, text) in enumerate(turns):
        entry = RawEntry(id=f"r{i}", user_id="u", role="user", content=text, recorded_at=when, occurred_at=when)
        out += ex.extract([entry]).candidates
    assert not [c for c in out if c.raw_id == "r1"]
    assert any(c.raw_id == "r2" and "Starling" in c.value and not c.negated for c in out)
    assert any(c.raw_id == "r4" and c.predicate == "diet" and c.negated for c in out)
