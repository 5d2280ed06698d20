"""Repo-level work across every shard: ``lint``, ``export``, ``review`` (list, show, decide).

Each runs the embedded code on the shard repos, one after another, and merges what they return.
Paths in a merged lint report are prefixed with their shard (``shards/03/wiki/...``). A step
that writes (``lint --fix``, a review decision) holds the shard's lease, as a compile does, and
then syncs the derived index of the users it touched.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from ..context import Context
from ..errors import NotFound
from . import index_port, intake
from .lease import Leases
from .shards import ShardSet


def lint(shards: ShardSet, url: str, conn: Any, fix: bool, progress: Any = None) -> Any:
    """Every shard's lint, one report; with ``fix`` each shard's fix is its own commit (the
    report's ``commit``: those shas, comma-separated)."""
    from ..lifecycle import lint as lint_one

    reports = []
    for n in range(shards.count):
        if not fix:
            reports.append(_prefixed(lint_one(shards.ctx(n), False, progress), n))
            continue
        with _lease(url, n, shards.settings.lock_timeout):
            ctx = shards.ctx(n)
            report = lint_one(ctx, True, progress)
            if report.commit:
                index_port.reindex(conn, ctx, ())
        reports.append(_prefixed(report, n))
    first = reports[0]
    commits = [r.commit for r in reports if r.commit]
    return replace(first, issues=_cat(r.issues for r in reports), fixed=_cat(r.fixed for r in reports),
                   files=sum(r.files for r in reports), pages=sum(r.pages for r in reports),
                   commit=",".join(commits) or None, skipped=tuple(dict.fromkeys(_cat(r.skipped for r in reports))))


def _prefixed(report: Any, shard: int) -> Any:
    pre = f"shards/{shard:02d}/"
    return replace(report, issues=tuple(replace(i, path=pre + i.path) for i in report.issues),
                   fixed=tuple(replace(i, path=pre + i.path) for i in report.fixed))


def _cat(parts: Iterable[tuple[Any, ...]]) -> tuple[Any, ...]:
    return tuple(x for part in parts for x in part)


def export(shards: ShardSet, url: str, conn: Any, shard: int | None, user_id: str | None, to: str, path: Any,
           progress: Any) -> Any:
    """One user's export from their shard; everyone's from every shard, merged into one. An
    access export also lists the user's turns still in the intake (marked pending), read under
    the shard's lease so that no compile moves a turn from the intake to the repo in between."""
    from ..erase import access
    from ..portability import export_all

    if to == "access":
        assert shard is not None and user_id is not None
        with _lease(url, shard, shards.settings.lock_timeout):
            ctx = shards.ctx(shard)
            return access.export_access(ctx, user_id, path, intake.user_entries(conn, user_id, ctx.codec))
    ctxs = [shards.ctx(n) for n in (range(shards.count) if shard is None else [shard])]
    return export_all(ctxs, user_id, to, path, progress)


def review_items(shards: ShardSet, user_id: str | None, shard: int | None) -> list[dict[str, Any]]:
    """A user's pending items (``shard``: theirs), or every shard's."""
    from .. import inspect

    found = [item for n in (range(shards.count) if shard is None else [shard])
             for item in inspect.review_items(shards.ctx(n), user_id)]
    return sorted(found, key=lambda item: (str(item.get("created", "")), str(item.get("id", ""))))


def review_show(shards: ShardSet, item_id: str) -> dict[str, Any]:
    from ..write import decide

    return decide.show(_holder(shards, item_id)[1], item_id)


def review_decide(shards: ShardSet, url: str, conn: Any, item_id: str, decision: str, text: str | None) -> Any:
    """Under the shard's lease: the decision (one commit), then the user's index rows."""
    from ..write import decide

    shard, _ctx = _holder(shards, item_id)
    with _lease(url, shard, shards.settings.lock_timeout):
        ctx = shards.ctx(shard)
        item = decide.find_item(ctx, item_id)
        result = decide.decide(ctx, item_id, decision, text)
        index_port.sync_users(conn, ctx, [str(item["user_id"])])
    return result


def _holder(shards: ShardSet, item_id: str) -> tuple[int, Context]:
    """The shard whose repo holds the pending item (ids are checked by ``find_item``)."""
    from ..write import decide

    for n in range(shards.count):
        ctx = shards.ctx(n)
        try:
            decide.find_item(ctx, item_id)
        except NotFound:
            continue
        return n, ctx
    raise NotFound("review item", item_id)


@contextmanager
def _lease(url: str, shard: int, timeout: float) -> Iterator[None]:
    leases = Leases(url)
    try:
        with leases.held(shard, timeout):
            yield
    finally:
        leases.close()
