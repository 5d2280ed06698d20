"""Time-aware queries: a question's date window (read.when.window), the events a comparison names
(read.when.events), and how search uses both (a boost by occurred_at; one search per event)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from markmem import Memory
from markmem.read import when
from markmem.read.fuse import Recipe
from markmem.read.search import search

REF = datetime(2023, 4, 18, 18, 34)  # a Tuesday


@pytest.mark.parametrize("question, start, end", [
    ("What charity event did I do a month ago?", date(2023, 3, 12), date(2023, 3, 26)),
    ("What did I buy two weeks ago?", date(2023, 4, 1), date(2023, 4, 7)),
    ("What did I cook 3 days ago?", date(2023, 4, 13), date(2023, 4, 17)),
    ("How much did I spend in the past few months?", date(2023, 1, 18), date(2023, 4, 18)),
    ("Where did I go last summer?", date(2022, 6, 1), date(2022, 8, 31)),
    ("What did I read last winter?", date(2022, 12, 1), date(2023, 2, 28)),
    ("What did I do last month?", date(2023, 3, 1), date(2023, 3, 31)),
    ("What did I do last year?", date(2022, 1, 1), date(2022, 12, 31)),
    ("What did I do last week?", date(2023, 4, 10), date(2023, 4, 16)),
    ("Where did I go last May?", date(2022, 5, 1), date(2022, 5, 31)),
    ("Where did I travel in May 2023?", date(2023, 5, 1), date(2023, 5, 31)),
    ("Which rides did I take from July to October?", date(2022, 7, 1), date(2022, 10, 31)),
    ("What did I do in 2021?", date(2021, 1, 1), date(2021, 12, 31)),
    ("What did I eat yesterday?", date(2023, 4, 17), date(2023, 4, 17)),
    ("What did I buy this month?", date(2023, 4, 1), date(2023, 4, 18)),
])
def test_a_temporal_expression_becomes_a_window(question: str, start: date, end: date) -> None:
    got = when.window(question, REF)
    assert got is not None and (got.start, got.end) == (start, end), got


def test_a_dated_day_goes_through_dateparser_and_prefers_the_past() -> None:
    got = when.window("What did I buy on May 5th?", REF)
    assert got is not None and (got.start, got.end) == (date(2022, 5, 4), date(2022, 5, 6))
    got = when.window("What did I buy on April 2nd, 2023?", REF)
    assert got is not None and (got.start, got.end) == (date(2023, 4, 1), date(2023, 4, 3))


@pytest.mark.parametrize("question", [
    "What is my favourite colour?", "What may I eat before bed?", "Where do I work now?", "",
])
def test_no_time_expression_no_window(question: str) -> None:
    assert when.window(question, REF) is None


def test_no_cue_never_reaches_the_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object) -> None:
        raise AssertionError("parsed a question without a time word")

    monkeypatch.setattr(when, "_window", boom)
    monkeypatch.setattr(when, "_parse", boom)
    assert when.window("Where do I keep my passport?", REF) is None
    assert when.events("Where do I keep my passport?") == ()


def test_window_holds_iso_days_and_rejects_junk() -> None:
    w = when.Window("x", date(2023, 3, 1), date(2023, 3, 31))
    assert w.holds("2023-03-01T00:00:00Z") and w.holds("2023-03-31T23:59:59Z")
    assert not w.holds("2023-04-01T00:00:00Z") and not w.holds(None) and not w.holds("not a date")
    assert w.as_dict() == {"phrase": "x", "start": "2023-03-01", "end": "2023-03-31"}


@pytest.mark.parametrize("question, parts", [
    ("How many days passed between the day I started my herb garden and the day I harvested basil?",
     ("I started my herb garden", "I harvested basil")),
    ("Which did I do first, the pottery class or the salsa workshop?",
     ("Which did I do the pottery class", "Which did I do the salsa workshop")),
    ("Who did I meet first, Mark, Sarah or Tom?",
     ("Who did I meet Mark", "Who did I meet Sarah", "Who did I meet Tom")),
    ("What is my favourite colour, red or blue?", ()),  # no comparison in time
    ("What did I do first?", ()),
])
def test_events_of_a_comparison(question: str, parts: tuple[str, ...]) -> None:
    assert when.events(question) == parts


def _diary(mem: Memory) -> None:
    mem.add("I went hiking in the hills with my sister", user_id="al", occurred_at="2023-03-19T10:00:00Z")
    mem.add("I went hiking by the lake, a long hike", user_id="al", occurred_at="2023-01-02T10:00:00Z")
    mem.add("I went hiking near the coast, what a hike", user_id="al", occurred_at="2022-11-20T10:00:00Z")


def test_the_window_boosts_turns_dated_inside_it_and_explain_shows_it(mem: Memory) -> None:
    _diary(mem)
    q = "Where did I go hiking a month ago?"
    hits = mem.search(q, user_id="al", as_of="2023-04-18T18:34:00Z", explain=True)
    assert "sister" in hits[0].text
    assert hits[0].explain and hits[0].explain["weights"]["when"] == 1.5
    about = hits[0].explain["query"]["when"]
    assert about["window"] == {"phrase": "a month ago", "start": "2023-03-12", "end": "2023-03-26"}
    assert about["boost"] == 1.5 and about["events"] == []
    assert all("when" not in (h.explain or {})["weights"] for h in hits[1:])
    off = search(mem.context, q, "al", 5, as_of="2023-04-18T18:34:00.000000Z", explain=True,
                 recipe=Recipe(time_boost=0.0, vectors=False))
    assert off[0].explain and off[0].explain["query"]["when"]["window"] is None


def test_a_comparison_brings_back_both_events(mem: Memory) -> None:
    for i in range(6):
        mem.add(f"a note about the pottery class number {i}, pottery is fun", user_id="al",
                occurred_at=f"2023-02-0{i + 1}T10:00:00Z")
    mem.add("I signed up for the salsa workshop today", user_id="al", occurred_at="2023-02-20T10:00:00Z")
    q = "Which did I do first, the pottery class or the salsa workshop?"
    hits = mem.search(q, user_id="al", top_k=3, explain=True)
    assert any("salsa" in h.text for h in hits) and any("pottery" in h.text for h in hits)
    assert hits[0].explain and hits[0].explain["query"]["when"]["events"] == list(when.events(q))
    assert len({h.id for h in hits}) == len(hits) == 3


@pytest.mark.parametrize("question, phrase, relation, days", [
    ("What did I buy two weeks after my trip to Rome?", "my trip to Rome", "after", 14),
    ("Where did I live before I moved to Oslo?", "I moved to Oslo", "before", None),
    ("What have I cooked since the cooking class?", "the cooking class", "after", None),
])
def test_an_anchor_names_the_event_a_span_hangs_on(question: str, phrase: str, relation: str,
                                                   days: int | None) -> None:
    assert when.anchor(question) == when.Anchor(phrase, relation, days)


@pytest.mark.parametrize("question", ["Have I been to Paris before?", "What did I do first?", "Where is my hat?"])
def test_no_anchor(question: str) -> None:
    assert when.anchor(question) is None


def test_an_anchor_window_from_the_event_date() -> None:
    at, today = date(2023, 3, 1), date(2023, 6, 1)
    w = when.Anchor("my trip", "after", 14).window(at, today)
    assert (w.start, w.end) == (date(2023, 3, 12), date(2023, 3, 18)) and "2023-03-01" in w.phrase
    assert (when.Anchor("my trip", "after", None).window(at, today).start, today) == (at, today)
    assert when.Anchor("my trip", "before", None).window(at, today).end == at


def test_a_span_after_an_event_boosts_what_came_then(mem: Memory) -> None:
    mem.add("I flew home from my trip to Rome", user_id="al", occurred_at="2023-03-01T10:00:00Z")
    mem.add("I went to buy a new bike at the shop", user_id="al", occurred_at="2023-01-10T10:00:00Z")
    mem.add("I went to buy a blue bike helmet", user_id="al", occurred_at="2023-03-15T10:00:00Z")
    hits = mem.search("What did I buy two weeks after my trip to Rome?", user_id="al",
                      as_of="2023-06-01T00:00:00Z", explain=True)
    order = [h.text for h in hits]
    helmet = next(h for h in hits if "helmet" in h.text)
    assert order.index(helmet.text) < order.index("I went to buy a new bike at the shop")
    assert helmet.explain and helmet.explain["weights"]["when"] == 1.5
    about = hits[0].explain["query"]["when"]
    assert about["window"]["start"] == "2023-03-12" and about["events"] == ["my trip to Rome"]
    assert any("Rome" in h.text for h in hits)


def test_window_phrase_words_leave_the_match_only_when_relative() -> None:
    w = when.window("Where did I hike a month ago?", REF)
    assert w is not None and when.without("Where did I hike a month ago?", w) == "Where did I hike ?"
    w = when.window("Where did I hike in May 2023?", REF)
    assert w is not None and when.without("Where did I hike in May 2023?", w) == "Where did I hike in May 2023?"
    w = when.window("a month ago", REF)
    assert w is not None and when.without("a month ago", w) == "a month ago"


def test_a_turn_soon_after_the_window_that_looks_back_is_covered() -> None:
    w = when.Window("in March 2023", date(2023, 3, 1), date(2023, 3, 31))
    assert w.soon_after("2023-04-18T00:00:00Z") and not w.soon_after("2023-06-01T00:00:00Z")
    assert not w.soon_after("2023-03-15T00:00:00Z") and not w.soon_after(None) and not w.soon_after("junk")
    assert w.looks_back("we went to a convention last month") and not w.looks_back("we go every week")
