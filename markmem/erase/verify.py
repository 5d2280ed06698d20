"""Prove an erasure: scan every git object (loose and packed, reachable or not) and the rest of .git.

What is searched for:
* content fingerprints (``fingerprint.py``): fragments of the user's text; kept in the erasure
  journal during a rewrite, else collected live from the tree, history and cache;
* the object ids of every stored version of the user's files (recorded before a rewrite, or
  found in history): none may still exist, whatever its encoding;
* the id as raw lines and ops records store it (``"user_id": "<id>"``);
* structure: paths under ``wiki/u/<id>/`` or ``raw/u/<id>/`` reachable from any ref or reflog
  (stashes included), the index, and commit messages naming the user.

Objects are streamed from ``git cat-file --batch-all-objects --batch`` into ``grep -F`` (many
patterns, one pass); offsets map matches back to objects. After a shred, ciphertext, ids and paths
in history are expected: what must hold is that the key is gone and no stored copy was plain text.
"""

from __future__ import annotations

import bisect
import shutil
import subprocess
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..context import Context
from . import gitio
from .fingerprint import Fingerprints, needle_file
from .redact import message_mentions
from .rewrite import wait_for_gc

FAIL_ALWAYS = ("content", "git-file", "local-file", "plaintext", "key")


@dataclass(frozen=True)
class Finding:
    kind: str  # content | blob | id | path | index | message | git-file | local-file | plaintext | key
    where: str  # object id, file, path or commit
    detail: str = ""  # object type and path, when known


@dataclass(frozen=True)
class VerifyReport:
    user_id: str
    mode: str | None  # the user's last recorded erasure (None: never erased)
    objects_scanned: int
    bytes_scanned: int
    fingerprints: int  # content fragments searched for
    blobs_checked: int  # object ids of the user's stored versions checked for existence
    findings: tuple[Finding, ...]  # each one is a hit: verify-erasure exits non-zero
    retained: dict[str, int] = field(default_factory=dict)  # expected leftovers (shred: ciphertext, ids, paths)
    warnings: tuple[str, ...] = ()
    discarded: bool = False  # the fingerprints were deleted after this clean verification

    @property
    def hits(self) -> int:
        return len(self.findings)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["findings"] = data["findings"][:1000]
        data.update(hits=self.hits, ok=self.ok)
        return data

    def __str__(self) -> str:
        kinds: dict[str, int] = {}
        for f in self.findings:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        lines = [
            f"verify-erasure {self.user_id}: {'OK' if self.ok else 'FOUND'} (last erasure: {self.mode or 'none'})",
            f"  scanned {self.objects_scanned:,} objects ({self.bytes_scanned:,} bytes) for "
            f"{self.fingerprints} content fingerprints; checked {self.blobs_checked:,} ids of the user's stored "
            "versions",
            f"  hits: {self.hits}" + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")"
                                      if kinds else ""),
        ]
        lines += [f"    {f.kind}: {f.where} {f.detail}".rstrip() for f in self.findings[:20]]
        if self.hits > 20:
            lines.append(f"    ... and {self.hits - 20} more")
        if any(self.retained.values()):
            lines.append("  retained by design: " + ", ".join(f"{k} {v}" for k, v in self.retained.items() if v))
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def run(ctx: Context, user_id: str, fp: Fingerprints, mode: str | None, key_present: bool | None) -> VerifyReport:
    root = ctx.root
    wait_for_gc(root)  # a concurrent repack would pull packs from under the object stream
    ident = f'"user_id": "{user_id}"'
    kinds = {**{n: "content" for n in fp.plain}, ident: "id"}
    scanned, size, matches = scan_objects(root, kinds)
    found: list[Finding] = [Finding("blob", oid, "a stored version of the user's files")
                            for oid in gitio.present(root, sorted(fp.blobs))]
    where = gitio.paths_of(root, {sha for sha, _t, kind in matches if kind == "content"})
    for sha, typ, kind in matches:
        found.append(Finding(kind, sha, f"{typ} {where.get(sha, '(unreachable or not a blob)')}"))
    found += [Finding("path", sha, path) for sha, path in gitio.reachable_paths(root, user_id)]
    found += [Finding("index", p) for p in _index_paths(ctx, user_id)]
    found += [Finding("message", sha) for sha in _messages(ctx, user_id)]
    content = sorted(fp.plain)
    skip = (".git/objects", ".git/hooks")
    found += [Finding("git-file", f) for f in grep_files(root, content, [root / ".git"], skip)]
    local = [root / ".markmem" / n for n in ("cache", "state.db", "state.db-wal", "tmp")]
    found += [Finding("local-file", f) for f in grep_files(root, content, local, ())]
    if mode == "shred":
        if key_present:
            found.append(Finding("key", f".markmem/keys/{user_id}.key", "the key still exists"))
        if fp.plain_blobs:
            found.append(Finding("plaintext", f"{fp.plain_blobs} stored copies", "were not sealed"))
    retained: dict[str, int] = {}
    if mode == "shred":
        for kind in ("blob", "id", "path", "index", "message"):
            retained[kind] = sum(1 for f in found if f.kind == kind)
        found = [f for f in found if f.kind in FAIL_ALWAYS]
    return VerifyReport(user_id, mode, scanned, size, len(fp.plain), len(fp.blobs), tuple(found), retained,
                        tuple(_warnings(ctx, fp, mode)))


