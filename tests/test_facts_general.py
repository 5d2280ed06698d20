"""General ways a fact changes, beyond the wordings the rules list: end to end with real git, SQLite
and spaCy's parser (no mock).

* an open slot said the other way round ("Pulp is my favourite band now") or by its head noun
  ("iced latte is my order these days") supersedes the slot said before;
* a habit at a time is a routine slot ("I start work at 8am", later "I start at 10am now");
* a clause on a one-valued slot's topic with one new value of the old value's shape is that slot's
  new value ("home's York these days"), but never someone else's or the user's past;
* corrections by shape ("wait not a Fabia, a Kamiq", "typo, 1985 obviously");
* the pack marks an older turn no claim cites, on the topic of a later fact, as replaced by it;
* an as_of search marks a turn telling of a change planned after that time "not yet true".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from markmem import Memory
from markmem.model import Claim

pytest.importorskip("spacy")

SCENARIOS: dict[str, list[tuple[str, str]]] = {
    "reversed": [("2025-05-01T10:00:00Z", "my favourite band is Blur"),
                 ("2026-02-01T10:00:00Z", "Pulp is my favourite band now, sorry Damon")],
    "head-noun": [("2025-05-01T10:00:00Z", "my go-to coffee order is a long black"),
                  ("2026-02-01T10:00:00Z", "iced latte is my order these days")],
    "replaced-as": [("2025-05-01T10:00:00Z", "my comfort show is Frasier"),
                    ("2026-02-01T10:00:00Z", "Taskmaster has replaced Frasier as my comfort show")],
    "habit": [("2025-05-01T10:00:00Z", "I start work at 8am"),
              ("2026-02-01T10:00:00Z", "new hours, I start at 10am now")],
    "habit-call": [("2025-05-01T10:00:00Z", "I call my dad every Friday"),
                   ("2026-02-01T10:00:00Z", "calls with dad moved to Sundays, he has bowls on Fridays")],
    "topic": [("2025-05-01T10:00:00Z", "i live in leeds, small flat near the station"),
              ("2026-02-01T10:00:00Z", "home's York these days, much quieter")],
    "topic-other": [("2025-05-01T10:00:00Z", "I work at Brindle Ltd in the data team"),
                    ("2026-02-01T10:00:00Z", "had lunch with Tom at work"),
                    ("2026-02-02T10:00:00Z", "You work at Acme, right?")],
    "fix-not": [("2025-12-19T10:00:00Z", "I drive a Fabia, what tyres for snow?"),
                ("2025-12-19T10:05:00Z", "wait not a Fabia, a Kamiq. I mix up Skoda names")],
    "fix-typo": [("2026-01-05T10:00:00Z", "i was born in 1984 if that matters for the pension"),
                 ("2026-01-05T10:05:00Z", "typo, 1985 obviously")],
    "older-turn": [("2025-05-01T10:00:00Z", "bins go out on Tuesday nights round here, the lorry comes early"),
                   ("2026-02-01T10:00:00Z", "my bin day is Thursday now")],
    "planned": [("2026-01-10T10:00:00Z", "I live in Lyon"),
                ("2026-02-10T10:00:00Z", "From May 1st I'll be living in Nantes, the lease is signed")],
}


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root: Path = tmp_path_factory.mktemp("general") / "memory"
    m = Memory(root, pii_engine="regex", vector_model=None, background=False, clause_parser="spacy")
    for name, turns in SCENARIOS.items():
        for when, text in turns:
            m.add(text, user_id=name, occurred_at=when)
    m.flush()
    yield m
    m.close()


def claims(mem: Memory, user: str) -> list[Claim]:
    return [c for p in mem.get_all(user, include_archived=True) for c in p.claims]


def now(mem: Memory, user: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for c in claims(mem, user):
        if c.subject == user and c.valid_at("2026-12-31T00:00:00Z"):
            out.setdefault(c.predicate, set()).add(c.value.casefold())
    return out


@pytest.mark.parametrize(("user", "predicate", "value"), [
    ("reversed", "favorite_band", "pulp"),
    ("head-noun", "coffee_order", "iced latte"),  # the key's head noun and compounds (extract_slotkey)
    ("replaced-as", "comfort_show", "taskmaster"),
])
def test_open_slots_in_other_words_supersede(mem: Memory, user: str, predicate: str, value: str) -> None:
    assert now(mem, user).get(predicate) == {value}


@pytest.mark.parametrize(("user", "predicate", "value"), [
    ("habit", "routine_work", "at 10am"),
    ("habit-call", "routine_call", "sundays"),
])
def test_a_habit_at_a_time_is_a_routine_that_changes(mem: Memory, user: str, predicate: str, value: str) -> None:
    assert now(mem, user).get(predicate) == {value}


def test_a_new_value_on_the_topic_of_a_slot_is_its_new_value(mem: Memory) -> None:
    assert now(mem, "topic").get("lives_in") == {"york"}
    closed = [c for c in claims(mem, "topic") if c.value == "leeds"]
    assert closed and closed[0].superseded_by


def test_someone_elses_name_or_the_assistants_words_change_nothing(mem: Memory) -> None:
    assert now(mem, "topic-other").get("employer") == {"brindle ltd"}


@pytest.mark.parametrize(("user", "predicate", "value"), [
    ("fix-not", "car", "kamiq"),
    ("fix-typo", "birth_year", "1985"),
])
def test_a_correction_by_shape_replaces_the_value(mem: Memory, user: str, predicate: str, value: str) -> None:
    assert now(mem, user).get(predicate) == {value}


def test_an_older_turn_on_the_topic_of_a_later_fact_is_marked_replaced(mem: Memory) -> None:
    hits = [h for h in mem.search("Which day are the bins collected?", user_id="older-turn", top_k=5)
            if "tuesday" in h.text.casefold()]
    assert hits and hits[0].superseded_by and hits[0].valid_until
    pack = str(mem.search("Which day are the bins collected?", user_id="older-turn", top_k=5, format="context"))
    line = next(ln for ln in pack.splitlines() if "Tuesday" in ln)
    assert "superseded on 2026-02-01" in line


def test_a_planned_change_is_not_yet_true_before_its_date(mem: Memory) -> None:
    at = "2026-03-01T10:00:00Z"
    hits = mem.search("Where does the user live?", user_id="planned", top_k=5, as_of=at)
    planned = [h for h in hits if "Nantes" in h.text]
    assert planned and planned[0].starts and planned[0].starts > at
    assert "Lyon" in hits[0].text  # what held then comes first
    pack = str(mem.search("Where does the user live?", user_id="planned", top_k=5, as_of=at, format="context"))
    assert "not yet true: from 2026-05-01" in next(ln for ln in pack.splitlines() if "Nantes" in ln)
    later = mem.search("Where does the user live?", user_id="planned", top_k=5, as_of="2026-06-01T10:00:00Z")
    assert not any(h.starts for h in later)


def test_only_a_turn_said_once_a_plan_was_known_is_not_yet_true(tmp_path: Path) -> None:
    """"Good luck in Nantes!" after "from May I'll live in Nantes" is not yet true before May; the
    assistant's own "I prefer aisle seats myself", said before the user switched to aisle seats (a
    change said when it happened, never a plan), is not marked at all."""
    with Memory(tmp_path / "m", pii_engine="regex", vector_model=None, background=False) as m:
        for when, turns in [
            ("2026-01-10T10:00:00Z", [("user", "I live in Lyon and I prefer window seats"),
                                      ("assistant", "Noted. I prefer aisle seats myself. Nantes is lovely too.")]),
            ("2026-02-10T10:00:00Z", [("user", "From May 1st I'll be living in Nantes, the lease is signed"),
                                      ("assistant", "Good luck with the move to Nantes!")]),
            ("2026-03-10T10:00:00Z", [("user", "Actually I prefer aisle seats now")]),
        ]:
            m.add([{"role": r, "content": t} for r, t in turns], user_id="ann", occurred_at=when)
        m.flush()
        seats = m.search("which seats do I prefer?", user_id="ann", top_k=10, as_of="2026-03-01T00:00:00Z")
        assert not [h.text for h in seats if h.starts]
        move = m.search("where am I moving, Nantes?", user_id="ann", top_k=10, as_of="2026-03-01T00:00:00Z")
        marked = {h.text for h in move if h.starts}
        assert "Good luck with the move to Nantes!" in marked
        assert not any("lovely" in t for t in marked)
