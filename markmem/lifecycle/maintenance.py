"""``maintenance``: gather inputs, build the plan (:func:`.plan.plan`), apply it in ONE commit.

``dry_run=True`` returns the :class:`MaintenancePlan` and touches nothing (no lock, no write).
Otherwise, under the write lock: pages are written, raw day files rewritten or deleted (see
:mod:`.retention`), checkpoints and the compile queue follow, one counts-only ops-log record,
one commit (``Markmem-Op: maintenance``), then the cache. An empty plan makes no commit.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from ..context import Context
from ..ids import now as utc_now
from ..ids import parse_time
from ..store import raw
from ..store.pages import atomic_write
from ..store.repo import append_op, read_repo_config
from ..write import review
from . import apply
from .config import LifecycleConfig, lifecycle_config
from .plan import MaintenancePlan, plan
from .retention import RawFile, RawRewrite, file_day
from .scan import Progress, line_ids, load_pages


@dataclass(frozen=True)
class MaintenanceReport:
    plan: MaintenancePlan
    commit: str | None
    raw_skipped: tuple[str, ...] = ()  # raw files that changed since planning (left for the next run)

    def counts(self) -> dict[str, int]:
        return self.plan.counts()

    def to_json(self) -> dict[str, Any]:
        return {**self.plan.to_json(), "commit": self.commit, "raw_changed_since_plan": list(self.raw_skipped)}

    def summary(self) -> str:
        return self.plan.summary() + (f"\ncommit {self.commit[:12]}" if self.commit else "\nno commit")


def maintenance(ctx: Context, dry_run: bool = False, now: str | None = None,
                progress: Progress | None = None) -> MaintenancePlan | MaintenanceReport:
    """Plan (and unless ``dry_run``, apply) decay, consolidation and retention. ``now`` pins the clock.
    ``progress`` gets ``("pages", read, total)``, then ``("apply", step, 4)`` while the plan is applied."""
    at = utc_now() if now is None else parse_time(now, field="now")
    if dry_run:
        return build_plan(ctx, at, progress)
    with ctx.write_lock.held():
        p = build_plan(ctx, at, progress)
        if p.empty:
            return MaintenanceReport(p, None)
        return execute(ctx, p, progress)


def build_plan(ctx: Context, at: str, progress: Progress | None = None) -> MaintenancePlan:
    cfg = lifecycle_config(read_repo_config(ctx.root))
    pages = load_pages(ctx.root, ctx.codec, progress=progress)
    files: list[RawFile] = []
    keep: set[str] = set()
    if cfg.retention_days.get("raw"):
        files = raw_inventory(ctx, _cutoff(at, cfg))
        keep = {str(item.get("raw_id")) for item in review.list_items(ctx.root, ctx.codec)}
    embed = ctx.embedder.embed if ctx.embedder is not None else None
    return plan(pages, files, keep, cfg, at, embed)


def _cutoff(at: str, cfg: LifecycleConfig) -> str:
    return (date.fromisoformat(at[:10]) - timedelta(days=cfg.retention_days["raw"])).isoformat()


def raw_inventory(ctx: Context, cutoff_day: str) -> list[RawFile]:
    """Raw day files recorded before ``cutoff_day``, with their lines' ids (never their content)."""
    out: list[RawFile] = []
    checkpoints: dict[str, dict[str, int]] = {}
    for user, rel in raw.iter_files(ctx.root):
        day = file_day(rel)
        if day is None or day >= cutoff_day:
            continue
        data = (ctx.root / rel).read_bytes()
        compiled = checkpoints.setdefault(user, raw.read_checkpoint(ctx.root, user)).get(rel, 0)
        out.append(RawFile(user, rel, tuple(line_ids(data)), len(data), compiled))
    return out


def execute(ctx: Context, p: MaintenancePlan, progress: Progress | None = None) -> MaintenanceReport:
    def step(n: int) -> None:
        if progress:
            progress("apply", n, 4)

    apply.commit_pending_edits(ctx, [page.path for page in p.pages])
    paths = apply.write_pages(ctx, p.pages)
    step(1)
    done, changed = _sweep(ctx, p.raw)
    step(2)
    paths += [r.path for r in done] + _checkpoints(ctx, done)
    counts = p.counts()
    record = {
        "op": "maintenance", "at": p.at, "pages": len(p.pages), **{k.replace("-", "_"): v for k, v in counts.items()},
        "raw_entries_dropped": sum(len(r.dropped) for r in done),
        "raw_files_rewritten": sum(1 for r in done if r.keep), "raw_files_deleted": sum(1 for r in done if not r.keep),
    }
    paths.append(append_op(ctx.root, record))
    trailers = {"Markmem-Op": "maintenance", "Markmem-Actions": ",".join(f"{k}={v}" for k, v in counts.items())}
    subject = f"markmem: maintenance ({len(p.actions)} action(s) on {len(p.pages)} page(s), {len(done)} raw file(s))"
    sha = apply.commit(ctx, paths, subject, trailers)
    step(3)
    apply.refresh_cache(ctx, p.pages, sha, [(r.user, rid) for r in done for rid in r.dropped])
    ctx.queue.done([rid for r in done for rid in (*r.dropped, *r.kept)])  # their offsets are stale now
    step(4)
    return MaintenanceReport(p, sha, tuple(changed))


def _sweep(ctx: Context, rewrites: Sequence[RawRewrite]) -> tuple[list[RawRewrite], list[str]]:
    """Rewrite or delete each planned raw file, unless it changed since the plan was made."""
    done: list[RawRewrite] = []
    changed: list[str] = []
    for r in rewrites:
        full = ctx.root / r.path
        if not full.is_file() or full.stat().st_size != r.size:
            changed.append(r.path)
            continue
        data = full.read_bytes()
        if r.keep:
            atomic_write(full, b"".join(data[s:e] for s, e in r.keep).decode("utf-8"))
        else:
            full.unlink()
            _prune_dirs(full.parent, ctx.root / "raw")
        done.append(r)
    return done, changed


def _prune_dirs(folder: Any, stop: Any) -> None:
    while folder != stop and folder.is_dir() and not any(folder.iterdir()):
        os.rmdir(folder)
        folder = folder.parent


def _checkpoints(ctx: Context, done: Sequence[RawRewrite]) -> list[str]:
    """Each swept file's compile offset becomes its new size (or goes, with the file)."""
    by_user: dict[str, list[RawRewrite]] = {}
    for r in done:
        by_user.setdefault(r.user, []).append(r)
    paths = []
    for user, items in sorted(by_user.items()):
        cp = raw.read_checkpoint(ctx.root, user)
        for r in items:
            if r.keep:
                cp[r.path] = r.new_size
            else:
                cp.pop(r.path, None)
        paths.append(raw.write_checkpoint(ctx.root, user, cp))
    return paths
