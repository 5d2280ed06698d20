"""Corrections worded as other people word them (h-correct2, tune19): real spaCy, no mocked parser."""

from __future__ import annotations

import pytest
from ledger_fixtures import extract_turns

T0, T1 = "2025-06-01T10:00:00Z", "2025-06-01T10:05:00Z"


def _values(cands, predicate=None):
    return {(c.predicate, c.value, c.negated) for c in cands if predicate is None or c.predicate == predicate}


@pytest.mark.parametrize(("first", "fix", "predicate", "new"), [
    ("I live in Stockport", "wrong, it's Altrincham. brain fog today", "lives_in", "Altrincham"),
    ("my swimming lesson is on Saturday", "that's wrong actually, it's on Sunday", "routine_swimming", "on Sunday"),
    ("my daughter's name is Caitlin", "it's spelled Kaitlyn actually, with a K and a y", "relationship_daughter",
     "Kaitlyn"),
    ("my partner is called Jon", "John, with an h. he'd be offended", "partner", "John"),
    ("my parrot's name is Kiwi", "sorry misspoke, she's called Mango. Kiwi is my friend's bird", "pet",
     "parrot named Mango"),
    ("my hamster is called Nibbles", "also his name is Peanut actually, Nibbles was the last one", "pet",
     "hamster named Peanut"),
])
def test_a_later_turn_corrects_the_value(first: str, fix: str, predicate: str, new: str) -> None:
    _, second = extract_turns([(T0, first), (T1, fix)])
    assert (predicate, new, False) in _values(second), second
    assert not any(c.value.casefold() in ("misspoke", "typo") for c in second)


@pytest.mark.parametrize(("turn", "predicate", "new", "old"), [
    ("I work at Tesco \u2014 sorry, Sainsbury's", "employer", "Sainsbury's", "Tesco"),
    ("I live in Brighton, well Hove actually", "lives_in", "Hove", "Brighton"),
    ("my gym session is Monday, no wait, Tuesday", "routine_gym_session", "Tuesday", "Monday"),
    ("my dog Rolo, sorry I mean Rollo, is two now", "pet", "dog named Rollo", "Rolo"),
])
def test_a_repair_inside_the_turn_keeps_only_the_repaired_value(turn: str, predicate: str, new: str, old: str) -> None:
    (only,) = extract_turns([(T0, turn)])
    mine = [c for c in only if c.predicate == predicate]
    assert [c.value for c in mine] == [new], only
    assert all(old not in c.text for c in mine)  # the claim's text does not show the wrong value as said


def test_a_third_partys_fact_is_corrected_on_their_page_not_the_users() -> None:
    _, second = extract_turns([(T0, "my sister lives in Galway"), (T1, "my sister's in Cork, not Galway, sorry")])
    assert ("sister", "lives_in", "Cork") in {(c.subject, c.predicate, c.value) for c in second}
    assert not any(c.value == "Galway" and not c.negated for c in second), second


@pytest.mark.parametrize(("first", "second"), [
    ("I work at Unilever", "hmm did I say Unilever? yes, Unilever, I double-checked my badge lol"),
    ("my book club is on Monday", "or was it Tuesday? no, Monday is right"),
    ("I live in Derby", "sorry for the typos earlier, my phone is dying"),
])
def test_self_doubt_that_confirms_is_no_correction(first: str, second: str) -> None:
    one, two = extract_turns([(T0, first), (T1, second)])
    assert one
    changed = {c.predicate for c in one}
    assert not [c for c in two if c.predicate in changed], two
