"""Questions about what the assistant said (read.said) do not demote the assistant's turns."""

from __future__ import annotations

import pytest

from markmem import Memory
from markmem.read import said
from markmem.read.fuse import Recipe
from markmem.read.search import search


@pytest.mark.parametrize("question", [
    "Which traditional game did you say was performed by skilled dancers?",
    "What's the phone number of the tourism board that you provided me earlier?",
    "Can you remind me of that dessert shop?",
    "I'm looking back at our previous conversation about the case. What year was it?",
    "What was the recipe you'd suggested for the cake?",
    "Which hotel did you recommend?",
    "What did you tell me about the museum?",
])
def test_questions_asking_what_the_assistant_said(question: str) -> None:
    assert said.asks_assistant(question)


@pytest.mark.parametrize("question", [
    "Can you recommend some documentaries?", "What do you suggest I bake?", "What breed is my dog?",
    "Where did I study abroad?", "How many days passed between my trip and the concert?", "",
])
def test_questions_that_do_not_ask_back(question: str) -> None:
    assert not said.asks_assistant(question)


def _assistant_answer(mem: Memory) -> None:
    mem.add([{"role": "user", "content": "Which dessert shop in Orlando has giant milkshakes?"},
             {"role": "assistant",
              "content": "The Sugar Factory in Orlando is the dessert shop with giant milkshakes."}],
            user_id="al", occurred_at="2023-03-04T10:00:00Z")
    mem.add("I love the giant milkshakes at any dessert shop in Orlando", user_id="al",
            occurred_at="2023-03-05T10:00:00Z")


def test_a_question_about_what_the_assistant_said_ranks_its_turn_as_the_users(mem: Memory) -> None:
    _assistant_answer(mem)
    q = "Can you remind me of the dessert shop with giant milkshakes in Orlando you mentioned?"
    on = search(mem.context, q, "al", 3, explain=True, recipe=Recipe(vectors=False, assistant_asked=True))
    off = search(mem.context, q, "al", 3, explain=True, recipe=Recipe(vectors=False, assistant_asked=False))
    said_on = next(h for h in on if h.role == "assistant")
    said_off = next(h for h in off if h.role == "assistant")
    assert "provenance" not in (said_on.explain or {})["weights"]
    assert (said_off.explain or {})["weights"]["provenance"] == Recipe().assistant_trust
    assert said_on.score > said_off.score
    assert (said_on.explain or {})["query"]["asks_assistant"] is True
    assert Recipe().assistant_asked  # the default
    # the user's own turns keep their trust either way
    assert [h.score for h in on if h.role == "user"] == [h.score for h in off if h.role == "user"]

