"""Facts that change, end to end: real git, SQLite, and spaCy's parser for clauses (no mock).

One memory repo holds every scenario (a user each), compiled in one flush; each test reads the
ledger (what is valid now, or at a time) and what search and the context pack show first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from markmem import Memory
from markmem.model import Claim

pytest.importorskip("spacy")

SCENARIOS: dict[str, list[tuple[str, str]]] = {
    "move": [("2026-01-09T10:00:00Z", "hiya, i'm in sheffield, just so you know"),
             ("2026-05-17T10:00:00Z", "we moved! new place in nottingham, keys yesterday")],
    "job": [("2026-02-14T10:00:00Z", "i'm a line cook at Saltbox"),
            ("2026-06-14T10:00:00Z", "left saltbox, i'm sous chef at Ember & Rye now")],
    "correction": [("2026-02-10T08:00:00Z", "my flight is at 6:40 tomorrow morning"),
                   ("2026-02-10T08:05:00Z", "ugh sorry 7:40 not 6:40, misread the ticket")],
    "negation": [("2026-02-02T10:00:00Z", "i've got a hamster called nibbles"),
                 ("2026-06-02T10:00:00Z", "nibbles died last week, kids are sad")],
    "temporary": [("2026-02-01T10:00:00Z", "i live in prague"),
                  ("2026-05-18T10:00:00Z", "in salzburg for the next few days for work, any cafe tips?")],
    "future": [("2026-01-10T10:00:00Z", "i work at Gable & Finch"),
               ("2026-02-25T10:00:00Z", "accepted an offer at Northwind Energy, start date is april 1st")],
    "third_party": [("2026-03-13T10:00:00Z", "i work at Fairmount Hotels"),
                    ("2026-03-20T10:00:00Z", "my flatmate kai just started at Bramble Bakery")],
    "hypothetical": [("2026-01-21T10:00:00Z", "we live in lille"),
                     ("2026-02-21T10:00:00Z", "what if we moved to brussels, would the commute be worse?")],
    "repeat": [("2026-04-04T10:00:00Z", "i speak french"),
               ("2026-04-05T10:00:00Z", "yes i speak french, told you!")],
    "paraphrase": [("2026-01-11T10:00:00Z", "home for me is a village outside york"),
                   ("2026-06-11T10:00:00Z", "we upped sticks and went to harrogate")],
    "multi_value": [("2026-02-05T10:00:00Z", "i have a tortoise called gus"),
                    ("2026-05-05T10:00:00Z", "we got a kitten too, named fig")],
    "two_facts": [("2026-01-09T10:00:00Z", "I'm a nurse and I prefer window seats")],
    "change_back": [("2026-01-01T10:00:00Z", "i live in turin"), ("2026-03-01T10:00:00Z", "moved to milan"),
                    ("2026-08-01T10:00:00Z", "back to turin! milan was too expensive")],
    "open_slot": [("2026-01-05T10:00:00Z", "my favourite song is dancing queen"),
                  ("2026-06-05T10:00:00Z", "new favourite song: espresso by sabrina carpenter")],
    "routine": [("2026-04-01T10:00:00Z", "i go climbing on sundays"),
                ("2026-04-05T10:00:00Z", "climbing moved to saturdays for me")],
    "replace": [("2026-01-04T10:00:00Z", "i drive a nissan leaf"),
                ("2026-09-04T10:00:00Z", "replaced the leaf with a hyundai ioniq")],
}
ASSISTANT = [("user", "2026-01-10T10:00:00Z", "i live in hull"),
             ("assistant", "2026-01-20T10:00:00Z", "York is lovely, you could also live in York one day."),
             ("user", "2026-01-20T10:01:00Z", "haha ok sounds good")]


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root: Path = tmp_path_factory.mktemp("facts") / "memory"
    m = Memory(root, pii_engine="regex", vector_model=None, background=False, clause_parser="spacy")
    for name, turns in SCENARIOS.items():
        for when, text in turns:
            m.add(text, user_id=name.replace("_", "-"), occurred_at=when)
    for role, when, text in ASSISTANT:
        m.add([{"role": role, "content": text}], user_id="assistant", occurred_at=when)
    m.add("I live in Tartu", user_id="xu-a", occurred_at="2026-01-01T10:00:00Z")
    m.add("I live in Tallinn", user_id="xu-b", occurred_at="2026-01-02T10:00:00Z")
    m.flush()
    yield m
    m.close()


def claims(mem: Memory, user: str) -> list[Claim]:
    return [c for p in mem.get_all(user, include_archived=True) for c in p.claims]


def now_values(mem: Memory, user: str, predicate: str, subject: str | None = None, at: str | None = None) -> set[str]:
    subject = subject or user
    return {c.value.casefold() for c in claims(mem, user) if c.predicate == predicate and c.subject == subject
            and (c.valid_at(at) if at else c.valid_at("2026-12-31T00:00:00Z"))}


def test_a_move_in_ordinary_words_supersedes_the_old_home(mem: Memory) -> None:
    assert now_values(mem, "move", "lives_in") == {"nottingham"}
    assert now_values(mem, "move", "lives_in", at="2026-03-01T00:00:00Z") == {"sheffield"}


def test_a_job_change_closes_employer_and_job(mem: Memory) -> None:
    assert now_values(mem, "job", "employer") == {"ember & rye"}
    assert now_values(mem, "job", "job") == {"sous chef"}


def test_a_correction_replaces_the_value_from_the_start(mem: Memory) -> None:
    (flight,) = [c for c in claims(mem, "correction") if c.predicate == "flight" and c.value.startswith("at 6")]
    assert flight.valid_until == flight.valid_from, "the wrong value was never true"
    assert now_values(mem, "correction", "flight") == {"at 7:40 tomorrow morning"}


def test_a_death_closes_the_pet(mem: Memory) -> None:
    assert now_values(mem, "negation", "pet") == set()
    assert now_values(mem, "negation", "pet", at="2026-03-01T00:00:00Z") == {"hamster named nibbles"}


def test_a_temporary_stay_is_bounded_and_keeps_the_home(mem: Memory) -> None:
    assert now_values(mem, "temporary", "lives_in") == {"prague"}
    (stay,) = [c for c in claims(mem, "temporary") if c.predicate == "staying_in"]
    assert stay.value == "salzburg" and stay.valid_until and stay.valid_until < "2026-06-01"
    assert now_values(mem, "temporary", "staying_in", at="2026-05-19T12:00:00Z") == {"salzburg"}


def test_a_future_dated_change_starts_on_its_date(mem: Memory) -> None:
    assert now_values(mem, "future", "employer", at="2026-03-15T00:00:00Z") == {"gable & finch"}
    assert now_values(mem, "future", "employer", at="2026-04-02T00:00:00Z") == {"northwind energy"}


def test_another_persons_fact_never_closes_the_users(mem: Memory) -> None:
    assert now_values(mem, "third-party", "employer") == {"fairmount hotels"}
    assert now_values(mem, "third-party", "employer", subject="Kai") == {"bramble bakery"}


def test_a_hypothetical_makes_no_claim(mem: Memory) -> None:
    assert now_values(mem, "hypothetical", "lives_in") == {"lille"}
    assert not any("brussels" in c.value.casefold() for c in claims(mem, "hypothetical"))


def test_a_repeat_reinforces_instead_of_adding(mem: Memory) -> None:
    (french,) = [c for c in claims(mem, "repeat") if c.predicate == "speaks"]
    assert len(french.sources) == 2 and french.valid_until is None


def test_paraphrased_moves_are_moves(mem: Memory) -> None:
    assert now_values(mem, "paraphrase", "lives_in") == {"harrogate"}


def test_a_second_pet_adds_to_the_first(mem: Memory) -> None:
    assert now_values(mem, "multi-value", "pet") == {"tortoise named gus", "kitten named fig"}


def test_two_facts_in_one_sentence_are_two_clause_claims(mem: Memory) -> None:
    texts = {c.predicate: c.text for c in claims(mem, "two-facts")}
    assert texts == {"job": "I'm a nurse", "seat_preference": "I prefer window seats"}


def test_changing_back_is_a_change(mem: Memory) -> None:
    assert now_values(mem, "change-back", "lives_in") == {"turin"}
    assert now_values(mem, "change-back", "lives_in", at="2026-05-01T00:00:00Z") == {"milan"}


def test_open_slots_and_routines_supersede(mem: Memory) -> None:
    assert now_values(mem, "open-slot", "favorite_song") == {"espresso by sabrina carpenter"}
    assert now_values(mem, "routine", "routine_climbing") == {"saturdays"}
    assert now_values(mem, "replace", "car") == {"hyundai ioniq"}


def test_users_and_speakers_never_close_each_other(mem: Memory) -> None:
    assert now_values(mem, "xu-a", "lives_in") == {"tartu"} and now_values(mem, "xu-b", "lives_in") == {"tallinn"}
    assert now_values(mem, "assistant", "lives_in") == {"hull"}
    assert all(c.provenance == "user_stated" for c in claims(mem, "assistant"))


def test_the_pack_shows_the_current_value_first_and_never_the_old_one(mem: Memory) -> None:
    pack = mem.search("Where does the user live?", user_id="move", format="context")
    lines = [ln for ln in str(pack).splitlines() if ln.startswith("- ")]
    assert "nottingham" in lines[0]
    assert not any("sheffield" in ln for ln in lines), "the superseded turn is left out of a current pack"


def test_json_hits_mark_a_stale_turn_and_put_its_successor_first(mem: Memory) -> None:
    hits = mem.search("sheffield", user_id="move", top_k=5)
    assert hits[0].kind == "claim" and "nottingham" in hits[0].text
    stale = [h for h in hits if h.kind == "turn" and "sheffield" in h.text]
    assert stale and all(h.superseded_by == hits[0].id and h.valid_until for h in stale)


def test_chit_chat_is_last_and_the_assistant_is_labelled(mem: Memory) -> None:
    hits = mem.search("live ok sounds good", user_id="assistant", top_k=5)
    assert hits[-1].text == "haha ok sounds good"
    pack = str(mem.search("Could I live in York?", user_id="assistant", format="context"))
    assert "- assistant: York is lovely" in pack and "sounds good" not in pack
    assert "## Relevant memories\n\n" not in pack and not pack.rstrip().endswith("memories")
