"""The write path, stage by stage. Only this module calls the stages, in this order.

accept():   messages -> gate (PII, injection) -> raw append (fsync) -> queue row -> cache row
compile():  queue -> read raw -> extract -> resolve -> pages + review items -> ONE commit -> cache
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..context import Context
from ..errors import InvalidInput
from ..ids import new_batch_id, new_raw_id, now, parse_occurred, validate_user_id
from ..index.text import content_hash
from ..model import AddResult, CompileReport, Page, RawEntry
from ..ports import Extraction
from ..store import raw
from ..store.flush import Flush
from ..store.git import message
from ..store.pages import page_ids_with_prefix, page_loader, write_page
from . import review
from .correct import EDIT_KEY
from .gate import Fields, gate
from .messages import clean_metadata, clean_name, to_turns
from .queue import recover as recover_queue

log = logging.getLogger("markmem")


def accept(
    ctx: Context,
    messages: object,
    user_id: str,
    *,
    agent_id: str | None = None,
    run_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    occurred_at: object = None,
    edit_of: dict[str, Any] | None = None,
) -> AddResult:
    """Gate, then append durably. Returns only after the raw bytes are fsynced. ``edit_of`` is for
    ``edit.update`` alone: the held edit's target, kept under the metadata key callers may not use."""
    entries, result = prepare(ctx, messages, user_id, agent_id=agent_id, run_id=run_id, metadata=metadata,
                              occurred_at=occurred_at, edit_of=edit_of)
    store(ctx, entries, fresh=True)  # ids new_raw_id() just made: no cache row can hold them
    return result


def prepare(
    ctx: Context,
    messages: object,
    user_id: str,
    *,
    agent_id: str | None = None,
    run_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    occurred_at: object = None,
    edit_of: dict[str, Any] | None = None,
) -> tuple[list[RawEntry], AddResult]:
    """Validate and gate input into raw entries (ids assigned), writing nothing. accept() stores
    them in the repo; a cluster replica commits them to PostgreSQL's intake instead."""
    validate_user_id(user_id)
    if isinstance(metadata, dict) and EDIT_KEY in metadata:
        raise InvalidInput(f"metadata key {EDIT_KEY!r} is reserved for markmem", field="metadata")
    limit = ctx.settings.max_input_bytes
    normal = to_turns(messages, max_bytes=limit)
    turns = normal.turns
    when = None if occurred_at is None else parse_occurred(occurred_at)
    used = sum(len(t.content.encode("utf-8")) for t in turns)
    meta, size = clean_metadata(metadata, max_bytes=limit)
    if used + size > limit:
        raise InvalidInput(f"messages and metadata total {used + size} bytes, over the limit of {limit}",
                           field="metadata")
    agent_id, run_id = clean_name(agent_id, field="agent_id"), clean_name(run_id, field="run_id")
    gated = gate(ctx, [Fields(t.content, t.speaker, agent_id, run_id, meta, t.role) for t in turns])
    stamp = now()
    entries = [
        RawEntry(
            id=new_raw_id(), user_id=user_id, role=t.role, content=g.text, recorded_at=stamp,
            occurred_at=when, speaker=g.fields.speaker, agent_id=g.fields.agent_id, run_id=g.fields.run_id,
            metadata={**g.fields.metadata, EDIT_KEY: edit_of} if edit_of else g.fields.metadata,
            pii=g.entities, quarantined=g.quarantined,
        )
        for t, g in zip(turns, gated, strict=True)
    ]
    return entries, AddResult(
        ids=tuple(e.id for e in entries),
        user_id=user_id,
        pii=tuple(sorted({x for e in entries for x in e.pii})),
        masked=tuple(sorted({x for g in gated for x in g.masked})),
        quarantined=tuple(e.id for e in entries if e.quarantined),
        skipped=normal.skipped,
        replaced=tuple(e.id for e, t in zip(entries, turns, strict=True) if t.replaced),
    )


def store(ctx: Context, entries: Sequence[RawEntry], *, fresh: bool = False) -> list[RawEntry]:
    """Append gated entries (one user, or several) to raw/ (fsynced), then cache and queue rows.
    One user's (an add()): the fsync runs in a helper thread while the cache rows are inserted and
    linked; the cache transaction commits, and the queue row is written, only after it is done.
    ``fresh``: ids just made (add()), so the cache need not look for rows already holding them."""
    if not entries:
        return []
    with ctx.append_lock.held():
        located: list[raw.Located] = []
        groups = _by_user(entries)
        flush = Flush() if len(groups) == 1 else None
        to_sync: list[Path] = []  # several users (a cluster worker's batch): flushed together
        for group in groups:
            located += raw.append(ctx.root, group, ctx.codec, sync=flush is not None, to_sync=to_sync, flush=flush)
        if flush is None:
            raw.sync_all(to_sync)
        else:
            flush.start()
        by_id = {loc.raw_id: loc.path for loc in located}
        out = [_with_path(e, by_id[e.id]) for e in entries]
        # The cache row goes in before the queue row: a worker that compiles the entry the
        # moment it is queued must find the row to mark compiled (read-your-writes, too).
        try:
            ctx.cache.upsert_raw(out, ready=None if flush is None else flush.wait,  # commits after the fsync
                                 fresh=fresh)
        finally:
            if flush is not None:
                flush.wait()  # at once if upsert_raw waited; else (it raised first) closes the descriptors
        ctx.queue.enqueue(located)
    return out


