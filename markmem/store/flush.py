"""An fsync that runs while the caller does other work, and is waited for before anything shows.

``add()`` appends its raw lines, then must wait for the disk before it answers. The cache rows it
writes next do not depend on that wait, so :func:`raw.append` can hand its descriptors to a
:class:`Flush`: a helper thread runs ``fdatasync`` (the GIL is released during it) while the
caller inserts and links the cache rows, and the caller calls :meth:`Flush.wait` before it
commits them, queues them or returns. Nothing becomes visible, to this process or another, before
the bytes are on disk: the order a crash can observe is the same as flushing first.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None  # (pid that made it, pool): a forked child makes its own


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(max_workers=4, thread_name_prefix="markmem-fsync"))
        return _pool[1]


def fsync_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Flush:
    """Descriptors to ``fdatasync`` (then close) and new folders to ``fsync``, in that order."""

    def __init__(self) -> None:
        self._fds: list[int] = []
        self._folders: list[str] = []
        self._future: Future[None] | None = None
        self._waited = False

    def add(self, fd: int, new_folder: str | None = None) -> None:
        """Take over ``fd`` (closed by the flush); ``new_folder``: the folder of a file just created."""
        self._fds.append(fd)
        if new_folder is not None:
            self._folders.append(new_folder)

    def start(self) -> None:
        """Begin flushing in the helper thread."""
        if self._future is None and (self._fds or self._folders):
            self._future = _executor().submit(self._run)

    def wait(self) -> None:
        """Block until the bytes are on disk; raises the flush's OSError (once). Runs the flush
        here if :meth:`start` was not called. Calling it again returns at once."""
        if self._waited:
            return
        self._waited = True
        if self._future is None:
            self._run()
        else:
            self._future.result()

    def _run(self) -> None:
        try:
            for fd in self._fds:
                os.fdatasync(fd)
            for folder in self._folders:
                fsync_path(folder)
        finally:
            for fd in self._fds:
                os.close(fd)
