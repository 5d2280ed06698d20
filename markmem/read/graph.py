"""The graph lane: a personalized PageRank over one user's entities, relations and turns.

Nodes are the user's entity pages (``wiki/u/<user>/entity/``, see write/entities.py) and turns.
Edges: a relation claim links its two entities and both to its source turns; a turn that names
an entity (its title as a whole word, the "Speaker:" label aside) links to it. Entities named in
the query seed the walk (and, at half weight, those named by the top lexical hits); the lane's
candidates are the turns the walk reaches, ranked by their PageRank mass. A query that names no
known entity costs one set intersection.

Built in memory per user from the cache (entity page ids) and the pages themselves (their
relations: the markdown is the authority, so ``reindex`` rebuilds it), kept fresh by the cache
epoch, the user's ``user_gen`` counters and the entity pages' (count, last update): new turns are
scanned alone; anything else rebuilds.
"""

from __future__ import annotations

import heapq
import math
import re
import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..context import Context
from ..errors import MalformedPage, NotFound
from ..ids import entity_page_id
from ..store.pages import page_path, read_page
from . import walk

RESTART = 0.35  # the walk's chance to jump back to a seed at each step
STEPS = 4
HUB = 0.05  # an entity named in over this share of a user's turns is everyone's context, not a seed
HUB_MIN = 25  # ... and in over this many (a new user's few turns all name someone)
_LABEL = re.compile(r"^[^:\n]{1,40}:\s")
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")


@dataclass
class Entity:
    id: str
    title: str
    kind: str
    relations: list[dict[str, str]] = field(default_factory=list)  # active: predicate, target id, claim id


@dataclass
class Graph:
    stamp: tuple[object, ...] = ()
    seen: int = 0  # highest raw rowid scanned for mentions
    turns: int = 0  # turns scanned
    mentions: list[tuple[str, str]] = field(default_factory=list)  # (entity id, raw id) found by the scan
    entities: dict[str, Entity] = field(default_factory=dict)
    names: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # first word -> (name, entity id)
    pattern: re.Pattern[str] | None = None
    edges: dict[object, dict[object, float]] = field(default_factory=lambda: defaultdict(dict))
    arrays: walk.Walk | None = None  # ``edges`` as arrays for ``rank`` (see there); None after a change
    walks: int = 0  # walks in dicts since the last change
    walked: dict[tuple[object, ...], list[tuple[str, float]]] = field(default_factory=dict)  # ``rank``'s answers

    def named_in(self, text: str) -> set[str]:
        """Ids of the entities whose name occurs in ``text`` (whole words, any case)."""
        low = text.casefold()
        words = set(_WORD.findall(low))
        out: set[str] = set()
        for w in words & self.names.keys():
            for name, eid in self.names[w]:
                if " " not in name or re.search(rf"\b{re.escape(name)}\b", low):
                    out.add(eid)
        return out


_graphs: dict[tuple[str, str], Graph] = {}
_lock = threading.Lock()
_ENTITY_SIG = "SELECT count(*), max(updated) FROM pages WHERE user_id = ? AND type = 'entity'"


def graph(ctx: Context, user_id: str, gen: object) -> Graph:
    """The user's graph, fresh for ``gen`` (the search snapshot's epoch and counters)."""
    cache = ctx.cache.user(user_id)
    sig = tuple(cache.db.execute(_ENTITY_SIG, (user_id,)).fetchone())
    key = (str(ctx.root), user_id)
    with _lock:
        g = _graphs.get(key)
    if g is None:  # saved by an earlier process (read/graphstore), checked below as if built here
        from . import graphstore

        g = graphstore.load(cache, user_id)
    stamp = (gen, sig)
    if g is not None and g.stamp == stamp:
        with _lock:
            _graphs[key] = g
        return g
    if g is None or g.stamp[1:] != (sig,) or not _only_added(g.stamp, gen):
        old = g if g is not None and _only_added(g.stamp, gen) else None
        g = _build(ctx, user_id) if sig[0] else Graph()
        if old is not None and old.pattern is not None and g.pattern is not None \
                and old.pattern.pattern == g.pattern.pattern:  # same names: the turns' mentions stand
            _replay(g, old)
    if g.pattern is not None:
        _scan(ctx, user_id, g)
    g.stamp = stamp
    with _lock:
        _graphs[key] = g
    from . import graphstore

    graphstore.save_due(cache, user_id, g)
    return g


