"""Fusion: lane results -> one ranked list, with every weight recorded for ``explain``.

Recipes (``Recipe.fusion``), measured on LoCoMo (bench/locomo.py):

* ``"blend"`` (default): ``bm25_weight * bm25 / max_bm25 + cosine``, over the union of the lexical
  lanes' top ``depth`` and the vector lane's top ``dense_depth``. The lexical lane is the stronger
  one with a static embedding model; the cosine re-ranks its candidates and lets a purely
  semantic match in.
* ``"rrf"``: reciprocal rank fusion, ``sum 1 / (rrf_k + rank)`` over the lanes (rank only).
* ``"bm25"``: the lexical score alone (an ablation).

Then multiplicative priors: the speaker named in the query (a turn said by "Caroline" for a
question about Caroline), provenance (user_stated > human_edited/tool_derived > agent_inferred;
a turn by its role), and decay with a per-type half-life towards a floor. An exact-lane match
(a literal flag, path, key or quoted string) gets an additive bonus that puts it first.
A claim and its own source turn are one memory: the claim stays, with the better score.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any

from ..index.text import turn_speaker
from ..model import PROVENANCE_TRUST
from .query import Query

# the assistant at 0.4 (was 0.6): the user's own words are the facts; measured on held-out halves, see
# bench/results/recall.md (round 3). read/said raises it to the user's for a question asking what it said.
ROLE_TRUST = {"user": 1.0, "tool": 0.8, "system": 0.8, "other": 0.8, "assistant": 0.4}
HALF_LIFE_DAYS: dict[str, float | None] = {  # None: does not decay
    "profile": None, "relationship": None, "preference": 730.0, "fact": 1095.0, "note": 365.0, "turn": None,
}
DEFAULT_HALF_LIFE = 365.0
SHORT_QUESTION = 80  # characters: a question turn this short is all question (its row's "chars", set by search)


@dataclass(frozen=True)
class Recipe:
    fusion: str = "blend"  # "blend" | "rrf" | "bm25"
    depth: int = 40  # lexical candidates per lane (at least 4 x top_k)
    dense_depth: int = 20  # vector-lane candidates (0: cosine re-ranks lexical candidates only)
    dense_scan_max: int = 5000  # past this many units the vector lane only re-ranks (see read.vectors)
    bm25_weight: float = 2.0  # the static model's cosine is the weaker signal: BM25 leads, cosine re-ranks
    postings_budget: int = 1000  # rows the turn lane may score with BM25 (see fts.prune)
    context_weight: float = 0.3  # FTS5 column weight of a turn's neighbour context
    rrf_k: int = 60
    speaker_boost: float = 0.15
    exact_bonus: float = 2.0
    question_weight: float = 0.8  # a turn that asks carries less fact than the turn that answers it
    answer_weight: float = 0.9  # an answer inherits this share of its question's base score (0: off)
    decay_floor: float = 0.5  # a very old memory keeps this share of its score
    provenance: bool = True
    vectors: bool = True
    graph_weight: float = 0.5  # the graph lane's PageRank mass (scaled to its best turn) added in "blend"
    graph_depth: int = 0  # graph-lane candidates (0: off, the default: see bench/results/recall.md; 10 to try it)
    fact_first: bool = True  # current searches: stale and low-content turns last, their successors in (read.facts)
    time_boost: float = 0.5  # a memory dated inside the question's date window scores 1 + this (0: off, read.when)
    events: bool = True  # a question comparing events searches each event too (read.when.events)
    sentence_weight: float = 1.0  # the cosine of a turn's best sentence, added at this weight (read.passage)
    sentence_depth: int = 20  # fused candidates it re-ranks
    assistant_asked: bool = True  # a question asking what the assistant said trusts its turns as the user's (read.said)
    assistant_trust: float = 0.4  # an assistant turn's trust when the question does not ask what it said
    # what a question passes to its answer is scaled by the asking turn's role trust too: an assistant's closing
    # "Would you like more tips?" no longer hands the user's next reply its full relevance (recall.md, round 4)
    answer_trust: bool = True


DEFAULT = Recipe()
GRAPH = Recipe(graph_depth=10)  # Settings.graph_lane / MARKMEM_GRAPH_LANE=1


_FRESH: Any = object()  # Cand's "a new empty container" default


@dataclass(slots=True, init=False)  # ~50 a search, their fields read everywhere: slots read faster than a __dict__
class Cand:
    kind: str  # "turn" | "claim"
    id: str
    row: dict[str, Any]
    ranks: dict[str, int] = field(default_factory=dict)
    bm25: float = 0.0
    cos: float | None = None
    graph: float = 0.0  # the graph lane's PageRank mass, scaled to its best turn (read/graph.py)
    exact: bool = False
    score: float = 0.0
    weights: dict[str, float] = field(default_factory=dict)
    merged: list[dict[str, Any]] = field(default_factory=list)
    answer_to: str | None = None  # the question whose relevance this turn inherited

    # the dataclass's own __init__, written out: ~80 are made a search, and the generated one calls a
    # factory per defaulted container (about a third slower); the same fields, defaults and order
    def __init__(self, kind: str, id: str, row: dict[str, Any], ranks: dict[str, int] = _FRESH,  # type: ignore[assignment]
                 bm25: float = 0.0, cos: float | None = None, graph: float = 0.0, exact: bool = False,
                 score: float = 0.0, weights: dict[str, float] = _FRESH,  # type: ignore[assignment]
                 merged: list[dict[str, Any]] = _FRESH, answer_to: str | None = None) -> None:  # type: ignore[assignment]
        self.kind = kind
        self.id = id
        self.row = row
        self.ranks = {} if ranks is _FRESH else ranks
        self.bm25 = bm25
        self.cos = cos
        self.graph = graph
        self.exact = exact
        self.score = score
        self.weights = {} if weights is _FRESH else weights
        self.merged = [] if merged is _FRESH else merged
        self.answer_to = answer_to

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.id)


def fuse(cands: list[Cand], recipe: Recipe, query: Query, ref_day: int,
         dated: set[tuple[str, str]] | None = None, roles: dict[str, float] = ROLE_TRUST) -> list[Cand]:
    """``dated``: the candidates the question's date window covers (read.when), boosted by ``time_boost``;
    ``roles``: the trust of a turn by its role (read.said gives assistant turns the user's)."""
    top_bm25 = max((c.bm25 for c in cands), default=0.0) or 1.0
    words = set(query.terms)
    if recipe.fusion == "blend":  # _base, inline (the search hot path)
        weight = recipe.bm25_weight
        for c in cands:
            c.score = weight * c.bm25 / top_bm25 + (c.cos or 0.0) + recipe.graph_weight * c.graph
    else:
        for c in cands:
            c.score = _base(c, recipe, top_bm25)
    if recipe.answer_weight:
        _propagate(cands, recipe.answer_weight, roles if recipe.answer_trust else None)
    speakers: dict[str | None, bool] = {}  # who said a turn -> whether the query names them
    named: dict[tuple[str | None, str | None], bool] = {}  # a turn row's (head, speaker) -> the same
    if recipe.speaker_boost and recipe.provenance and recipe.decay_floor < 1.0:
        _weigh(cands, recipe, words, ref_day, speakers, named, roles, dated)
    else:
        for c in cands:
            c.weights = w = _priors(c, recipe, words, ref_day, speakers, named, roles)
            if dated and c.key in dated:
                w["when"] = 1.0 + recipe.time_boost
            if w:
                for name, x in w.items():
                    if name != "exact_bonus":
                        c.score *= x
                c.score += w.get("exact_bonus", 0.0)
    return sorted(_dedupe(cands), key=_order)


def _order(c: Cand) -> tuple[float, str, str]:
    return (-c.score, c.kind, c.id)


def _weigh(cands: list[Cand], recipe: Recipe, words: set[str], ref_day: int,
           speakers: dict[str | None, bool], named: dict[tuple[str | None, str | None], bool],
           roles: dict[str, float], dated: set[tuple[str, str]] | None) -> None:
    """``_priors`` and their product for every candidate, inline (the search hot path: ~50 candidates a
    search), the default recipe's case (speaker boost, provenance and decay on). The same weights in the
    same order, multiplied into the score in that order, so the same floats."""
    boost, qweight, floor = 1.0 + recipe.speaker_boost, recipe.question_weight, recipe.decay_floor
    when = 1.0 + recipe.time_boost
    decays: dict[tuple[str, str | None], float | None] = {}  # (type, date) -> the rounded factor: many share a day
    for c in cands:
        w: dict[str, float] = {}
        row = c.row
        score = c.score
        if c.kind == "turn":
            said = (row.get("head"), row.get("speaker"))
            hit = named.get(said)
            if hit is None:
                who = turn_speaker(said[0] or "", said[1])
                hit = speakers.get(who)
                if hit is None:
                    hit = speakers[who] = bool(who) and any(part in words for part in (who or "").casefold().split())
                named[said] = hit
            if hit:
                w["speaker"] = boost
                score *= boost
            if qweight != 1.0 and row.get("question"):
                w["question"] = qweight
                score *= qweight
            trust = roles.get(row.get("role") or "user", 0.8)
            if trust != 1.0:
                w["provenance"] = trust
                score *= trust
            kind = row.get("type") or "turn"
        else:
            trust = PROVENANCE_TRUST.get(row.get("provenance") or "", 0.6)
            if trust != 1.0:
                w["provenance"] = trust
                score *= trust
            kind = row.get("type") or c.kind
        dated_at = row.get("valid_at") or row.get("valid_from")
        x = decays.get((kind, dated_at), _UNSET)
        if x is _UNSET:
            x = None  # a factor of 1.0 (timeless, undated, future) is no weight
            if HALF_LIFE_DAYS.get(kind, DEFAULT_HALF_LIFE) is not None:
                factor = decay(kind, dated_at, ref_day, floor)
                if factor != 1.0:
                    x = round(factor, 6)
            decays[(kind, dated_at)] = x
        if x is not None:
            w["decay"] = x
            score *= x
        if c.exact:
            w["exact_bonus"] = recipe.exact_bonus
        if dated and (c.kind, c.id) in dated:
            w["when"] = when
            score *= when
        if w:
            c.score = score + w.get("exact_bonus", 0.0)
        c.weights = w


_UNSET = -1.0  # not a factor decay() gives (they lie in (floor, 1]): a (type, date) not yet met


def _base(c: Cand, recipe: Recipe, top_bm25: float) -> float:
    if recipe.fusion == "rrf":
        return sum(1.0 / (recipe.rrf_k + r) for lane, r in c.ranks.items() if lane != "exact")
    lexical = recipe.bm25_weight * c.bm25 / top_bm25
    if recipe.fusion == "bm25":
        return lexical
    return lexical + (c.cos or 0.0) + recipe.graph_weight * c.graph


def _propagate(cands: list[Cand], share: float, roles: dict[str, float] | None = None) -> None:
    """A question's relevance flows to the turn that answers it (``share`` of the question's base, times
    the asking turn's trust by its role when ``roles`` is given)."""
    by_rowid = {c.row["rowid"]: c for c in cands if c.kind == "turn"}
    inherited: dict[int, tuple[float, str]] = {}
    for c in cands:
        answer = by_rowid.get(c.row.get("answer")) if c.kind == "turn" and c.row.get("question") else None
        if answer is None:
            continue
        passed = share * c.score * (1.0 if roles is None else _asker_trust(c.row, roles))
        if passed > inherited.get(answer.row["rowid"], (0.0, ""))[0]:
            inherited[answer.row["rowid"]] = (passed, c.id)
    for rowid, (score, question) in inherited.items():
        answer = by_rowid[rowid]
        if score > answer.score:
            answer.score = score
            answer.answer_to = question


def _asker_trust(row: dict[str, Any], roles: dict[str, float]) -> float:
    """How much of its relevance a question passes on: a short question ("What position?") all of it; a
    long turn that only ends with one (an assistant's answer closing "Would you like more tips?") its
    role's trust, as its own score has."""
    trust = roles.get(row.get("role") or "user", 0.8)
    if trust == 1.0 or row.get("chars", len(row.get("content") or "")) < SHORT_QUESTION:
        return 1.0
    return trust


def _priors(c: Cand, recipe: Recipe, words: set[str], ref_day: int,
            speakers: dict[str | None, bool] | None = None,
            named: dict[tuple[str | None, str | None], bool] | None = None,
            roles: dict[str, float] = ROLE_TRUST) -> dict[str, float]:
    w: dict[str, float] = {}
    row = c.row
    turn = c.kind == "turn"
    if turn:
        if recipe.speaker_boost:
            said = (row.get("head"), row.get("speaker"))
            hit = None if named is None else named.get(said)
            if hit is None:
                who = turn_speaker(said[0] or "", said[1])
                hit = None if speakers is None else speakers.get(who)
                if hit is None:
                    hit = bool(who) and any(part in words for part in (who or "").casefold().split())
                    if speakers is not None:
                        speakers[who] = hit
                if named is not None:
                    named[said] = hit
            if hit:
                w["speaker"] = 1.0 + recipe.speaker_boost
        if row.get("question") and recipe.question_weight != 1.0:
            w["question"] = recipe.question_weight
        if recipe.provenance:
            trust = roles.get(row.get("role") or "user", 0.8)
            if trust != 1.0:
                w["provenance"] = trust
    elif recipe.provenance:
        trust = PROVENANCE_TRUST.get(row.get("provenance") or "", 0.6)
        if trust != 1.0:
            w["provenance"] = trust
    if recipe.decay_floor < 1.0:
        kind = row.get("type") or c.kind
        if HALF_LIFE_DAYS.get(kind, DEFAULT_HALF_LIFE) is not None:
            factor = decay(kind, row.get("valid_at") or row.get("valid_from"), ref_day, recipe.decay_floor)
            if factor != 1.0:
                w["decay"] = round(factor, 6)
    if c.exact:
        w["exact_bonus"] = recipe.exact_bonus
    return w


def decay(kind: str, when: str | None, ref_day: int, floor: float) -> float:
    """``floor + (1 - floor) * 0.5 ** (age / half_life)``; no decay for timeless types or the future."""
    half = HALF_LIFE_DAYS.get(kind, DEFAULT_HALF_LIFE)
    if half is None or not when:
        return 1.0
    age = ref_day - day_number(when[:10])
    if age <= 0:
        return 1.0
    return floor + (1.0 - floor) * 0.5 ** (age / half)


@lru_cache(maxsize=4096)
def day_number(iso_day: str) -> int:
    try:
        return date.fromisoformat(iso_day).toordinal()
    except ValueError:
        return 0


def _dedupe(cands: list[Cand]) -> list[Cand]:
    """A claim and its own source turn are one memory: the claim stays (it carries valid time,
    provenance and supersession) with the better of the two scores; the turn is folded into it."""
    if not any(c.kind == "claim" and c.row.get("sources") for c in cands):
        return cands
    turns = {c.id: c for c in cands if c.kind == "turn"}
    gone: set[str] = set()
    for c in cands:
        if c.kind != "claim" or not c.row.get("sources"):
            continue
        for ref in json.loads(c.row["sources"]):
            t = turns.get(ref.rsplit("#", 1)[-1])
            if t is None or t.id in gone:
                continue
            c.merged.append({"kind": "turn", "id": t.id, "lanes": dict(t.ranks), "score": round(t.score, 6)})
            c.score = max(c.score, t.score)
            gone.add(t.id)
    return [c for c in cands if not (c.kind == "turn" and c.id in gone)]


def trace(c: Cand, recipe: Recipe, top_bm25: float) -> dict[str, Any]:
    """The ``explain`` record of one hit: lane ranks, raw signals, weights and the final score."""
    out: dict[str, Any] = {"fusion": recipe.fusion, "lanes": dict(c.ranks), "bm25": round(c.bm25, 6),
                           "bm25_norm": round(c.bm25 / top_bm25, 6) if top_bm25 else 0.0,
                           "cosine": None if c.cos is None else round(c.cos, 6),
                           "weights": dict(c.weights), "score": round(c.score, 6)}
    if recipe.fusion == "blend":
        out["bm25_weight"] = recipe.bm25_weight
    if c.graph:
        out["graph"] = round(c.graph, 6)
        out["graph_weight"] = recipe.graph_weight
    if c.answer_to:
        out["answer_to"] = c.answer_to
    if c.merged:
        out["merged"] = list(c.merged)
    return out
