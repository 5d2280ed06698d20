"""The open-vocabulary path (write/extract_open.py) over spaCy's real parse: no mocked parser."""

from __future__ import annotations

import pytest

from markmem.model import RawEntry
from markmem.write.extract import HeuristicExtractor
from markmem.write.extract_open import lemma, may_state, read_clause

pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def splitter():  # type: ignore[no-untyped-def]
    from markmem.adapters.presidio import SM_MODEL
    from markmem.write.clauses import load_splitter

    try:
        split, name = load_splitter("spacy", SM_MODEL)
    except ImportError:
        pytest.skip("spaCy's model is not installed")
    assert name == "spacy"
    return split


def facts(splitter, text: str) -> list[tuple[str, str, bool]]:  # type: ignore[no-untyped-def]
    return [(p, v, neg) for p, v, _k, _m, _c, neg in read_clause(text, splitter.parse)]


def run(splitter, *turns: str) -> list[list[tuple[str, str, bool]]]:  # type: ignore[no-untyped-def]
    ex = HeuristicExtractor(splitter)
    out = []
    for i, text in enumerate(turns):
        when = f"2026-0{i + 1}-01T10:00:00Z"
        entry = RawEntry(f"r{i}", "u1", "user", text, when, occurred_at=when)
        out.append([(c.predicate, c.value, c.negated) for c in ex.extract([entry]).candidates])
    return out


def test_lemma_and_cheap_gate() -> None:
    assert [lemma(w) for w in ("drives", "stopped", "swimming", "sold", "studies", "settled")] == \
        ["drive", "stop", "swim", "sell", "study", "settle"]
    assert may_state("I drive a Corolla")
    assert may_state("I've been doing karate for ten years")
    assert not may_state("I had a long day at work honestly")  # a light verb: never parsed
    assert not may_state("lol that movie was wild")  # no first person


def test_verbs_map_to_canonical_slots(splitter) -> None:  # type: ignore[no-untyped-def]
    assert facts(splitter, "I drive a Corolla") == [("car", "Corolla", False)]
    assert facts(splitter, "I get around in a battered old Ford Fiesta") == [("car", "battered old Ford Fiesta", False)]
    assert facts(splitter, "These days I call Leipzig home") == [("lives_in", "Leipzig", False)]
    assert facts(splitter, "I've been working as a health visitor") == [("job", "health visitor", False)]
    assert facts(splitter, "We've now got our own apartment in Bordeaux") == [("lives_in", "Bordeaux", False)]
    assert facts(splitter, "I got a new phone case") == []


def test_habits_and_routines(splitter) -> None:  # type: ignore[no-untyped-def]
    assert facts(splitter, "I swim twice a week at the leisure centre") == [("routine_swim", "twice a week", False)]
    assert facts(splitter, "I usually wake up at 6:30") == [("routine_wake", "at 6:30", False)]
    assert facts(splitter, "I smoke about ten a day") == [("smokes", "about ten a day", False)]
    assert facts(splitter, "I took up pottery in September") == [("hobby", "pottery", False)]


def test_negations_and_change_verbs_close(splitter) -> None:  # type: ignore[no-untyped-def]
    assert facts(splitter, "I don't smoke at all anymore") == [("smokes", "", True)]
    found = run(splitter, "I've been doing karate for ten years", "I gave up karate after my knee surgery")
    assert found[0] == [("hobby", "karate", False)]
    assert found[1] == [("hobby", "karate", True)]
    cut = run(splitter, "I drink two coffees every morning", "I cut out coffee entirely")
    assert cut[1] == [("drinks", "two coffees", True)]


def test_swap_takes_the_old_values_slot(splitter) -> None:  # type: ignore[no-untyped-def]
    found = run(splitter, "I get around in a battered old Ford Fiesta", "Finally traded the Fiesta in for a Kia Niro")
    assert ("car", "Kia Niro", False) in found[1]
    assert not any(neg for _p, _v, neg in found[1])  # one value: the new claim supersedes the old


def test_nothing_from_events_plans_modals_or_others(splitter) -> None:  # type: ignore[no-untyped-def]
    assert facts(splitter, "I watched a film with Sam") == []  # an event, not a standing fact
    assert facts(splitter, "I would drive a Tesla if I could") == []
    assert facts(splitter, "I do their payroll") == []  # someone else's thing
    assert facts(splitter, "my dad drives a Volvo") == []  # not first person: the rules' third-party path


def test_unknown_verbs_go_to_review(splitter) -> None:  # type: ignore[no-untyped-def]
    found = read_clause("I volunteer at the food bank", splitter.parse)
    assert found and found[0][0] == "volunteers_at"
    found = read_clause("I sketch portraits", splitter.parse)
    assert found == [("sketches", "portraits", "fact", True, 0.45, False)]  # under review_below (0.5)


def test_regex_splitter_has_no_open_path() -> None:
    ex = HeuristicExtractor()
    entry = RawEntry("r1", "u1", "user", "I drive a Corolla", "2026-01-01T10:00:00Z")
    assert ex.parse is None
    assert [c.predicate for c in ex.extract([entry]).candidates] in ([], ["car"])


def test_raw_entry_json_is_asdict_without_path() -> None:
    """RawEntry.to_json is written by hand for speed: it must stay what asdict gave, in order."""
    from dataclasses import asdict

    e = RawEntry("r1", "u1", "user", "hi", "2026-01-01T10:00:00Z", metadata={"a": [1, {"b": 2}]}, pii=("X",),
                 path="raw/x.jsonl")
    want = asdict(e)
    want.pop("path")
    want["pii"] = ["X"]
    got = e.to_json()
    assert got == want and list(got) == list(want)
    got["metadata"]["a"][1]["b"] = 3
    assert e.metadata == {"a": [1, {"b": 2}]}  # a copy, as before
