"""Executors for the steps every mode shares: purge local state, delete the folders, redact, tombstone.

Each step is idempotent (it looks at what is there, not at what it was told), so a re-run after a
crash at any point finishes the job. The caller holds the writer and append locks.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..context import Context
from ..ids import now
from ..store.git import message
from ..store.pages import atomic_write
from ..store.repo import append_op, iter_ops
from . import gitio, journal
from .journal import Journal
from .redact import redact_ops


def purge_local(ctx: Context, user_id: str) -> dict[str, int]:
    """Queue rows and every cache row of the user (raw, claims, pages, vectors, problems).

    One cache file: ``secure_delete`` zeroes the freed cells and the WAL is checkpointed and
    truncated; older copies of the rows (left by earlier compiles) and FTS tokens go with
    :func:`compact_cache`. A cache split per user: the user's file is closed and deleted whole.
    """
    counts = {"queue": ctx.queue.drop_user(user_id)}
    forget_in_memory(user_id)
    db = ctx.cache.db
    db.execute("PRAGMA secure_delete=ON")
    try:
        with ctx.cache.tx():
            counts.update(ctx.cache.delete_user(user_id))
    finally:
        db.execute("PRAGMA secure_delete=OFF")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return counts


def forget_in_memory(user_id: str) -> None:
    """This process's derived state that holds the user's words: lexicons, matrices, claim books,
    graphs, term counts, the tokenizer's word cache, kept query vectors."""
    from ..adapters import wordpiece
    from ..index import claimbook, claimlex, lexicon, vectors
    from ..read import fts, graph
    from ..read import vectors as dense

    claimbook.forget_user(user_id)
    claimlex.forget_user(user_id)
    lexicon.forget_user(user_id)
    graph.forget(user_id)
    vectors.forget_user(user_id)
    fts.forget_vocabularies()
    wordpiece.forget_all()
    dense.forget_queries()
    forget_text_caches()


# Process-wide memo caches keyed by (or holding) text from users' memories: clauses and their
# parses, values and their terms, page lines and YAML scalars, pack lines, question windows.
# Shared by every user, so an erasure empties them all (they refill from what is left).
TEXT_CACHES = (
    ("markmem.write.clauses", "_parse_cached"), ("markmem.write.clauses", "_split_cached"),
    ("markmem.write.extract_time", "_dateparser"), ("markmem.read.when", "_window"),
    ("markmem.read.when", "_parse"), ("markmem.read.echo", "terms"), ("markmem.read.echo", "_words"),
    ("markmem.read.echo", "_pattern"), ("markmem.read.pack", "_line_cost"), ("markmem.store.pages", "_one_line"),
    ("markmem.store.yamlfast", "_str_scalar"), ("markmem.store.yamlfast", "_parse_immutable"),
    ("markmem.read.ended", "things"), ("markmem.read.ended", "words"),
)
TEXT_DICTS = (("markmem.read.fts", "_TOKENS"), ("markmem.store.pages", "_claim_text"),
              ("markmem.store.pages", "_cache"), ("markmem.read.passage", "_SENTS"),
              ("markmem.read.echo", "_ONE_VALUED"))


def forget_text_caches() -> None:
    """Empty the memo caches that hold memory text (only modules already imported: nothing to empty
    in the others)."""
    import contextlib
    import sys

    for name, attr in TEXT_CACHES:
        module = sys.modules.get(name)
        if module is not None:
            getattr(module, attr).cache_clear()
    for name, attr in TEXT_DICTS:
        module = sys.modules.get(name)
        if module is not None:
            with getattr(module, "_cache_lock", contextlib.nullcontext()):  # store.pages guards its own
                getattr(module, attr).clear()


def compact_cache(ctx: Context) -> None:
    """Leave no stale copy of deleted rows in the cache file: merge the FTS segments (tokens of
    deleted rows survive in old ones), VACUUM (rows superseded by earlier compiles linger in free
    pages unless the cache runs with secure_delete), truncate the WAL."""
    db = ctx.cache.db
    for table in ("raw_fts", "claims_fts"):
        db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def move_out(root: Path, user_id: str) -> int:
    """Move the user's folders into the erasure folder (two renames: instant, and nothing reads
    them there). Returns the number of files moved; ``delete_moved`` removes them for good."""
    moved = 0
    trash = journal.erasure_dir(root) / f"trash-{user_id}"
    for prefix in gitio.prefixes(user_id):
        base = root / prefix
        if not base.is_dir():
            continue
        moved += sum(len(names) for _f, _d, names in os.walk(base))
        target = trash / prefix.split("/")[0]
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)  # left by an interrupted run: the same user's data
        target.parent.mkdir(parents=True, exist_ok=True)
        base.rename(target)
    return moved


def delete_moved(root: Path, user_id: str) -> None:
    shutil.rmtree(journal.erasure_dir(root) / f"trash-{user_id}", ignore_errors=True)


_DELETING: list[threading.Thread] = []