def _by_user(entries: Sequence[RawEntry]) -> list[list[RawEntry]]:
    groups: dict[str, list[RawEntry]] = {}
    for e in entries:
        groups.setdefault(e.user_id, []).append(e)
    return list(groups.values())


def _with_path(e: RawEntry, path: str) -> RawEntry:
    """``dataclasses.replace(e, path=path)`` at a fifth of its cost (every turn of every add()
    comes here): the same fields, copied, with the file it was appended to."""
    new = object.__new__(RawEntry)
    new.__dict__.update(e.__dict__)
    object.__setattr__(new, "path", path)
    return new


def recover(ctx: Context) -> int:
    """Finish what a crash interrupted: commit a written-but-uncommitted batch, re-enqueue raw."""
    with ctx.write_lock.held():
        ctx.git.clear_stale_locks()
        staged = ctx.git.staged_paths()  # a commit killed between staging and fast-import
        changed = ctx.git.dirty_paths(["wiki", ".markmem/ops", "raw"])
        for rel in changed:  # an atomic write killed before its rename: never committed
            if _is_temp(rel):
                (ctx.root / rel).unlink(missing_ok=True)
        changed = [p for p in changed if not _is_temp(p)]
        if staged or any(not p.startswith("raw/") for p in changed):
            ctx.git.commit(changed + staged,
                           message("markmem: recover an interrupted operation", {"Markmem-Op": "recover"}))
        pending = recover_queue(ctx.root, ctx.queue, ctx.codec)
        _cache_missing(ctx, pending)
        return len(pending)


def _cache_missing(ctx: Context, entries: Sequence[RawEntry]) -> None:
    """Cache rows for uncompiled raw lines that have none: a process killed between its raw append
    (fsynced) and its cache transaction left them, and search would not find those turns until a
    reindex (a compile only marks rows it finds)."""
    missing: list[RawEntry] = []
    for group in _by_user(entries):
        db = ctx.cache.user(group[0].user_id).db
        known: set[str] = set()
        for i in range(0, len(group), 500):
            ids = [e.id for e in group[i:i + 500]]
            known.update(r[0] for r in db.execute(f"SELECT id FROM raw WHERE id IN ({','.join('?' * len(ids))})", ids))
        missing += [e for e in group if e.id not in known]
    if missing:
        ctx.cache.upsert_raw(missing)


def _is_temp(rel: str) -> bool:
    """An atomic write's temp file (``.tmp-*``) or a ``*.tmp``: never committed."""
    name = rel.rpartition("/")[2]
    return name.startswith(".tmp-") or name.endswith(".tmp")


def compile_batch(ctx: Context) -> CompileReport | None:
    """Compile up to ``batch_size`` queued entries into ONE commit. None when the queue is empty."""
    # The compile stages are imported by the first batch, not with the package: the extractor's
    # rules (which entities and resolve read) compile ~0.1 s of regular expressions that add() never uses.
    from . import entities
    from .resolve import resolve
    from .rollover import roll
    from .summary import compile_message

    with ctx.write_lock.held():
        rows = ctx.queue.take(ctx.settings.batch_size)
        if not rows:
            return None
        entries, offsets, stale, checkpoints = _load_entries(ctx, rows)
        batch = new_batch_id()
        stamp = now()
        extraction = _extract(ctx, entries)
        by_id, load = {e.id: e for e in entries}, page_loader(ctx.root, ctx.codec)
        res = resolve(extraction.candidates, by_id, load, stamp,
                      ctx.settings.review_below, siblings=lambda prefix: page_ids_with_prefix(ctx.root, prefix))
        res.pages.update(entities.build(extraction.candidates, by_id, load, stamp, ctx.settings.review_below))
        pages = {p.id: p for page in res.pages.values() for p in roll(page, stamp)}
        users = sorted({e.user_id for e in entries})
        to_review = len(res.review) + sum(1 for e in entries if e.quarantined)
        subject, named = compile_message(users, pages.values(), stamp, len(entries), res.added, res.reinforced,
                                         to_review)
        trailers = {
            "Markmem-Op": "compile", "Markmem-Batch": batch, "Markmem-Users": ",".join(users),
            "Markmem-Entries": str(len(entries)), "Markmem-Claims": f"+{res.added} -{res.closed} ={res.reinforced}",
            "Markmem-Extractor": ctx.extractor.name + (" (fallback: heuristic)" if extraction.flagged else ""),
            **named,
        }
        paths = _write(ctx, pages, entries, res.review, stamp)
        for uid in users:
            cp = checkpoints[uid]  # read once, by _load_entries, under this same lock
            cp.update({p: max(cp.get(p, 0), end) for (u, p), end in offsets.items() if u == uid})
            paths.append(raw.write_checkpoint(ctx.root, uid, cp))  # written last
        paths += sorted({e.path for e in entries})
        sha = ctx.git.commit(paths, message(subject, trailers)) if entries or stale else None
        plan = ctx.cache.plan_pages((p, content_hash(p.body)) for p in pages.values())  # reads only
        with ctx.cache.tx():
            ctx.cache.apply_pages(plan)
            done = {e.id for e in entries}.union(stale)
            ctx.cache.mark_compiled([(r.user_id, r.raw_id) for r in rows if r.raw_id in done])
            if sha:
                ctx.cache.set_meta("head", sha)
        ctx.queue.done([r.raw_id for r in rows])
        _account(ctx, extraction, len(entries))
        _refresh_vectors(ctx, users)
        return CompileReport(batch, len(entries), res.added, res.closed, res.reinforced, to_review,
                             sha, ctx.extractor.name, extraction.flagged)


