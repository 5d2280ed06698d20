"""Git plumbing for the memory repo: init, commit with trailers, log. Runs the git CLI."""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..errors import RepoError
from .links import crosses_link, crossing

_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
}


_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_EMPTY_TREE_256 = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
MAX_PACKS = 24  # above this many packs (or about MAX_LOOSE loose objects) a commit runs
MAX_LOOSE = 6700  # `git repack --geometric=2`; 6700 is git's gc.auto


def _ident(value: str) -> str:
    return re.sub(r"[<>\n]", "", value).strip() or "markmem"


def _quote(path: str) -> bytes:
    """A path for fast-import: C-style quoted (so any byte but NUL is safe)."""
    raw = path.encode("utf-8")
    if not re.search(rb'[\x00-\x1f"\\]', raw) and not raw.startswith(b" "):
        return raw
    return b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n") + b'"'


class Git:
    def __init__(self, root: Path, author: tuple[str, str] = ("markmem", "markmem@localhost")) -> None:
        self.root = root
        self.author = author
        self._env = {**os.environ, **_ENV}

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> str:
        name, email = self.author
        cmd = ["git", "-c", f"user.name={name}", "-c", f"user.email={email}",
               "-c", "commit.gpgsign=false", "-c", "core.quotepath=off", *args]
        proc = subprocess.run(cmd, cwd=self.root, input=input, capture_output=True, env=self._env)
        if check and proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise RepoError(f"git {args[0]} failed: {err[:500]}")
        return proc.stdout.decode("utf-8", "replace")

    def is_repo(self) -> bool:
        return (self.root / ".git").exists()

    def init(self) -> None:
        self.run("init", "-q", "-b", "main")

    def head(self) -> str | None:
        """The commit HEAD names, read from ``.git`` (no subprocess); ``git rev-parse`` if unusual."""
        try:
            ref = self._head_ref()
            sha = self._read_ref(ref) if ref else (self.root / ".git" / "HEAD").read_text("ascii").strip()
            if sha is None or _SHA.fullmatch(sha):
                return sha
        except (OSError, UnicodeDecodeError):
            pass
        out = self.run("rev-parse", "--verify", "-q", "HEAD", check=False).strip()
        return out or None

    def _head_ref(self) -> str | None:
        """``refs/heads/<branch>`` when HEAD is a symbolic ref to a branch, else None."""
        text = (self.root / ".git" / "HEAD").read_text("ascii").strip()
        if text.startswith("ref: refs/heads/") and "\n" not in text:
            return text[5:]
        return None

    def _read_ref(self, ref: str) -> str | None:
        """A branch's commit: the loose ref file, else ``packed-refs``; None if the branch is unborn."""
        gitdir = self.root / ".git"
        try:
            return (gitdir / ref).read_text("ascii").strip()
        except FileNotFoundError:
            pass
        try:
            packed = (gitdir / "packed-refs").read_text("ascii")
        except FileNotFoundError:
            return None
        for line in packed.splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
        return None

    def commit(self, paths: Iterable[str], message: str, *, allow_empty: bool = False) -> str | None:
        """Stage ``paths`` (added, changed or deleted) and commit the index, as ``git commit`` would
        (so whatever a caller staged itself goes in too). None if the index equals HEAD.

        Each of ``paths`` is read once; the index gets the ids of exactly those bytes (``update-index
        --index-info``; stat data follows at the next refresh) and ``git fast-import`` writes the same
        bytes (other staged entries by id), the trees and the commit as ONE pack and moves the branch.
        So the index matches the commit even when a raw file grows meanwhile (add() appends without
        the writer lock). ``git commit`` wrote every blob and tree as a loose object file (~1,400 for
        a batch touching 100 users) and re-stat the tree. A crash between the two steps leaves the
        paths staged with their objects not yet written: the next commit (``recover`` on open) reads
        those from the worktree.
        """
        wanted = set(paths)
        spec = sorted(wanted - crossing(self.root, wanted))  # never commit a symlink
        gitdir = self.root / ".git"
        ref = self._head_ref() if gitdir.is_dir() else None
        if ref is None:  # detached HEAD or a .git file (worktree): the porcelain path
            return self._commit_porcelain(spec, message, allow_empty=allow_empty)
        parent = self.head()
        sha256 = len(parent) == 64 if parent else self._sha256()
        files = [self._snapshot(rel) for rel in spec]
        if files:
            self._stage(files, sha256=sha256)
        ours = set(spec)
        changes = self._index_changes(parent or (_EMPTY_TREE_256 if sha256 else _EMPTY_TREE))
        extra = [c for c in changes if c[3] not in ours]
        if extra:  # staged by the caller; ids whose object is missing were staged by a killed commit
            missing = self._missing([c[1] for c in extra if c[2] != "D"])
            redo = [self._snapshot(c[3]) for c in extra
                    if c[2] != "D" and c[1] in missing and not crosses_link(self.root, c[3])]
            if redo:
                self._stage(redo, sha256=sha256)
                files += redo
                ours |= {f[0] for f in redo}
                extra = [c for c in extra if c[3] not in ours]
        if not changes and not allow_empty:
            return None
        sha = self._fast_import(ref, parent, files, extra, message)
        self._bound_packs()
        return sha

    def commit_removal(self, folders: Sequence[str], paths: Sequence[str], message: str) -> str | None:
        """Commit the deletion of every tracked file under ``folders`` plus ``paths`` as they are
        on disk; None if that changes nothing (a resumed erasure whose commit is made).

        Three processes: ``ls-files`` (what is tracked there), then at once one ``update-index
        --index-info`` (no refresh: re-stating every file of a large tree was a third of an
        erasure) and fast-import, whose ``D <folder>`` drops a whole folder. Whichever of the two a
        crash interrupts, ``recover`` reconciles: the folders must already be gone from the working
        tree (the caller moved them out), so an index entry that HEAD lacks is committed as a
        deletion (a no-op), and a removal staged but not committed is committed.
        """
        ref = self._head_ref() if (self.root / ".git").is_dir() else None
        parent = self.head()
        if ref is None or parent is None:  # detached HEAD, a worktree, an unborn branch: plumbing
            self.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *folders)
            return self.commit(list(paths), message)
        sha256 = len(parent) == 64
        algo = hashlib.sha256 if sha256 else hashlib.sha1
        zero = b"0" * (64 if sha256 else 40)
        listed = self.run("ls-files", "-s", "-z", "--", *folders, *paths).split("\0")
        indexed: dict[str, tuple[str, str]] = {}
        for item in filter(None, listed):
            meta, _, rel = item.partition("\t")
            imode, ioid, _stage = meta.split(" ")
            indexed[rel] = (imode, ioid)
        wanted = set(paths)
        gone = [rel for rel in indexed if rel not in wanted]
        files, lines = [], [b"0 %s\t%s\0" % (zero, rel.encode("utf-8")) for rel in gone]
        for rel in paths:
            snap = self._snapshot(rel)
            _rel, mode, data = snap
            if mode is None:
                if rel in indexed:
                    files.append(snap)
                    lines.append(b"0 %s\t%s\0" % (zero, rel.encode("utf-8")))
                continue
            oid = algo(b"blob %d\0" % len(data) + data).hexdigest()
            if indexed.get(rel) != (mode.decode(), oid):
                files.append(snap)
                lines.append(b"%s %s\t%s\0" % (mode, oid.encode(), rel.encode("utf-8")))
        if not gone and not files:
            return None
        removed = [(rel, None, b"") for rel in folders]  # fast-import deletes a folder recursively
        with ThreadPoolExecutor(1) as pool:  # two processes, two locks (index.lock, the branch): at once
            staged = pool.submit(self.run, "update-index", "-z", "--index-info", input=b"".join(lines))
            sha = self._fast_import(ref, parent, removed + files, [], message)
            staged.result()
        self._bound_packs()
        return sha

    def _index_changes(self, base: str) -> list[tuple[str, str, str, str]]:
        """(new mode, new id, status letter, path) of every index entry that differs from ``base``."""
        out = self.run("diff-index", "--cached", "--no-renames", "-z", base)
        items = out.split("\0")
        changes = []
        for meta, path in zip(items[0::2], items[1::2], strict=False):
            if meta.startswith(":"):
                _om, nm, _os, ns, status = meta[1:].split(" ")
                changes.append((nm, ns, status[:1], path))
        return changes

    def _missing(self, oids: Sequence[str]) -> set[str]:
        if not oids:
            return set()
        out = self.run("cat-file", "--batch-check=%(objectname)", input=("\n".join(oids) + "\n").encode())
        return {line.split(" ")[0] for line in out.splitlines() if line.endswith(" missing")}

    def _snapshot(self, rel: str) -> tuple[str, bytes | None, bytes]:
        """(path, mode, content) of a worktree path; mode None when it is gone."""
        full = self.root / rel
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            return rel, None, b""
        if stat.S_ISLNK(st.st_mode):
            return rel, b"120000", os.fsencode(os.readlink(full))
        if not stat.S_ISREG(st.st_mode):
            raise RepoError(f"cannot commit {rel}: not a regular file")
        with open(full, "rb") as fh:
            data = fh.read()
        return rel, b"100755" if st.st_mode & 0o100 else b"100644", data

    def _sha256(self) -> bool:
        try:
            return "sha256" in (self.root / ".git" / "config").read_text("utf-8", "replace").lower()
        except OSError:
            return False

    def _stage(self, files: Sequence[tuple[str, bytes | None, bytes]], *, sha256: bool) -> None:
        algo = hashlib.sha256 if sha256 else hashlib.sha1
        zero = b"0" * (64 if sha256 else 40)
        lines = []
        for rel, mode, data in files:
            if mode is None:
                lines.append(b"0 %s\t%s\0" % (zero, rel.encode("utf-8")))
            else:
                oid = algo(b"blob %d\0" % len(data) + data).hexdigest().encode()
                lines.append(b"%s %s\t%s\0" % (mode, oid, rel.encode("utf-8")))
        # --refresh runs first (options act in order; --index-info must be last): it gives the entries
        # the previous commit staged their stat data, if the files are still as read (a raw file
        # grown since stays "modified"). The entries staged now get theirs at the next commit or
        # `git status`. One process instead of two.
        self.run("update-index", "-q", "--refresh", "-z", "--index-info", input=b"".join(lines))

    def _fast_import(self, ref: str, parent: str | None, files: Sequence[tuple[str, bytes | None, bytes]],
                     extra: Sequence[tuple[str, str, str, str]], message: str) -> str:
        name, email = (_ident(x) for x in self.author)
        msg = message.encode("utf-8")
        out = [b"feature done\ncommit ", ref.encode(), b"\nmark :1\n",
               f"committer {name} <{email}> {int(time.time())} +0000\n".encode(),
               b"data %d\n" % len(msg), msg, b"\n"]
        if parent:
            out.append(b"from %s\n" % parent.encode())
        for rel, mode, data in files:
            if mode is None:
                out.append(b"D %s\n" % _quote(rel))
            else:
                out += [b"M %s inline %s\ndata %d\n" % (mode, _quote(rel), len(data)), data, b"\n"]
        for new_mode, oid, status, rel in extra:
            if status == "D":
                out.append(b"D %s\n" % _quote(rel))
            else:
                out.append(b"M %s %s %s\n" % (new_mode.encode(), oid.encode(), _quote(rel)))
        out.append(b"\nget-mark :1\ndone\n")
        # core.fsync=none: the same durability as the loose objects `git commit` wrote (git does not
        # fsync those by default either); the raw log is what add() fsyncs. --depth=0: fast-import
        # only tries a delta against the previous blob of the stream (another file): wasted CPU.
        # fastimport.unpackLimit=0: a pack even for a small commit, never loose objects.
        proc = subprocess.run(["git", "-c", "core.fsync=none", "-c", "fastimport.unpackLimit=0", "fast-import",
                               "--quiet", "--done", "--depth=0"], cwd=self.root,
                              input=b"".join(out), capture_output=True, env=self._env)
        sha = proc.stdout.decode("ascii", "replace").strip()
        if proc.returncode != 0 or not _SHA.fullmatch(sha):
            raise RepoError(f"git fast-import failed: {proc.stderr.decode('utf-8', 'replace').strip()[:500]}")
        return sha

    def _bound_packs(self) -> None:
        """Each commit adds a small pack: merge them geometrically (each object is copied O(log n)
        times) so lookups stay fast; loose objects (other writers) are rolled in too. ``git commit``
        used to run ``gc --auto`` for this. ``pack.window=0``: copy, no delta search (that took
        seconds); ``git gc`` finds the deltas when someone runs it."""
        objects = self.root / ".git" / "objects"
        try:
            packs = sum(1 for name in os.listdir(objects / "pack") if name.endswith(".pack"))
        except FileNotFoundError:
            packs = 0
        try:  # git's own estimate: one fan-out directory of 256
            loose = len(os.listdir(objects / "17")) * 256
        except FileNotFoundError:
            loose = 0
        if packs > MAX_PACKS or loose > MAX_LOOSE:
            self.run("-c", "pack.window=0", "repack", "-d", "-q", "-l", "--geometric=2", "--no-write-bitmap-index")

    def staged_paths(self) -> list[str]:
        """Paths whose index entry differs from HEAD: a commit was interrupted after staging."""
        head = self.head()
        if head is None:
            return []
        out = self.run("diff-index", "--cached", "--name-only", "--no-renames", "-z", head, "--")
        return [p for p in out.split("\0") if p]

    def _commit_porcelain(self, spec: Sequence[str], message: str, *, allow_empty: bool = False) -> str | None:
        if spec:
            self.run("update-index", "--add", "--remove", "-z", "--stdin", input=("\0".join(spec) + "\0").encode())
        args = ["commit", "-q", "--no-verify", "--no-status", "-F", "-"]
        if allow_empty:
            args.append("--allow-empty")
        name, email = self.author
        proc = subprocess.run(
            ["git", "-c", f"user.name={name}", "-c", f"user.email={email}", "-c", "commit.gpgsign=false", *args],
            cwd=self.root, input=message.encode("utf-8"), capture_output=True, env=self._env,
        )
        if proc.returncode != 0:
            if b"nothing to commit" in proc.stdout + proc.stderr or b"nothing added" in proc.stdout + proc.stderr:
                return None
            raise RepoError(f"git commit failed: {proc.stderr.decode('utf-8', 'replace').strip()[:500]}")
        return self.head()

    def clear_stale_locks(self) -> list[str]:
        """Remove lock files a killed markmem process left behind. Call only under the writer lock.

        Also the ``.keep`` file of a killed ``git fast-import``: it would pin its pack past every gc.
        """
        gitdir = self.root / ".git"
        stale = [gitdir / "index.lock", gitdir / "HEAD.lock", *gitdir.joinpath("refs", "heads").glob("*.lock")]
        for keep in gitdir.joinpath("objects", "pack").glob("*.keep"):
            try:
                if keep.read_bytes().startswith(b"fast-import"):
                    stale.append(keep)
            except OSError:
                pass
        removed = []
        for path in stale:
            if path.exists():
                path.unlink(missing_ok=True)
                removed.append(path.name)
        return removed

    def dirty_paths(self, prefixes: Sequence[str]) -> list[str]:
        out = self.run("status", "--porcelain", "-z", "--no-renames", "--untracked-files=all", "--", *prefixes)
        paths = []
        for item in out.split("\0"):
            if len(item) > 3 and not crosses_link(self.root, item[3:]):  # a symlink is never committed
                paths.append(item[3:])
        return paths

    def changed_since(self, rev: str) -> list[str] | None:
        out = self.run("diff", "--name-only", "-z", rev, "HEAD", check=False)
        if not out and self.run("cat-file", "-t", rev, check=False).strip() != "commit":
            return None
        return [p for p in out.split("\0") if p]


def message(subject: str, trailers: Mapping[str, str], body: str = "") -> str:
    """A commit message with git trailers, e.g. ``Markmem-Op: compile``. Never put user text here."""
    lines = [subject, ""]
    if body:
        lines += [body, ""]
    lines += [f"{k}: {v}" for k, v in trailers.items()]
    return "\n".join(lines) + "\n"
