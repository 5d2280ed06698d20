"""An in-memory copy of one user's claim ledger, for the fact-first steps of a search.

``read.facts`` (stale turns, their successors) and ``read.pack`` (turns to leave out) ask, per
search, which claims cite a turn and what replaced a claim. In SQL that is a scan of the user's
claims with one ``instr`` per turn (0.2-0.5 ms a search), repeated for every search although the
claims rarely change. Here the user's live (non-archived) claims are read once into memory and
indexed by the turns they cite; a search then looks them up.

Freshness: a book is kept per (cache file, user) with the user's stamp (the cache ``epoch`` and
``user_gen``'s ``added`` and ``changed``: every insert, delete or update of a claim bumps one of
them), and is read again when the stamp differs. The answers are the SQL ones: the same rows,
in claim rowid order (``facts`` and ``pack`` compare them against the SQL they replace in
``tests/test_search_pinned.py``).
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from . import savefile
from .cache import Cache
from .userkeys import drop_user

Stamp = tuple[str, int, int]  # (cache epoch, added, changed): ``index.vectors.stamp``
MAX_BOOKS = 64
COLS = ("c.id AS id, c.user_id AS user_id, c.type AS type, c.provenance AS provenance, c.valid_from AS valid_from, "
        "c.sources AS sources, c.subject AS subject, c.valid_until AS valid_until, c.superseded_by AS superseded_by, "
        "c.value AS value, json_extract(c.metadata, '$.closed_by') AS closed_by")


@dataclass
class Book:
    """A user's live claims (rows as ``read.fts.CLAIM_COLS`` plus ``valid_until`` and
    ``superseded_by``), by id and by the raw ids of the turns each cites."""

    stamp: Stamp
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)
    citing: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # raw id -> claims, rowid order
    extra: dict[str, Any] = field(default_factory=dict)  # what a reader saved with a ready book (``save_ready``)

    def cite(self, turn_id: str) -> list[dict[str, Any]]:
        return self.citing.get(turn_id, [])


_BOOKS: OrderedDict[tuple[str, str], Book] = OrderedDict()
_LOCK = threading.Lock()
ENABLED = True  # False: facts and pack read the claims with SQL (tests compare the two)


def stamp(cache: Cache, user_id: str) -> Stamp:
    row = cache.db.execute(
        "SELECT (SELECT value FROM meta WHERE key='epoch'), g.added, g.changed FROM (SELECT 1) "
        "LEFT JOIN user_gen g ON g.user_id = ?", (user_id,)).fetchone()
    return (str(row[0]), int(row[1] or 0), int(row[2] or 0))


_ASKED: OrderedDict[tuple[str, str], None] = OrderedDict()  # users whose book was asked for once


def book(cache: Cache, user_id: str, now: Stamp | None = None, lazy: bool = False) -> Book | None:
    """The user's book at ``now`` (read here when not given), loaded when stale. ``lazy``: None
    the first time a process asks for this user's book (the caller then asks SQL: a fresh
    process's first search does not read every claim for one answer); loaded from the second."""
    key = (str(cache.path), user_id)
    if now is None:
        now = stamp(cache, user_id)
    with _LOCK:
        got = _BOOKS.get(key)
        if got is not None and got.stamp == now:
            _BOOKS.move_to_end(key)
            return got
        if lazy and got is None and key not in _ASKED:
            _ASKED[key] = None
            while len(_ASKED) > 10_000:
                _ASKED.popitem(last=False)
            return None
    fresh = _load(cache, user_id, now)
    with _LOCK:
        _BOOKS[key] = fresh
        _BOOKS.move_to_end(key)
        while len(_BOOKS) > MAX_BOOKS:
            _BOOKS.popitem(last=False)
    return fresh


