"""Precision of the ledger on everyday wording (issue #12 pts 2-4, h-ledger6), with real spaCy (no
mocked parser): a rule that fires on one clause must not claim or close an unrelated fact.

* a closer of the job takes no object: "I retired Dancing Queen from my sets" ends no job;
* a relative's relative is no slot of the user's: "my sister's husband Tom is a chef";
* a move to software is no move of home and no new phone: "moved over to Brave browser on my phone";
* "left Cork for Galway" replaces the home it names; "mum moved to Gozo" is mum's fact, not the user's;
* "at the end of June" dates a plan: the move holds from July, not from the day it was said.
"""

from __future__ import annotations

import pytest

from markmem.model import Candidate
from markmem.write.clauses import load_splitter
from markmem.write.extract_time import scheduled
from tests.ledger_fixtures import extract_turns

pytest.importorskip("spacy")


def _run(*turns: tuple[str, str]) -> list[Candidate]:
    return [c for cands in extract_turns(turns) for c in cands]


def _later(cands: list[Candidate]) -> list[Candidate]:
    return [c for c in cands if c.raw_id != "r0"]


@pytest.mark.parametrize("then", [
    "I retired Dancing Queen from my sets, people hated it",
    "we finally retired the old van",
    "I fired my accountant, he was useless",
])
def test_a_job_closer_with_an_object_of_its_own_ends_no_job(then: str) -> None:
    cands = _run(("2025-01-06T10:00:00Z", "I'm a DJ at Club Neon"), ("2025-02-06T10:00:00Z", then))
    assert not [c for c in _later(cands) if c.predicate in ("job", "employer") and c.negated]


def test_a_plain_retirement_still_ends_the_job() -> None:
    cands = _run(("2025-01-06T10:00:00Z", "I'm a DJ at Club Neon"),
                 ("2025-02-06T10:00:00Z", "I retired last month, finally"))
    assert [c for c in _later(cands) if c.predicate in ("job", "employer") and c.negated]


def test_a_relatives_partner_is_no_slot_of_the_user() -> None:
    cands = _run(("2025-01-06T10:00:00Z", "my sister's husband Tom is a chef in Swansea"))
    assert not [c for c in cands if c.subject == "u" and ("husband" in c.predicate or c.value == "Swansea")]


def test_a_relatives_own_thing_is_still_the_users_slot() -> None:
    """ "my son's school is St Mary's" stays a fact the user keeps (the lookahead is kin + kin only)."""
    cands = _run(("2025-01-06T10:00:00Z", "my son's school is St Mary's"))
    assert [c for c in cands if c.value == "St Mary's"]


@pytest.mark.parametrize("then", [
    "moved over to Brave browser on my phone, it's way faster",
    "moved over to Brave, Chrome was too slow",
    "I moved over to Linux last year",
])
def test_a_move_to_software_moves_no_home_and_replaces_no_phone(then: str) -> None:
    cands = _run(("2025-01-06T10:00:00Z", "I live in Norwich and my phone is an iPhone 12"),
                 ("2025-02-06T10:00:00Z", then))
    assert not [c for c in _later(cands) if c.predicate in ("lives_in", "phone_model")]


def test_a_real_move_over_is_still_a_move() -> None:
    cands = _run(("2025-01-06T10:00:00Z", "I live in Norwich"), ("2025-02-06T10:00:00Z", "we moved over to Bristol"))
    assert [c.value for c in _later(cands) if c.predicate == "lives_in"] == ["Bristol"]


def test_left_one_place_for_another_replaces_the_home() -> None:
    cands = _run(("2025-01-06T10:00:00Z", "I live in Cork"),
                 ("2025-02-06T10:00:00Z", "left Cork for Galway last month"))
    found = [(c.value, c.negated) for c in _later(cands) if c.predicate == "lives_in"]
    assert ("Galway", False) in found and ("Cork", False) not in found


def test_left_for_a_while_replaces_nothing() -> None:
    cands = _run(("2025-01-06T10:00:00Z", "I live in Cork"), ("2025-02-06T10:00:00Z", "left Cork for the weekend"))
    assert not [c for c in _later(cands) if c.predicate == "lives_in" and not c.negated]


def test_mum_without_my_is_mums_fact() -> None:
    cands = _run(("2025-01-06T10:00:00Z", "my mum lives in Malta"),
                 ("2025-02-06T10:00:00Z", "mum sold the house and moved to Gozo"))
    moved = [c for c in _later(cands) if c.predicate == "lives_in"]
    assert [(c.subject, c.value) for c in moved] == [("mum", "Gozo")]


@pytest.mark.parametrize(("text", "start"), [
    ("we're moving to Valencia at the end of June", "2025-07-01"),
    ("we're moving to Valencia at the start of June", "2025-06-01"),
    ("we're moving to Valencia at the end of May", "2025-06-01"),  # said on May 2: this May's end
])
def test_the_end_of_a_month_dates_a_plan(text: str, start: str) -> None:
    found = scheduled(text, "2025-05-02T10:00:00.000000Z")
    assert found is not None and found[1].startswith(start)


def test_am_stays_with_its_hour_in_a_split_clause() -> None:
    """spaCy may hang "am" of "10am" on another clause: the hour's clause keeps it."""
    splitter, _name = load_splitter("spacy", "en_core_web_sm")
    assert "i start at 10am" in splitter("new shift pattern, i start at 10am now")
    cands = _run(("2025-01-06T10:00:00Z", "new shift pattern, i start at 10am now"))
    assert [c.value for c in cands if c.predicate == "routine_work"] == ["at 10am"]


def test_a_bare_hour_at_the_end_is_a_habits_time() -> None:
    cands = _run(("2025-01-06T10:00:00Z", "I go to bed around midnight"),
                 ("2025-02-06T10:00:00Z", "I go to bed at 10 now, new baby"))
    assert [c.value for c in _later(cands) if c.predicate == "routine_bed"] == ["at 10"]


def test_a_relatives_partner_named_later_replaces_no_partner() -> None:
    cands = _run(("2025-01-06T10:00:00Z", "My boyfriend is Leo."),
                 ("2025-02-06T10:00:00Z", "My best friend is Mia, and my sister's husband is Ivan."))
    assert not [c for c in _later(cands) if c.predicate == "partner"]