def _only_added(old: tuple[object, ...], gen: object) -> bool:
    """Only new turns since ``old``: same epoch, no change or delete (user_gen's changed, turns)."""
    prev = old[0] if old else None
    if not (isinstance(prev, tuple) and isinstance(gen, tuple)) or prev[0] != gen[0]:
        return False
    a, b = prev[1], gen[1]
    return a is None or b is None or (a[1:] == b[1:])  # type: ignore[index]


def forget(user_id: str) -> None:
    """Drop a user's graph (erasure)."""
    from . import graphstore

    with _lock:
        for key in [k for k in _graphs if k[1] == user_id]:
            del _graphs[key]
    graphstore.forget_user(user_id)


def _build(ctx: Context, user_id: str) -> Graph:
    g = Graph()
    own = entity_page_id(user_id, user_id)
    rows = ctx.cache.user(user_id).rows("SELECT id FROM pages WHERE user_id = ? AND type = 'entity'", (user_id,))
    for row in rows:
        try:
            page = read_page(ctx.root, page_path(row["id"]), ctx.codec)
        except (MalformedPage, OSError):
            continue  # doctor and lint name it; the graph goes on without it
        e = Entity(page.id, page.title, str(page.extra.get("kind", "entity")))
        for c in page.active_claims():
            target = _target_id(user_id, c.value)
            e.relations.append({"predicate": c.predicate, "target": target, "claim": c.id, "value": c.value})
            if own in (page.id, target):
                continue  # the user is linked to everything they said: a walk through them goes nowhere
            for src in c.sources:
                rid = src.rsplit("#", 1)[-1]
                _link(g, ("e", page.id), ("r", rid), 1.0)
                _link(g, ("e", target), ("r", rid), 1.0)
            _link(g, ("e", page.id), ("e", target), 1.0)
        g.entities[page.id] = e
    for e in g.entities.values():
        if e.id == own or len(e.title) < 2:
            continue  # the user is every turn's subject: no seed
        name = " ".join(e.title.casefold().split())
        g.names.setdefault(name.split()[0], []).append((name, e.id))
    if g.names:
        alts = sorted({n for ns in g.names.values() for n, _ in ns}, key=len, reverse=True)
        g.pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in alts) + r")\b")
    return g


def _target_id(user_id: str, value: str) -> str:
    return entity_page_id(user_id, value)


def _scan(ctx: Context, user_id: str, g: Graph) -> None:
    """Link the turns past ``g.seen`` to the entities they name."""
    sql = "SELECT rowid, id, content FROM raw WHERE user_id = ? AND rowid > ? AND quarantined IS NULL"
    rows = ctx.cache.user(user_id).db.execute(sql, (user_id, g.seen)).fetchall()
    if not rows:
        return
    g.seen = max(g.seen, max(r[0] for r in rows))
    assert g.pattern is not None
    by_name = {n: eid for ns in g.names.values() for n, eid in ns}
    for _rowid, rid, content in rows:
        text = _LABEL.sub("", content, count=1).casefold()
        found = set(g.pattern.findall(text))
        for name in found:
            _link(g, ("e", by_name[name]), ("r", rid), 1.0)
            g.mentions.append((by_name[name], rid))
        g.turns += 1


def _replay(g: Graph, old: Graph) -> None:
    for eid, rid in old.mentions:
        _link(g, ("e", eid), ("r", rid), 1.0)
    g.mentions, g.seen, g.turns = list(old.mentions), old.seen, old.turns


def _link(g: Graph, a: object, b: object, w: float) -> None:
    g.edges[a][b] = w
    g.edges[b][a] = w
    g.arrays, g.walks = None, 0
    if g.walked:
        g.walked = {}


WALK_ARRAYS = True  # False: the dict walk (``rank_dicts``, the reference the tests compare with)
DICT_WALKS = 2  # walks in dicts after a change before the arrays are built (a build costs ~3 dict walks)


def rank(g: Graph, seeds: dict[str, float], depth: int) -> list[tuple[str, float]]:
    """Raw ids of the turns the walk from ``seeds`` (entity id -> weight) reaches most, best first;
    over arrays (read/walk.py: the same floats as ``rank_dicts``, ~5x sooner) once the graph has
    stood unchanged for ``DICT_WALKS`` walks (a graph that changes between searches walks in dicts).
    The answers are kept until the graph changes: a user's questions name the same few entities."""
    key = (tuple(seeds.items()), depth, RESTART, STEPS, WALK_ARRAYS)  # the seeds' order: the sums' order
    got = g.walked.get(key)
    if got is None:
        got = _rank(g, seeds, depth)
        if len(g.walked) >= MAX_WALKED:
            g.walked = {}
        g.walked[key] = got
    return list(got)


