"""Parse-based ledger mechanisms (issue #12, h-ledger4), with real spaCy (no mocked parser):

* corrections by alignment: a cue ("I said", "misspoke", "autocorrect", "correct myself") and a word
  of the turn aligned with a fact of the same conversation (same shape, else same part of speech);
* named members of many-valued slots ("two cats, Salt and Pepper"), coordinated values ("French and
  English");
* "our X is Y" open slots, "my apartment in Quito" / "my address is in Dresden" as homes;
* moves said with a light verb ("made the jump to Denver"), "settle into", a comma splice;
* a change "over the holidays" happened then (not a temporary state); "at the end of the year" and
  "in September I become" are future-dated changes.
"""

from __future__ import annotations

import pytest

from markmem.write.extract_time import scheduled, temporary
from tests.ledger_fixtures import extract_turns

pytest.importorskip("spacy")


def _run(*turns: str, minutes: int = 2) -> list[list[tuple[str, str, bool]]]:
    """Each turn's (predicate, value, negated), the turns ``minutes`` apart (one conversation)."""
    stamps = [(i * minutes) for i in range(len(turns))]
    timed = [(f"2026-03-{1 + t // 1440:02d}T{(t % 1440) // 60:02d}:{t % 60:02d}:00Z", turn)
             for t, turn in zip(stamps, turns, strict=True)]
    return [[(c.predicate, c.value, c.negated) for c in cands] for cands in extract_turns(timed)]


# -- corrections by alignment ------------------------------------------------------------------
def test_correction_across_sentences_by_role() -> None:
    _, fixed = _run("I teach chemistry at a secondary school in Derby", "wait, I said chemistry? I teach physics.")
    assert fixed == [("job", "physics", False)]  # the misread "teaches physics" is dropped


def test_correction_of_a_many_valued_fact_ends_the_wrong_value() -> None:
    first, fixed = _run("I'm allergic to peanuts", "hmm I misspoke, it's hazelnuts I'm allergic to, peanuts are fine")
    assert first == [("allergy", "peanuts", False)]
    assert fixed == [("allergy", "peanuts", True), ("allergy", "hazelnuts", False)]


def test_correction_changes_every_slot_holding_the_old_value() -> None:
    _, fixed = _run("my manager is called Priya", "ugh autocorrect, her name is Pria without the y")
    assert {p for p, v, _ in fixed if v == "Pria"} == {"manager", "relationship_manager"}


def test_correction_by_shape_keeps_the_rest_of_the_value() -> None:
    _, fixed = _run("I run every Tuesday with a club", "let me correct myself, the club meets on Wednesdays")
    assert fixed == [("routine_run", "every Wednesdays with a club", False)]


def test_no_correction_without_a_cue_or_an_aligned_word() -> None:
    _, later = _run("I'm a nurse", "my bad for the late reply, I moved to Porto")
    assert later == [("lives_in", "Porto", False)]  # "my bad" alone aligns shapes only: no job "reply"
    _, plain = _run("I teach chemistry at a school", "I teach physics too")
    assert ("job", "physics", False) not in plain


def test_no_correction_of_an_old_conversation() -> None:
    _, later = _run("I teach chemistry at a school", "wait, I said chemistry? I teach physics.", minutes=3 * 1440)
    assert ("job", "physics", False) not in later


# -- many-valued slots ---------------------------------------------------------------------------
def test_named_pets_are_one_value_each_and_end_one_by_one() -> None:
    had, died = _run("we have two cats, Salt and Pepper", "Pepper passed in August, Salt keeps looking for her")
    assert had == [("pet", "cat named Salt", False), ("pet", "cat named Pepper", False)]
    assert died == [("pet", "cat named Pepper", True)]


def test_pet_named_in_the_next_clause_or_by_a_participle() -> None:
    (puppy,), (dog,) = _run("we adopted a puppy! his name is Bruno and Luna is NOT impressed",
                            "we rescued a second dog, a greyhound called Mabel")
    assert puppy == ("pet", "puppy named Bruno", False)
    assert dog == ("pet", "dog named Mabel", False)


