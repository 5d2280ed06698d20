"""Changes said without the slot's wording (issue #12, h-fix: :mod:`markmem.write.extract_shift`),
with real spaCy (no mocked parser):

* an ending clause that names a remembered fact closes it: a negated verb with a sign the state is
  over ("anymore", "now"), or a verb of the ending class in the past ("had to stop ...");
* a plan to end ("she is retiring", "I'll quit") closes nothing yet;
* a new name beside a change sign replaces the one-valued fact holding a name ("moved my savings over
  to Starling" after "my bank is Nationwide"); a stay with an end in sight, a question and an
  undated plan replace nothing; a dated plan starts at its date.
"""

from __future__ import annotations

import pytest

from markmem.model import Candidate
from markmem.write.clauses import load_splitter
from markmem.write.extract_shift import lemma
from tests.ledger_fixtures import extract_turns

pytest.importorskip("spacy")


def _run(*turns: tuple[str, str]) -> list[Candidate]:
    return [c for cands in extract_turns(turns) for c in cands]


def _last(cands: list[Candidate], predicate: str) -> list[tuple[str, bool, str | None]]:
    return [(c.value, c.negated, c.valid_from) for c in cands if c.predicate == predicate and c.raw_id == "r1"]


@pytest.mark.parametrize(("first", "then", "predicate"), [
    ("i'm on the paleo diet at the moment", "not doing paleo anymore, too much meat", "diet"),
    ("I'm a pescatarian", "not a pescatarian anymore, eating everything again", "diet"),
])
def test_a_negated_clause_naming_the_value_closes_it(first: str, then: str, predicate: str) -> None:
    cands = _run(("2025-03-01T10:00:00Z", first), ("2025-10-01T10:00:00Z", then))
    assert any(negated for _, negated, _ in _last(cands, predicate))


def test_a_routine_named_by_its_slot_words_closes() -> None:
    cands = _run(("2025-03-01T10:00:00Z", "I take the tram to work every day"),
                 ("2025-10-01T10:00:00Z", "never take the tram now, I walk"))
    assert [c for c in cands if c.raw_id == "r1" and c.negated and c.predicate.startswith("routine_")]


def test_a_plan_to_end_closes_nothing_yet() -> None:
    cands = _run(("2025-03-01T10:00:00Z", "my physio is Dr Okafor"),
                 ("2025-04-01T10:00:00Z", "Dr Okafor is retiring so I need someone new eventually"))
    assert not [c for c in cands if c.raw_id == "r1" and c.negated]


def test_a_new_name_beside_a_change_verb_replaces_the_one_valued_fact() -> None:
    cands = _run(("2025-03-01T10:00:00Z", "my bank is Nationwide"),
                 ("2025-09-01T10:00:00Z", "finally moved all my savings over to Starling"))
    assert ("Starling", False, None) in _last(cands, "bank")


@pytest.mark.parametrize("then", [
    "on a two week course in Berlin right now, back on the 14th",  # a stay with an end in sight
    "should I move to Berlin?",  # a question
    "maybe we'll move to Berlin one day",  # a hypothetical, undated
])
def test_a_bounded_stay_a_question_or_a_plan_replaces_nothing(then: str) -> None:
    cands = _run(("2025-03-01T10:00:00Z", "I'm based in Madrid for work"), ("2025-09-01T10:00:00Z", then))
    assert not [v for v, neg, _ in _last(cands, "lives_in") if "Berlin" in v and not neg]


def test_a_dated_switch_starts_at_its_date() -> None:
    cands = _run(("2025-03-01T10:00:00Z", "my bank is Nationwide"),
                 ("2025-03-10T10:00:00Z", "switching everything to Starling from june"))
    [(value, negated, start)] = _last(cands, "bank")
    assert value == "Starling" and not negated and start and start.startswith("2025-06")


@pytest.mark.parametrize(("word", "base"), [("stopped", "stop"), ("sold", "sell"), ("moving", "move"),
                                            ("switched", "switch"), ("cancels", "cancel")])
def test_lemma_without_spacys_lemmatizer(word: str, base: str) -> None:
    splitter, _ = load_splitter("spacy", "en_core_web_sm")
    token = next(t for t in splitter.parse(f"I {word} it") if t.lower_ == word)
    assert lemma(token) == base


