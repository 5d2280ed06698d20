"""A turn is judged by its best sentence too (read.passage): the fact a long request wraps is not diluted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from markmem import Memory
from markmem.read import passage
from markmem.read.fuse import Recipe
from markmem.read.search import search

LONG = ("I'm looking for some new workout playlists for my exercise routines. Something upbeat would be "
        "great. By the way, I take Zumba classes on Tuesdays and Thursdays at 7 PM. Any suggestions?")
SHORT = "Upbeat playlists are great for any workout."


@pytest.fixture
def vmem(tmp_repo: Path) -> Iterator[Memory]:
    """The shipped static vectors: the lift needs a model to embed sentences with."""
    m = Memory(tmp_repo, pii_engine="regex", background=False)
    m.add(LONG, user_id="zoe", occurred_at="2023-05-20T10:00:00Z")
    m.add(SHORT, user_id="zoe", occurred_at="2023-05-21T10:00:00Z")
    m.add("I adopted a golden retriever called Max last spring.", user_id="zoe", occurred_at="2023-05-22T10:00:00Z")
    yield m
    m.close()


def test_split_keeps_sentences_of_three_words_or_more() -> None:
    assert passage.split("Thanks! I take Zumba on Tuesdays. Any tips?\nWow. See you at the gym tonight") == [
        "I take Zumba on Tuesdays.", "See you at the gym tonight"]
    assert passage.split("") == []
    assert passage.split("Ok.") == []


def _cos(mem: Memory, a: str, b: str) -> float:
    emb = mem.context.embedder
    assert emb is not None
    va, vb = np.asarray(emb.embed([a]))[0], np.asarray(emb.embed([b]))[0]
    return float(va @ vb)


def test_a_long_turn_scores_by_its_best_sentence(vmem: Memory) -> None:
    q = "What days do I take Zumba classes?"
    on = search(vmem.context, q, "zoe", 3, explain=True)
    off = search(vmem.context, q, "zoe", 3, explain=True, recipe=Recipe(sentence_weight=0.0))
    long_on = next(h for h in on if h.text == LONG)
    long_off = next(h for h in off if h.text == LONG)
    best = max(_cos(vmem, q, s) for s in passage.split(LONG))
    weights = (long_on.explain or {})["weights"]
    assert weights["sentence"] == pytest.approx(best, abs=1e-4)
    assert best > (long_on.explain or {})["cosine"]  # the Zumba sentence beats the whole turn's mean
    assert long_on.score == pytest.approx(long_off.score + Recipe().sentence_weight * best, abs=1e-4)
    assert "sentence" not in (long_off.explain or {})["weights"]


def test_a_one_sentence_turn_adds_its_own_cosine(vmem: Memory) -> None:
    hits = search(vmem.context, "workout playlists", "zoe", 3, explain=True)
    short = next(h for h in hits if h.text == SHORT)
    trace = short.explain or {}
    assert trace["weights"]["sentence"] == pytest.approx(trace["cosine"], abs=1e-6)


def test_without_vectors_nothing_changes(mem: Memory) -> None:
    mem.add(LONG, user_id="zoe")
    hits = search(mem.context, "Zumba classes", "zoe", 3, explain=True)
    assert hits and all("sentence" not in (h.explain or {})["weights"] for h in hits)


def test_sentence_vectors_are_kept_and_an_erasure_drops_them(vmem: Memory) -> None:
    passage._SENTS.clear()
    vmem.search("Zumba on Tuesdays", user_id="zoe")
    assert passage._SENTS  # kept per turn: the next search does not embed them again
    vmem.forget("zoe", mode="scrub")
    assert not passage._SENTS
