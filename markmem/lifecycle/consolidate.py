"""Consolidation: merge duplicate active claims of ONE owner (a user, or ``shared``), never across owners.

* exact: same subject, predicate and normalised value (``norm_value``: case, articles, punctuation);
* near: same subject and predicate, a multi-valued predicate (each value has its own page, so two
  active claims are two values), the same numbers in both values, and cosine similarity of their
  texts at least ``near_duplicate_similarity``. Single-valued predicates are never merged by
  similarity: two different values there are a conflict (lint's ``duplicate-active``), not a duplicate.

The survivor is the most trusted claim (provenance, then confidence, then the oldest). It gains
the others' sources (and expired sources), the highest confidence and ``metadata.merged_from``.
Each other claim is closed now (``valid_until``/``closed_at``), ``superseded_by`` the survivor,
with ``metadata.merged_into``: nothing is deleted and ``as_of`` history before the merge is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..index.text import claim_body
from ..model import PROVENANCE_TRUST, Claim
from ..write.extract import norm_value
from .ledger import Action, Ledger
from .rules import is_multi

Member = tuple[str, Claim]  # (page path, claim)
_DIGITS = re.compile(r"\d+")


def survivor_key(m: Member) -> tuple[Any, ...]:
    c = m[1]
    return (-PROVENANCE_TRUST.get(c.provenance, 0.5), -c.confidence, c.valid_from or "", c.recorded_at or "", c.id)


def exact(ledger: Ledger, at: str) -> list[Action]:
    groups: dict[tuple[str, str, str, str], list[Member]] = {}
    for rel, _page, c in ledger.active():
        key = (ledger.owners[rel], c.subject.casefold(), c.predicate, norm_value(c.value))
        groups.setdefault(key, []).append((rel, c))
    return [merge(ledger, members, at, "exact", 1.0) for _k, members in sorted(groups.items()) if len(members) > 1]


def near(ledger: Ledger, at: str, embed: Callable[[Sequence[str]], Any], threshold: float) -> list[Action]:
    groups: dict[tuple[str, str, str], list[Member]] = {}
    for rel, page, c in ledger.active():
        if is_multi(page, c):
            groups.setdefault((ledger.owners[rel], c.subject.casefold(), c.predicate), []).append((rel, c))
    todo = [sorted(members, key=survivor_key) for _k, members in sorted(groups.items()) if len(members) > 1]
    flat = [m for members in todo for m in members]
    if not flat:
        return []
    vectors = embed([claim_body(c) for _rel, c in flat])
    row = {(rel, c.id): i for i, (rel, c) in enumerate(flat)}
    out: list[Action] = []
    for members in todo:
        for survivor, others, score in _clusters(members, vectors, row, threshold):
            current = [(rel, ledger.claim(rel, c.id)) for rel, c in (survivor, *others)]
            out.append(merge(ledger, current, at, "near", score))
    return out


def _clusters(members: list[Member], vectors: Any, row: dict[tuple[str, str], int],
              threshold: float) -> list[tuple[Member, list[Member], float]]:
    """Greedy, no chaining: each survivor (best first) takes the remaining claims close to IT."""
    left = list(members)
    out = []
    while len(left) > 1:
        head, rest = left[0], left[1:]
        vec = vectors[row[(head[0], head[1].id)]]
        close, lowest = [], 1.0
        for m in rest:
            sim = float(vec @ vectors[row[(m[0], m[1].id)]])
            if sim >= threshold and _DIGITS.findall(m[1].value) == _DIGITS.findall(head[1].value):
                close.append(m)
                lowest = min(lowest, sim)
        if close:
            out.append((head, close, round(lowest, 4)))
        left = [m for m in rest if m not in close]
    return out


def merge(ledger: Ledger, members: list[Member], at: str, how: str, score: float) -> Action:
    ordered = sorted(members, key=survivor_key)
    (srel, s), losers = ordered[0], ordered[1:]
    every = [c for _rel, c in ordered]
    meta = dict(s.metadata)
    meta["merged_from"] = sorted({*meta.get("merged_from", ()), *(c.id for _r, c in losers)})
    expired = sorted({str(x) for c in every for x in c.metadata.get("expired_sources", ())})
    if expired:
        meta["expired_sources"] = expired
    decayed = [str(c.metadata["decayed_at"]) for c in every if c.metadata.get("decayed_at")]
    if decayed:
        meta["decayed_at"] = max(decayed)
    sources = tuple(dict.fromkeys(src for c in every for src in c.sources))
    ledger.put(srel, replace(s, sources=sources, confidence=max(c.confidence for c in every), metadata=meta))
    for rel, c in losers:
        closed_meta = {**c.metadata, "merged_into": s.id}
        ledger.put(rel, replace(c, valid_until=max(at, c.valid_from or ""), closed_at=at, superseded_by=s.id,
                                metadata=closed_meta))
    pages = len({rel for rel, _c in ordered})
    return Action("merge", srel, s.id, {"how": how, "similarity": score, "merged": [c.id for _r, c in losers],
                                        "pages": pages})
