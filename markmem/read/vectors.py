"""The vector lane: exact cosine over the user's in-memory matrix (see ``index.vectors``).

Up to ``scan_max`` rows the whole matrix is scanned and its top ``depth`` units join the
candidates. Past that, a scan no longer fits the latency budget (100k x 256 floats is 100 MB
to read, 3-12 ms here) and the cosine only re-ranks the other lanes' candidates; on LoCoMo the
scan's extra candidates did not change any result (the lexical lane finds what the static model
finds). The product is ``einsum``, single-threaded: BLAS threads waking up cost a 13 ms p95 on
a busy two-core machine for a 0.25 ms p50.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from ..context import Context
from ..index import vectors as index


@dataclass
class DenseResult:
    """Cosine of the query with every unit of the user, and the lane's top candidates."""

    cos: dict[tuple[str, str], float]
    top: list[tuple[str, str]]


def encode(ctx: Context, text: str) -> np.ndarray | None:
    """The query's vector (None: no embedder, or no known token); the last ``MAX_QUERIES`` are kept
    (read-only), as a chatbot's questions recur: the same model, the same text, the same vector."""
    if ctx.embedder is None:
        return None
    key = (ctx.embedder.name, text)
    hit = _QUERIES.get(key, _MISS)
    if hit is not _MISS:
        return hit  # type: ignore[return-value]
    vec = np.asarray(ctx.embedder.embed([text]), dtype=np.float32)[0]
    out = vec if float(np.dot(vec, vec)) > 0 else None
    if out is not None:
        out.flags.writeable = False
    with _LOCK:
        _QUERIES[key] = out
        while len(_QUERIES) > MAX_QUERIES:
            _QUERIES.popitem(last=False)
    return out


_QUERIES: OrderedDict[tuple[str, str], np.ndarray | None] = OrderedDict()
_MISS = object()
_LOCK = threading.Lock()
MAX_QUERIES = 1024


def forget_queries() -> None:
    """Drop the kept query vectors (an erasure: a question may hold the user's words)."""
    with _LOCK:
        _QUERIES.clear()


def dense(ctx: Context, user_id: str, query: np.ndarray, depth: int, wanted: Collection[tuple[str, str]],
          scan_max: int, stamp: index.Stamp | None = None, rowids: Mapping[tuple[str, str], int] | None = None
          ) -> DenseResult:
    """Top ``depth`` units by cosine, plus the cosine of each ``wanted`` unit (lexical candidates);
    ``stamp``: the user's stamp as the caller read it (see ``index.vectors.matrix``); ``rowids``:
    the raw rowid of wanted turns, when known (their rows are then found by rowid)."""
    assert ctx.embedder is not None
    m = index.matrix(ctx.cache, ctx.embedder, user_id, stamp)
    if m.n == 0:
        return DenseResult({}, [])
    if m.n > scan_max or depth <= 0:
        return _rerank_only(m, query, wanted, rowids or {})
    scores = m.scores(query)
    k = min(depth, m.n)
    idx = np.argpartition(-scores, k - 1)[:k] if k < m.n else np.arange(m.n)
    idx = idx[np.lexsort((idx, -scores[idx]))]
    top = [(m.kinds[i], m.ids[i]) for i in idx.tolist()]
    cos = {key: float(scores[i]) for key, i in zip(top, idx.tolist(), strict=True)}
    for key in set(wanted) - cos.keys():
        i = m.pos.get(key)
        if i is not None:
            cos[key] = float(scores[i])
    return DenseResult(cos, top)


def _rerank_only(m: index.Matrix, query: np.ndarray, wanted: Collection[tuple[str, str]],
                 rowids: Mapping[tuple[str, str], int]) -> DenseResult:
    by_rowid = [k for k in wanted if k in rowids] if rowids and m.turn_rowid is not None else []
    got = m.turn_rows_list([rowids[k] for k in by_rowid], [k[1] for k in by_rowid]) if by_rowid else None
    keys: list[tuple[str, str]] = []
    at: list[int] = []
    if got is not None:
        if got and min(got) >= 0:  # the usual case: every wanted turn has its row
            keys, at = list(by_rowid), got
        else:
            for k, j in zip(by_rowid, got, strict=True):
                if j >= 0:
                    keys.append(k)
                    at.append(j)
        rest = [k for k in wanted if k not in rowids]  # by_rowid's complement in wanted, in wanted's order
    else:
        rest = list(wanted)
    pos = m.pos
    for k in rest:
        i = pos.get(k)
        if i is not None:
            keys.append(k)
            at.append(i)
    if not keys:
        return DenseResult({}, [])
    # einsum as in Matrix.scores: the same cosine as a full scan, whatever the row order (BLAS
    # gemv is not: its blocking can change the last bit), and no BLAS threads to wake
    sims = np.einsum("ij,j->i", m.data.take(at, axis=0), query)
    return DenseResult(dict(zip(keys, sims.tolist(), strict=True)), [])
