"""The maintenance plan: a pure function from the pages (and raw inventory) to a list of actions.

Order: per-type claim expiry -> confidence decay -> consolidation -> raw retention. A plan
with no actions changes nothing, so a re-run on the same day is a no-op (no commit).

Decay is idempotent: a claim's confidence is taken as accurate on its reference day, the latest
of ``recorded_at``, the days of its sources (each re-telling reinforces it) and
``metadata.decayed_at``; it is multiplied by ``0.5 ** (days / half_life)`` for the whole days since,
floored at ``decay_floor``, and ``decayed_at`` is set to today. A change under ``decay_min_step``
(0.01) is not written yet: the next run decays from the older reference day, so nothing is lost,
and a daily run does not rewrite every page every day.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from ..model import Claim, Page
from . import consolidate
from .config import LifecycleConfig
from .ledger import Action, Ledger
from .retention import RawFile, RawRewrite, plan_raw
from .rules import check_drift, check_owner
from .scan import PageFile, claim_days

Embed = Callable[[Sequence[str]], Any]  # texts -> L2-normalised vectors (n, dim)


@dataclass(frozen=True)
class MaintenancePlan:
    at: str
    actions: tuple[Action, ...]
    pages: tuple[Page, ...]  # pages as they will be written
    raw: tuple[RawRewrite, ...]  # raw day files to rewrite or delete
    skipped: tuple[tuple[str, str], ...]  # (path, reason) left alone
    config: LifecycleConfig

    @property
    def empty(self) -> bool:
        return not self.pages and not self.raw

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(a.kind for a in self.actions).items()))

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "counts": self.counts(), "pages": len(self.pages), "raw_files": len(self.raw),
                "actions": [a.to_json() for a in self.actions],
                "skipped": [{"path": p, "reason": r} for p, r in self.skipped], "config": self.config.to_json()}

    def summary(self) -> str:
        lines = [f"{a.kind:<15} {a.path}{f' [{a.claim}]' if a.claim else ''}" for a in self.actions]
        lines += [f"skipped         {p}: {r}" for p, r in self.skipped]
        counts = ", ".join(f"{k}={v}" for k, v in self.counts().items()) or "nothing to do"
        return "\n".join([*lines, f"{counts} ({len(self.pages)} page(s), {len(self.raw)} raw file(s))"])


def plan(pages: Sequence[PageFile], raw_files: Sequence[RawFile], review_ids: Collection[str],
         cfg: LifecycleConfig, at: str, embed: Embed | None = None) -> MaintenancePlan:
    """Everything maintenance would do at time ``at``; reads nothing, writes nothing."""
    ledger, skipped = _eligible(pages)
    today = at[:10]
    # entity pages' relations restate fact claims (write/entities.py): they are not decayed, expired or
    # merged on their own; only their sources expire with the raw lines
    facts = Ledger({r: p for r, p in ledger.pages.items() if p.type != "entity"}, ledger.owners)
    actions = expire_claims(facts, cfg, today, at)
    actions += decay(facts, cfg, today)
    actions += consolidate.exact(facts, at)
    if embed is not None:
        actions += consolidate.near(facts, at, embed, cfg.near_duplicate_similarity)
    ledger.pages.update(facts.pages)
    rewrites: list[RawRewrite] = []
    if cfg.retention_days.get("raw"):
        cutoff = (date.fromisoformat(today) - timedelta(days=cfg.retention_days["raw"])).isoformat()
        blocked = {pf.user for pf, _why in skipped if pf.user}
        rewrites, raw_skipped = plan_raw(raw_files, cutoff, review_ids, blocked)
        skipped_paths = [(pf.rel, why) for pf, why in skipped] + raw_skipped
        actions += [Action("drop-raw", r.path, None, {"dropped": len(r.dropped), "kept": len(r.keep)})
                    for r in rewrites]
        actions += expire_sources(ledger, {f"{r.path}#{rid}" for r in rewrites for rid in r.dropped})
    else:
        skipped_paths = [(pf.rel, why) for pf, why in skipped]
    return MaintenancePlan(at, tuple(actions), tuple(ledger.changed(at)), tuple(rewrites),
                           tuple(skipped_paths), cfg)


def _eligible(pages: Sequence[PageFile]) -> tuple[Ledger, list[tuple[PageFile, str]]]:
    """Pages maintenance may rewrite; the rest (with why) are left for lint and a human."""
    ok: dict[str, Page] = {}
    owners: dict[str, str] = {}
    skipped: list[tuple[PageFile, str]] = []
    for pf in pages:
        why = _why_not(pf)
        if why:
            skipped.append((pf, why))
        elif pf.page is not None and pf.owner is not None:
            ok[pf.rel], owners[pf.rel] = pf.page, pf.owner
    return Ledger(ok, owners), skipped


def _why_not(pf: PageFile) -> str | None:
    if pf.owner is None:
        return "outside a user prefix"
    if pf.error is not None or pf.page is None:
        return "page does not parse"
    if check_owner(pf):
        return "user_id does not match its folder"
    if check_drift(pf.rel, pf.page):
        return "prose differs from the ledger (a human edit?): run lint"
    return None


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def _last_day(c: Claim) -> date | None:
    days = [d for d in map(_day, claim_days(c)) if d]
    return max(days) if days else None


def expire_claims(ledger: Ledger, cfg: LifecycleConfig, today: str, at: str) -> list[Action]:
    """Close active claims of a page type with a ``retention_days`` entry, not re-told for that long."""
    out: list[Action] = []
    now_day = date.fromisoformat(today)
    for rel, page, c in list(ledger.active()):
        limit = cfg.retention_days.get(page.type)
        last = _last_day(c)
        if not limit or last is None or (now_day - last).days <= limit:
            continue
        meta = {**c.metadata, "expired": today}
        ledger.put(rel, replace(c, valid_until=max(at, c.valid_from or ""), closed_at=at, metadata=meta))
        out.append(Action("expire-claim", rel, c.id, {"age_days": (now_day - last).days, "max_days": limit}))
    return out


def decay(ledger: Ledger, cfg: LifecycleConfig, today: str) -> list[Action]:
    out: list[Action] = []
    for rel, page, c in list(ledger.active()):
        new = decayed(c, cfg.half_life(page.type), cfg.decay_floor, today, cfg.decay_min_step)
        if new is not None:
            ledger.put(rel, new)
            out.append(Action("decay", rel, c.id, {"from": c.confidence, "to": new.confidence}))
    return out


def decayed(c: Claim, half_life: float, floor: float, today: str, min_step: float = 0.01) -> Claim | None:
    """The claim with its confidence decayed to ``today``, or None when nothing (worth) changes."""
    if half_life <= 0 or c.confidence <= floor:
        return None
    days = [d for d in (_last_day(c), _day(str(c.metadata.get("decayed_at", "")))) if d]
    if not days:
        return None
    elapsed = (date.fromisoformat(today) - max(days)).days
    if elapsed <= 0:
        return None
    new = max(floor, round(c.confidence * 0.5 ** (elapsed / half_life), 4))
    if c.confidence - new < min_step - 1e-9 and new > floor:
        return None
    return replace(c, confidence=new, metadata={**c.metadata, "decayed_at": today})


def expire_sources(ledger: Ledger, dropped: set[str]) -> list[Action]:
    """Move sources whose raw lines are being dropped to ``metadata.expired_sources``."""
    if not dropped:
        return []
    out: list[Action] = []
    for rel, page in sorted(ledger.pages.items()):
        moved = 0
        for c in page.claims:
            gone = [s for s in c.sources if s in dropped]
            if gone:
                expired = sorted({*c.metadata.get("expired_sources", ()), *gone})
                meta = {**c.metadata, "expired_sources": expired}
                ledger.put(rel, replace(c, sources=tuple(s for s in c.sources if s not in dropped), metadata=meta))
                moved += len(gone)
        if moved:
            out.append(Action("expire-sources", rel, None, {"sources": moved}))
    return out
