"""Which slot, value and subject a clause speaks of, from the parse's structure (issue #12, h-ledger5),
with real spaCy and the shipped model2vec model (no mocked parser, no mocked embedder):

* family members and pets by name (:mod:`markmem.write.extract_kin`): a kinship or pet noun the user
  holds, its names from appositions, conjunctions, "named"/"called", "be" and "'s name is";
* services and employers (:mod:`markmem.write.extract_service`): a proper name tied to the user by a
  preposition, its slot the nearest prototype by model2vec similarity; "for <Name>" with a present verb
  is an employer; "I'm with <acronym>" is no partner.
"""

from __future__ import annotations

import pytest

from markmem.model import RawEntry
from markmem.write.clauses import load_splitter
from markmem.write.extract import HeuristicExtractor
from markmem.write.extract_kin import kin_names, may_name
from markmem.write.extract_service import reslot, service_slot, tied

pytest.importorskip("spacy")


def _splitter():  # type: ignore[no-untyped-def]
    splitter, name = load_splitter("spacy", "en_core_web_sm")
    assert name == "spacy"
    return splitter


def _run(*turns: str) -> list[list[tuple[str, str, str, bool]]]:
    """Each turn's (subject, predicate, value, negated); the user is "u"."""
    ex = HeuristicExtractor(_splitter())
    out = []
    for i, turn in enumerate(turns):
        when = f"2026-03-0{i + 1}T10:00:00Z"
        entry = RawEntry(id=f"r{i}", user_id="u", role="user", content=turn, recorded_at=when, occurred_at=when)
        out.append([(c.subject, c.predicate, c.value, c.negated) for c in ex.extract([entry]).candidates])
    return out


def _kin(text: str) -> list[tuple[str, str]]:
    return [(f[0], f[1]) for f, _clause in kin_names(_splitter().parse(text))]


# -- family and pets by name ---------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("my grandkids are Ruby and Theo", [("relationship_grandchild", "Ruby"), ("relationship_grandchild", "Theo")]),
    ("we've got a daughter, Nadia", [("relationship_daughter", "Nadia")]),
    ("dad's name is Gerhard", [("relationship_father", "Gerhard")]),
    ("we have a tortoise named Speedy", [("pet", "tortoise named Speedy")]),
    ("our cat Miso is sixteen", [("pet", "cat named Miso")]),
    ("I keep two rabbits, Fudge and Toffee", [("pet", "rabbit named Fudge"), ("pet", "rabbit named Toffee")]),
    ("we rescued a greyhound, her name is Dotty", [("pet", "greyhound named Dotty")]),
    ("we keep goats and a pony called Clover", [("pet", "goats"), ("pet", "pony named Clover")]),
])
def test_a_member_the_user_holds_is_named(text: str, expected: list[tuple[str, str]]) -> None:
    assert _kin(text) == expected


@pytest.mark.parametrize("text", [
    "I met a girl called Zoe at the gym",  # not the user's
    "my neighbour's kids are Ben and Ally",  # someone else's
    "Priya's dog Bruno barks all night",
    "I walked past a dog named Pip",
    "my ex-husband Carl still calls",  # a former member is no member
])
def test_a_member_of_someone_else_or_no_member_is_not_the_users(text: str) -> None:
    assert _kin(text) == []


def test_the_claim_text_is_the_clause_that_names_not_the_sentence() -> None:
    (fact, clause), = kin_names(_splitter().parse("I teach in Leeds and my wife Ines is a vet in York"))
    assert fact[:2] == ("partner", "Ines") and "York" not in clause


def test_names_reach_the_extractor_once_and_a_second_child_adds() -> None:
    first, second = _run("our boys are Sami and Jonah", "and a baby girl now too, Lila!")
    assert {("u", "relationship_son", "Sami", False), ("u", "relationship_son", "Jonah", False)} <= set(first)
    assert not any(p == "boy" for _s, p, _v, _n in first)  # not an open slot "boy" besides
    assert ("u", "relationship_daughter", "Lila", False) in second


