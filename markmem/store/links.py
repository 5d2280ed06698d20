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
    found: set[str] = set()
    for top in ("raw", "wiki", ".markmem"):
        base = root / top
        if os.path.islink(base):
            found.add(top)
            continue
        for dirpath, dirs, files in os.walk(base):
            rel_dir = Path(dirpath).relative_to(root).as_posix()
            dirs[:] = [d for d in dirs if f"{rel_dir}/{d}" not in _SKIP]
            for name in dirs + files:
                if os.path.islink(os.path.join(dirpath, name)):
                    found.add(f"{rel_dir}/{name}")
    return sorted(found)
