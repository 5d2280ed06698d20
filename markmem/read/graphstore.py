"""A user's entity graph (``read.graph``), saved beside the cache for the next process.

Building the graph reads every entity page (YAML) and scans every turn for the entities' names
(~0.1 s at 10k turns), which a fresh process paid on its first search that names an entity.
``save`` writes the built graph (entities, names, the name pattern, edges, the turns' mentions and
the stamp it reflects) into ``vec/<user>.graph`` (``index.savefile``); ``load`` reads it back.

A saved graph is handed to ``read.graph.graph`` as if this process had built it: its stamp (the
search snapshot's epoch and ``user_gen`` counters, the entity pages' count and last update) is
checked there as for an in-memory graph (new turns are scanned, anything else rebuilds). It is
also used only while the user's entity pages hold the same content (their ids and hashes in the
cache, checked on load), and never when written by other code or for another user; a missing,
truncated or corrupt file reads as None and the graph is built from the pages.
"""

from __future__ import annotations

import re
import sys
import threading
import zlib
from collections import defaultdict
from typing import Any

from ..index import savefile
from ..index.cache import Cache
from ..store import pages
from . import graph as lane

KIND = "graph"
SAVE = True  # False: never read or write the files (tests compare the two)
SAVE_AFTER = 256  # turns scanned since the file was written (at least; or an eighth) before it is rewritten
_SAVED: dict[tuple[str, str], tuple[int, int]] = {}  # (cache file, user) -> (id of the graph, turns) in the file
_LOCK = threading.Lock()


def _tag() -> int:
    return savefile.code_tag(lane, pages, sys.modules[__name__])  # the graph's code and the page parser's


def _pages(cache: Cache, user_id: str) -> int:
    """A checksum of the user's entity pages as the cache holds them (ids and content hashes)."""
    rows = cache.db.execute("SELECT id, hash FROM pages WHERE user_id = ? AND type = 'entity' ORDER BY id",
                            (user_id,)).fetchall()
    return zlib.crc32(repr(rows).encode())


def load(cache: Cache, user_id: str) -> lane.Graph | None:
    """The saved graph of the user (at whatever stamp it was saved), or None."""
    path = savefile.path_of(cache.path, user_id, KIND) if SAVE else None
    got = savefile.read(path, KIND) if path is not None else None
    if got is None:
        return None
    head, _ = got
    try:
        if head["tag"] != _tag() or head["user"] != user_id or head["pages"] != _pages(cache, user_id):
            return None
        g = _graph(head)
    except (KeyError, TypeError, ValueError, re.error):
        return None
    with _LOCK:
        _SAVED[(str(cache.path), user_id)] = (id(g), g.turns)
    return g


def _graph(head: dict[str, Any]) -> lane.Graph:
    g = lane.Graph(stamp=tuple(head["stamp"]), seen=int(head["seen"]), turns=int(head["turns"]),
                   mentions=[tuple(m) for m in head["mentions"]])  # type: ignore[misc]
    for eid, title, kind, relations in head["entities"]:
        g.entities[eid] = lane.Entity(eid, title, kind, [dict(r) for r in relations])
    g.names = {w: [tuple(n) for n in ns] for w, ns in head["names"].items()}  # type: ignore[misc]
    g.pattern = None if head["pattern"] is None else re.compile(head["pattern"])
    g.edges = defaultdict(dict, head["edges"])
    return g


def save_due(cache: Cache, user_id: str, g: lane.Graph) -> None:
    """Write ``g`` when this process has not saved or read it yet, or it has scanned many turns since."""
    if not SAVE or str(cache.path) == ":memory:":
        return
    key = (str(cache.path), user_id)
    with _LOCK:
        saved = _SAVED.get(key)
    if saved is not None and saved[0] == id(g) and g.turns - saved[1] < max(SAVE_AFTER, saved[1] // 8):
        return
    path = savefile.path_of(cache.path, user_id, KIND)
    if path is None:
        return
    head = {"tag": _tag(), "user": user_id, "pages": _pages(cache, user_id), "stamp": g.stamp, "seen": g.seen,
            "turns": g.turns, "mentions": list(g.mentions),
            "entities": [(e.id, e.title, e.kind, e.relations) for e in g.entities.values()],
            "names": g.names, "pattern": None if g.pattern is None else g.pattern.pattern, "edges": dict(g.edges)}
    try:
        savefile.write(path, KIND, head)
    except ValueError:  # a value marshal cannot write: the graph is rebuilt next time
        pass
    with _LOCK:  # (written or not: not retried before it has outgrown this)
        _SAVED[key] = (id(g), g.turns)


def forget_user(user_id: str) -> None:
    with _LOCK:
        for key in [k for k in _SAVED if k[1] == user_id]:
            del _SAVED[key]
