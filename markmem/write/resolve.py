"""The claim resolver: candidates -> page ledger changes, never overwriting anything.

Claims of one user + subject + predicate form a timeline on one page. A candidate is placed at
its valid time (the turn's ``occurred_at``, else when it was recorded), so facts may arrive in
any order:

* the claim valid at that time has the same value: it is reinforced (one more source);
* otherwise a new claim starts there and ``supersedes`` it; the old one is closed
  (``valid_until``, ``superseded_by``, ``closed_at``); if a later claim already exists, the new
  one ends where that one starts (it was learned late);
* a negation ("I'm not vegan anymore") closes the matching claim valid at that time.

Multi-valued predicates (likes, pets...) get a page per value, so a new value adds instead; a
negation of one searches the sibling pages (``siblings``) and closes the values it names.
Claim ids are deterministic and a negation records its source, so resolving the same raw entry
twice changes nothing. Claims of another user or subject are on other pages: never touched.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..errors import MalformedPage
from ..ids import claim_id, short_hash
from ..model import Candidate, Claim, Page, RawEntry
from ..store.pages import render_body
from .extract import norm_value
from .extract_rules import REL
from .revise import without

log = logging.getLogger("markmem")
PAGE_TYPES = ("profile", "preference", "relationship", "fact", "note")
_BASE_VOCAB = {
    "lives_in": "profile", "hometown": "profile", "job": "profile", "employer": "profile",
    "diet": "profile", "name": "profile", "preferred_name": "profile", "age": "profile",
    "birthday": "profile", "phone": "profile", "email": "profile", "marital_status": "profile",
    "car": "profile", "studies": "profile", "children": "profile", "school": "profile",
    "partner": "relationship", "pet": "relationship", "likes": "preference", "prefers": "preference",
    "dislikes": "preference", "allergy": "preference", "hobby": "preference",
    "speaks": "fact", "learning": "fact", "note": "note", "staying_in": "fact", "phone_model": "profile",
    "laptop": "profile", "member_of": "fact", "subscription": "fact", "plays": "preference", "team": "fact",
    "work_pattern": "profile", "tablet": "profile", "e_reader": "profile", "games_console": "profile",
    "watch": "profile",
}
VOCAB: dict[str, str] = {
    **_BASE_VOCAB,
    **{"relationship_" + r.replace(" ", "_"): "relationship" for r in REL.split("|")},
}
_PRED_RE = re.compile(r"[^a-z0-9_]+")
_MASKED = re.compile(r"<[A-Z_]+>")  # a masked value is unknown: never "the same value" as another

Loader = Callable[[str], "Page | None"]
Siblings = Callable[[str], Sequence[str]]  # page-id prefix -> ids of existing pages with it


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
    load: Loader,
    now: str,
    review_below: float,
    *,
    siblings: Siblings | None = None,
) -> Resolution:
    """Apply candidates in order. Low-confidence ones (negations too) go to review instead."""
    res = Resolution()
    for cand in candidates:
        entry = entries.get(cand.raw_id)
        if entry is None:
            continue
        if cand.confidence < review_below:
            res.review.append((cand, entry))
            continue
        try:
            pids = _targets(entry.user_id, cand, res, siblings)
            for pid in pids:
                page = res.pages.get(pid) or load(pid)
                if page is None and cand.negated:
                    continue
                _apply_to(res, page or _new_page(pid, entry.user_id, cand, now), cand, entry, now)
            if cand.negated and cand.multi:
                _restate(res, cand, entry, now, [p for p in (res.pages.get(i) or load(i) for i in pids) if p])
        except MalformedPage:  # a human broke the page: hold the fact for review, never clobber
            log.warning("page %s is malformed; its new fact goes to review", pid)
            res.review.append((cand, entry))
    return res


def _targets(user_id: str, cand: Candidate, res: Resolution, siblings: Siblings | None) -> list[str]:
    pid = page_id_for(user_id, cand)
    if not (cand.negated and cand.multi):
        return [pid]
    prefix = page_id_for(user_id, replace(cand, multi=False)) + "--v"  # every value's page
    found = set(siblings(prefix)) if siblings else set()
    found |= {p for p in res.pages if p.startswith(prefix)}
    return sorted(found | {pid})


def _apply_to(res: Resolution, page: Page, cand: Candidate, entry: RawEntry, now: str) -> None:
    claims, (added, closed, reinforced) = apply(list(page.claims), cand, entry, now)
    if (added, closed, reinforced) == (0, 0, 0):
        return
    new = replace(page, claims=tuple(claims), updated=now)
    res.pages[page.id] = replace(new, body=render_body(new))
    res.added += added
    res.closed += closed
    res.reinforced += reinforced


def _restate(res: Resolution, cand: Candidate, entry: RawEntry, now: str, pages: list[Page]) -> None:
    """A member of a coordination ended ("I quit violin" after "I play piano and violin"): the other
    members said in that clause are restated without it (:func:`.revise.without`)."""
    ended = [c for p in pages for c in p.claims if entry.source in c.metadata.get("closed_by", ())]
    when = cand.valid_from or entry.when
    for page in pages:
        claims, changed = list(page.claims), False
        for i, c in enumerate(page.claims):
            gone = next((e for e in ended if e.text == c.text and e.id != c.id), None)
            text = without(c.text, gone.value) if gone and c.valid_at(when) and not c.superseded_by else None
            if not text:
                continue
            new = replace(c, id=claim_id(entry.id, c.subject, c.predicate, f"{c.value} | {text}"), text=text,
                          valid_from=when, recorded_at=now, sources=(*c.sources, entry.source), supersedes=c.id)
            claims[i] = replace(c, valid_until=when, superseded_by=new.id, closed_at=now)
            claims.append(new)
            changed = True
            res.added, res.closed = res.added + 1, res.closed + 1
        if changed:
            upd = replace(page, claims=tuple(claims), updated=now)
            res.pages[page.id] = replace(upd, body=render_body(upd))


def _new_page(pid: str, user_id: str, cand: Candidate, now: str) -> Page:
    kind = pid.split("/")[2]
    title = normalise_predicate(cand.predicate).replace("_", " ")
    if cand.subject != user_id:
        title = f"{cand.subject} — {title}"
    return Page(pid, kind, user_id, title, now, now, pinned=kind == "profile")


def apply(claims: list[Claim], cand: Candidate, entry: RawEntry, now: str) -> tuple[list[Claim], tuple[int, int, int]]:
    """Apply one candidate to a page's ledger. Returns (claims, (added, closed, reinforced))."""
    predicate = normalise_predicate(cand.predicate)
    key = [i for i, c in enumerate(claims)
           if c.subject == cand.subject and c.predicate == predicate and "deleted" not in c.metadata]
    if cand.negated:
        return _negate(claims, key, cand, entry, now)
    cid = claim_id(entry.id, cand.subject, predicate, norm_value(cand.value))
    if any(cid in (c.id, c.supersedes, c.superseded_by) for c in claims):
        return claims, (0, 0, 0)  # resolved before (the claim may since have rolled into an archive page)
    when = cand.valid_from or entry.when
    current = [i for i in key if claims[i].valid_at(when)]
    for i in current:
        c = claims[i]
        if _same(c.value, cand.value):
            if entry.source in c.sources:
                return claims, (0, 0, 0)
            conf = min(1.0, max(c.confidence, cand.confidence) + 0.05)
            claims[i] = replace(c, sources=(*c.sources, entry.source), confidence=round(conf, 4))
            return claims, (0, 0, 1)
    later = sorted((claims[i] for i in key if (claims[i].valid_from or "") > when), key=lambda c: c.valid_from or "")
    new = Claim(
        id=cid, subject=cand.subject, predicate=predicate, value=cand.value, text=cand.text,
        provenance=cand.provenance, confidence=round(float(cand.confidence), 4), valid_from=when,
        recorded_at=now, sources=(entry.source,), metadata=dict(entry.metadata),
    )
    if cand.valid_until and cand.valid_until > when:  # a temporary state ends by itself
        new = replace(new, valid_until=cand.valid_until)
    if later:  # learned late: true until the next known value took over
        new = replace(new, valid_until=later[0].valid_from, superseded_by=later[0].id, closed_at=now)
    for i in current:
        old = claims[i]
        claims[i] = replace(old, valid_until=when, superseded_by=cid, closed_at=now)
        new = replace(new, supersedes=old.id)
        for j in key:  # the next claim now follows the new one
            if claims[j].supersedes == old.id and claims[j].id != cid:
                claims[j] = replace(claims[j], supersedes=cid)
    if later and not current:
        claims = [replace(c, supersedes=cid) if c.id == later[0].id and c.supersedes is None else c for c in claims]
    claims.append(new)
    return claims, (1, len(current), 0)


def _negate(claims: list[Claim], key: list[int], cand: Candidate, entry: RawEntry,
            now: str) -> tuple[list[Claim], tuple[int, int, int]]:
    when = cand.valid_from or entry.when
    closed = 0
    for i in key:
        c = claims[i]
        if entry.source in c.metadata.get("closed_by", ()):
            continue  # this negation was applied before
        if c.valid_at(when) and _names(cand.value, c.value):
            meta = {**c.metadata, "closed_by": [*c.metadata.get("closed_by", ()), entry.source]}
            claims[i] = replace(c, valid_until=when, closed_at=now, metadata=meta)
            closed += 1
    return claims, (0, closed, 0)


def _same(a: str, b: str) -> bool:
    return norm_value(a) == norm_value(b) and not _MASKED.search(b)


def _names(negated: str, value: str) -> bool:
    """Does a negation's value name this claim? Empty names any; "dog" names "dog named Rex"."""
    if not negated:
        return True
    n, v = norm_value(negated), norm_value(value)
    if n == v:
        return True
    nw, vw = set(n.split()), set(v.split())
    return bool(nw) and (nw <= vw or vw <= nw) and not (_MASKED.search(n) and n != v)