def _refresh_vectors(ctx: Context, users: list[str]) -> None:
    """Embed the batch's new claims and turns now, in one batch, rather than at the next search."""
    if ctx.embedder is None:
        return
    from ..index import vectors  # numpy: only with the vector tier

    try:
        for uid in users:
            vectors.refresh(ctx.cache.user(uid), ctx.embedder, [uid])
    except Exception as exc:  # derived data: the next search embeds lazily and raises if it still fails
        log.warning("embedding after compile failed (%s); search will retry", type(exc).__name__)


def _load_entries(
    ctx: Context, rows: Sequence[raw.Located]
) -> tuple[list[RawEntry], dict[tuple[str, str], int], list[str], dict[str, dict[str, int]]]:
    """Read the queued lines, one contiguous read per raw file; skip rows already compiled."""
    entries: list[RawEntry] = []
    offsets: dict[tuple[str, str], int] = {}
    checkpoints: dict[str, dict[str, int]] = {}
    stale: list[str] = []
    exists: dict[str, bool] = {}
    by_file: dict[tuple[str, str], list[raw.Located]] = {}
    for row in rows:
        cp = checkpoints.get(row.user_id)
        if cp is None:
            cp = checkpoints[row.user_id] = raw.read_checkpoint(ctx.root, row.user_id)
        present = exists.get(row.path)
        if present is None:
            present = exists[row.path] = (ctx.root / row.path).exists()
        if row.end <= cp.get(row.path, 0) or not present:
            stale.append(row.raw_id)  # compiled before a crash (or erased since)
            continue
        by_file.setdefault((row.user_id, row.path), []).append(row)
    for (uid, path), group in by_file.items():
        wanted = {r.raw_id for r in group}
        start, end = min(r.start for r in group), max(r.end for r in group)
        for entry, _s, line_end in raw.read_range(ctx.root, path, start, end, ctx.codec, uid):
            if entry.id in wanted:
                entries.append(entry)
                offsets[(uid, path)] = max(offsets.get((uid, path), 0), line_end)
    order = {r.raw_id: i for i, r in enumerate(rows)}
    entries.sort(key=lambda e: order[e.id])
    return entries, offsets, stale, checkpoints


def _extract(ctx: Context, entries: list[RawEntry]) -> Extraction:
    todo = [e for e in entries if not e.quarantined]
    if not todo:
        return Extraction([])
    try:
        return ctx.extractor.extract(todo)
    except Exception as exc:  # an adapter bug must not stall the queue: fall back, flag, go on
        log.warning("extractor %s failed (%s); using the heuristic extractor", ctx.extractor.name,
                    type(exc).__name__, exc_info=exc)  # the traceback: the fallback hides the bug otherwise
        from .extract import HeuristicExtractor

        result = HeuristicExtractor().extract(todo)
        result.flagged = True
        return result


def _write(ctx: Context, pages: dict[str, Page], entries: list[RawEntry], items: list[Any], stamp: str) -> list[str]:
    paths: list[str] = []
    for page in pages.values():
        write_page(ctx.root, page, ctx.codec, sync=False, rendered=True)  # resolve/roll render every body
        paths.append(page.path)
    for entry in entries:
        if entry.quarantined:
            paths.append(review.write_item(ctx.root, review.quarantine_item(entry, stamp), ctx.codec))
    for cand, entry in items:
        paths.append(review.write_item(ctx.root, review.low_confidence_item(cand, entry, stamp), ctx.codec))
    return paths


def _account(ctx: Context, extraction: Extraction, n: int) -> None:
    s = ctx.stats
    s["compiled_entries"] = s.get("compiled_entries", 0) + n
    s["llm_tokens_in"] = s.get("llm_tokens_in", 0) + extraction.tokens_in
    s["llm_tokens_out"] = s.get("llm_tokens_out", 0) + extraction.tokens_out
    s["extractor_fallbacks"] = s.get("extractor_fallbacks", 0) + int(extraction.flagged)