def _load(cache: Cache, user_id: str, now: Stamp) -> Book:
    db = cache.db
    own = not db.in_transaction
    if own:  # the stamp and the rows from one read transaction
        db.execute("BEGIN")
    try:
        if stamp(cache, user_id) != now:
            now = stamp(cache, user_id)
        kept = _read_saved(cache, user_id, now)
        if kept is not None:
            return kept
        cur = db.execute(f"SELECT {COLS} FROM claims c WHERE c.user_id = ? AND c.archived = 0 ORDER BY c.rowid",
                         (user_id,))
        names = [d[0] for d in cur.description or ()]
        values = cur.fetchall()
    finally:
        if own:
            db.execute("COMMIT")
    _write_saved(cache, user_id, now, names, values)
    return _book(now, _dicts(names, values))


# -- saved beside the cache (``index.savefile``: ``vec/<user>.book``) --------------------------
# A fresh process's first search reads the user's claims for fact-first re-ranking (~1,400 rows at
# 10k turns: the SQL read and its row dicts, ~15-25 ms). The rows are saved as read, with the stamp
# they reflect; used only at exactly that stamp (any claim insert, update or delete moves ``added``
# or ``changed``; a reindex moves the epoch) and when the code tag and user hold, else read with SQL
# and rewritten. Erasure and a recreated cache delete the file with the others.
KIND = "book"
SAVE = True  # False: never read or write the files (tests compare the two)


def _read_saved(cache: Cache, user_id: str, now: Stamp) -> Book | None:
    """The saved book at ``now``: its rows as SQL read them, or ready (``save_ready``); None when
    there is no usable file."""
    path = savefile.path_of(cache.path, user_id, KIND) if SAVE else None
    got = savefile.read(path, KIND) if path is not None else None
    if got is None:
        return None
    head = got[0]
    try:
        if head["user"] != user_id or tuple(head["stamp"]) != now:
            return None
        if "ready" in head:
            return _ready(now, head)
        if head["tag"] != savefile.code_tag(sys.modules[__name__]):
            return None
        return _book(now, _dicts(list(head["names"]), head["rows"]))
    except (KeyError, TypeError, ValueError):
        return None


def _dicts(names: list[str], values: list[Any]) -> list[dict[str, Any]]:
    """Each row as a dict of ``names`` (ValueError for a row of another length). The lengths are
    checked once, not by ``zip(strict=True)`` per row: its keyword call costs ~1 us a row on
    CPython 3.11 (1-2 ms of a fresh process's first search at 1,400 claims)."""
    width = len(names)
    if any(len(r) != width for r in values):
        raise ValueError("a claim row does not match its columns")
    return [dict(zip(names, r, strict=False)) for r in values]  # lengths checked above


_WROTE: set[tuple[str, str]] = set()  # (cache file, user): written once by this process (a long-lived
# process's book reloads after every new turn; the file is for the next fresh process, not each reload)


def _write_saved(cache: Cache, user_id: str, now: Stamp, names: list[str], values: list[Any]) -> None:
    path = savefile.path_of(cache.path, user_id, KIND) if SAVE else None
    key = (str(cache.path), user_id)
    with _LOCK:
        if path is None or key in _WROTE:
            return
        _WROTE.add(key)
    head = {"tag": savefile.code_tag(sys.modules[__name__]), "user": user_id, "stamp": list(now),
            "names": names, "rows": [tuple(r) for r in values]}
    try:
        savefile.write(path, KIND, head)
    except ValueError:  # a value marshal cannot hold: read with SQL next time
        return


# -- saved ready: the rows with what a reader added to each (``read.echo``: parsed sources, terms) ----
# A fresh process's first search spent ~15 ms at 1,400 claims turning the saved rows into dicts, parsing
# each claim's ``sources`` JSON (the book's ``citing``), then again with ``closed_by`` and the value's
# terms (``read.echo.ledger``). Once a reader has added its fields to every row of a book, the book is
# saved as it then stands: the row dicts (the columns, then the reader's ``keys``, in that order) and
# ``citing`` holding the same dicts (``marshal`` keeps shared objects shared), so ``marshal.loads``
# gives the book, rows and index at once. Used at the same stamp as a plain file, and only while the
# reader's modules are imported with the source they were saved by (the tag covers them all).
_READY: set[tuple[str, str]] = set()  # (cache file, user): saved ready once by this process
NAMES = tuple(re.findall(r" AS (\w+)", COLS))  # the columns of a row, in order