def delete_later(root: Path) -> None:
    """Delete every moved-out folder in a background thread: for a shred, whose moved files are
    ciphertext under a key that is gone (as unreadable as the copies in git history), so the call
    need not wait for thousands of unlinks. A folder a killed process left is deleted by the next
    shred's sweep (or by a re-run of the same user's erasure, in ``move_out``)."""
    folder = journal.erasure_dir(root)
    trash = [p for p in folder.glob("trash-*") if p.is_dir()]
    if trash:
        def delete() -> None:
            for path in trash:
                shutil.rmtree(path, ignore_errors=True)

        thread = threading.Thread(target=delete, name="markmem-trash", daemon=True)
        _DELETING.append(thread)
        thread.start()


def wait_deleted() -> None:
    """Wait for the background deletions (tests, benchmarks, a process about to exit)."""
    while _DELETING:
        _DELETING.pop().join()


def redact_tree_ops(root: Path, user_id: str, token: str) -> tuple[list[str], int]:
    """Replace the id by the token in the working tree's ops records. Returns (paths, records)."""
    folder = root / ".markmem" / "ops"
    paths, records = [], 0
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        data = path.read_bytes()
        new = redact_ops(data, user_id, token)
        if new != data:
            records += sum(1 for a, b in zip(data.split(b"\n"), new.split(b"\n"), strict=False) if a != b)
            atomic_write(path, new.decode("utf-8"))
            paths.append(path.relative_to(root).as_posix())
    return paths, records


def tombstone(ctx: Context, j: Journal, removed: dict[str, Any]) -> str | None:
    """Append the tombstone once per erasure (no PII: token, mode, counts). Returns its path."""
    if any(r.get("op") == "forget" and r.get("erasure") == j.erasure_id for r in iter_ops(ctx.root)):
        return None
    record = {"op": "forget", "at": now(), "erasure": j.erasure_id, "user": j.token, "mode": j.mode,
              "requested": j.started, "removed": removed}
    return append_op(ctx.root, record)


def commit(ctx: Context, user_id: str, j: Journal, extra: list[str], subject: str, op: str) -> str | None:
    """Commit the removal of the user's folders plus ``extra`` (ops files).

    ``Git.commit_removal``: the index loses the folders' entries (and gets ``extra``'s), then
    fast-import writes the commit; ``git commit`` would re-stat every file of a large tree first.
    None when there is nothing to commit (a resumed run whose deletion was committed already).
    """
    spec = [p.rstrip("/") for p in gitio.prefixes(user_id)]
    trailers = {"Markmem-Op": op, "Markmem-Mode": j.mode, "Markmem-Erasure": j.erasure_id, "Markmem-User": j.token}
    sha = ctx.git.commit_removal(spec, extra, message(subject, trailers))
    if sha:
        ctx.cache.set_meta("head", sha)
    return sha


def scrub(ctx: Context, user_id: str, j: Journal, step: Callable[[str], None]) -> str | None:
    """Purge, move out, redact, tombstone, commit, delete; counts accumulate in ``j.removed``."""
    _add(j, "cache", purge_local(ctx, user_id))
    step("purged")
    _add(j, "files", move_out(ctx.root, user_id))
    step("removed")
    ops_paths, redacted = redact_tree_ops(ctx.root, user_id, j.token)
    _add(j, "ops_redacted", redacted)
    stone = tombstone(ctx, j, j.removed)
    extra = ops_paths + ([stone] if stone else [])
    step("tombstoned")
    sha = commit(ctx, user_id, j, extra, f"markmem: forget a user ({j.mode})", "forget")
    _add(j, "cache", purge_local(ctx, user_id))  # an add() that raced the lock may have cached a row late
    if j.mode == "shred":
        delete_later(ctx.root)
    else:
        delete_moved(ctx.root, user_id)  # plaintext: gone before the call returns
    return sha


def _add(j: Journal, key: str, value: Any) -> None:
    """Accumulate counts across resumed runs (numbers add up, dicts per key)."""
    old = j.removed.get(key)
    if isinstance(value, dict):
        base = old if isinstance(old, dict) else {}
        j.removed[key] = {k: base.get(k, 0) + value.get(k, 0) for k in {*base, *value}}
    else:
        j.removed[key] = (old or 0) + value


def commit_pending(ctx: Context) -> str | None:
    """Commit uncommitted raw lines (and anything an interrupted writer left) before a history rewrite."""
    dirty = [p for p in ctx.git.dirty_paths(["raw", "wiki", ".markmem/ops"]) if ".tmp-" not in p]
    if not dirty:
        return None
    msg = message("markmem: checkpoint uncommitted raw lines before a history rewrite", {"Markmem-Op": "checkpoint"})
    sha = ctx.git.commit(dirty, msg)
    if sha:
        ctx.cache.set_meta("head", sha)
    return sha


def record_verification(ctx: Context, j: Journal, report: dict[str, Any]) -> str | None:
    record = {"op": "forget-verified", "at": now(), "erasure": j.erasure_id, "user": j.token, "mode": j.mode,
              **report}
    rel = append_op(ctx.root, record)
    trailers = {"Markmem-Op": "forget-verified", "Markmem-Erasure": j.erasure_id, "Markmem-User": j.token,
                "Markmem-Hits": str(report.get("hits", ""))}
    sha = ctx.git.commit([rel], message("markmem: verify an erasure", trailers))
    if sha:
        ctx.cache.set_meta("head", sha)
    return sha
