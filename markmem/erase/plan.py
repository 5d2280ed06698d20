"""Plan an erasure: ``gather`` reads what a user occupies (read-only), ``make_plan`` is pure.

``markmem forget USER --mode M --dry-run`` prints ``make_plan(gather(ctx, USER), M)``; the
executors in ``scrub``/``api`` apply the same plan.
"""

from __future__ import annotations

import os
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..context import Context
from ..errors import EncryptionError, InvalidInput
from ..store.repo import iter_ops
from . import gitio, journal, redact

MODES = ("scrub", "rewrite", "shred")


@dataclass(frozen=True)
class Inventory:
    """Everything one user occupies, as found on disk, in git, the cache and the queue."""

    user_id: str
    token: str | None  # None until the tombstone secret exists (a dry run creates nothing)
    encrypted: bool
    files: tuple[tuple[str, int, bool], ...]  # (path, bytes, tracked in git)
    raw_entries: int
    cache_rows: dict[str, int]
    queue_rows: int
    ops_records: int  # ops records naming the user in plain text (redacted by every mode)
    commits_touching: int
    commits_total: int
    remotes: tuple[str, ...]
    stashes: int
    key_present: bool | None  # None: repo not encrypted
    interrupted: str | None  # "<mode>:<state>" of an erasure that did not finish


@dataclass(frozen=True)
class ErasurePlan:
    user_id: str
    mode: str
    token: str | None
    files: tuple[str, ...]
    tracked_files: int
    untracked_files: int
    bytes: int
    raw_entries: int
    pages: int
    review_items: tuple[str, ...]
    cache_rows: dict[str, int]
    queue_rows: int
    ops_records: int
    commits_touching: int
    commits_total: int
    remotes: tuple[str, ...]
    stashes: int
    key_present: bool | None
    interrupted: str | None
    steps: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not (self.files or sum(self.cache_rows.values()) or self.queue_rows or self.ops_records
                    or self.commits_touching or self.key_present)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["empty"] = self.empty
        return data

    def __str__(self) -> str:
        rows = " ".join(f"{k} {v}" for k, v in self.cache_rows.items())
        lines = [
            f"Erasure plan: forget user {self.user_id!r} (mode {self.mode})",
            f"  tombstone id:   {self.token or '(assigned on apply)'} (keyed hash; the committed record holds no PII)",
            f"  files:          {len(self.files)} ({self.tracked_files} tracked, {self.untracked_files} untracked,"
            f" {self.bytes:,} bytes)",
            f"  content:        {self.raw_entries} raw entries, {self.pages} pages,"
            f" {len(self.review_items)} review items",
            f"  cache rows:     {rows}",
            f"  queue rows:     {self.queue_rows}",
            f"  ops records:    {self.ops_records} naming the user (id replaced by the token)",
            f"  commits:        {self.commits_touching} of {self.commits_total} touch the user's folders",
        ]
        if self.key_present is not None:
            lines.append(f"  key:            {'present' if self.key_present else 'absent'}")
        if self.interrupted:
            lines.append(f"  resumes:        an interrupted erasure ({self.interrupted})")
        shown = self.files[:12]
        lines += ["  paths:"] + [f"    {p}" for p in shown]
        if len(self.files) > len(shown):
            lines.append(f"    ... and {len(self.files) - len(shown)} more")
        lines += ["  steps:"] + [f"    {i}. {s}" for i, s in enumerate(self.steps, 1)]
        lines += [f"  warning: {w}" for w in self.warnings]
        if self.empty:
            lines.append("  (nothing of this user was found; a tombstone is still recorded)")
        return "\n".join(lines)


def gather(ctx: Context, user_id: str, *, create: bool = False, history: bool = True) -> Inventory:
    """Read-only: what the user occupies now. Never writes (``--dry-run`` relies on it).

    ``history=False`` leaves out what git knows (tracked files, commits, remotes, stashes), so
    that a shred reaches the key sooner; :func:`with_history` adds it afterwards."""
    root = ctx.root
    files: list[tuple[str, int, bool]] = []
    raw_entries = 0
    cut = len(str(root)) + 1
    for prefix in gitio.prefixes(user_id):
        if os.path.islink(root / prefix.rstrip("/")):  # a symlink is removed, never followed
            files.append((prefix.rstrip("/"), 0, False))
            continue
        for folder, _dirs, names in sorted(os.walk(root / prefix)):
            base = folder[cut:].replace(os.sep, "/")  # (string work: Path objects cost 10 us a file)
            for name in sorted(names):
                full = os.path.join(folder, name)
                rel = f"{base}/{name}"
                st = os.lstat(full)
                files.append((rel, st.st_size, False))
                if name.endswith(".jsonl") and not stat.S_ISLNK(st.st_mode):
                    with open(full, "rb") as fh:
                        raw_entries += fh.read().count(b"\n")
    token = journal.user_token(ctx, user_id, create=create)
    pending = journal.load(root, token) if token else None
    key = None
    if ctx.codec.name != "plain":
        key = (root / ".markmem" / "keys" / f"{user_id}.key").exists()
    inv = Inventory(
        user_id=user_id, token=token, encrypted=ctx.codec.name != "plain", files=tuple(files),
        raw_entries=raw_entries,
        cache_rows={t: ctx.cache.count(t, user_id) for t in ("raw", "claims", "pages", "vectors")},
        queue_rows=ctx.queue.pending(user_id),
        ops_records=sum(1 for r in iter_ops(root) if redact.mentions(r, user_id)),
        commits_touching=0, commits_total=0, remotes=(), stashes=0, key_present=key,
        interrupted=f"{pending.mode}:{pending.state}" if pending else None,
    )
    return with_history(ctx, inv) if history else inv


