"""The claim resolver: candidates -> page ledger changes, never overwriting anything.

Same user + subject + predicate with a different value closes the old claim (``valid_until``,
``superseded_by``, ``closed_at``) and the new one ``supersedes`` it; the same value reinforces.
Multi-valued predicates (likes, pets...) get a page per value, so a new value adds instead.
Claim ids are deterministic, so resolving the same raw entry twice changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..errors import MalformedPage
from ..ids import claim_id, short_hash
from ..model import Candidate, Claim, Page, RawEntry
from ..store.pages import render_body
from .extract import _REL, norm_value

PAGE_TYPES = ("profile", "preference", "relationship", "fact", "note")
_BASE_VOCAB = {
    "lives_in": "profile", "hometown": "profile", "job": "profile", "employer": "profile",
    "diet": "profile", "name": "profile", "preferred_name": "profile", "age": "profile",
    "birthday": "profile", "phone": "profile", "email": "profile", "marital_status": "profile",
    "car": "profile", "studies": "profile", "children": "profile", "school": "profile",
    "partner": "relationship", "pet": "relationship", "likes": "preference",
    "dislikes": "preference", "allergy": "preference", "hobby": "preference",
    "speaks": "fact", "learning": "fact", "note": "note",
}
VOCAB: dict[str, str] = {
    **_BASE_VOCAB,
    **{"relationship_" + r.replace(" ", "_"): "relationship" for r in _REL.split("|")},
}
_PRED_RE = re.compile(r"[^a-z0-9_]+")
_MASKED = re.compile(r"<[A-Z_]+>")  # a masked value is unknown: never "the same value" as another


def normalise_predicate(predicate: str) -> str:
    return _PRED_RE.sub("_", predicate.casefold()).strip("_")[:48] or "fact"


def page_id_for(user_id: str, c: Candidate) -> str:
    """Stable page id: never contains user text (unknown predicates and values are hashed)."""
    predicate = normalise_predicate(c.predicate)
    kind = VOCAB.get(predicate) or (c.type if c.type in PAGE_TYPES else "fact")
    slug = predicate.replace("_", "-") if predicate in VOCAB else "p-" + short_hash(predicate, n=8)
    if c.subject != user_id:
        slug += "--s" + short_hash(c.subject.casefold(), n=6)
    if c.multi:
        slug += "--v" + short_hash(norm_value(c.value), n=8)
    return f"u/{user_id}/{kind}/{slug}"


@dataclass
class Resolution:
    pages: dict[str, Page] = field(default_factory=dict)  # changed pages by id
    review: list[tuple[Candidate, RawEntry]] = field(default_factory=list)
    added: int = 0
    closed: int = 0
    reinforced: int = 0


def resolve(
    candidates: Sequence[Candidate],
    entries: dict[str, RawEntry],
    load: Callable[[str], Page | None],
    now: str,
    review_below: float,
) -> Resolution:
    res = Resolution()
    for cand in candidates:
        entry = entries.get(cand.raw_id)
        if entry is None:
            continue
        if cand.confidence < review_below and not cand.negated:
            res.review.append((cand, entry))
            continue
        pid = page_id_for(entry.user_id, cand)
        try:
            page = res.pages.get(pid) or load(pid) or _new_page(pid, entry.user_id, cand, now)
        except MalformedPage:  # a human broke the page: hold the fact for review, never clobber
            res.review.append((cand, entry))
            continue
        claims, counts = apply(list(page.claims), cand, entry, now)
        if counts != (0, 0, 0):
            new = replace(page, claims=tuple(claims), updated=now)
            res.pages[pid] = replace(new, body=render_body(new))
            res.added += counts[0]
            res.closed += counts[1]
            res.reinforced += counts[2]
    return res


def _new_page(pid: str, user_id: str, cand: Candidate, now: str) -> Page:
    kind = pid.split("/")[2]
    title = normalise_predicate(cand.predicate).replace("_", " ")
    if cand.subject != user_id:
        title = f"{cand.subject} — {title}"
    return Page(pid, kind, user_id, title, now, now, pinned=kind == "profile")


def apply(claims: list[Claim], cand: Candidate, entry: RawEntry, now: str) -> tuple[list[Claim], tuple[int, int, int]]:
    """Apply one candidate to a page's ledger. Returns (claims, (added, closed, reinforced))."""
    predicate = normalise_predicate(cand.predicate)
    cid = claim_id(entry.id, cand.subject, predicate, norm_value(cand.value))
    if any(c.id == cid or entry.source in c.metadata.get("closed_by", ()) for c in claims):
        return claims, (0, 0, 0)
    when = entry.when
    same_key = [i for i, c in enumerate(claims) if c.active and c.subject == cand.subject and c.predicate == predicate]
    if cand.negated:
        closed = 0
        for i in same_key:
            c = claims[i]
            if not cand.value or norm_value(c.value) == norm_value(cand.value):
                meta = {**c.metadata, "closed_by": [entry.source]}
                claims[i] = replace(c, valid_until=max(when, c.valid_from or when), closed_at=now, metadata=meta)
                closed += 1
        return claims, (0, closed, 0)
    for i in same_key:
        c = claims[i]
        if norm_value(c.value) == norm_value(cand.value) and not _MASKED.search(cand.value):
            if entry.source in c.sources:
                return claims, (0, 0, 0)
            conf = min(1.0, max(c.confidence, cand.confidence) + 0.05)
            claims[i] = replace(c, sources=(*c.sources, entry.source), confidence=round(conf, 4))
            return claims, (0, 0, 1)
    new = Claim(
        id=cid, subject=cand.subject, predicate=predicate, value=cand.value, text=cand.text,
        provenance=cand.provenance, confidence=round(float(cand.confidence), 4), valid_from=when,
        recorded_at=now, sources=(entry.source,), metadata=dict(entry.metadata),
    )
    closed = 0
    for i in same_key:
        old = claims[i]
        if when >= (old.valid_from or ""):
            claims[i] = replace(old, valid_until=when, superseded_by=cid, closed_at=now)
            new = replace(new, supersedes=old.id)
            closed += 1
        else:  # learned late: the new claim was true before the current one took over
            new = replace(new, valid_until=old.valid_from, superseded_by=old.id, closed_at=now)
    claims.append(new)
    return claims, (1, closed, 0)
