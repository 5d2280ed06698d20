"""forget() and verify(): plan, then apply, journalled so that a re-run finishes an interrupted erasure.

    forget(user, "scrub")    journal -> purge cache/queue -> delete folders -> redact ops -> tombstone + commit
    forget(user, "rewrite")  journal (+ fingerprints) -> scrub -> commit pending raw -> git-filter-repo
                             (reflogs expired, gc --prune=now) -> verify -> record result, discard fingerprints
    forget(user, "shred")    journal -> delete the key -> scrub

The writer lock (compile, edit, review, other erasures) and the append lock (``add``) are held
while the repo changes; verification runs under the writer lock only, so ``add`` resumes early.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..context import Context
from ..errors import EncryptionError, ErasureError
from ..ids import now
from . import fingerprint, journal, rewrite, scrub
from . import verify as verifying
from .journal import Journal
from .plan import ErasurePlan, Inventory, check_mode, gather, make_plan, with_history
from .verify import VerifyReport

# Test seam: called with each step name after the step is durable (crash tests kill the process here).
fault_hook: Callable[[str], None] | None = None
Progress = Callable[[str, int, int], None]  # (stage, done, total), as reindex/import/export report
# The durable steps each mode reports as ``progress("steps", done, total)`` (scrub's own three included).
STEPS = {
    "scrub": ("journal", "purged", "removed", "tombstoned", "scrubbed"),
    "shred": ("journal", "moved", "key", "purged", "removed", "tombstoned", "scrubbed"),
    "rewrite": ("journal", "purged", "removed", "tombstoned", "scrubbed", "pending", "rewritten", "verified"),
}


@dataclass(frozen=True)
class ErasureReport:
    user_id: str
    mode: str
    erasure_id: str
    token: str
    plan: ErasurePlan
    removed: dict[str, Any]
    commit: str | None  # the last commit the erasure made (rewrite: the verification record, else the tombstone)
    timings_ms: dict[str, float]
    resumed: bool = False
    verify: VerifyReport | None = None
    repo_bytes: dict[str, int] = field(default_factory=dict)  # .git size before/after a rewrite

    @property
    def ok(self) -> bool:
        return self.verify is None or self.verify.ok

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["plan"] = self.plan.to_json()
        data["verify"] = self.verify.to_json() if self.verify else None
        data["ok"] = self.ok
        return data

    def __str__(self) -> str:
        if self.removed.get("nothing"):
            where = "files, cache or queue rows, ops records" + (" or history" if self.mode == "rewrite" else "")
            return f"Nothing to erase for user {self.user_id!r} (mode {self.mode}): no {where}; no tombstone written"
        t = ", ".join(f"{k} {v:.0f} ms" for k, v in self.timings_ms.items())
        cache = self.removed.get("cache", {})
        lines = [
            f"Forgot user {self.user_id!r} (mode {self.mode}{', resumed' if self.resumed else ''}): "
            f"erasure {self.erasure_id}, tombstone {self.token}",
            f"  removed: {self.removed.get('files', 0)} files; cache rows "
            + ", ".join(f"{k} {v}" for k, v in sorted(cache.items()))
            + f"; {self.removed.get('ops_redacted', 0)} ops records redacted",
            f"  commit:  {self.commit or '(nothing to commit)'}",
            f"  time:    {t}",
        ]
        if self.repo_bytes:
            size = self.repo_bytes
            lines.append(f"  .git:    {size.get('before', 0):,} -> {size.get('after', 0):,} bytes")
        if self.verify is not None:
            lines += ["  " + ln for ln in str(self.verify).splitlines()]
        elif self.mode == "scrub":
            lines.append("  note: the content remains in git history (scrub); use mode 'rewrite' to purge it")
        return "\n".join(lines)


def forget(ctx: Context, user_id: str, mode: str, dry_run: bool = False,
           progress: Progress | None = None) -> ErasurePlan | ErasureReport:
    """Erase a user; ``dry_run`` returns the plan and changes nothing (not even local state).
    ``progress`` gets ``("steps", done, total)`` per durable step and, for a rewrite,
    ``("history", commits, total)`` while git-filter-repo walks the history."""
    if dry_run:
        return make_plan(gather(ctx, user_id), mode)
    check_mode(mode, ctx.codec.name != "plain")
    with ctx.write_lock.held():
        token = journal.user_token(ctx, user_id)
        assert token is not None
        pending = journal.load(ctx.root, token)
        if pending is None:
            inv = gather(ctx, user_id, history=mode == "rewrite")
            if _nothing(inv, mode):
                return _nothing_report(inv, mode)
        if pending is not None and pending.mode != mode:
            first = _apply(ctx, user_id, pending.mode, progress)  # finish what was interrupted first
            if _covers(pending.mode, mode):
                return first
        return _apply(ctx, user_id, mode, progress)


def _nothing(inv: Inventory, mode: str) -> bool:
    """No trace of the user anywhere this mode would erase: no tombstone commit is written."""
    local = (not inv.files and not inv.raw_entries and not any(inv.cache_rows.values()) and not inv.queue_rows
             and not inv.ops_records and not inv.key_present)
    return local and (mode != "rewrite" or not inv.commits_touching)


def _nothing_report(inv: Inventory, mode: str) -> ErasureReport:
    assert inv.token is not None
    return ErasureReport(inv.user_id, mode, "", inv.token, make_plan(inv, mode), {"nothing": True}, None, {})


def resume_pending(ctx: Context) -> list[ErasureReport]:
    """Finish every erasure a crash interrupted (``Memory`` may call this when it opens)."""
    reports = []
    for j in journal.pending(ctx.root):
        if j.user_id and j.state != "rewritten":  # a rewrite that did not verify clean waits for a human
            report = forget(ctx, j.user_id, j.mode)
            if isinstance(report, ErasureReport):
                reports.append(report)
    return reports


def _covers(done: str, wanted: str) -> bool:
    return wanted == done or wanted == "scrub"


def _apply(ctx: Context, user_id: str, mode: str, progress: Progress | None = None) -> ErasureReport:
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    steps = STEPS[mode]

    def mark(name: str) -> None:
        timings[name] = round((time.perf_counter() - t0) * 1000, 1)
        if progress and name in steps:
            progress("steps", steps.index(name) + 1, len(steps))

    root = ctx.root
    with ctx.append_lock.held():
        inv = gather(ctx, user_id, create=True, history=mode != "shred")
        assert inv.token is not None
        j = journal.load(root, inv.token)
        resumed = j is not None
        if j is not None and j.mode != mode:
            raise ErasureError(f"an earlier {j.mode} erasure of this user did not verify clean; "
                               "run verify-erasure and resolve its findings first")
        if j is None:
            j = Journal(erasure_id="e-" + secrets.token_hex(5), token=inv.token, mode=mode, started=now(),
                        user_id=user_id)
            if mode == "rewrite":
                _fingerprint(ctx, user_id, j)
            journal.save(root, j)
        elif mode == "rewrite" and j.state in ("started", "scrubbed") and not j.needles:
            _fingerprint(ctx, user_id, j)  # the journal keeps no text: history still has it, collect again
        _step(root, j, "journal", mark)
        if mode == "shred" and j.state == "started":
            _add_files(j, scrub.move_out(root, user_id))  # nothing can read or recover from them now
            _step(root, j, "moved", mark)
            _destroy_key(ctx, user_id)
            j.state = "shredded"
            _step(root, j, "key", mark)
        plan = make_plan(inv if mode != "shred" else with_history(ctx, inv), mode)
        if j.state in ("started", "shredded"):
            sha = scrub.scrub(ctx, user_id, j, lambda name: _step(root, j, name, mark))
            j.removed["commit"] = sha or j.removed.get("commit")
            j.state = "scrubbed"
            _step(root, j, "scrubbed", mark)
        sizes: dict[str, int] = {}
        if mode == "rewrite" and j.state == "scrubbed":
            sizes["before"] = _du(root / ".git")
            scrub.commit_pending(ctx)
            _step(root, j, "pending", mark)
            rewrite.run(root, user_id, j.token, progress=_history_counter(root, progress))
            scrub.compact_cache(ctx)
            ctx.cache.set_meta("head", ctx.git.head() or "")
            sizes["after"] = _du(root / ".git")
            j.removed["repo_bytes"] = sizes
            j.state = "rewritten"
            _step(root, j, "rewritten", mark)
    report = None
    if mode == "rewrite":
        report = _verify_and_finish(ctx, user_id, j)
        mark("verified")
    elif j.state == "scrubbed":
        if mode == "shred" and ctx.cache.layout == "one":  # (split: the user's file is gone, whole)
            scrub.compact_cache(ctx)  # the cache held the user's plaintext: no stale copy may remain
            mark("compacted")
        j.state = "done"
        journal.discard(root, j.token)  # scrub and shred keep no fingerprints: nothing to verify against
    mark("total")
    sha = ctx.git.head() if mode == "rewrite" else j.removed.get("commit")  # rewritten ids changed
    return ErasureReport(user_id, mode, j.erasure_id, j.token, plan, dict(j.removed), sha,
                         timings, resumed, report, j.removed.get("repo_bytes", {}))


def _history_counter(root: Path, progress: Progress | None) -> Callable[[int], None] | None:
    """``("history", commits parsed, commits in every ref)`` for filter-repo's walk."""
    if progress is None:
        return None
    from .gitio import run_bytes

    total = int(run_bytes(root, "rev-list", "--all", "--count", check=False).strip() or 0)
    return lambda n: progress("history", min(n, max(total, n)), max(total, n))


