"""Write an imported :class:`Snapshot` through the canonical store: raw logs, pages, review items
and review decisions, then ONE git commit (``Markmem-Op: import``), then the cache and the queue.

Imports are idempotent: raw entries, review items and decision records already present are
skipped, and a page that exists keeps its ledger and gains only the claims it lacks. Content
passes the repo's PII gate first (:func:`gate`), so an import can never put unmasked PII on disk
that ``add()`` would have masked or blocked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..context import Context
from ..ids import now
from ..index.text import content_hash
from ..model import Claim, Page, RawEntry
from ..store import raw
from ..store.git import message
from ..store.pages import page_path, read_page, render_body, write_page
from ..store.repo import append_op, iter_ops
from ..write import review
from ..write.gate import run_gates
from .snapshot import Snapshot


@dataclass(frozen=True)
class Written:
    users: tuple[str, ...]
    raw: int
    pages: int
    claims: int
    review: int
    skipped: int
    commit: str | None


def gate(ctx: Context, snap: Snapshot) -> Snapshot:
    """Run the PII gate over raw content and claim text/value (mask or block, per policy)."""
    texts: list[str] = [e.content for e, _ in snap.raw]
    for page in snap.pages:
        texts += [t for c in page.claims for t in (c.text, c.value)]
    if not texts:
        return snap
    gated = iter(run_gates(texts, ctx.scanner, ctx.settings.pii_policy, None))
    entries = []
    for entry, compiled in snap.raw:
        g = next(gated)
        pii = tuple(sorted({*entry.pii, *g.entities}))
        entries.append((replace(entry, content=g.text, pii=pii), compiled))
    pages = []
    for page in snap.pages:
        claims = tuple(replace(c, text=next(gated).text, value=next(gated).text) for c in page.claims)
        body = render_body(replace(page, claims=claims)) if claims != page.claims else page.body
        pages.append(replace(page, claims=claims, body=body))
    return replace(snap, raw=entries, pages=pages)


def write(ctx: Context, snap: Snapshot, fmt: str) -> Written:
    with ctx.write_lock.held():
        fresh = _fresh_entries(ctx, snap)
        paths, located = _append_raw(ctx, fresh)
        pages = [p for p in (_merge(ctx, page) for page in snap.pages) if p is not None]
        for page in pages:
            write_page(ctx.root, page, ctx.codec, sync=False)
            paths.append(page.path)
        items = [i for i in snap.review if not (ctx.root / review.item_path(i["user_id"], i["id"])).exists()]
        paths += [review.write_item(ctx.root, item, ctx.codec) for item in items]
        known = {_key(op) for op in iter_ops(ctx.root)}
        decisions = [d for d in snap.decisions if _key(d) not in known]
        paths += [append_op(ctx.root, d) for d in decisions]
        users = tuple(sorted({e.user_id for e, _ in fresh} | {p.user_id for p in pages if p.user_id}
                             | {i["user_id"] for i in items}))
        trailers = {"Markmem-Op": "import", "Markmem-Format": fmt, "Markmem-Users": ",".join(users),
                    "Markmem-Entries": str(len(fresh)), "Markmem-Pages": str(len(pages))}
        subject = f"markmem: import {len(fresh)} entries and {len(pages)} pages ({fmt})"
        sha = ctx.git.commit(paths, message(subject, trailers)) if paths else None
        _update_cache(ctx, located, pages, decisions, sha)
        claims = sum(len(p.claims) for p in pages)
        skipped = len(snap.raw) - len(fresh) + len(snap.pages) - len(pages) + len(snap.review) - len(items)
        return Written(users, len(fresh), len(pages), claims, len(items), skipped, sha)


def _key(op: dict[str, Any]) -> str:
    import json

    return json.dumps(op, sort_keys=True)


def _fresh_entries(ctx: Context, snap: Snapshot) -> list[tuple[RawEntry, bool]]:
    users = sorted({e.user_id for e, _ in snap.raw})
    seen = {e.id for uid in users for e in raw.iter_entries(ctx.root, ctx.codec, uid)}
    out = []
    for entry, compiled in snap.raw:
        if entry.id not in seen:
            seen.add(entry.id)
            out.append((entry, compiled))
    return out


def _append_raw(ctx: Context, fresh: list[tuple[RawEntry, bool]]) -> tuple[list[str], list[tuple[RawEntry, bool]]]:
    """Append (fsync) per user; advance each file's compile checkpoint over the compiled prefix."""
    paths: list[str] = []
    located: list[tuple[RawEntry, bool]] = []
    users = sorted({e.user_id for e, _ in fresh})
    with ctx.append_lock.held():
        for uid in users:
            mine = [(e, c) for e, c in fresh if e.user_id == uid]
            locs = raw.append(ctx.root, [e for e, _ in mine], ctx.codec)
            checkpoint = raw.read_checkpoint(ctx.root, uid)
            pending = []
            for (entry, compiled), loc in zip(mine, locs, strict=True):
                upto = checkpoint.get(loc.path, 0)
                done = compiled and loc.start == upto
                if done:
                    checkpoint[loc.path] = loc.end
                else:
                    pending.append(loc)
                located.append((replace(entry, path=loc.path), done))
            paths.append(raw.write_checkpoint(ctx.root, uid, checkpoint))
            paths += sorted({loc.path for loc in locs})
            ctx.queue.enqueue(pending)
    return paths, located


def _merge(ctx: Context, page: Page) -> Page | None:
    """The page to write: new as given; existing plus the claims it lacks; None if unchanged."""
    rel = page_path(page.id)
    if not (ctx.root / rel).exists():
        return page
    current = read_page(ctx.root, rel, ctx.codec)
    have = {c.id for c in current.claims}
    extra: tuple[Claim, ...] = tuple(c for c in page.claims if c.id not in have)
    if not extra:
        return None
    merged = replace(current, claims=current.claims + extra, updated=max(current.updated, page.updated or now()))
    return replace(merged, body=render_body(merged))


def _update_cache(ctx: Context, located: list[tuple[RawEntry, bool]], pages: list[Page],
                  decisions: list[dict[str, Any]], sha: str | None) -> None:
    with ctx.cache.tx():
        ctx.cache.upsert_raw([e for e, done in located if done], compiled=True)
        ctx.cache.upsert_raw([e for e, done in located if not done], compiled=False)
        for page in pages:
            ctx.cache.upsert_page(page, content_hash(page.body))
        for d in decisions:
            if "quarantine" in d and d.get("raw_id"):
                ctx.cache.set_quarantine(str(d["raw_id"]), d["quarantine"], d.get("user_id"))
        if sha:
            ctx.cache.set_meta("head", sha)
