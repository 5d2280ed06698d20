"""Symlinks inside a memory repo are never followed, written through or committed.

A symlink at ``raw/u/<id>``, in ``wiki/`` or at the ops log would let a read return, or a write
land in, a file outside the repo (or in another user's folder). Readers open files with
``O_NOFOLLOW`` and check the folders above with :func:`crosses_link`; writers refuse with
:func:`refuse_links`; ``Git.commit`` drops such paths; ``doctor`` and ``lint`` list them
(:func:`find_links`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import RepoError

_SKIP = {".markmem/cache", ".markmem/keys"}  # derived or secret: not part of the memory


def crosses_link(root: Path, rel: str) -> bool:
    """Whether any component of ``rel`` (the last one included) is a symlink. Missing ones are not."""
    path = str(root)
    for part in rel.split("/"):
        if not part:
            continue
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return True
        except (FileNotFoundError, NotADirectoryError):
            return False
    return False


def crossing(root: Path, rels: Iterable[str]) -> set[str]:
    """The ``rels`` for which :func:`crosses_link` holds, each folder above them checked once (a
    commit names hundreds of pages in a few folders: ``crosses_link`` per path re-checked each
    folder, five ``lstat`` calls a page)."""
    folders: dict[str, str] = {}  # absolute folder -> "ok" | "link" | "gone"
    out: set[str] = set()
    base = str(root)
    for rel in rels:
        parts = [p for p in rel.split("/") if p]
        path = base
        for i, part in enumerate(parts):
            path = os.path.join(path, part)
            last = i == len(parts) - 1
            state = None if last else folders.get(path)
            if state is None:
                try:
                    state = "link" if stat.S_ISLNK(os.lstat(path).st_mode) else "ok"
                except (FileNotFoundError, NotADirectoryError):
                    state = "gone"
                if not last:
                    folders[path] = state
            if state == "link":
                out.add(rel)
            if state != "ok":
                break
    return out


def refuse_links(root: Path, rel: str) -> None:
    """Raise RepoError when writing ``rel`` would go through a symlink."""
    if crosses_link(root, rel):
        raise RepoError(f"{rel} goes through a symlink: markmem never reads or writes through one "
                        "(remove it; `markmem doctor` lists every symlink in the repo)")


def open_nofollow(root: Path, rel: str) -> int:
    """A read-only descriptor for ``rel``; OSError (ELOOP) if it or a folder above is a symlink."""
    if crosses_link(root, os.path.dirname(rel)):
        import errno

        raise OSError(errno.ELOOP, "a folder above is a symlink", rel)
    return os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)


def find_links(root: Path) -> list[str]:
    """Every symlink under the repo's memory folders (repo-relative, sorted), never descending into one."""
    found: list[str] = []
    for top in ("raw", "wiki", ".markmem"):
        if os.path.islink(root / top):
            found.append(top)
            continue
        found += [rel for rel, entry in walk(root, top, _SKIP) if entry.is_symlink()]
    return sorted(found)


def walk(root: Path, top: str, skip: frozenset[str] | set[str] = frozenset()) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(repo-relative path, entry) of everything under ``top``, folders included; never descends into
    a symlink or a folder in ``skip``. ``os.scandir`` entries carry their type, so a tree of thousands
    of files costs one system call per folder instead of a ``stat`` per file."""
    stack = [top]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, rel_dir)))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}"
            yield rel, entry
            if entry.is_dir(follow_symlinks=False) and rel not in skip:
                stack.append(rel)