def save_ready(cache: Cache, user_id: str, book: Book, keys: tuple[str, ...], by: tuple[ModuleType, ...],
               extra: Callable[[], dict[str, Any]] | None = None) -> None:
    """Save ``book`` with the fields ``keys`` that the modules ``by`` added to every row (once per
    process and user, as ``_write_saved``); nothing when a row lacks one. ``extra``: called when the
    file is written, for more of their state (marshal-able values), read back as ``Book.extra``."""
    path = savefile.path_of(cache.path, user_id, KIND) if SAVE else None
    key = (str(cache.path), user_id)
    with _LOCK:
        if path is None or key in _READY or _BOOKS.get(key) is not book:
            return
        _READY.add(key)
    fields = (*NAMES, *keys)
    rows, citing = book.by_id, book.citing
    if not all(tuple(row) == fields for row in rows.values()):  # saved as they are when they hold just these
        try:
            rows = {cid: {k: row[k] for k in fields} for cid, row in book.by_id.items()}
            citing = {rid: [rows[r["id"]] for r in cited] for rid, cited in book.citing.items()}
        except KeyError:  # a row without a field: not ready
            return
    head = {"tag": savefile.code_tag(sys.modules[__name__], *by), "ready": [m.__name__ for m in by], "user": user_id,
            "stamp": list(book.stamp), "by_id": rows, "citing": citing, "extra": extra() if extra else {}}
    try:
        savefile.write(path, KIND, head)
    except ValueError:  # a value marshal cannot hold: the plain file stays
        return


def _ready(now: Stamp, head: dict[str, Any]) -> Book | None:
    by = [sys.modules.get(name) if str(name).startswith("markmem.") else None for name in head["ready"]]
    if any(m is None for m in by) or head["tag"] != savefile.code_tag(sys.modules[__name__], *by):
        return None  # saved by a module not imported now, or by other code
    by_id, citing, extra = head["by_id"], head["citing"], head["extra"]
    if not isinstance(by_id, dict) or not isinstance(citing, dict) or not isinstance(extra, dict):
        return None
    return Book(now, by_id, citing, extra)


def _book(now: Stamp, rows: list[dict[str, Any]]) -> Book:
    out = Book(now)
    for row, refs in zip(rows, _sources(rows), strict=True):
        out.by_id[row["id"]] = row
        for ref in refs:
            if "#" in str(ref):  # "raw/u/<id>/<day>.jsonl#<raw id>", as SQL's instr(sources, '#<id>"') finds it
                out.citing.setdefault(str(ref).rsplit("#", 1)[-1], []).append(row)
    return out


def _sources(rows: list[dict[str, Any]]) -> list[Any]:
    """Each row's ``sources`` JSON (see ``json_arrays``)."""
    return json_arrays([row["sources"] for row in rows])


def json_arrays(texts: list[Any]) -> list[Any]:
    """Each text's JSON (None or "" as []), parsed in one ``json.loads`` (one call per row cost ~10 ms
    of a fresh process's first search at 1,400 claims); row by row, as before, when the texts are not
    each one JSON array (the batch then could not be split back) or the batch fails."""
    texts = [t or "[]" for t in texts]
    if all(isinstance(t, str) and t[:1] == "[" and t[-1:] == "]" for t in texts):
        try:
            got = json.loads("[" + ",".join(texts) + "]")
        except ValueError:
            got = None
        if isinstance(got, list) and len(got) == len(texts) and all(isinstance(g, list) for g in got):
            return got
    return [json.loads(t) for t in texts]


def forget_user(user_id: str) -> None:
    """Drop the user's books (an erasure: they hold the user's claims)."""
    with _LOCK:
        drop_user(user_id, _BOOKS, _ASKED)
        _WROTE.difference_update([k for k in _WROTE if k[1] == user_id])
        _READY.difference_update([k for k in _READY if k[1] == user_id])


def forget_all() -> None:
    with _LOCK:
        _BOOKS.clear()
        _ASKED.clear()
        _WROTE.clear()
        _READY.clear()