def test_a_routine_takes_a_new_weekday_from_the_plans_date() -> None:
    cands = _run(("2026-03-03T10:00:00Z", "my pottery class is on wednesdays"),
                 ("2026-03-20T10:00:00Z", "from next month pottery moves to fridays, the studio changed hours"))
    assert [(v, start[:7]) for v, neg, start in _last(cands, "routine_pottery") if start] == [("on fridays", "2026-04")]


def test_a_value_a_past_event_gave_starts_at_the_moves_date() -> None:
    cands = _run(("2025-10-01T10:00:00Z", "we rent a flat in Leith"),
                 ("2025-11-01T10:00:00Z", "we bought a house in Portobello, moving in february"))
    assert [(v, (s or "")[:7]) for v, neg, s in _last(cands, "lives_in")] == [("Portobello", "2026-02")]


def test_an_ending_naming_the_value_before_its_link_word_closes_it() -> None:
    cands = _run(("2025-10-10T10:00:00Z", "I'm learning Italian on babbel"),
                 ("2026-03-10T10:00:00Z", "gave up on italian, too busy"))
    assert ("Italian on babbel", True, None) in _last(cands, "learning")


def test_an_ended_state_of_be_closes_the_bond_it_names() -> None:
    cands = _run(("2025-09-09T10:00:00Z", "my husband is Omar"),
                 ("2026-05-09T10:00:00Z", "Omar and I are separated now, it was finalised in May"))
    assert ("Omar", True, None) in _last(cands, "partner")


@pytest.mark.parametrize("then", ["Omar and I will be separated if this goes on",
                                  "Omar is over at his mum's for the weekend"])
def test_a_plan_or_a_bounded_absence_ends_nothing(then: str) -> None:
    cands = _run(("2025-09-09T10:00:00Z", "my husband is Omar"), ("2026-05-09T10:00:00Z", then))
    assert not [c for c in cands if c.raw_id == "r1" and c.negated]


def test_a_dated_plan_naming_a_new_name_replaces_from_its_date() -> None:
    cands = _run(("2026-03-01T10:00:00Z", "I work at Zalando in Berlin"),
                 ("2026-04-10T10:00:00Z", "handed in my notice. from next month I'll be at Northvolt"))
    assert [(v, (s or "")[:7]) for v, neg, s in _last(cands, "employer")] == [("Northvolt in Berlin", "2026-05")]


@pytest.mark.parametrize("then", ["my brother Ali just switched to Starling now",
                                  "we went hiking with Priya last week, it rained",
                                  "Ahmed from my team just stopped banking with Nationwide"])
def test_someone_elses_change_or_company_changes_nothing_of_the_users(then: str) -> None:
    cands = _run(("2025-03-01T10:00:00Z", "my bank is Nationwide"), ("2025-09-01T10:00:00Z", then))
    assert _last(cands, "bank") == []


@pytest.mark.parametrize(("first", "then", "predicate"), [
    ("I live in Bonn.", "I don't live in Cologne anymore.", "lives_in"),  # a negated name ends it, never replaces
    ("I live in Krakow.", 'My friend told me "I live in Warsaw now".', "lives_in"),  # a quote is not the user's
    ("I work at Nokia.", "I'm hoping to join Apple soon.", "employer"),  # a hope is no change yet
    ("My bank is Lloyds.", "I wish I'd moved to Monzo years ago, honestly", "bank"),
])
def test_a_negated_quoted_or_hoped_for_name_replaces_nothing(first: str, then: str, predicate: str) -> None:
    cands = _run(("2022-01-01T10:00:00Z", first), ("2022-02-01T10:00:00Z", then))
    assert not [v for v, negated, _ in _last(cands, predicate) if not negated]


def test_a_name_in_a_sentence_without_a_change_sign_replaces_nothing() -> None:
    """A LongMemEval turn: "now" in one sentence made "The Happiness Lab", named in another, the user's new value
    of a fact holding a name."""
    cands = _run(("2022-01-01T10:00:00Z", "My bank is Lloyds."),
                 ("2022-02-01T10:00:00Z", "I'm much calmer now. I really liked the podcasts you mentioned, "
                                          "especially The Happiness Lab."))
    assert not [v for v, negated, _ in _last(cands, "bank") if not negated]