MAX_WALKED = 512  # kept walk answers per graph


def _rank(g: Graph, seeds: dict[str, float], depth: int) -> list[tuple[str, float]]:
    arrays = g.arrays
    if not WALK_ARRAYS or (arrays is None and g.walks < DICT_WALKS):
        g.walks += 1
        return rank_dicts(g, seeds, depth)
    total = sum(seeds.values())
    if not total:
        return []
    start: dict[object, float] = {("e", s): w / total for s, w in seeds.items()}
    if arrays is None:
        arrays = g.arrays = walk.build(g.edges)
    return walk.rank(arrays, start, RESTART, STEPS, depth)


def rank_dicts(g: Graph, seeds: dict[str, float], depth: int) -> list[tuple[str, float]]:
    """``rank`` one node at a time, in dicts: the reference."""
    total = sum(seeds.values())
    if not total:
        return []
    start: dict[object, float] = {("e", s): w / total for s, w in seeds.items()}
    mass = dict(start)
    for _ in range(STEPS):
        nxt: dict[object, float] = {n: RESTART * w for n, w in start.items()}
        for node, m in mass.items():
            out = g.edges.get(node)
            if not out:
                continue
            share = (1 - RESTART) * m / len(out)
            for nb in out:
                nxt[nb] = nxt.get(nb, 0.0) + share
        mass = nxt
    turns = [(n[1], m) for n, m in mass.items() if n[0] == "r"]  # type: ignore[index]
    return heapq.nsmallest(depth, turns, key=lambda t: (-t[1], t[0]))  # = sorted(...)[:depth], without the full sort


def seeds(g: Graph, query: str, hits: Iterable[str] = (), hit_weight: float = 0.5,
          hub: float = HUB) -> dict[str, float]:
    """Entities named in the query, then (at ``hit_weight``) those the top hits name, each
    weighted by how specific it is (``log(turns / its turns)``, like an IDF); an entity named in
    over ``hub`` of the turns (the person talking) seeds nothing. Empty when the query names no
    specific entity: the lane is skipped."""
    named = {e for e in g.named_in(query) if _specific(g, e, hub)}
    if not named:
        return {}
    out = {e: _idf(g, e) for e in named}
    for text in hits:
        for eid in g.named_in(_LABEL.sub("", text, count=1)) - named:
            if _specific(g, eid, hub):
                out[eid] = max(out.get(eid, 0.0), hit_weight * _idf(g, eid))
    return out


def _degree(g: Graph, eid: str) -> int:
    return len(g.edges.get(("e", eid), ()))


def _specific(g: Graph, eid: str, hub: float) -> bool:
    return 0 < _degree(g, eid) <= max(HUB_MIN, hub * g.turns)


def _idf(g: Graph, eid: str) -> float:
    return math.log(1.0 + max(g.turns, 1) / max(_degree(g, eid), 1))


def related(ctx: Context, user_id: str, name_or_id: str) -> dict[str, Any]:
    """One entity's neighbourhood: its active relations, out of it and into it, each naming the
    other entity's page. NotFound when the user has no such entity."""
    g = _build(ctx, user_id)
    eid = find(g, name_or_id)
    if eid is None:
        raise NotFound("entity", name_or_id)
    e = g.entities[eid]
    rels = [{"direction": "out", "predicate": r["predicate"], "claim": r["claim"], **_about(g, r["target"], r["value"])}
            for r in e.relations]
    rels += [{"direction": "in", "predicate": r["predicate"], "claim": r["claim"], **_about(g, o.id, o.title)}
             for o in g.entities.values() if o.id != eid for r in o.relations if r["target"] == eid]
    return {"user_id": user_id, "id": e.id, "title": e.title, "kind": e.kind, "relations": rels}


def _about(g: Graph, eid: str, name: str) -> dict[str, str]:
    e = g.entities.get(eid)
    return {"id": eid, "title": e.title if e else name, "kind": e.kind if e else "entity"}


def find(g: Graph, name_or_id: str) -> str | None:
    """An entity id from a page id or a name (case and spacing ignored)."""
    if name_or_id in g.entities:
        return name_or_id
    want = " ".join(name_or_id.casefold().split())
    for e in g.entities.values():
        if " ".join(e.title.casefold().split()) == want:
            return e.id
    return None


def counts(ctx: Context, user_id: str) -> tuple[int, int]:
    """(entities, active relations) of one user; the user's own page is not an entity."""
    g = _build(ctx, user_id)
    own = entity_page_id(user_id, user_id)
    return len(g.entities.keys() - {own}), sum(len(e.relations) for e in g.entities.values())
