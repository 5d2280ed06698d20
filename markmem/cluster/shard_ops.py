"""Edits and repo-level writes on a cluster: ``update``, ``delete``, ``maintenance``, ``import``,
plus ``related`` and ``tombstones`` (reads).

Each write runs the embedded code on the shard repo that holds the object or user, under that
shard's lease (no worker compiles it meanwhile), then syncs the derived index of the users it
touched and pushes the shard to its remote. An import is parsed once and split by shard: one
commit per shard that receives records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EditQuarantined, InvalidInput, NotFound
from ..model import Claim
from . import index_port
from .layout import shard_of
from .repos import _lease
from .shards import ShardSet
from .worker import push


def candidates(shards: ShardSet, conn: Any, ident: str) -> list[int]:
    """The shards to look in for a page or claim, most likely first: a page's from its path; a
    claim's from the PostgreSQL index (``mm_claims`` by id: its owner's shard), then, only if
    that shard does not have it (the index not yet synced, or rebuilt since), every other shard."""
    if ident.startswith("u/"):
        return [shard_of(ident.split("/")[1], shards.count)]
    if conn is None or not ident.startswith("c-"):
        return list(range(shards.count))
    first = sorted({shard_of(u, shards.count) for u in index_port.claim_owners(conn, ident)})
    return first + [n for n in range(shards.count) if n not in first]


def holder(shards: ShardSet, ident: str, conn: Any = None) -> tuple[int, str]:
    """(shard, owner) of a page (``u/<user>/...``) or claim (``c-...``); NotFound when no shard has it.
    ``conn``: the PostgreSQL index's, to find a claim's shard without opening every shard."""
    from .. import inspect

    for n in candidates(shards, conn, ident):
        ctx = shards.ctx(n)
        try:
            found = inspect.get(ctx, ident)
        except NotFound:
            continue
        user = inspect.owner(ctx, found)
        if user is not None and not found.id.startswith("r-"):
            return n, user
    raise NotFound("object", ident)


def update(shards: ShardSet, url: str, conn: Any, ident: str, text: str, by: str) -> Claim:
    from .. import edit
    from ..write import pipeline

    shard, user = holder(shards, ident, conn)
    with _lease(url, shard, shards.settings.lock_timeout):
        ctx = shards.ctx(shard)
        try:
            return edit.update(ctx, ident, text, by)
        except EditQuarantined:  # held as a quarantined turn: compiled into its review item now
            while pipeline.compile_batch(ctx) is not None:
                pass
            raise
        finally:
            index_port.sync_users(conn, ctx, [user])
            push(ctx, shards.remote(shard))


def delete(shards: ShardSet, url: str, conn: Any, ident: str, hard: bool) -> str | None:
    from .. import edit

    shard, user = holder(shards, ident, conn)
    with _lease(url, shard, shards.settings.lock_timeout):
        ctx = shards.ctx(shard)
        sha = edit.delete(ctx, ident, hard)
        index_port.sync_users(conn, ctx, [user])
        push(ctx, shards.remote(shard))
    return sha


@dataclass(frozen=True)
class ShardReports:
    """One result per shard (``maintenance``), shown and counted as one."""

    reports: tuple[tuple[int, Any], ...]

    @property
    def commit(self) -> str | None:
        return ",".join(c for _n, r in self.reports if (c := getattr(r, "commit", None))) or None

    def counts(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for _n, r in self.reports:
            for key, value in r.counts().items():
                total[key] = total.get(key, 0) + value
        return total

    def to_json(self) -> dict[str, Any]:
        return {"counts": self.counts(), "commit": self.commit,
                "shards": {f"{n:02d}": r.to_json() for n, r in self.reports}}

    def summary(self) -> str:
        return "\n".join(f"shards/{n:02d}: " + r.summary().replace("\n", "\n  ") for n, r in self.reports)


def maintenance(shards: ShardSet, url: str, conn: Any, dry_run: bool, progress: Any) -> ShardReports:
    """Every shard's decay, consolidation and retention: a plan each, or one commit each."""
    from ..lifecycle import maintenance as run

    out = []
    for n in range(shards.count):
        if dry_run:
            out.append((n, run(shards.ctx(n), True, progress=progress)))
            continue
        with _lease(url, n, shards.settings.lock_timeout):
            ctx = shards.ctx(n)
            report = run(ctx, False, progress=progress)
            if getattr(report, "commit", None):
                index_port.reindex(conn, ctx, ())
                push(ctx, shards.remote(n))
        out.append((n, report))
    return ShardReports(tuple(out))


def import_(shards: ShardSet, url: str, conn: Any, path: str | Path, from_: str, user_id: str | None,
            progress: Any) -> Any:
    """One user's import into their shard; a many-user file (jsonl, mem0) parsed once and split
    by shard, each part one commit in its shard repo. Shared pages (no user) go to shard 00."""
    from .. import portability
    from ..portability import parsed

    if from_ not in portability.IMPORT_FORMATS:
        raise InvalidInput(f"import format must be one of {portability.IMPORT_FORMATS}, not {from_!r}", field="from_")
    if user_id is not None or from_ not in ("jsonl", "mem0"):  # one owner (or the format's own error)
        shard = 0 if user_id is None else shard_of(user_id, shards.count)
        with _lease(url, shard, shards.settings.lock_timeout):
            ctx = shards.ctx(shard)
            result = portability.import_(ctx, path, from_, user_id, progress)
            _synced(shards, conn, shard, result.users, result.commit)
        return result
    parts = parsed.parse(portability.read_text(path), from_, None).split(
        lambda u: 0 if u is None else shard_of(u, shards.count))
    results = []
    for n in sorted(parts):
        with _lease(url, n, shards.settings.lock_timeout):
            ctx = shards.ctx(n)
            done, skipped = parsed.apply(ctx, parts[n], from_)
            _synced(shards, conn, n, done.users, done.commit)
        results.append((done, skipped))
    return portability.ImportResult(
        from_, tuple(sorted(u for d, _ in results for u in d.users)), sum(d.raw for d, _ in results),
        sum(d.pages for d, _ in results), sum(d.claims for d, _ in results), sum(d.review for d, _ in results),
        sum(d.skipped + s for d, s in results), ",".join(d.commit for d, _ in results if d.commit) or None)


def _synced(shards: ShardSet, conn: Any, shard: int, users: Any, commit: str | None) -> None:
    if commit:
        ctx = shards.ctx(shard)
        index_port.sync_users(conn, ctx, sorted(users))
        push(ctx, shards.remote(shard))


def related(shards: ShardSet, user_id: str, entity: str) -> dict[str, Any]:
    from ..read import graph

    return graph.related(shards.ctx(shard_of(user_id, shards.count)).scoped(user_id), user_id, entity)


def tombstones(shards: ShardSet) -> list[dict[str, Any]]:
    """Every shard's erasure records, newest first."""
    from ..erase import audit

    found = [t for n in range(shards.count) for t in audit.tombstones(shards.ctx(n))]
    return sorted(found, key=lambda t: str(t.get("at") or ""), reverse=True)
