"""Two plain retrieval baselines that markmem's ranking must beat on data it was not tuned on (issues #12, #18).

* ``Bm25``: Okapi BM25 as SQLite FTS5 computes it (``bm25()``, k1=1.2, b=0.75) over one in-memory table
  with markmem's own tokenizer (``porter unicode61 remove_diacritics 2``, the tokenizer of its turn index),
  so the baseline splits and stems words exactly as markmem does. The query is every word of the question
  OR-ed together: no stopword list, no date prefix, no neighbour context, no boosts.
* ``hybrid``: that BM25 ranking and the cosine ranking of the shipped model2vec model (markmem's
  ``adapters/vectors.py`` embedder, the same one its vector lane uses), fused by reciprocal rank fusion
  (RRF, k=60). Nothing else.

Both rank the documents they are given (turn texts) and return their indices, best first.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

import numpy as np

TOKENIZE = "porter unicode61 remove_diacritics 2"  # markmem.index.lexicon.TOKENIZE (raw_fts's tokenizer)
RRF_K = 60
_WORD = re.compile(r"\w+")


def fts_query(text: str) -> str | None:
    """``"When did I buy it?"`` -> ``'"when" OR "did" OR "i" OR "buy" OR "it"'`` (None: no word at all)."""
    words = list(dict.fromkeys(w.casefold() for w in _WORD.findall(text)))
    return " OR ".join(f'"{w}"' for w in words) or None


class Bm25:
    """An FTS5 table over ``texts``: ``rank(query)`` -> indices of the texts matching any query word, best first."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZE}')")
        self._db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", ((i, s) for i, s in enumerate(texts)))

    def rank(self, query: str, limit: int = 1000) -> list[int]:
        match = fts_query(query)
        if match is None:
            return []
        rows = self._db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT ?", (match, limit))
        return [r[0] for r in rows]

    def close(self) -> None:
        self._db.close()


def cosine_rank(query_vec: np.ndarray, doc_vecs: np.ndarray) -> list[int]:
    """Indices of ``doc_vecs`` (rows L2-normalised) by cosine to ``query_vec``, best first; ties by index."""
    if len(doc_vecs) == 0:
        return []
    scores = doc_vecs @ query_vec
    return [int(i) for i in np.lexsort((np.arange(len(scores)), -scores))]


def rrf(*rankings: Sequence[int], k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion: score(d) = sum over rankings of 1 / (k + rank), rank from 1; ties by index."""
    score: dict[int, float] = {}
    for ranking in rankings:
        for pos, doc in enumerate(ranking, start=1):
            score[doc] = score.get(doc, 0.0) + 1.0 / (k + pos)
    return sorted(score, key=lambda d: (-score[d], d))


class Baselines:
    """Both baselines over one haystack: ``bm25(q)`` and ``hybrid(q)`` -> document indices, best first."""

    def __init__(self, texts: Sequence[str], embedder: object | None) -> None:
        self.index = Bm25(texts)
        self.embedder = embedder
        self.vecs = embedder.embed(list(texts)) if embedder is not None and texts else None  # type: ignore[attr-defined]

    def bm25(self, query: str) -> list[int]:
        return self.index.rank(query)

    def hybrid(self, query: str) -> list[int]:
        lexical = self.index.rank(query)
        if self.vecs is None:
            return lexical
        qvec = self.embedder.embed([query])[0]  # type: ignore[union-attr]
        return rrf(lexical, cosine_rank(qvec, self.vecs))

    def close(self) -> None:
        self.index.close()


def load_builtin_embedder() -> object | None:
    """markmem's shipped model2vec model (``vector_model="builtin"``); None when it cannot load."""
    from markmem.adapters.vectors import load_embedder
    from markmem.errors import RepoError

    try:
        return load_embedder("builtin")
    except RepoError as exc:
        print(f"warning: no vectors for the hybrid baseline ({exc}); it falls back to BM25", flush=True)
        return None
