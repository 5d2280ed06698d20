"""Marks and order of a current search once a fact changed (branch h-stale, issue #12 point 5).

End to end with real git, SQLite and spaCy's parser (no mock), one repo, a user per scenario:

* a user's own turn whose facts were closed is marked and never the first hit: the claim now current
  goes before it, in JSON as in the pack;
* a later statement that says something is over ("quit uber", "sold the corolla", "Sam and I split
  up") marks the earlier turns naming it "ended on <date>" (JSON ``valid_until``; ``superseded_by``
  when a claim valid now tells of the change), even when the earlier turn was never read as a claim;
  a question ("should I quit?") ends nothing, nor does a thing a claim valid now still names;
* the assistant's suggestions ("How about Miso or Juniper?") stay out of a question about the user's
  facts, and come back when the question asks what the assistant said;
* a user's turn about someone else only ("my boyfriend Marco went on a carnivore diet") stays out of a
  question about the user, and is found when the question names that person.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from markmem import Memory
from markmem.read import ended
from tests.facts_fixtures import scripted_memory

pytest.importorskip("spacy")

Turn = tuple[str, str, str]  # (role, occurred_at, text)
SCENARIOS: dict[str, list[Turn]] = {
    "lesson": [("user", "2026-01-26T09:00:00Z", "piano lessons mondays at 5, practising scales like a child lol"),
               ("assistant", "2026-01-26T09:00:01Z", "Scales pay off."),
               ("user", "2026-04-26T09:00:00Z", "teacher moved my lesson to thursdays at 6")],
    "uber": [("user", "2025-12-12T09:00:00Z", "i drive for uber at the moment, mostly nights"),
             ("user", "2026-03-02T09:00:00Z", "quit uber, I'm doing deliveries for DHL now, proper hours finally")],
    "corolla": [("user", "2025-05-11T09:00:00Z", "i have a car, an old Corolla, 240k on the clock"),
                ("assistant", "2025-05-11T09:00:01Z", "Corollas run forever!"),
                ("user", "2026-06-24T09:00:00Z", "sold the corolla, car-free now and loving my bike")],
    "asked": [("user", "2025-12-12T09:00:00Z", "i drive for uber at the moment, mostly nights"),
              ("user", "2026-03-02T09:00:00Z", "should i quit uber and drive for a delivery firm?")],
    "names": [("user", "2026-04-12T09:00:00Z", "we're getting a second dog, name ideas?"),
              ("assistant", "2026-04-12T09:00:01Z", "How about Miso or Juniper?"),
              ("user", "2026-04-20T09:00:00Z", "our dog is called Cooper, he is a beagle")],
    "bologna": [("user", "2026-01-10T09:00:00Z", "I live in Turin."),
                ("user", "2026-02-01T09:00:00Z", "From March 1st I'll be living in Bologna, the new job starts then.")],
    "marco": [("user", "2026-01-02T09:00:00Z", "I'm vegetarian, have been since school"),
              ("user", "2026-01-09T09:00:00Z",
               "my boyfriend Marco went on a full carnivore diet, it's ridiculous, the fridge is just meat"),
              ("user", "2026-01-10T09:00:00Z", "my wife's diet is keto so i need dinners that work for both")],
}


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root: Path = tmp_path_factory.mktemp("factsstale") / "memory"
    m = scripted_memory(root, SCENARIOS)
    yield m
    m.close()


def test_a_marked_turn_of_the_users_is_never_the_first_hit(mem: Memory) -> None:
    hits = mem.search("When is the user's piano lesson?", user_id="lesson", top_k=5)
    assert "thursdays" in hits[0].text
    old = next(h for h in hits if h.text.startswith("piano lessons mondays"))
    assert old.valid_until is not None and old.valid_until.startswith("2026-04-26")
    pack = mem.search("When is the user's piano lesson?", user_id="lesson", top_k=5, format="context").text
    assert pack.index("thursdays") < pack.index("piano lessons mondays")
    assert "superseded on 2026-04-26" in next(ln for ln in pack.splitlines() if "piano lessons mondays" in ln)


def test_a_later_quit_marks_the_earlier_turn_ended(mem: Memory) -> None:
    hits = mem.search("Does the user drive for uber?", user_id="uber", top_k=5)
    old = next(h for h in hits if h.text.startswith("i drive for uber"))
    assert old.valid_until is not None and old.valid_until.startswith("2026-03-02")
    told = next(h for h in hits if "quit uber" in h.text)
    assert told.valid_until is None, "the turn telling of the change is not itself ended"
    if old.superseded_by:  # a claim valid now, read from the turn that tells of the change (one of its clauses)
        source = mem.get(old.superseded_by, user_id="uber").sources  # type: ignore[union-attr]
        assert any(s.endswith("#" + told.id) for s in source)
    pack = mem.search("Does the user drive for uber?", user_id="uber", top_k=5, format="context").text
    line = next(ln for ln in pack.splitlines() if "i drive for uber" in ln)
    assert "(2025-12-12; " in line and "on 2026-03-02)" in line


def test_a_sale_ends_the_users_and_the_assistants_earlier_mentions(mem: Memory) -> None:
    hits = mem.search("What car does the user drive?", user_id="corolla", top_k=5)
    for start in ("i have a car, an old Corolla", "Corollas run forever"):
        old = next(h for h in hits if h.text.startswith(start))
        assert old.valid_until is not None and old.valid_until.startswith("2026-06-24"), start
    assert next(h for h in hits if h.text.startswith("sold the corolla")).valid_until is None


def test_a_question_ends_nothing(mem: Memory) -> None:
    hits = mem.search("Does the user drive for uber?", user_id="asked", top_k=5)
    old = next(h for h in hits if h.text.startswith("i drive for uber"))
    assert old.valid_until is None and old.superseded_by is None


def test_the_assistants_suggestion_stays_out_of_a_question_about_the_user(mem: Memory) -> None:
    hits = mem.search("What is the user's dog called?", user_id="names", top_k=5)
    assert not any("Miso" in h.text for h in hits)
    assert any("Cooper" in h.text for h in hits)
    back = mem.search("What dog names did you suggest to me?", user_id="names", top_k=5)
    assert any("Miso" in h.text for h in back), "asked what the assistant said: its suggestion is the answer"


@pytest.mark.parametrize(("text", "gone"), [
    ("quit uber, I'm doing deliveries for DHL now", {"uber"}),
    ("sold the corolla, car-free now", {"corolla"}),
    ("Sam and I split up in the spring.", {"sam"}),
    ("my doctor took me off sertraline last month", {"sertraline"}),
    ("tore my ACL, so football's done for me", {"football"}),
    ("ok teal is back, mustard was a phase", {"mustard"}),
    ("I left the book club, it was getting cliquey", {"book", "club"}),
    ("I left work early today", set()),
    ("should I quit uber?", set()),
    ("cancelling puregym at the end of the month", set()),  # a plan: not over yet
    ("Caroline: I sold the old piano", set()),  # a transcript's line
])
def test_what_a_turn_says_is_over(text: str, gone: set[str]) -> None:
    assert set(ended.things(text)) == gone


def test_a_thing_still_held_is_not_ended() -> None:
    turns = {"old": ("i drive for uber at night", "2026-01-01", 1, "user"),
             "new": ("quit uber last week", "2026-02-01", 2, "user")}
    assert ended.ended(turns, {}, set(), frozenset()) == {"old": "new"}
    assert ended.ended(turns, {}, set(), ended.held_words(["Uber"])) == {}, "a value valid now is not ended"
    assert ended.ended(turns, {}, {"old"}, frozenset()) == {}, "a turn a claim valid now cites is kept"
    assert ended.ended(turns, {"c-new": ("quit uber last week", "2026-02-01")}, set(), frozenset()) == \
        {"old": "new"}, "the later of a turn and a claim said at one time is the turn"
    assert ended.ended({"old": turns["old"]}, {"c-new": ("quit uber", "2026-02-01")}, set(), frozenset()) == \
        {"old": "c-new"}


def test_a_turn_about_someone_else_stays_out_of_a_question_about_the_user(mem: Memory) -> None:
    hits = mem.search("What is the user's diet?", user_id="marco", top_k=5)
    assert not any("carnivore" in h.text for h in hits)
    assert any("keto" in h.text for h in hits), "a turn that also speaks for the user stays"
    assert any("carnivore" in h.text for h in mem.search("What diet is Marco on?", user_id="marco", top_k=5))
    assert any("carnivore" in h.text for h in mem.search("What diet is the user's boyfriend on?", user_id="marco"))


def test_an_as_of_search_never_puts_a_planned_change_first(mem: Memory) -> None:
    asked = "Where does the user live for the new job?"  # the plan's words: fusion ranks it first
    hits = mem.search(asked, user_id="bologna", top_k=5, as_of="2026-02-15T10:00:00Z")
    assert "Turin" in hits[0].text
    plan = next(h for h in hits if "Bologna" in h.text)
    assert plan.starts is not None and plan.starts.startswith("2026-03-01")
    now = mem.search("Where does the user live?", user_id="bologna", top_k=5)
    assert "Bologna" in now[0].text
