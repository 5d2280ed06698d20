"""The open repo's parts, built once by :class:`markmem.Memory` and handed to each layer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .config import Settings
from .index.cache import Cache
from .ports import Embedder, Extractor, PiiScanner
from .store.codec import Codec
from .store.git import Git
from .store.lock import FileLock
from .write.queue import Queue


@dataclass
class Context:
    settings: Settings
    root: Path
    git: Git
    codec: Codec
    cache: Cache
    queue: Queue
    write_lock: FileLock  # compile, commit, erase, edit: one writer at a time, across processes
    append_lock: FileLock  # raw appends (short)
    scanner: PiiScanner
    extractor: Extractor
    detect_injection: Callable[[str], str | None] | None = None
    embedder: Embedder | None = None
    warnings: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    def scoped(self, user_id: str) -> Context:
        """This context with ``cache`` set to the file that holds the user's rows (itself, unless
        the cache is split per user): for code that reads one user's rows."""
        cache = self.cache.user(user_id)
        return self if cache is self.cache else replace(self, cache=cache)