def test_a_member_that_died_is_not_added_back() -> None:
    first, second = _run("my rabbit Clover is so fluffy", "my rabbit Clover died last night")
    assert not any(p == "pet" and not neg for _s, p, _v, neg in second)


def test_the_gate_skips_a_turn_without_a_member_and_a_name() -> None:
    assert not may_name("my kids are asleep finally")
    assert may_name("my kids are Leo and Maya")


# -- services and employers ----------------------------------------------------------------------


@pytest.mark.parametrize("text, slot", [
    ("I'm on a Lebara sim with unlimited data", "phone_network"),
    ("we get our broadband through Zen, the wifi is solid", "internet_provider"),
    ("my savings account and current account are at Nationwide", "bank"),
])
def test_the_nearest_prototype_names_the_service(text: str, slot: str) -> None:
    assert service_slot(text) == slot


@pytest.mark.parametrize("text", ["I had pasta for dinner", "I'm with Tom now, we met at a party"])
def test_no_prototype_is_near_enough_for_ordinary_chat(text: str) -> None:
    assert service_slot(text) is None


def test_a_tie_by_preposition_is_the_service_and_a_later_one_replaces_it() -> None:
    first, second = _run("I'm with Lebara for my phone, the sim was cheap",
                         "ported my number over to Smarty, way more data for the price")
    assert ("u", "phone_network", "Lebara", False) in first
    assert ("u", "phone_network", "Smarty", False) in second
    assert not any(p == "partner" for _s, p, _v, _n in first)


def test_for_a_name_with_a_present_verb_is_an_employer() -> None:
    parse = _splitter().parse
    assert tied("I ride for Deliveroo most evenings", parse) == [("employer", "Deliveroo", "profile", False, 0.75,
                                                                    False)]
    assert tied("I volunteer for Oxfam on saturdays", parse) == []
    assert tied("I don't drive for Bolt", parse) == []  # negated: no tie


def test_an_open_slot_that_is_a_service_takes_the_service_slot() -> None:
    facts = [("energy_company", "Bulb", "fact", False, 0.7, False)]
    assert reslot(facts, "our energy company is Bulb, the bills went up again")[0][0] == "energy_supplier"


def test_with_an_acronym_is_no_partner() -> None:
    facts = [("partner", "EE", "relationship", False, 0.85, False)]
    assert reslot(facts, "I'm with EE") == []
    person = [("partner", "Marco", "relationship", False, 0.85, False)]
    assert reslot(person, "I'm with Marco now") == person


def test_a_tie_with_a_job_said_by_as_is_an_employer() -> None:
    (found,) = _run("I've been with Halfords for six years as a mechanic")
    assert ("u", "employer", "Halfords", False) in found and ("u", "job", "mechanic", False) in found
    (alone,) = _run("I've been with Marta for six years")
    assert not any(p == "employer" for _s, p, _v, _n in alone)


# -- an open slot's key is its subject noun ------------------------------------------------------


def test_an_open_key_is_its_head_noun_and_a_key_with_a_verb_is_no_slot() -> None:
    from markmem.write.extract_slotkey import keyed

    parse = _splitter().parse
    fact = ("main_goal_thi_year", "to run a marathon", "fact", False, 0.7, False)
    assert keyed([fact], "my main goal this year is to run a marathon", parse)[0][0] == "goal"
    verb = ("uncle_say_lisbon", "overrated", "fact", False, 0.7, False)
    assert keyed([verb], "my uncle says Lisbon is overrated", parse) == []
    kept = ("blood_type", "AB positive", "fact", False, 0.7, False)
    assert keyed([kept], "my blood type is AB positive", parse) == [kept]
    attr = ("team_for_sure", "The Wolves", "fact", False, 0.7, False)  # the key is not the subject: kept
    assert keyed([attr], "The Wolves are my team for sure", parse) == [attr]
