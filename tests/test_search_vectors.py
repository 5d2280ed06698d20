"""The vector lane: content-hash reuse, lazy batched embedding, matrix invalidation, isolation,
the shipped model finding a match with no shared word, and identical results after a rebuild."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from markmem import Memory
from markmem.index import vectors as index
from markmem.testing import FakeEmbedder


class CountingEmbedder(FakeEmbedder):
    """FakeEmbedder that remembers every text it embedded."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]
        self.seen += list(texts)
        return super().embed(texts)


def open_mem(repo: Path, embedder: FakeEmbedder | None = None) -> Memory:
    m = Memory(repo, pii_engine="regex", vector_model=None, background=False)
    m.context.embedder = embedder or CountingEmbedder()
    return m


@pytest.fixture
def vmem(tmp_repo: Path):  # type: ignore[no-untyped-def]
    m = open_mem(tmp_repo)
    yield m
    m.close()


def test_add_never_embeds_and_search_embeds_pending_turns_once(vmem: Memory) -> None:
    emb = vmem.context.embedder
    assert isinstance(emb, CountingEmbedder)
    vmem.add("the quokka sanctuary opens at nine", user_id="alice")
    vmem.add("I work as a pilot", user_id="alice")
    assert emb.seen == [], "add() stays fast: nothing is embedded on the hot path"
    hits = vmem.search("quokka", user_id="alice", explain=True)
    assert hits[0].explain and hits[0].explain["cosine"] is not None
    assert sorted(emb.seen) == ["I work as a pilot", "quokka", "the quokka sanctuary opens at nine"]
    vmem.search("pilot", user_id="alice")
    assert emb.seen[3:] == ["pilot"], "only the new query: no stored text is embedded twice"


def test_unchanged_text_is_never_re_embedded(tmp_repo: Path) -> None:
    with open_mem(tmp_repo) as m:
        m.add("I live in Lisbon", user_id="alice")
        m.add("we watched the zeppelin documentary", user_id="alice")
        m.flush()  # compile embeds the new claim and the turns in one batch
        emb = m.context.embedder
        assert isinstance(emb, CountingEmbedder)
        first = list(emb.seen)
        assert sorted(first) == sorted(["I live in Lisbon", "I live in Lisbon", "we watched the zeppelin documentary"])
        m.add("I prefer tea", user_id="alice")
        m.flush()  # the lives_in page is not rewritten; only new text is embedded
        assert sorted(emb.seen[len(first):]) == ["I prefer tea", "I prefer tea"]
    index.forget_all()  # a new process: in-memory matrices are gone, the cache's vectors are not
    with open_mem(tmp_repo) as again:
        emb2 = again.context.embedder
        assert isinstance(emb2, CountingEmbedder)
        again.search("Lisbon", user_id="alice")
        assert emb2.seen == ["Lisbon"], "every stored vector's hash still matches its text"


def test_vectors_follow_deletes_and_erasure(vmem: Memory) -> None:
    vmem.add("I live in Lisbon", user_id="alice")
    vmem.add("I live in Lisbon too", user_id="bob")
    vmem.flush()
    assert vmem.search("Lisbon", user_id="alice")
    assert index.matrix(vmem.context.cache.user("bob"), vmem.context.embedder, "bob").n == 2  # type: ignore[arg-type]
    vmem.forget("bob")
    assert vmem.search("Lisbon", user_id="bob") == []
    assert index.matrix(vmem.context.cache.user("bob"), vmem.context.embedder, "bob").n == 0  # type: ignore[arg-type]
    assert vmem.context.cache.count("vectors", "bob") == 0
    assert vmem.search("Lisbon", user_id="alice")


def test_vector_only_candidates_respect_user_and_time(vmem: Memory) -> None:
    vmem.add("alpha beta gamma delta", user_id="bob")
    vmem.add("alpha beta gamma delta epsilon", user_id="alice", occurred_at="2026-05-01T00:00:00Z")
    # "delta-gamma" is one FTS phrase that matches nothing; the vector lane still sees the words
    hits = vmem.search("gamma-alpha-delta-beta", user_id="alice", top_k=10, explain=True)
    assert [h.user_id for h in hits] == ["alice"]
    assert hits[0].explain and "vector" in hits[0].explain["lanes"]
    assert vmem.search("gamma-alpha-delta-beta", user_id="alice", as_of="2026-01-01T00:00:00Z") == []


def test_identical_results_after_reindex_with_vectors(tmp_repo: Path) -> None:
    def results(m: Memory) -> list[object]:
        return [[(h.id, h.score) for h in m.search(q, user_id="alice", top_k=5)]
                for q in ("where do I live", "pilot", "which pet", "tea or coffee")]

    with open_mem(tmp_repo) as m:
        m.add("I live in Lisbon and I work as a pilot", user_id="alice", occurred_at="2026-01-01T00:00:00Z")
        m.add("Alex: which pet do you have?", user_id="alice", occurred_at="2026-01-02T00:00:00Z")
        m.add("Sam: a guinea pig", user_id="alice", occurred_at="2026-01-02T00:00:00Z")
        m.add("I prefer tea", user_id="alice", occurred_at="2026-01-03T00:00:00Z")
        m.flush()
        m.add("coffee in the morning though", user_id="alice", occurred_at="2026-01-04T00:00:00Z")
        before = results(m)
        m.reindex()
        assert results(m) == before


def test_the_shipped_model_finds_a_match_without_a_shared_word(tmp_repo: Path) -> None:
    pytest.importorskip("model2vec")
    with Memory(tmp_repo, pii_engine="regex", background=False) as m:  # default: the built-in model
        assert m.context.embedder is not None and m.context.embedder.name == "markmem/minilm-m2v"
        for text in ("my dog Rex loves the beach", "I drive a red car to work", "the quarterly report is due friday",
                     "I am vegetarian and never eat meat"):
            m.add(text, user_id="alice")
        assert "dog" in m.search("puppy", user_id="alice")[0].text
        assert "car" in m.search("vehicle", user_id="alice")[0].text
        assert "vegetarian" in m.search("food diet", user_id="alice")[0].text
        vec = m.context.embedder.embed(["puppy"])
        assert vec.shape == (1, 256) and abs(float(np.linalg.norm(vec)) - 1) < 1e-5