def test_coordinated_values_of_a_many_valued_slot() -> None:
    (langs,) = _run("I speak French and English")
    assert langs == [("speaks", "French", False), ("speaks", "English", False)]
    (hobbies,) = _run("my hobbies are bouldering and chess")
    assert [v for _, v, _ in hobbies] == ["bouldering", "chess"]
    (plays,) = _run("I play guitar and my sister sings")
    assert plays == [("plays", "guitar", False)]  # a verb is not a second instrument


# -- open slots and homes ------------------------------------------------------------------------
def test_our_slot_and_homes_named_by_their_place() -> None:
    assert _run("our anniversary is on June 3rd") == [[("anniversary", "on June 3rd", False)]]
    assert _run("my apartment in Quito is at altitude") == [[("lives_in", "Quito", False)]]
    assert _run("my new address is in Dresden") == [[("lives_in", "Dresden", False)]]
    assert _run("my house is a mess") == [[]]


# -- moves ---------------------------------------------------------------------------------------
def test_moves_said_with_a_light_verb_or_into() -> None:
    assert _run("we made the jump to Denver in August") == [[("lives_in", "Denver", False)]]
    assert _run("I made a move to the kitchen") == [[]]  # not a place name
    assert _run("we're settling into Wrocław") == [[("lives_in", "Wrocław", False)]]


def test_comma_splice_is_two_clauses() -> None:
    assert _run("said goodbye to Kraków, we're settling into Wrocław") == [[("lives_in", "Wrocław", False)]]


def test_an_if_clause_stays_with_what_it_conditions() -> None:
    assert _run("if I get the job, I'm moving to Oslo") == [[]]  # a consequence, not a plan stated as fact
    assert _run("I'll move to Oslo if they hire me") == [[]]
    assert _run("I live in Porto, and if it works out I'll buy a flat") == [[("lives_in", "Porto", False)]]
    assert _run("I moved to Oslo because I got the job") == [[("lives_in", "Oslo", False)]]  # a reason still splits


def test_a_change_over_the_holidays_happened_then() -> None:
    assert temporary("we swapped Sydney for Melbourne over the holidays", "2026-01-12T09:00:00Z") is None
    assert temporary("I'm in Lisbon over the summer", "2026-02-04T09:00:00Z") is not None  # a stay
    _, swapped = _run("I live in Sydney", "we swapped Sydney for Melbourne over the holidays")
    assert swapped == [("lives_in", "Melbourne", False)]


def test_future_dated_end_of_year_and_become() -> None:
    when = "2025-10-01T09:00:00Z"
    assert scheduled("we'll be relocating to Kigali at the end of the year", when)[1].startswith("2026-01-01")  # type: ignore[index]
    assert scheduled("in September I become a fully qualified teacher", "2026-07-01T09:00:00Z")[1].startswith(  # type: ignore[index]
        "2026-09-01")


# -- roles said with "as" ------------------------------------------------------------------------
def test_role_said_with_as_whatever_the_verb() -> None:
    assert _run("I retrained and now I earn my money as a UX researcher")[0] == [("job", "UX researcher", False)]
    assert _run("I got hired as a sous chef at Marlow's") == [[("job", "sous chef", False),
                                                               ("employer", "Marlow", False)]]
    assert _run("I worked as a waiter in college") == [[]]  # history
    assert _run("I volunteer as a coach at Hackney FC") == [[]]  # unpaid: not the job


def test_a_standing_tie_to_a_name_and_its_change() -> None:
    tie, switched = _run("I bank with Monzo", "switched my bank to Starling")
    # the service slot by model2vec prototype (extract_service): both land on "bank"
    assert tie == [("bank", "Monzo", False)]
    assert switched == [("bank", "Starling", False)]  # one value: the resolver supersedes Monzo
    assert _run("I banked with Monzo years ago") == [[]]  # a plain past is history
