"""The ledger's write side for providers, work said by what the user does, a new car, one doctor slot and
plain endings (issue #12 pts 2-4, h-ledger8), with real spaCy (no mocked parser):

* "went over to Octopus", "moved back to Octopus", "I'm with Nationwide these days": the service slot the user
  already has (not a home, not a partner); "opened a Chase account" is a bank;
* "doing data entry for the NHS now" is work, not a hobby;
* "the new Polestar is so quiet" is the user's car when the user has one;
* "my new GP is Dr Hughes" replaces "my doctor is Dr Patel" (one slot);
* "I'm officially a non-smoker", "sadly Clover died", "cancelled the Anytime Fitness membership" end the fact.
"""

from __future__ import annotations

import pytest

from markmem.model import Candidate
from tests.ledger_fixtures import extract_turns

pytest.importorskip("spacy")

JAN, MAR, MAY = "2025-01-06T10:00:00Z", "2025-03-02T10:00:00Z", "2025-05-02T10:00:00Z"


def _run(*turns: tuple[str, str]) -> list[Candidate]:
    return [c for cands in extract_turns(turns) for c in cands]


def _last(*texts: str) -> list[Candidate]:
    """The candidates of the last of these turns (each a few weeks after the one before)."""
    whens = [JAN, MAR, MAY]
    return extract_turns(list(zip(whens, texts, strict=False)))[-1]


def _held(cands: list[Candidate]) -> set[tuple[str, str]]:
    return {(c.predicate, c.value) for c in cands if not c.negated}


@pytest.mark.parametrize(("first", "later", "slot", "value"), [
    ("my energy supplier is British Gas", "we went over to Octopus in the autumn", "energy_supplier", "Octopus"),
    ("my mobile contract is with EE", "switched to Smarty, half the price", "phone_network", "Smarty"),
    ("my bank is Halifax", "I'm with Nationwide these days", "bank", "Nationwide"),
    ("I bank with NatWest", "just opened a Chase account, my salary goes in there now", "bank", "Chase"),
])
def test_a_provider_change_lands_on_the_users_service_slot(first: str, later: str, slot: str, value: str) -> None:
    assert (slot, value) in _held(_last(first, later))


def test_back_to_an_earlier_provider_is_that_provider_not_a_home() -> None:
    cands = _last("I'm with Octopus for electricity", "switched to EDF", "moved back to Octopus after a year")
    assert ("energy_supplier", "Octopus") in _held(cands)
    assert not [c for c in cands if c.predicate == "lives_in"]


@pytest.mark.parametrize("later", ["we went over to Sarah's for dinner", "I'm with Dan now", "went over to my mum's"])
def test_a_visit_or_a_person_is_no_provider(later: str) -> None:
    cands = _last("my bank is Halifax", later)
    assert not [c for c in cands if c.predicate == "bank"]
    if "Dan" in later:
        assert ("partner", "Dan") in _held(cands)


def test_a_company_with_no_service_on_record_is_no_partner() -> None:
    assert not [c for c in _last("I'm with Vodafone, the signal is rubbish") if c.predicate == "partner"]


@pytest.mark.parametrize("said", ["opened an Instagram account for the dog", "set up a Netflix account for mum"])
def test_an_account_that_is_no_bank(said: str) -> None:
    assert not [c for c in _last(said) if c.predicate == "bank"]


@pytest.mark.parametrize(("said", "job"), [
    ("doing data entry for the NHS now, pays better", "data entry"),
    ("I'm doing IT support for a law firm these days", "IT support"),
    ("doing bookkeeping for a couple of local shops now, normal hours at last", "bookkeeping"),
])
def test_doing_work_for_someone_now_is_a_job(said: str, job: str) -> None:
    cands = _last("I'm a teaching assistant", said)
    assert ("job", job) in _held(cands)
    assert not [c for c in cands if c.predicate == "hobby"]


@pytest.mark.parametrize("said", ["doing a 10k for charity now", "doing it for the kids now",
                                  "doing a favour for my neighbour"])
def test_doing_something_for_someone_is_no_job(said: str) -> None:
    assert not [c for c in _last(said) if c.predicate == "job"]


def test_the_new_car_is_the_users_when_they_have_one() -> None:
    cands = _last("I drive a Vauxhall Astra", "the new Polestar is so quiet, still getting used to it")
    assert ("car", "Polestar") in _held(cands)


@pytest.mark.parametrize(("first", "later"), [
    ("I work at Tesco", "the new Tesla looks amazing"),  # no car on record: news, maybe
    ("I drive a Honda Civic", "the new Honda advert is funny"),
])
def test_the_new_car_in_passing_is_none(first: str, later: str) -> None:
    assert not [c for c in _last(first, later) if c.predicate == "car"]


def test_i_used_to_is_still_the_past() -> None:
    assert not _last("I used to live in Leeds")


@pytest.mark.parametrize(("first", "later"), [
    ("my doctor is Dr Patel", "my new GP is Dr Hughes"),
    ("my GP is Dr Evans", "registered with a new doctor, Dr Malik, at the other surgery"),
])
def test_gp_and_doctor_are_one_slot(first: str, later: str) -> None:
    cands = _run((JAN, first), (MAR, later))
    assert {c.predicate for c in cands} == {"doctor"}


@pytest.mark.parametrize(("first", "later", "slot"), [
    ("I'm a smoker, about ten a day", "three months without a cigarette, I'm officially a non-smoker", "smokes"),
    ("we have a rabbit called Clover", "sadly Clover died on Sunday, the hutch is empty", "pet"),
    ("I've got a membership at Anytime Fitness", "cancelled the Anytime Fitness membership, I never went", "gym"),
])
def test_an_ending_closes_the_fact(first: str, later: str, slot: str) -> None:
    first_cands, later_cands = extract_turns([(JAN, first), (MAR, later)])
    assert [c for c in first_cands if c.predicate == slot and not c.negated]
    assert [c for c in later_cands if c.predicate == slot and c.negated]


def test_weve_returned_to_an_earlier_home_is_a_change_back() -> None:
    cands = _last("we're in Sheffield", "we moved down to London in March",
                  "we've returned to Sheffield, London was dear")
    assert ("lives_in", "Sheffield") in _held(cands)


def test_joining_a_gym_is_no_job() -> None:
    assert ("gym", "Gym Group") in _held(_last("I train at PureGym", "joined The Gym Group instead"))
    cands = _last("I work at The Gym Group as a trainer")
    assert ("employer", "The Gym Group") in _held(cands)
    assert not [c for c in cands if c.predicate == "gym"]
