"""A user's in-memory BM25 index (``index.lexicon``), saved beside the cache for the next process.

Building a lexicon tokenizes and stems every turn of the user (~80 us a turn: 40 ms at 500 turns,
0.8 s at 10k), which a fresh process (a CLI call, a serverless handler, a worker just started)
would pay on its first search. ``save`` writes what the build produced (the term list, the CSR
postings, each row's rowid, size, quarantine flag, dates and the light-row fields) into
``vec/<user>.lex`` (``index.savefile``); ``load`` reads it back in a few milliseconds.

Freshness is the lexicon's own: the file carries the stamp it reflects (cache ``epoch``,
``user_gen`` ``added`` and ``turns``). It is used only at the same epoch and ``turns`` with no more
``added`` than now; turns added since are then caught up as for an in-memory index
(``lexicon._catch_up``). A file written by other code, of another user, stale, truncated or
corrupt reads as None: the lexicon is rebuilt from SQLite (and the file rewritten). Erasure and a
recreated cache (``reindex``) delete the files (``vecfile.forget_user_files`` / ``forget_all_files``).

The saved numbers are the built ones, so rankings are bit for bit those of a rebuilt index
(``tests/test_search_cold.py`` compares a process that loads the file with one that rebuilds).
"""

from __future__ import annotations

import marshal
import sys
import threading
from collections.abc import MutableSequence, Sequence
from pathlib import Path

import numpy as np

from . import lexicon, savefile, stem, text
from .lexicon import Info, Lexicon, Stamp

KIND = "lex"
SAVE = True  # False: never read or write the files (tests compare the two)
SAVE_AFTER = 256  # turns added since the file was written (at least; or an eighth) before it is rewritten
_SAVED: dict[tuple[str, str], int] = {}  # (cache file, user) -> rows in the file this process wrote or read
_LOCK = threading.Lock()


def _tag() -> int:
    return savefile.code_tag(lexicon, stem, text, sys.modules[__name__])


def load(cache_path: Path, user_id: str, now: Stamp) -> Lexicon | None:
    """The saved lexicon when it can serve ``now`` (same epoch and ``turns``, no more ``added``),
    at the stamp it was saved with; else None."""
    path = savefile.path_of(cache_path, user_id, KIND) if SAVE else None
    got = savefile.read(path, KIND) if path is not None else None
    if got is None:
        return None
    head, arr = got
    try:
        stamp = (str(head["stamp"][0]), int(head["stamp"][1]), int(head["stamp"][2]))
        if head["tag"] != _tag() or head["user"] != user_id or not head["ok"]:
            return None
        if stamp[0] != now[0] or stamp[2] != now[2] or stamp[1] > now[1]:
            return None
        lex = _lexicon(stamp, head, arr)
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    with _LOCK:
        _SAVED[(str(cache_path), user_id)] = lex.n
    return lex


def _lexicon(stamp: Stamp, head: dict, arr: dict[str, np.ndarray]) -> Lexicon:  # type: ignore[type-arg]
    n = int(head["n"])
    terms, valid_at, recorded_at = head["terms"], head["valid_at"], head["recorded_at"]
    if not all(isinstance(x, list) for x in (terms, valid_at, recorded_at)):
        raise ValueError("saved lexicon columns are not lists")
    info = Rows(arr["info"], arr["info_at"])
    if not (len(arr["rowid"]) == len(arr["size"]) == len(arr["quarantined"]) == n == len(valid_at)
            == len(recorded_at) == len(info)) or len(arr["ptr"]) != len(terms) + 1:
        raise ValueError("inconsistent saved lexicon")
    if not (len(arr["doc"]) == len(arr["nb"]) == len(arr["nc"]) == int(arr["ptr"][-1])):
        raise ValueError("inconsistent saved postings")
    lex = Lexicon(stamp)
    lex.tokens.ids = dict(zip(terms, range(len(terms)), strict=True))
    lex.n = n
    lex.rowid, lex.size, lex.quarantined = arr["rowid"], arr["size"], arr["quarantined"]
    lex.stale = np.zeros(n, bool)
    lex.valid_at, lex.recorded_at, lex.info = valid_at, recorded_at, info  # marshal's own new lists: not copied
    lex.pos = dict(zip(lex.rowid.tolist(), range(n), strict=True))
    lex.raw_seen = int(head["raw_seen"])
    lex.ptr = arr["ptr"]
    # saved narrower: widened term by term when read (``Lexicon.postings``), not all at once (~8 ms at 10k)
    lex.doc, lex.nb, lex.nc = arr["doc"], arr["nb"], arr["nc"]
    lex.total = int(head["total"])
    return lex


