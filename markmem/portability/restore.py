"""Write an imported :class:`Snapshot` through the canonical store: raw logs, pages, review items
and review decisions, then ONE git commit (``Markmem-Op: import``), then the cache and the queue.

Imports are idempotent: raw entries, review items and decision records already present are
skipped, and a page that exists keeps its ledger and gains only the claims it lacks. Content
passes the repo's one gate first (:func:`gate`), so an import can never put on disk PII that
``add()`` would have masked or blocked, nor compile text ``add()`` would have quarantined.
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
from ..write.gate import Fields, Gated
from ..write.gate import gate as door
from ..write.messages import clean_metadata
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
    """Every stored text field through the one gate, as ``add()`` gates it: raw entries (content,
    speaker, ids, metadata), claims (text, value, subject, metadata), page titles and extra keys,
    review candidates. A raw entry the injection guard flags arrives quarantined with its review
    item, and no claim derived from it is imported; a flagged claim is dropped and its source
    turn, when in the file, is quarantined instead (approving it compiles the turn again)."""
    entries, held = _gate_raw(ctx, snap)
    pages, flagged = _gate_pages(ctx, snap.pages)
    for cid_sources in flagged.values():
        for raw_id, reason in cid_sources:
            held.setdefault(raw_id, reason)
    for entry, _ in snap.raw:  # held by the source repo already: its review decisions travel along
        if entry.quarantined:
            held.pop(entry.id, None)
    stamp = now()
    new = {e.id for e, _ in _fresh_entries(ctx, snap)}
    fresh_items = []
    for i, (entry, compiled) in enumerate(entries):
        if entry.id in held:
            entries[i] = (replace(entry, quarantined=held[entry.id]), compiled)
            if entry.id in new:  # a re-import does not bring back an item decided since
                fresh_items.append(review.quarantine_item(entries[i][0], stamp))
    kept = [p for p in (_keep(page, flagged, held) for page in pages) if p is not None]
    return replace(snap, raw=entries, pages=kept, review=_gate_items(ctx, snap.review) + fresh_items)


def _gate_raw(ctx: Context, snap: Snapshot) -> tuple[list[tuple[RawEntry, bool]], dict[str, str]]:
    limit = ctx.settings.max_input_bytes
    records = [Fields(e.content, e.speaker, e.agent_id, e.run_id, clean_metadata(e.metadata, max_bytes=limit)[0])
               for e, _ in snap.raw]
    out, held = [], {}
    for (entry, compiled), g in zip(snap.raw, door(ctx, records), strict=True):
        f = g.fields
        out.append((replace(entry, content=f.text, speaker=f.speaker, agent_id=f.agent_id, run_id=f.run_id,
                            metadata=f.metadata, pii=tuple(sorted({*entry.pii, *g.entities}))), compiled))
        if g.quarantined:
            held[entry.id] = g.quarantined
    return out, held


def _claim_fields(c: Claim, limit: int) -> Fields:
    meta = clean_metadata(c.metadata, max_bytes=limit)[0]
    return Fields(c.text, metadata={"value": c.value, "subject": c.subject, "metadata": meta})


def _gate_pages(ctx: Context, pages: list[Page]) -> tuple[list[Page], dict[str, list[tuple[str, str]]]]:
    """Pages with gated titles, extra keys and claims; the flagged claim ids, each with the
    (raw id, reason) of its sources."""
    limit = ctx.settings.max_input_bytes
    claims = door(ctx, [_claim_fields(c, limit) for p in pages for c in p.claims])
    heads = door(ctx, [Fields(p.title, metadata=clean_metadata(p.extra, max_bytes=limit)[0]) for p in pages],
                 guard=False)
    flagged: dict[str, list[tuple[str, str]]] = {}
    out, n = [], 0
    for page, head in zip(pages, heads, strict=True):
        mine = claims[n : n + len(page.claims)]
        n += len(page.claims)
        for c, g in zip(page.claims, mine, strict=True):
            if g.quarantined:
                flagged[c.id] = [(src.partition("#")[2], g.quarantined) for src in c.sources]
        gated = tuple(_gated_claim(c, g) for c, g in zip(page.claims, mine, strict=True))
        out.append(replace(page, title=head.text, extra=head.fields.metadata, claims=gated))
    return out, flagged


def _gated_claim(c: Claim, g: Gated) -> Claim:
    meta = g.fields.metadata
    return replace(c, text=g.text, value=meta["value"], subject=meta["subject"], metadata=meta["metadata"])


def _keep(page: Page, flagged: dict[str, list[tuple[str, str]]], held: dict[str, str]) -> Page | None:
    """The page without flagged claims or claims drawn from a held turn; None if nothing is left."""
    claims = tuple(c for c in page.claims if c.id not in flagged
                   and not any(src.partition("#")[2] in held for src in c.sources))
    if not claims and page.claims:
        return None
    return replace(page, claims=claims, body=render_body(replace(page, claims=claims)))


def _gate_items(ctx: Context, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Review candidates: text, value and subject through the gate (they are held already)."""
    cands = [i.get("candidate") if isinstance(i.get("candidate"), dict) else None for i in items]
    todo = [Fields(str(c.get("text", "")) or " ", metadata={"value": str(c.get("value", "")),
                                                              "subject": str(c.get("subject", ""))})
            for c in cands if c is not None]
    gated = iter(door(ctx, todo, guard=False))
    out = []
    for item, cand in zip(items, cands, strict=True):
        if cand is not None:
            g = next(gated)
            cand = {**cand, "text": g.text, **g.fields.metadata}
            item = {**item, "candidate": cand}
        out.append(item)
    return out


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
