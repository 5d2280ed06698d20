"""ClusterBackend: what :class:`~markmem.Memory` delegates to when ``database_url`` is set.

A room beside the embedded backend, not a second facade: Memory validates arguments as always
and hands the cluster-specific part here. Each thread uses its own PostgreSQL connection.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from .. import inspect
from ..config import Settings
from ..errors import LockTimeout, NotFound
from ..ids import validate_user_id
from ..model import AddResult, Claim, CompileReport, Hit, Pack, Page, RawEntry
from ..read.request import SearchArgs
from ..write import pipeline
from . import erasure, index_port, intake, layout, repos, shard_ops
from .lease import Leases, holders
from .shards import ShardSet
from .worker import Worker


class ClusterBackend:
    def __init__(self, settings: Settings) -> None:
        import psycopg

        assert settings.database_url is not None
        self.settings = settings
        self.url = settings.database_url
        self.root = Path(settings.repo_path).resolve()
        self._local = threading.local()
        self._conns: list[psycopg.Connection[Any]] = []
        self._conns_lock = threading.Lock()
        conn = self.conn()
        author = (settings.author_name, settings.author_email)
        count = layout.ensure(conn, self.root, settings.shards, settings.create, author, settings.encryption)
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (layout.INIT_LOCK,))
            index_port.ensure(conn)
        self.shards = ShardSet(settings, self.root, count)
        self._worker: Worker | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._flush_lock = threading.Lock()
        if settings.background:  # this replica compiles too, in a thread of its own
            self._worker = Worker(self.shards, self.url)
            self._thread = threading.Thread(target=self._worker.run, args=(self._stop,), name="markmem-cluster",
                                            daemon=True)
            self._thread.start()

    def conn(self, use: str = "conn") -> Any:
        """This thread's connection (autocommit). ``use="add"``: the one add() commits on, which
        waits for the WAL flush unless ``durable_add`` is off (``synchronous_commit = off``:
        see docs/DEPLOY.md for exactly what that can lose)."""
        if use == "add" and self.settings.durable_add:
            use = "conn"
        conn = getattr(self._local, use, None)
        if conn is None or conn.closed:
            import psycopg

            conn = psycopg.connect(self.url, autocommit=True)
            if use == "add":
                conn.execute("SET synchronous_commit = off")
            setattr(self._local, use, conn)
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def shard_of(self, user_id: str) -> int:
        return layout.shard_of(user_id, self.shards.count)

    # -- write -----------------------------------------------------------------------------
    def add(self, messages: Any, user_id: str, **kwargs: Any) -> AddResult:
        """Gate on this replica, then the intake rows and the index's turn rows in one statement."""
        entries, result = pipeline.prepare(self.shards.any(), messages, user_id, **kwargs)
        shard = self.shard_of(user_id)
        if entries:  # one statement on an autocommit connection: one round trip, one commit
            intake.insert(self.conn("add"), shard, user_id, entries, self.shards.codec(shard),
                          then=index_port.add_statement(user_id, entries))
        return result

    def flush(self) -> list[CompileReport]:
        """Compile every shard's intake; shards another worker holds are waited for."""
        deadline = time.monotonic() + self.settings.lock_timeout
        with self._flush_lock:
            worker = Worker(self.shards, self.url)
            try:
                reports = worker.run_once()
                while intake.pending_shards(self.conn()):
                    if time.monotonic() > deadline:
                        raise LockTimeout("flush: shards stayed leased by other workers")
                    time.sleep(0.05)
                    reports += worker.run_once()
            finally:
                worker.close()
        return reports

    def work(self, once: bool, only: Any, stop: threading.Event | None) -> list[CompileReport]:
        worker = Worker(self.shards, self.url, only)
        try:
            if not once:
                worker.run(stop or threading.Event())
                return []
            reports: list[CompileReport] = []
            while batch := worker.run_once():
                reports += batch
            return reports
        finally:
            worker.close()

    # -- read ------------------------------------------------------------------------------
    def search(self, a: SearchArgs) -> list[Hit] | Pack:
        """``Memory.search``'s checked arguments, answered from the PostgreSQL index."""
        return index_port.search(self.conn(), self.settings, a.user_id, a.query, top_k=a.top_k, as_of=a.as_of,
                                 known_at=a.known_at, format=a.format, explain=a.explain, budget=a.budget)

    def get(self, ident: str, user_id: str | None) -> Page | Claim | RawEntry:
        if user_id is None and ident.startswith("u/"):
            user_id = ident.split("/")[1]
        if ident.startswith("r-"):
            # accepted, not yet compiled: opened with the codec of its user's shard
            pending = intake.get(self.conn(), ident, lambda u: self.shards.codec(self.shard_of(u)))
            if pending is not None and user_id in (None, pending.user_id):
                return pending
        shards = shard_ops.candidates(self.shards, self.conn(), ident) if user_id is None else [self.shard_of(user_id)]
        for shard in shards:
            ctx = self.shards.ctx(shard)
            try:
                found = inspect.get(ctx, ident)
            except NotFound:
                continue
            if user_id is None or inspect.owner(ctx, found) == user_id:
                return found
        raise NotFound("object", ident)

    def history(self, ident: str | None, include_diff: bool, user_id: str | None) -> list[Any]:
        if user_id is not None:
            from ..erase import audit

            return audit.user_history(self.shards.ctx(self.shard_of(user_id)), user_id)
        assert ident is not None
        for shard in shard_ops.candidates(self.shards, self.conn(), ident):
            try:
                return inspect.history(self.shards.ctx(shard), ident, include_diff)
            except NotFound:
                continue
        raise NotFound("object", ident)

    def get_all(self, user_id: str, type: str | None, include_archived: bool) -> list[Page]:
        return inspect.get_all(self.shards.ctx(self.shard_of(user_id)), user_id, type, include_archived)

    def users(self, contains: str | None) -> list[dict[str, Any]]:
        rows = [u for n in range(self.shards.count) for u in inspect.users(self.shards.ctx(n), contains)]
        return sorted(rows, key=lambda u: u["user_id"])

    # -- repo-level work across the shards (cluster/repos.py) ---------------------------------
    def review(self, user_id: str | None) -> list[dict[str, Any]]:
        return repos.review_items(self.shards, user_id, None if user_id is None else self.shard_of(user_id))

    def review_show(self, item_id: str) -> dict[str, Any]:
        return repos.review_show(self.shards, item_id)

    def review_decide(self, item_id: str, decision: str, text: str | None) -> dict[str, Any]:
        return repos.review_decide(self.shards, self.url, self.conn(), item_id, decision, text)  # type: ignore[no-any-return]

    def lint(self, fix: bool, progress: Any) -> Any:
        return repos.lint(self.shards, self.url, self.conn(), fix, progress)

    def export(self, user_id: str | None, to: str, path: Any, progress: Any) -> Any:
        if to == "access" and user_id is None:
            from ..errors import InvalidInput

            raise InvalidInput("an access export is of one user: pass user_id", field="user_id")
        shard = None if user_id is None else self.shard_of(user_id)
        return repos.export(self.shards, self.url, self.conn(), shard, user_id, to, path, progress)

    # -- edits and repo-level writes on the shard repos (cluster/shard_ops.py) -----------------
    def update(self, ident: str, text: str, by: str) -> Claim:
        return shard_ops.update(self.shards, self.url, self.conn(), ident, text, by)

    def delete(self, ident: str, hard: bool) -> str | None:
        return shard_ops.delete(self.shards, self.url, self.conn(), ident, hard)

    def maintenance(self, dry_run: bool, progress: Any) -> Any:
        return shard_ops.maintenance(self.shards, self.url, self.conn(), dry_run, progress)

    def import_(self, path: Any, from_: str, user_id: str | None, progress: Any) -> Any:
        return shard_ops.import_(self.shards, self.url, self.conn(), path, from_, user_id, progress)

    def related(self, user_id: str, entity: str) -> dict[str, Any]:
        return shard_ops.related(self.shards, user_id, entity)

    def tombstones(self) -> list[dict[str, Any]]:
        return shard_ops.tombstones(self.shards)

    # -- erasure ---------------------------------------------------------------------------
    def forget(self, user_id: str, mode: str, dry_run: bool) -> Any:
        leases = Leases(self.url)
        try:
            return erasure.forget(self.shards, leases, self.conn(), self.shard_of(user_id), user_id, mode, dry_run)
        finally:
            leases.close()

    def verify_erasure(self, user_id: str) -> Any:
        return erasure.verify(self.shards, self.conn(), self.shard_of(validate_user_id(user_id)), user_id)

    # -- maintenance -----------------------------------------------------------------------
    def reindex(self, progress: Any = None) -> Any:
        """Rebuild each shard's SQLite cache, then the PostgreSQL index, from the shard repos."""
        from ..index.rebuild import RebuildReport, rebuild

        total = RebuildReport()
        for n in range(self.shards.count):
            ctx = self.shards.ctx(n)
            with ctx.write_lock.held():
                report = rebuild(ctx.root, ctx.cache, ctx.codec, progress)
                head = ctx.git.head()
                if head:
                    ctx.cache.set_meta("head", head)
            held = [u for u in index_port.indexed_users(self.conn()) if self.shard_of(u) == n]
            index_port.reindex(self.conn(), ctx, held)
            total.raw += report.raw
            total.pages += report.pages
            total.claims += report.claims
            total.problems += report.problems
        return total

    def doctor(self) -> dict[str, Any]:
        conn = self.conn()
        pending = intake.pending_shards(conn)
        return {"cluster": {"root": str(self.root), "shards": self.shards.count, "index": index_port.NAME,
                            "intake_pending": sum(pending.values()), "pending_by_shard": pending,
                            "leased": holders(conn), "remote": self.settings.remote},
                "problems": [], "cache": {"ok": True}}

    def stats(self) -> dict[str, Any]:
        return {"shards": self.shards.count, "intake_pending": sum(intake.pending_shards(self.conn()).values()),
                "users": len(self.users(None))}

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self._worker is not None:
            self._worker.close()
        self.shards.close()
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