def _step(root: Path, j: Journal, name: str, mark: Callable[[str], None]) -> None:
    journal.save(root, j)
    mark(name)
    if fault_hook is not None:
        fault_hook(name)


def _add_files(j: Journal, n: int) -> None:
    j.removed["files"] = j.removed.get("files", 0) + n


def _fingerprint(ctx: Context, user_id: str, j: Journal) -> None:
    fp = fingerprint.collect(ctx, user_id)
    j.needles, j.blobs, j.short = sorted(fp.plain), sorted(fp.blobs | set(j.blobs)), max(fp.short, j.short)


def _destroy_key(ctx: Context, user_id: str) -> None:
    destroy = getattr(ctx.codec, "destroy_key", None)
    if destroy is None:
        raise EncryptionError("this repo's codec has no keys to destroy; use mode 'rewrite'")
    destroy(user_id)


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def verify(ctx: Context, user_id: str, needles: list[str] | None = None) -> VerifyReport:
    """Scan every object for the user's content; ``needles`` adds strings to look for."""
    with ctx.write_lock.held():
        token = journal.user_token(ctx, user_id, create=False)
        j = journal.load(ctx.root, token) if token else None
        if j is not None and j.state == "rewritten":
            return _verify_and_finish(ctx, user_id, j)
        return _verify(ctx, user_id, j, needles)


