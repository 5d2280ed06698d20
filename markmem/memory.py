"""Memory: the one facade. Shells (CLI, MCP, REST) and AsyncMemory call only this."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path
from typing import Any

from . import edit, inspect
from .config import Settings, parse_policy
from .context import Context
from .errors import EditQuarantined, MarkmemError
from .ids import validate_user_id
from .index.rebuild import Progress, RebuildReport, rebuild
from .model import AddResult, Claim, CompileReport, Hit, Pack, Page, RawEntry
from .setup import build_context, sync_cache
from .write import pipeline

log = logging.getLogger("markmem")
UNREPORTED_MAX = 10_000  # batch reports kept for the next flush()
_READ_SIDE: list[bool] = []  # [True] once the read side is imported in this process (``read.warm.read_side``)


class Memory:
    """A memory repo: markdown + YAML in git, with a disposable SQLite cache.

    >>> mem = Memory("chat-memory")
    >>> mem.add("I prefer aisle seats", user_id="alice")
    >>> mem.flush(); mem.search("seat", user_id="alice")
    """

    def __init__(self, repo_path: str | Path = ".", settings: Settings | None = None, **overrides: Any) -> None:
        base = settings or Settings()
        if "pii_policy" in overrides:
            overrides["pii_policy"] = parse_policy(overrides["pii_policy"])
        self.settings = base.with_(repo_path=Path(repo_path), **overrides)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._worker_error: BaseException | None = None
        self._worker: threading.Thread | None = None
        self._compile_lock = threading.Lock()  # one batch at a time in this process; guards _unreported
        self._unreported: list[CompileReport] = []  # compiled since the last flush() returned
        self._cluster: Any = None
        if self.settings.database_url:  # cluster mode: PostgreSQL intake + index, sharded repos
            from .cluster.backend import ClusterBackend

            self._cluster = ClusterBackend(self.settings)
            self.root = self._cluster.root
            return
        self._ctx: Context = build_context(self.settings)
        self.root = self._ctx.root
        pipeline.recover(self._ctx)
        sync_cache(self._ctx)  # a recovery commit changed pages the cache has not seen yet
        if self.settings.background:
            self._worker = threading.Thread(target=self._work, name="markmem-compile", daemon=True)
            self._worker.start()
            if self._ctx.queue.pending():
                self._wake.set()

    # -- lifecycle ------------------------------------------------------------------
    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.close()
            return
        self._stop.set()
        self._wake.set()
        if self._worker is not None:
            self._worker.join(timeout=30)
        scrub = sys.modules.get("markmem.erase.scrub")
        if scrub is not None:
            scrub.wait_deleted()  # a shred's moved-out files, deleted in the background
        self._ctx.cache.close()
        self._ctx.queue.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _work(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(timeout=1.0)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                while not self._stop.is_set() and self._compile_one():
                    pass
                self._worker_error = None
            except MarkmemError as exc:  # lock held elsewhere, git hiccup: retried on next wake
                self._worker_error = exc
                log.warning("background compile failed: %s", exc)
            except Exception as exc:  # keep the worker alive; flush() re-raises
                self._worker_error = exc
                log.exception("background compile crashed")

    # -- write ----------------------------------------------------------------------
    def add(self, messages: Any, user_id: str, agent_id: str | None = None, run_id: str | None = None,
            metadata: dict[str, Any] | None = None, occurred_at: Any = None) -> AddResult:
        """Gate and durably store input; compilation happens in the background (see flush)."""
        if self._cluster is not None:
            return self._cluster.add(messages, user_id, agent_id=agent_id, run_id=run_id,  # type: ignore[no-any-return]
                                     metadata=metadata, occurred_at=occurred_at)
        result = pipeline.accept(self._ctx, messages, user_id, agent_id=agent_id, run_id=run_id,
                                 metadata=metadata, occurred_at=occurred_at)
        self._wake.set()
        return result

    def flush(self) -> list[CompileReport]:
        """Compile everything queued (by any process); return the reports of every batch this Memory
        compiled since the previous flush() returned, including those the background worker
        compiled first (a batch it is compiling when flush() is called is waited for)."""
        if self._cluster is not None:
            return self._cluster.flush()  # type: ignore[no-any-return]
        while self._compile_one():
            pass
        with self._compile_lock:
            reports, self._unreported = self._unreported, []
        return reports

    def _compile_one(self) -> bool:
        """Compile one batch, keeping its report for the next flush(); False when nothing was queued."""
        with self._compile_lock:
            report = pipeline.compile_batch(self._ctx)
            if report is not None:
                self._unreported.append(report)
                del self._unreported[:-UNREPORTED_MAX]  # a server that never flushes keeps the newest
        return report is not None

    def worker(self, once: bool = False, shards: Any = None, stop: threading.Event | None = None
               ) -> list[CompileReport]:
        """Cluster mode: compile shards' intake (any shard whose lease is free, or only ``shards``)
        until ``stop`` is set; ``once``: until no intake is left that this worker could take."""
        if self._cluster is None:
            raise _bad("worker needs cluster mode (database_url / MARKMEM_DATABASE_URL)")
        return self._cluster.work(once, shards, stop)  # type: ignore[no-any-return]

    # -- read -----------------------------------------------------------------------
    def search(self, query: str, user_id: str, top_k: int = 5, as_of: Any = None, known_at: Any = None,
               format: str = "json", explain: bool = False, budget: int | None = None) -> list[Hit] | Pack:
        """Hybrid search within one user. ``format="context"`` returns a token-budgeted Pack."""
        if not _READ_SIDE and self._cluster is None:  # a fresh process: the read side imported with the
            from .read.warm import read_side  # regexes the last one saved (index.rxcache)

            read_side(self._ctx)
            _READ_SIDE.append(True)
        from .read import pack as packing
        from .read import request
        from .read import search as searching

        a = request.check(query, user_id, top_k, as_of, known_at, format, explain, budget)
        if self._cluster is not None:  # pgindex.search takes the same arguments
            return self._cluster.search(a)  # type: ignore[no-any-return]
        hits = searching.search(self._ctx, a.query, user_id, a.top_k, a.as_of, a.known_at, a.explain)
        if a.format == "json":
            return hits
        chosen = self.settings.token_budget if a.budget is None else a.budget
        return packing.pack(self._ctx, user_id, hits, chosen, a.as_of, a.known_at)

    def warm(self, user_id: str | None = None) -> None:
        """Load now what the first search would (the read side, numpy, the query model; with
        ``user_id``, that user's saved indexes): for a server or handler that opens at start."""
        if user_id is not None:
            validate_user_id(user_id)
        if self._cluster is not None:
            return
        from .read.warm import warm

        warm(self._ctx, user_id)

    def related(self, user_id: str, entity: str) -> dict[str, Any]:
        """An entity's neighbourhood: the person, pet, place or organisation named ``entity`` (a
        name, any case, or its page id ``u/<user>/entity/e-...``) and its active relations, out of
        it and into it, each naming the other entity's page. NotFound for an unknown entity."""
        validate_user_id(user_id)
        if not isinstance(entity, str) or not entity.strip():
            raise _bad("entity must be a name or an entity page id")
        if self._cluster is not None:
            return self._cluster.related(user_id, entity.strip())  # type: ignore[no-any-return]
        from .read import graph

        return graph.related(self._ctx.scoped(user_id), user_id, entity.strip())

    def get(self, id: str, user_id: str | None = None) -> Page | Claim | RawEntry:
        """A page (``u/alice/profile/lives-in``), a claim (``c-...``) or a raw entry (``r-...``).
        With ``user_id``, an id owned by anyone else is NotFound (for shells scoped to one user)."""
        if self._cluster is not None:
            return self._cluster.get(id, None if user_id is None else validate_user_id(user_id))  # type: ignore[no-any-return]
        found = inspect.get(self._ctx, id)
        if user_id is not None and inspect.owner(self._ctx, found) != validate_user_id(user_id):
            from .errors import NotFound

            raise NotFound("object", id)
        return found

    def get_all(self, user_id: str, type: str | None = None, include_archived: bool = False,
                limit: int | None = None, offset: int = 0) -> list[Page]:
        """A user's pages sorted by id; entity pages (``type="entity"``) only when asked for by type;
        ``limit``/``offset`` give one page of them (for listings)."""
        window = _window(limit, offset)
        if self._cluster is not None:
            found = self._cluster.get_all(validate_user_id(user_id), type, include_archived)
            return _sliced(found, window)
        return inspect.get_all(self._ctx, validate_user_id(user_id), type, include_archived, *window)

    def history(self, id: str | None = None, include_diff: bool = True, user_id: str | None = None,
                limit: int | None = None, offset: int = 0) -> list[Any]:
        """Commits that touched a page or claim (``git log --follow``, with claim-level changes),
        newest first; or, with ``user_id``, every operation that touched that user. ``limit`` and
        ``offset`` window the list (the newest ``limit`` after skipping ``offset``)."""
        window = _window(limit, offset)
        if self._cluster is not None:
            if id is None and user_id is None:
                raise _bad("history needs a page/claim id or user_id")
            return _sliced(self._cluster.history(id, include_diff,
                                                 None if user_id is None else validate_user_id(user_id)), window)
        if user_id is not None:
            from .erase import audit

            return audit.user_history(self._ctx, validate_user_id(user_id), *window)
        if id is None:
            raise _bad("history needs a page/claim id or user_id")
        return inspect.history(self._ctx, id, include_diff, *window)

    def users(self, contains: str | None = None, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
        """Every user with counts (raw entries, pages, active/closed claims, pending review) and
        last activity, sorted by id; ``contains`` filters the ids; ``limit``/``offset`` window them."""
        window = _window(limit, offset)
        if self._cluster is not None:
            return _sliced(self._cluster.users(contains), window)
        return inspect.users(self._ctx, contains, *window)

    def review(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Pending review items (quarantined inputs, low-confidence facts)."""
        if self._cluster is not None:
            return self._cluster.review(None if user_id is None else validate_user_id(user_id))  # type: ignore[no-any-return]
        return inspect.review_items(self._ctx, None if user_id is None else validate_user_id(user_id))

    def review_show(self, item_id: str) -> dict[str, Any]:
        """One pending review item plus the (PII-gated) raw turn it refers to, under ``raw``."""
        if self._cluster is not None:
            return self._cluster.review_show(item_id)  # type: ignore[no-any-return]
        from .write import decide

        return decide.show(self._ctx, item_id)

    def review_decide(self, item_id: str, decision: str, text: str | None = None) -> dict[str, Any]:
        """Approve, reject or edit (then approve) a review item; recorded in the ops log and committed."""
        if self._cluster is not None:
            return self._cluster.review_decide(item_id, decision, text)  # type: ignore[no-any-return]
        from .write import decide

        return decide.decide(self._ctx, item_id, decision, text)

    # -- erasure and access -----------------------------------------------------------
    def forget(self, user_id: str, mode: str = "scrub", dry_run: bool = False, progress: Progress | None = None
               ) -> Any:
        """Erase a user: ``scrub`` | ``rewrite`` (purge git history) | ``shred`` (delete the key).
        ``dry_run=True`` returns the ErasurePlan without changing anything. ``progress(stage, done,
        total)`` counts the durable steps and, for a rewrite, the commits git-filter-repo walks."""
        if self._cluster is not None:
            return self._cluster.forget(validate_user_id(user_id), mode, dry_run)
        from .erase import api

        return api.forget(self._ctx, validate_user_id(user_id), mode, dry_run, progress)

    def verify_erasure(self, user_id: str) -> Any:
        """Scan every git object (loose, packed, any ref, reflog, stash) for the user's content
        (in cluster mode: in the user's shard repo, and PostgreSQL's markmem tables too)."""
        if self._cluster is not None:
            return self._cluster.verify_erasure(user_id)
        from .erase import api

        return api.verify(self._ctx, validate_user_id(user_id))

    def tombstones(self) -> list[dict[str, Any]]:
        """Erased users as the ops log records them: token, mode, time, counts, verification (no PII)."""
        if self._cluster is not None:
            return self._cluster.tombstones()  # type: ignore[no-any-return]
        from .erase import audit

        return audit.tombstones(self._ctx)

    def export(self, user_id: str | None = None, to: str = "jsonl", path: str | Path | None = None,
               progress: Progress | None = None) -> Any:
        """Export memory: ``jsonl`` (lossless), ``mem0``, ``memory-md``, or ``access`` (a
        data-subject access export of one user as JSON and markdown). In cluster mode, every
        shard's users in one export."""
        if self._cluster is not None:
            return self._cluster.export(None if user_id is None else validate_user_id(user_id), to, path, progress)
        if to == "access":
            from .erase import access

            return access.export_access(self._ctx, validate_user_id(user_id), path)
        from . import portability

        return portability.export(self._ctx, None if user_id is None else validate_user_id(user_id), to, path,
                                  progress=progress)

    def import_(self, path: str | Path, from_: str = "jsonl", user_id: str | None = None,
                progress: Progress | None = None) -> Any:
        """Import from ``jsonl`` (a markmem export) or ``mem0``. (``import`` is a Python keyword.)"""
        if self._cluster is not None:  # split by shard: one commit per shard repo
            return self._cluster.import_(path, from_, None if user_id is None else validate_user_id(user_id), progress)
        from . import portability

        return portability.import_(self._ctx, path, from_, None if user_id is None else validate_user_id(user_id),
                                   progress=progress)

    # -- lifecycle --------------------------------------------------------------------
    def lint(self, fix: bool = False, progress: Progress | None = None) -> Any:
        """Check pages: broken links, unsourced claims, injection text, drift, bad YAML, bad validity.
        ``progress(stage, done, total)`` counts pages read and checked. In cluster mode, every
        shard (paths start ``shards/NN/``)."""
        if self._cluster is not None:
            return self._cluster.lint(fix, progress)
        from . import lifecycle

        return lifecycle.lint(self._ctx, fix, progress)

    def maintenance(self, dry_run: bool = False, progress: Progress | None = None) -> Any:
        """Decay, consolidation and retention sweeps: a plan first, then one commit.
        ``progress(stage, done, total)`` counts pages read, then the apply steps."""
        if self._cluster is not None:  # every shard: a plan or one commit each
            return self._cluster.maintenance(dry_run, progress)
        from . import lifecycle

        return lifecycle.maintenance(self._ctx, dry_run, progress=progress)

    # -- edit -----------------------------------------------------------------------
    def update(self, id: str, text: str, by: str = "human") -> Claim:
        """Record a correction that supersedes the old claim: ``human_edited`` when a person made it
        (``by="human"``), ``agent_inferred`` when an agent did (``by="agent"``: MCP's wiki_supersede).
        The text passes the gate like any input; instruction-override text is not applied but held
        for review (:class:`~markmem.errors.EditQuarantined`)."""
        if self._cluster is not None:  # on the shard repo holding ``id``, under its lease
            return self._cluster.update(id, text, by)  # type: ignore[no-any-return]
        try:
            return edit.update(self._ctx, id, text, by)
        except EditQuarantined:
            self._wake.set()  # the held edit compiles into its review item
            raise

    def delete(self, id: str, hard: bool = False) -> str | None:
        """Archive (soft) or remove (hard) a page or claim; one commit. Returns the commit sha."""
        if self._cluster is not None:
            return self._cluster.delete(id, hard)  # type: ignore[no-any-return]
        return edit.delete(self._ctx, id, hard)

    # -- maintenance ----------------------------------------------------------------
    def reindex(self, progress: Progress | None = None) -> RebuildReport:
        """Rebuild the SQLite cache from the repo (markdown and raw logs are the truth); in cluster
        mode every shard's cache and the PostgreSQL index, from the shard repos."""
        if self._cluster is not None:
            return self._cluster.reindex(progress)  # type: ignore[no-any-return]
        with self._ctx.write_lock.held():
            report = rebuild(self.root, self._ctx.cache, self._ctx.codec, progress)
            head = self._ctx.git.head()
            if head:
                self._ctx.cache.set_meta("head", head)
        return report

    def doctor(self) -> dict[str, Any]:
        if self._cluster is not None:
            return self._cluster.doctor()  # type: ignore[no-any-return]
        return inspect.doctor(self._ctx, self._worker_error)

    def stats(self) -> dict[str, Any]:
        if self._cluster is not None:
            return self._cluster.stats()  # type: ignore[no-any-return]
        return inspect.stats(self._ctx)

    @property
    def context(self) -> Context:
        """The open repo's parts, for the erase/lifecycle layers and tests."""
        if self._cluster is not None:
            raise _bad("a cluster has one repo per shard; open shards/NN as a Memory for repo-level work")
        return self._ctx

    def __getattr__(self, name: str) -> Any:
        if name == "_ctx":  # cluster mode: only the methods above are delegated; the rest say so
            raise _bad("not available in cluster mode: open the user's shard repo (shards/NN) for this")
        raise AttributeError(name)


def _window(limit: int | None, offset: int) -> tuple[int | None, int]:
    for name, value in (("limit", limit), ("offset", offset)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise _bad(f"{name} must be a whole number >= 0")
    return limit, offset


def _sliced(items: list[Any], window: tuple[int | None, int]) -> list[Any]:
    limit, offset = window
    return items[offset:] if limit is None else items[offset:offset + limit]


def _bad(message: str) -> MarkmemError:
    from .errors import InvalidInput

    return InvalidInput(message)


__all__ = ["Memory"]