def due(cache_path: Path, user_id: str, lex: Lexicon) -> bool:
    """Whether ``lex`` should be (re)written: no file yet from this process, or it has outgrown it."""
    if not SAVE or not lex.ok or str(cache_path) == ":memory:":
        return False
    with _LOCK:
        saved = _SAVED.get((str(cache_path), user_id))
    return saved is None or lex.n - saved >= max(SAVE_AFTER, saved // 8)


def save(cache_path: Path, user_id: str, lex: Lexicon) -> None:
    """Write ``lex`` (its recent changes folded into the base first: the same postings, so the same
    scores). Failures are ignored: the lexicon is rebuilt next time."""
    path = savefile.path_of(cache_path, user_id, KIND)
    if path is None or not lex.ok:
        return
    if lex.delta or lex.any_stale:
        lex.compact()
    n = lex.n
    head = {"tag": _tag(), "user": user_id, "stamp": list(lex.stamp), "n": n, "total": int(lex.total), "ok": True,
            "raw_seen": int(lex.raw_seen), "terms": list(lex.tokens.ids), "valid_at": lex.valid_at[:n],
            "recorded_at": lex.recorded_at[:n]}
    info, info_at = _rows(lex.info[:n])
    arrays = {"info": info, "info_at": info_at,
              "rowid": lex.rowid[:n].astype(np.int64), "size": lex.size[:n].astype(np.float64),
              "quarantined": lex.quarantined[:n].astype(bool), "ptr": lex.ptr.astype(np.int64),
              "doc": _narrow(lex.doc), "nb": _narrow(lex.nb), "nc": _narrow(lex.nc)}
    if savefile.write(path, KIND, head, arrays):
        with _LOCK:
            _SAVED[(str(cache_path), user_id)] = n


def _rows(rows: Sequence[Info]) -> tuple[np.ndarray, np.ndarray]:
    """Each row marshalled on its own (uint8), and where each starts (int64, one more than rows)."""
    blobs = [marshal.dumps(r) for r in rows]
    at = np.zeros(len(blobs) + 1, np.int64)
    np.cumsum([len(b) for b in blobs], out=at[1:])
    return np.frombuffer(b"".join(blobs), np.uint8), at


_ALL_LOCK = threading.Lock()


class Rows(MutableSequence[Info]):
    """A saved lexicon's ``info`` (``_rows``), each row decoded when first read: a fresh process's
    first search reads the rows of its few candidates, not all of them (unmarshalling 10k tuples
    cost ~9 ms of that search at load). A write (turns caught up) decodes every row into a list
    first, then works on it as the built lexicon's list."""

    def __init__(self, blob: np.ndarray, at: np.ndarray) -> None:
        if blob.dtype != np.uint8 or at.dtype != np.int64 or len(at) < 1 or int(at[0]) != 0 \
                or int(at[-1]) != len(blob) or (len(at) > 1 and bool((np.diff(at) <= 0).any())):
            raise ValueError("inconsistent saved rows")
        self._blob, self._at = blob.data, at
        self._n = len(at) - 1
        self._seen: list[Info | None] = [None] * self._n  # decoded so far
        self._list: list[Info] | None = None

    def _row(self, i: int) -> Info:
        i = int(i)
        if not -self._n <= i < self._n:
            raise IndexError("row out of range")
        i %= self._n
        row = marshal.loads(self._blob[int(self._at[i]):int(self._at[i + 1])])
        if not isinstance(row, tuple) or len(row) != 6:
            raise ValueError("a saved row is not a turn's")
        self._seen[i] = row
        return row

    def _all(self) -> list[Info]:
        if self._list is None:
            with _ALL_LOCK:  # one list, whichever thread (a search settling, a write) gets here first
                if self._list is None:
                    self._list = [self._seen[i] or self._row(i) for i in range(self._n)]  # type: ignore[misc]
        return self._list

    def settle(self) -> list[Info]:
        """Every row decoded, as the plain list this object works on from now (the lexicon then
        reads that list itself: a list index, not a method call per row)."""
        return self._all()

    def __len__(self) -> int:
        return len(self._list) if self._list is not None else self._n

    def __getitem__(self, i):  # type: ignore[no-untyped-def,override]
        if self._list is not None:
            return self._list[i]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        return self._seen[i] or self._row(i)  # a row read before: one list lookup

    def __setitem__(self, i, row) -> None:  # type: ignore[no-untyped-def,override]
        self._all()[i] = row

    def __delitem__(self, i) -> None:  # type: ignore[no-untyped-def,override]
        del self._all()[i]

    def insert(self, i: int, row: Info) -> None:
        self._all().insert(i, row)


def _narrow(a: np.ndarray) -> np.ndarray:
    """An int32 array in the smallest unsigned type that holds it (doc numbers, instance counts:
    a third of the bytes to read); ``_lexicon`` widens it back."""
    top = int(a.max()) if len(a) else 0
    if int(a.min(initial=0)) < 0:
        return a.astype(np.int32)
    return a.astype(np.uint8 if top < 1 << 8 else np.uint16 if top < 1 << 16 else np.int32)


def forget_user(user_id: str) -> None:
    """Forget which files this process wrote for the user (an erasure deletes the files)."""
    with _LOCK:
        for key in [k for k in _SAVED if k[1] == user_id]:
            del _SAVED[key]


def forget_all() -> None:
    with _LOCK:
        _SAVED.clear()
