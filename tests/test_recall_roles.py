"""A question about the user's own life trusts the user's words over the assistant's (fuse.ROLE_TRUST).

The assistant's turns repeat the user's topic at length ("Golden Retrievers are a wonderful breed ...")
and so match a question's words better than the user's short disclosure; the disclosure is the fact.
They score at ``Recipe.assistant_trust`` (0.4), unless read/said finds the question asking back for
what the assistant said, when they score as the user's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from markmem import Memory
from markmem.read.fuse import DEFAULT, ROLE_TRUST, Recipe
from markmem.read.search import search

USER = "We adopted Max last spring, he is a golden retriever and loves the lake."
ASSISTANT = ("What breed of dog suits a family is a great question! A golden retriever is a friendly dog breed, "
             "and many dog breeds love water. Which dog breed are you thinking of?")


@pytest.fixture
def vmem(tmp_repo: Path) -> Iterator[Memory]:
    """The shipped static vectors and real SQLite: the default search, as users get it."""
    m = Memory(tmp_repo, pii_engine="regex", background=False)
    m.add([{"role": "user", "content": USER}, {"role": "assistant", "content": ASSISTANT}],
          user_id="kim", occurred_at="2023-05-20T10:00:00Z")
    m.add("I walked to the bakery for bread this morning.", user_id="kim", occurred_at="2023-05-21T10:00:00Z")
    yield m
    m.close()


def _by_role(hits: list, role: str):  # type: ignore[no-untyped-def]
    return next(h for h in hits if h.role == role)


def test_the_default_trusts_an_assistant_turn_at_0_4(vmem: Memory) -> None:
    assert ROLE_TRUST["assistant"] == DEFAULT.assistant_trust == 0.4
    hits = search(vmem.context, "What breed is my dog?", "kim", 5, explain=True)
    assistant = _by_role(hits, "assistant")
    assert (assistant.explain or {})["weights"]["provenance"] == 0.4
    assert "provenance" not in (_by_role(hits, "user").explain or {})["weights"]


def test_the_users_disclosure_ranks_above_the_assistants_wordier_turn(vmem: Memory) -> None:
    q = "What breed is my dog?"
    now = search(vmem.context, q, "kim", 5, explain=True)
    before = search(vmem.context, q, "kim", 5, explain=True, recipe=replace(DEFAULT, assistant_trust=0.6))
    # the assistant repeats "breed" and "dog": at 0.6 fusion scores it above the user's turn (read/facts then
    # gives the first place of a question about the user to a statement, so the order alone no longer shows it)
    assert _by_role(before, "assistant").score > _by_role(before, "user").score
    assert [h.role for h in now[:2]] == ["user", "assistant"]
    assert _by_role(now, "user").score == _by_role(before, "user").score  # the user's turns are untouched
    assert _by_role(now, "assistant").score < _by_role(before, "assistant").score


def test_a_question_asking_what_the_assistant_said_still_trusts_it_as_the_user(vmem: Memory) -> None:
    hits = search(vmem.context, "Which dog breed did you say suits a family?", "kim", 5, explain=True)
    assistant = _by_role(hits, "assistant")
    assert "provenance" not in (assistant.explain or {})["weights"]
    assert (assistant.explain or {})["query"]["asks_assistant"] is True


def test_the_recipe_field_sets_the_trust(vmem: Memory) -> None:
    for trust in (0.2, 0.6, 1.0):
        hits = search(vmem.context, "What breed is my dog?", "kim", 5, explain=True,
                      recipe=Recipe(assistant_trust=trust))
        weights = (_by_role(hits, "assistant").explain or {})["weights"]
        assert weights.get("provenance", 1.0) == trust