def with_history(ctx: Context, inv: Inventory) -> Inventory:
    """Add what git knows about the user to an inventory (unaffected by moving the folders out)."""
    spec = [p.rstrip("/") for p in gitio.prefixes(inv.user_id)]
    with ThreadPoolExecutor(4) as pool:  # five git processes, read-only: at once, not one after another
        listed = pool.submit(ctx.git.run, "ls-files", "-z", "--", *spec)
        touching = pool.submit(_count, ctx, "--all", "--", *spec)
        total = pool.submit(_count, ctx, "--all")
        remotes = pool.submit(gitio.remotes, ctx.root)
        stashes = gitio.stash_count(ctx.root)
    tracked = set(listed.result().split("\0")) - {""}
    files = [(rel, size, rel in tracked) for rel, size, _t in inv.files]
    on_disk = {f[0] for f in files}
    files += [(rel, 0, True) for rel in sorted(tracked - on_disk)]  # deleted but not committed yet
    return replace(inv, files=tuple(files), commits_touching=touching.result(), commits_total=total.result(),
                   remotes=tuple(remotes.result()), stashes=stashes)


def _count(ctx: Context, *args: str) -> int:
    out = ctx.git.run("rev-list", "--count", *args, check=False).strip()
    return int(out) if out.isdigit() else 0


def check_mode(mode: str, encrypted: bool) -> None:
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}, not {mode!r}", field="mode")
    if mode == "shred" and not encrypted:
        raise EncryptionError("shred needs a repo created with encryption=True; use mode='rewrite' "
                              "to purge the user from history instead")


def make_plan(inv: Inventory, mode: str) -> ErasurePlan:
    """Pure: the steps ``forget(user, mode)`` will take on this inventory."""
    check_mode(mode, inv.encrypted)
    uid = inv.user_id
    paths = tuple(f[0] for f in inv.files)
    pages = sum(1 for p in paths if p.endswith(".md"))
    review = tuple(p for p in paths if "/review/" in p)
    purge = (f"drop {inv.queue_rows} queued entries; purge cache rows ("
             + ", ".join(f"{k} {v}" for k, v in inv.cache_rows.items()) + ") with secure delete")
    move = f"move the {len(paths)} files under wiki/u/{uid}/ and raw/u/{uid}/ out of the tree (two renames)"
    ops = f"replace the user id by the token in {inv.ops_records} ops records"
    tomb = "append a tombstone (token, mode, counts) to .markmem/ops/ and commit it with the deletions"
    gone = "delete the moved files"
    steps = ["write the erasure journal .markmem/erasure/<token>.json (local, never committed)"]
    if mode == "shred":
        steps += [move, f"delete the key .markmem/keys/{uid}.key: every sealed copy (history, clones, backups) "
                  "becomes unreadable", purge, ops, tomb, gone,
                  "compact the cache (FTS merge, VACUUM): no stale plaintext copy stays in its free pages"]
    else:
        if mode == "rewrite":
            steps.append("fingerprint the user's content (tree, every reachable version, cache) for verification")
        steps += [purge, move, ops, tomb, gone]
    if mode == "rewrite":
        steps += [
            "commit other users' uncompiled raw lines (the rewrite resets the working tree)",
            f"git-filter-repo: drop wiki/u/{uid}/ and raw/u/{uid}/ from every ref ({inv.commits_touching} of "
            f"{inv.commits_total} commits touch them; stashes are rewritten too); redact trailers and ops records",
            "expire every reflog; gc --prune=now (unreachable objects are deleted); compact the cache",
            "verify: scan every object for the fingerprints; on zero hits discard them, record and commit the result",
        ]
    return ErasurePlan(
        user_id=uid, mode=mode, token=inv.token, files=paths,
        tracked_files=sum(1 for f in inv.files if f[2]), untracked_files=sum(1 for f in inv.files if not f[2]),
        bytes=sum(f[1] for f in inv.files), raw_entries=inv.raw_entries, pages=pages, review_items=review,
        cache_rows=dict(inv.cache_rows), queue_rows=inv.queue_rows, ops_records=inv.ops_records,
        commits_touching=inv.commits_touching, commits_total=inv.commits_total, remotes=inv.remotes,
        stashes=inv.stashes, key_present=inv.key_present, interrupted=inv.interrupted,
        steps=tuple(steps), warnings=tuple(_warnings(inv, mode)),
    )


def _warnings(inv: Inventory, mode: str) -> list[str]:
    out = []
    if mode == "scrub" and inv.commits_touching:
        out.append("scrub keeps the content in git history (audit-friendly); use mode 'rewrite' to purge it")
    if mode == "rewrite":
        for r in inv.remotes:
            out.append(f"remote {r!r} still holds the old history: force-push (git push --force --all --tags "
                       f"{r}) and ask its admins to purge unreachable objects")
        out.append("existing clones, forks and backups keep their copies: delete them or re-clone")
    if mode == "shred":
        if inv.key_present is False:
            out.append("the user has no key: nothing sealed to shred (files and cache are still purged)")
        out.append("ids, paths, sizes and times of the sealed files stay visible in history; content does not")
        out.append("a copy of .markmem/keys/ (backup, other machine) would still open the history: delete it too")
    return out
