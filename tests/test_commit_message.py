"""Compile commits read well in ``git log``: users, predicates and counts, never the user's words."""

from __future__ import annotations

from markmem import Memory
from markmem.model import Claim, Page
from markmem.write.summary import compile_message
from tests.conftest import git


def _log(mem: Memory) -> list[str]:
    return [c.strip() for c in git(mem.root, "log", "--format=%s%n%b%x00").split("\x00")]


def test_subjects_name_users_predicates_and_counts(mem: Memory) -> None:
    mem.add("I live in Lisbon", user_id="bob")
    mem.flush()
    mem.add("I moved to Porto", user_id="bob")
    mem.flush()
    newest, first = _log(mem)[:2]
    assert newest.splitlines()[0] == "compile: u/bob lives_in superseded; 1 added (lives_in)"
    assert "Markmem-Superseded: lives_in" in newest and "Markmem-Predicates: lives_in" in newest
    assert first.splitlines()[0] == "compile: u/bob 1 added (lives_in)"
    assert "Porto" not in newest and "Lisbon" not in first  # values stay out of the log


def test_a_predicate_outside_the_vocabulary_is_named_by_its_page_type() -> None:
    stamp = "2026-01-01T00:00:00Z"
    claims = (Claim("c-1", "bob", "secret_project_name", "x", "x", recorded_at=stamp),
              Claim("c-2", "bob", "pet", "dog", "a dog", recorded_at=stamp))
    page = Page("u/bob/fact/p-1", "fact", "bob", "t", stamp, stamp, claims)
    subject, trailers = compile_message(["ann", "bob"], [page], stamp, 1, 2, 0, 0)
    assert subject == "compile: 2 users; 2 added (other fact, pet)"  # one user's history never names another
    assert trailers == {"Markmem-Predicates": "other fact,pet"}
    odd = Page("u/bob/x/p-2", "secret_type", "bob", "t", stamp, stamp, claims[:1])  # a lying page type
    assert compile_message(["bob"], [odd], stamp, 1, 1, 0, 0)[0] == "compile: u/bob 1 added (other)"


def test_an_open_slot_change_names_its_page_type(mem: Memory) -> None:
    mem.add("I prefer window seats", user_id="bob", occurred_at="2026-01-01T10:00:00Z")
    mem.flush()
    mem.add("Actually I prefer aisle seats now", user_id="bob", occurred_at="2026-02-01T10:00:00Z")
    mem.flush()
    newest = _log(mem)[0]
    assert newest.splitlines()[0].startswith("compile: u/bob other preference superseded;")
    assert "aisle" not in newest and "window" not in newest


def test_a_batch_without_facts_says_so(mem: Memory) -> None:
    mem.add("hello there", user_id="bob")
    mem.flush()
    assert _log(mem)[0].splitlines()[0] == "compile: u/bob 1 entry, no new facts"


def test_a_history_rewrite_takes_the_user_out_of_the_subjects(mem: Memory) -> None:
    mem.add("I live in Lisbon", user_id="bob")
    mem.add("I live in Oslo", user_id="ann")
    mem.flush()
    mem.add("I moved to Porto", user_id="bob")
    mem.flush()
    assert "compile: u/bob" in git(mem.root, "log", "--format=%s")
    mem.forget("bob", mode="rewrite")
    subjects = git(mem.root, "log", "--format=%s")
    assert "bob" not in subjects and "compile: 2 users;" in subjects


def test_a_fact_said_and_replaced_within_one_batch_is_named_superseded(mem: Memory) -> None:
    mem.add("I live in Lisbon", user_id="bob", occurred_at="2026-01-01T10:00:00Z")
    mem.add("I moved to Porto", user_id="bob", occurred_at="2026-02-01T10:00:00Z")
    mem.flush()
    newest = _log(mem)[0]
    assert newest.splitlines()[0] == "compile: u/bob lives_in superseded; 2 added (lives_in)"
    assert "Markmem-Superseded: lives_in" in newest
