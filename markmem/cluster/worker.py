"""The compile worker: drains a shard's intake into its repo, one commit per batch.

Per shard, under its lease: recover what a dead holder left (``pipeline.recover``) -> take the
oldest intake rows -> append those whose ids are not yet in the shard's raw files (looked up when
the lease may follow a dead holder's) -> compile (``pipeline.compile_batch``: ONE commit) -> fsync
what the commit wrote (``durable.settle``) -> delete the intake rows and sync the derived index in
one transaction (the batch's turns, and the pages of its users) -> push to the shard's remote. A
crash at any point, a power loss included, loses nothing and compiles
nothing twice: ids found in raw/ are not appended again, and claim ids are idempotent.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..context import Context
from ..model import CompileReport, RawEntry
from ..store import raw
from ..write import pipeline
from . import durable, index_port, intake
from .lease import Leases
from .shards import ShardSet

log = logging.getLogger("markmem")


class Worker:
    """Compiles any shard with pending intake whose lease it can take (``only``: these shards).

    ``run_once`` takes each lease for one visit. ``run`` (``markmem worker``, a replica's background
    thread) keeps the leases it took between passes, up to its share of the shards (the shard
    count over the running workers, counted in PostgreSQL): the shard's repo, its cache and this
    worker's view of it stay warm, and no visit pays the recovery a lease that may follow someone
    else's needs. It gives a lease up when someone waits for it (forget, a review decision, an edit),
    when its share shrinks (another worker started) and after a failed visit."""

    def __init__(self, shards: ShardSet, url: str, only: Iterable[int] | None = None) -> None:
        import psycopg

        self.shards = shards
        self.only = None if only is None else sorted(set(only))
        self.leases = Leases(url)
        self.conn = psycopg.connect(url, autocommit=True)
        self._left_clean: dict[int, int] = {}  # shard -> epoch of our lease that drained it cleanly
        self.held: set[int] = set()  # leases kept between passes (``run``)

    def run_once(self, keep: bool = False) -> list[CompileReport]:
        """One pass over the shards with pending intake; shards leased elsewhere are skipped.
        ``keep``: keep the leases taken, up to this worker's share (see the class). A shard whose
        visit fails does not stop the pass: the others are visited, then the first failure is raised."""
        pending = [s for s in intake.pending_shards(self.conn) if self.only is None or s in self.only]
        random.shuffle(pending)  # two workers started together do not queue on the same shard
        share = self._share(pending) if keep else len(pending)  # idle or not: waiters get theirs
        pending.sort(key=lambda s: s not in self.held)  # our own first
        reports: list[CompileReport] = []
        failed: list[Exception] = []
        for shard in pending:
            if keep and reports:  # after a visit: a forget waits at most one visit, not a whole pass
                share = self._share(pending)
            if shard not in self.held:
                if len(self.held) >= share or not self.leases.try_take(shard):
                    continue
                self.held.add(shard)
            epoch = self.leases.epoch[shard]
            clean = False
            try:
                # someone else may have held it since our last clean visit: recover first
                fresh = self._left_clean.pop(shard, None) not in (epoch - 1, epoch)
                reports += compile_shard(self.conn, self.shards.ctx(shard), self.shards.remote(shard), fresh)
                self._left_clean[shard] = epoch
                clean = True
            except Exception as exc:  # one shard's failure (a bad file, a stale lock) starves no other shard
                if failed:  # the first failure goes up, and the caller logs it once with its traceback
                    log.warning("cluster worker: shard %d failed too: %s", shard, exc)
                getattr(exc, "add_note", lambda _note: None)(f"cluster worker: visiting shard {shard}")  # 3.11+
                failed.append(exc)
            finally:
                if not (keep and clean):
                    self._let_go(shard)
        if failed:  # after every other shard had its visit; the caller logs and retries
            raise failed[0]
        return reports

    def _share(self, pending: list[int]) -> int:
        """How many leases this worker may keep; gives up those over it and those waited for."""
        count = self.shards.count if self.only is None else len(self.only)
        workers, waited = self.leases.sharing()
        share = -(-count // workers)
        for shard in sorted(self.held, key=lambda s: (s in waited, s not in pending), reverse=True):
            if shard in waited or len(self.held) > share:
                self._let_go(shard)
        return share

    def _let_go(self, shard: int) -> None:
        self.held.discard(shard)
        self.leases.release(shard)

    def run(self, stop: threading.Event, idle: float = 0.2) -> None:
        self.leases.register()
        while not stop.is_set():
            try:
                if not self.run_once(keep=True):
                    stop.wait(idle)
            except Exception:  # a git or database hiccup: logged, retried on the next pass
                log.exception("cluster worker pass failed")
                stop.wait(1.0)
        for shard in sorted(self.held):
            self._let_go(shard)

    def close(self) -> None:
        self.leases.close()
        self.conn.close()


def compile_shard(conn: Any, ctx: Context, remote: str | None, recover: bool = True) -> list[CompileReport]:
    """Drain one shard (the caller holds its lease). ``recover``: finish what a dead holder left
    (a written-but-uncommitted batch, raw past the checkpoint); a worker skips it when its own
    previous lease drained the shard and nobody has held the lease since (``Leases.epoch``)."""
    shard = int(ctx.root.name)
    mark = durable.Mark(ctx)
    if recover:
        pipeline.recover(ctx)
    reports: list[CompileReport] = []
    while True:
        entries = intake.take(conn, shard, ctx.settings.batch_size, ctx.codec)
        stored: list[RawEntry] | None = None
        if entries:
            # only a holder that may follow a dead one looks in raw/ for what it appended (the
            # epoch says nobody else held the lease since this worker's own clean drain)
            have = present_ids(ctx, entries) if recover else set()
            stored = pipeline.store(ctx, [e for e in entries if e.id not in have])
            if recover:  # a dead holder may have left turns in raw/: every file of those users is read
                stored = None
        while (report := pipeline.compile_batch(ctx)) is not None:
            reports.append(report)
        if not entries:
            break
        users = sorted({e.user_id for e in entries})
        # the commit on disk before its intake rows go (durable.py); after a dead holder, recover
        # may have compiled other users' turns too: every user's files are looked at
        durable.settle(mark, None if recover else users)
        mark = durable.Mark(ctx)
        with conn.transaction():
            intake.done(conn, [e.id for e in entries])
            index_port.sync_users(conn, ctx, users, compiled=stored)
        push(ctx, remote)
        if len(entries) < ctx.settings.batch_size:
            break  # drained for now: no second look (a query, an empty compile) until the next pass
    return reports


def present_ids(ctx: Context, entries: Sequence[RawEntry]) -> set[str]:
    """Ids in the raw files of ``entries``' users and days: those of ``entries`` found there were
    appended by a dead worker.

    An entry is filed under its recorded_at day, so only that day's segments are read."""
    days = {(e.user_id, e.recorded_at[:10]) for e in entries}
    found: set[str] = set()
    for uid, day in days:
        folder = ctx.root / raw.raw_path(uid, day + "T", 0)
        for path in sorted(folder.parent.glob(folder.stem + "*.jsonl")):
            rel = path.relative_to(ctx.root).as_posix()
            found.update(e.id for e, _s, _e in raw.read_range(ctx.root, rel, 0, None, ctx.codec, uid))
    return found


def push(ctx: Context, remote: str | None, *, force: bool = False) -> None:
    """Replicate the shard's branch to its remote (a local path is created as a bare repo)."""
    if remote is None:
        return
    branch = ctx.git.run("symbolic-ref", "--short", "HEAD").strip() or "main"
    if "://" not in remote and ":" not in remote.split("/")[0]:
        bare = Path(remote)
        if not bare.exists():
            bare.parent.mkdir(parents=True, exist_ok=True)
            ctx.git.run("init", "--quiet", "--bare", f"--initial-branch={branch}", str(bare))
    args = ["push", "--quiet"] + (["--force"] if force else []) + [remote, f"HEAD:refs/heads/{branch}"]
    ctx.git.run(*args)