def _verify(ctx: Context, user_id: str, j: Journal | None, needles: list[str] | None = None) -> VerifyReport:
    if j is not None and (j.needles or j.blobs):
        fp = fingerprint.Fingerprints(set(j.needles), set(j.blobs), j.short)
        extra = fingerprint.Collector()  # whatever is there now (e.g. added since)
        extra.tree(ctx.root, user_id)
        extra.history(ctx.root, user_id)
        fp.plain |= extra.fp.plain
        fp.blobs |= extra.fp.blobs
        fp.sealed_blobs, fp.plain_blobs = extra.fp.sealed_blobs, extra.fp.plain_blobs
    else:
        fp = fingerprint.collect(ctx, user_id)
    for text in needles or ():
        fp.plain.update(fingerprint.segments(text) or ([text] if text.strip() else []))
    mode = j.mode if j else _last_mode(ctx, user_id)
    key = None
    if ctx.codec.name != "plain":
        key = (ctx.root / ".markmem" / "keys" / f"{user_id}.key").exists()
    return verifying.run(ctx, user_id, fp, mode, key)


def _verify_and_finish(ctx: Context, user_id: str, j: Journal) -> VerifyReport:
    """Verify a rewrite; on zero hits commit the result to the ops log and discard the fingerprints."""
    report = _verify(ctx, user_id, j)
    if not report.ok:
        return report  # the journal (and its fingerprints) stay for a re-run
    scrub.record_verification(ctx, j, {"objects": report.objects_scanned, "bytes": report.bytes_scanned,
                                       "fingerprints": report.fingerprints, "blobs": report.blobs_checked,
                                       "hits": report.hits})
    j.state = "done"
    journal.discard(ctx.root, j.token)
    return _replace(report, discarded=True)


def _replace(report: VerifyReport, **changes: Any) -> VerifyReport:
    from dataclasses import replace

    return replace(report, **changes)


def _last_mode(ctx: Context, user_id: str) -> str | None:
    from ..store.repo import iter_ops

    token = journal.user_token(ctx, user_id, create=False)
    modes = [r.get("mode") for r in iter_ops(ctx.root) if r.get("op") == "forget" and token and r.get("user") == token]
    return str(modes[-1]) if modes else None
