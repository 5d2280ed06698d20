"""Inter-process locks on files in ``.markmem/`` (fcntl), re-entrant within a thread."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import LockTimeout


class FileLock:
    def __init__(self, path: Path, timeout: float = 60.0) -> None:
        self.path = path
        self.timeout = timeout
        self._local = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def held(self, timeout: float | None = None) -> Iterator[None]:
        limit = self.timeout if timeout is None else timeout
        if not self._local.acquire(timeout=limit if limit >= 0 else -1):
            raise LockTimeout(f"could not take {self.path.name} within {limit:.0f}s")
        try:
            if self._depth == 0:
                self._acquire_file(limit)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                    os.close(self._fd)
                    self._fd = None
        finally:
            self._local.release()

    def _acquire_file(self, limit: float) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + limit
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise LockTimeout(f"{self.path.name} is held by another process") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
