"""What a current search shows once the user's later words say a fact is over (branch h-stale2, #12 point 5).

End to end with real git, SQLite and spaCy's parser (no mock), a user per scenario:

* a claim still valid in the ledger whose value a later user turn says is over ("my dentist is dr
  patel" then "changed dentist, ... dr patel retired") is marked in its JSON hit (``valid_until``,
  as a turn is) and left out of "What I remember";
* a value that began after the ending ("quit uber" then "back at uber") is not ended;
* a first hit that only asks or weighs ("which bank should i switch to") gives way to a statement
  among the first five in a question about the user's facts; a bare query naming it keeps it first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from markmem import Memory
from markmem.read import ended, kinds
from markmem.read.fuse import Cand
from tests.facts_fixtures import scripted_memory

pytest.importorskip("spacy")

Turn = tuple[str, str, str]  # (role, occurred_at, text)
SCENARIOS: dict[str, list[Turn]] = {
    "dentist": [("user", "2025-03-03T09:00:00Z", "my dentist is dr patel on the high street"),
                ("assistant", "2025-03-03T09:00:01Z", "Good to have Dr Patel nearby."),
                ("user", "2025-07-01T09:00:00Z",
                 "changed dentist, i go to Smile Studio in town now, dr patel retired")],
    "bank": [("user", "2025-03-03T09:00:00Z", "which bank should i switch to"),
             ("assistant", "2025-03-03T09:00:01Z", "Have you considered Monzo? Starling is also popular."),
             ("user", "2025-03-06T09:00:00Z", "opened a Chase bank account yesterday, moving my salary over")],
    # no claim in either user turn, so the order below is fusion's (the bank's statement became a claim: h-ledger8)
    "pool": [("user", "2025-03-03T09:00:00Z", "which pool should i swim at"),
             ("assistant", "2025-03-03T09:00:01Z", "The lido is lovely in summer."),
             ("user", "2025-03-06T09:00:00Z", "tried the leisure centre pool yesterday, lanes were empty")],
}


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root: Path = tmp_path_factory.mktemp("factspack11") / "memory"
    m = scripted_memory(root, SCENARIOS)
    yield m
    m.close()


def _old(text: str) -> bool:
    """Names the old dentist and not the new one (the change turn names both: it is current)."""
    return "patel" in text.casefold() and "smile studio" not in text.casefold()


def test_a_value_the_user_later_says_is_over_is_marked_in_json_and_pack(mem: Memory) -> None:
    hits = mem.search("Who is the user's dentist?", user_id="dentist", top_k=5)
    assert any("Smile Studio" in h.text for h in hits)
    old = [h for h in hits if _old(h.text)]
    assert old, "the old statement is still found (a question about the past needs it)"
    for h in old:
        assert h.valid_until is not None and h.valid_until.startswith("2025-07-01"), h
    assert not _old(hits[0].text)
    pack = str(mem.search("Who is the user's dentist?", user_id="dentist", top_k=5, format="context"))
    for line in pack.splitlines():
        if _old(line):
            assert "ended on 2025-07-01" in line or "superseded on 2025-07-01" in line, pack
    remember = pack.split("## Relevant memories")[0]
    assert not any(_old(line) for line in remember.splitlines()), pack


def test_an_as_of_search_before_the_end_still_holds_the_old_value(mem: Memory) -> None:
    hits = mem.search("Who is the user's dentist?", user_id="dentist", top_k=5, as_of="2025-05-01T00:00:00Z")
    assert any("patel" in h.text.casefold() and h.valid_until is None for h in hits)


def test_a_first_hit_that_only_asks_gives_way_to_a_statement(mem: Memory) -> None:
    hits = mem.search("Which bank does the user use?", user_id="bank", top_k=5)
    assert "Chase" in hits[0].text
    asked = mem.search("Which pool does the user swim at?", user_id="pool", top_k=5)
    assert "leisure centre" in asked[0].text
    bare = mem.search("pool swim", user_id="pool", top_k=5)  # not a question about the user: fusion's order
    assert "should i swim" in bare[0].text


@pytest.mark.parametrize(("text", "gone"), [
    ("doc switched me from sertraline to citalopram last week", {"sertraline"}),
    ("switched from mon and thu to tuesday", {"mon", "thu"}),
    ("baan thai shut down :( new go-to is Wok Express", {"baan", "thai"}),
    ("changed dentist, i go to Smile Studio now, dr patel retired", {"patel"}),
    ("honestly wolf alice isnt my fave anymore, it's Big Thief now", {"wolf", "alice"}),
    ("gave the allotment up, too much work", {"allotment"}),
    ("ok oat milk is dead to me, soy only now", {"oat", "milk"}),
    ("i gave her my number", set()),
    ("is the gym closed on sundays?", set()),
])
def test_more_ways_of_saying_something_is_over(text: str, gone: set[str]) -> None:
    assert set(ended.things(text)) == gone


def test_a_value_that_began_after_the_ending_is_not_ended() -> None:
    turns = {"old": ("i drive for uber at night", "2026-01-01", 1, "user"),
             "new": ("quit uber last week", "2026-02-01", 2, "user")}
    assert ended.ended(turns, {}, set(), {"uber": "2026-03-01"}) == {}, "back at uber since March"
    assert ended.ended(turns, {}, set(), {"uber": "2026-02-01"}) == {}, "said with the ending: kept"
    assert ended.ended(turns, {}, set(), {"uber": "2025-12-01"}) == {"old": "new"}, "began before: ended"
    assert ended.held_since([("Uber nights", "2025-12-01"), ("uber", "2026-03-01")]) == \
        {"uber": "2026-03-01", "night": "2025-12-01"}


@pytest.mark.parametrize(("role", "text", "nothing"), [
    ("user", "which bank should i switch to", True),
    ("user", "is zurich expensive to live in? asking bc i might move there", True),
    ("user", "thinking about where to move for the new job", True),
    ("user", "need a name for my new puppy, any ideas", True),
    ("assistant", "Chase is a fine bank.", True),
    ("user", "opened a Chase account yesterday", False),
    ("user", "when i was a kid we lived in Leeds", False),
    ("user", "what i love about Porto is the river", False),
    ("user", "Alex: just back from the office, you know? I think falafel is great.", False),
])
def test_what_states_nothing(role: str, text: str, nothing: bool) -> None:
    c = Cand("turn", "r-1", {"role": role, "content": text})
    assert kinds.states_nothing(c) is nothing