def scan_objects(root: Path, needles: dict[str, str]) -> tuple[int, int, list[tuple[str, str, str]]]:
    """(objects, bytes, [(object id, type, needle kind)]) over every object in the repository."""
    cat = subprocess.Popen(gitio.git_cmd("cat-file", "--batch-all-objects", "--batch"), cwd=root,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=gitio.ENV)
    assert cat.stdout is not None
    starts: list[int] = []
    objects: list[tuple[str, str]] = []
    if not needles:
        total = _drain(cat, starts, objects, None)
        return len(objects), total, []
    with needle_file(root, list(needles)) as path:
        if not shutil.which("grep"):  # pragma: no cover - no grep on PATH: slow but complete
            hits: list[tuple[int, str]] = []
            total = _drain(cat, starts, objects, None, lambda pos, data: hits.extend(
                (pos, n) for n in needles if n.encode("utf-8") in data))
        else:
            grep = subprocess.Popen(["grep", "-a", "-F", "-o", "-b", "-f", str(path)], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE)
            box: dict[str, int] = {}
            pump = threading.Thread(target=lambda: box.update(total=_drain(cat, starts, objects, grep)))
            pump.start()
            assert grep.stdout is not None
            out = grep.stdout.read()
            pump.join()
            grep.wait()
            total = box.get("total", 0)
            hits = []
            for line in out.split(b"\n"):
                offset, _, match = line.partition(b":")
                if offset.isdigit():
                    hits.append((int(offset), match.decode("utf-8", "replace")))
    matched: dict[str, tuple[str, str]] = {}
    for pos, text in hits:
        i = bisect.bisect_right(starts, pos) - 1
        kind = needles.get(text, "content")
        sha, typ = objects[i]
        if sha not in matched or kind == "content":
            matched[sha] = (typ, kind)
    return len(objects), total, [(sha, typ, kind) for sha, (typ, kind) in sorted(matched.items())]


def _drain(cat: subprocess.Popen[bytes], starts: list[int], objects: list[tuple[str, str]],
           grep: subprocess.Popen[bytes] | None, check: Any = None) -> int:
    """Read cat-file's stream; feed each object's content (plus a newline) to grep; return content bytes."""
    assert cat.stdout is not None
    pos = 0
    try:
        while header := cat.stdout.readline():
            sha, typ, size = header.split()
            data = cat.stdout.read(int(size) + 1)
            starts.append(pos)
            objects.append((sha.decode("ascii"), typ.decode("ascii")))
            if grep is not None and grep.stdin is not None:
                grep.stdin.write(data)
            elif check is not None:
                check(pos, data)
            pos += len(data)
    finally:
        if grep is not None and grep.stdin is not None:
            grep.stdin.close()
        cat.stdout.close()
        cat.wait()
    return pos - len(objects)


def grep_files(root: Path, needles: list[str], targets: list[Path], skip: tuple[str, ...]) -> list[str]:
    """Files (repo-relative) under ``targets`` holding any needle, except those under ``skip``."""
    targets = [t for t in targets if t.exists()]
    if not needles or not targets:
        return []
    files = [f for t in targets for f in ([t] if t.is_file() else sorted(t.rglob("*"))) if f.is_file()]
    files = [f for f in files if not f.relative_to(root).as_posix().startswith(skip)]
    if not files:
        return []
    with needle_file(root, needles) as path:
        if shutil.which("grep"):
            out = subprocess.run(["grep", "-a", "-l", "-F", "-f", str(path), "--", *map(str, files)],
                                 capture_output=True).stdout.decode("utf-8", "replace").splitlines()
        else:  # pragma: no cover
            out = [str(f) for f in files if any(n.encode("utf-8") in f.read_bytes() for n in needles)]
    return [Path(f).relative_to(root).as_posix() for f in out]


def _index_paths(ctx: Context, user_id: str) -> list[str]:
    spec = [p.rstrip("/") for p in gitio.prefixes(user_id)]
    return [p for p in ctx.git.run("ls-files", "--", *spec).splitlines() if p]


def _messages(ctx: Context, user_id: str) -> list[str]:
    out = ctx.git.run("log", "--all", "--reflog", "--format=%H%x1f%B%x1e", check=False)
    shas = []
    for chunk in out.split("\x1e"):
        sha, _, body = chunk.strip().partition("\x1f")
        if sha and message_mentions(body, user_id):
            shas.append(sha)
    return shas


def _warnings(ctx: Context, fp: Fingerprints, mode: str | None) -> list[str]:
    root = ctx.root
    out = []
    if mode == "scrub":
        out.append("mode scrub keeps the content in git history by design: run forget --mode rewrite to purge it")
    if not fp.plain and not fp.blobs:
        out.append("no content fingerprints to search for (they are discarded after a clean verification, and "
                   "history holds no copy): the structural checks (paths, index, messages, ids) still ran")
    if fp.short:
        out.append(f"{fp.short} strings shorter than 12 bytes cannot be searched for without false hits; "
                   "the structural checks cover where they were stored")
    for remote in gitio.remotes(root):
        out.append(f"remote {remote!r} and every existing clone, fork or backup still hold their own copies: "
                   "force-push the rewritten history and re-clone (a shred reaches them only if their keys go too)")
    if not gitio.remotes(root):
        out.append("existing clones, forks and backups are not scanned: they still hold copies unless re-cloned "
                   "(rewrite) or their copy of the key is deleted too (shred)")
    alternates = root / ".git" / "objects" / "info" / "alternates"
    if alternates.exists() and alternates.read_text().strip():
        out.append("this repository borrows objects from alternates, which a rewrite does not purge")
    kept = list((root / ".git" / "objects" / "pack").glob("*.keep"))
    if kept:
        out.append(f"{len(kept)} .keep packs are never repacked: unreachable objects in them survive gc")
    return out
