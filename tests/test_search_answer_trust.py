"""What a question passes to its answer is scaled by the asking turn's trust (Recipe.answer_trust).

An assistant's turn that ends with a question ("... Would you like more tips?") is trusted at
``ROLE_TRUST["assistant"]``; before, the user's next turn inherited the assistant turn's relevance at full
trust, which put the user's chit-chat replies above the user's own disclosures (bench/results/recall.md,
round 4). A short question ("What position?") passes everything, whoever asks: the answer ("keeper")
means nothing without it. A person asking a person (LoCoMo: every turn a user turn) passes as before.
"""

from __future__ import annotations

from markmem import Memory
from markmem.read import said
from markmem.read.fuse import ROLE_TRUST, Cand, Recipe, _propagate
from markmem.read.search import search

LONG = "For a rich sauce, simmer tomatoes with garlic and basil for an hour. Would you like a creamy one too?"


def _pair(asker: str, score: float = 1.0, text: str = LONG) -> list[Cand]:
    question = Cand("turn", "q", {"rowid": 1, "role": asker, "question": 1, "answer": 2, "content": text})
    answer = Cand("turn", "a", {"rowid": 2, "role": "user" if asker == "assistant" else "assistant"})
    question.score, answer.score = score, 0.0
    return [question, answer]


def test_an_assistant_question_passes_its_answer_only_its_trust() -> None:
    cands = _pair("assistant")
    _propagate(cands, 0.9, ROLE_TRUST)
    assert cands[1].score == 0.9 * ROLE_TRUST["assistant"]
    assert cands[1].answer_to == "q"


def test_a_short_assistant_question_passes_everything() -> None:
    # "You mentioned you live in Geneva, right?" -> "no, Basel": the answer is nothing without its question
    cands = _pair("assistant", text="You mentioned you live in Geneva, right?")
    _propagate(cands, 0.9, ROLE_TRUST)
    assert cands[1].score == 0.9


def test_the_length_search_measured_counts_over_the_row_text() -> None:
    cands = _pair("assistant", text="")
    cands[0].row["chars"] = len(LONG)  # a lexicon row without its text: search reads the length
    _propagate(cands, 0.9, ROLE_TRUST)
    assert cands[1].score == 0.9 * ROLE_TRUST["assistant"]


def test_a_user_question_passes_as_before() -> None:
    with_roles, without = _pair("user"), _pair("user")
    _propagate(with_roles, 0.9, ROLE_TRUST)
    _propagate(without, 0.9)
    assert with_roles[1].score == without[1].score == 0.9


def test_without_roles_every_asker_passes_the_full_share() -> None:
    cands = _pair("assistant")
    _propagate(cands, 0.9)
    assert cands[1].score == 0.9


def test_a_question_about_what_the_assistant_said_trusts_its_questions_too() -> None:
    cands = _pair("assistant")
    _propagate(cands, 0.9, said.ASKED_ROLES)
    assert cands[1].score == 0.9


def test_an_answer_keeps_its_own_score_when_it_is_higher() -> None:
    cands = _pair("assistant")
    cands[1].score = 0.5
    _propagate(cands, 0.9, ROLE_TRUST)
    assert cands[1].score == 0.5 and cands[1].answer_to is None


def test_the_default_recipe_scales_by_trust() -> None:
    assert Recipe().answer_trust


def _chat(mem: Memory) -> None:
    mem.add([{"role": "user", "content": "Any tips for pasta sauce?"},
             {"role": "assistant", "content": "For a rich pasta sauce, simmer tomatoes with garlic and basil for an "
                                              "hour. Would you like a recipe for a creamy pasta sauce too?"},
             {"role": "user", "content": "Sure, that sounds lovely."}],
            user_id="pa", occurred_at="2023-03-04T10:00:00Z")
    mem.add("I cook a pasta sauce from my grandmother's notebook every Sunday", user_id="pa",
            occurred_at="2023-03-05T10:00:00Z")


def _score_of(hits: list, text: str) -> float:
    return next(h.score for h in hits if h.text == text)


def test_in_search_a_reply_to_the_assistant_inherits_less(mem: Memory) -> None:
    _chat(mem)
    q = "What pasta sauce do I cook?"
    on = search(mem.context, q, "pa", 10, explain=True, recipe=Recipe(vectors=False))
    off = search(mem.context, q, "pa", 10, explain=True, recipe=Recipe(vectors=False, answer_trust=False))
    reply = "Sure, that sounds lovely."
    assert _score_of(on, reply) < _score_of(off, reply)
    own = "I cook a pasta sauce from my grandmother's notebook every Sunday"
    assert _score_of(on, own) == _score_of(off, own)  # the user's own words score as before
    assert on[0].text == own
