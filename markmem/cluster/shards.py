"""Open shard repos on demand, each an ordinary :class:`~markmem.context.Context`.

Every shard shares one PII scanner, injection guard, extractor and embedder (Presidio and the
vector model load once per process, not once per shard).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from ..config import Settings
from ..context import Context
from ..errors import RepoError
from ..setup import build_context, sync_cache
from ..store.codec import Codec
from .layout import remote_url, shard_dir


class ShardSet:
    def __init__(self, settings: Settings, root: Path, count: int) -> None:
        self.settings = settings
        self.root = root
        self.count = count
        self._open: dict[int, Context] = {}
        self._lock = threading.Lock()
        self._shared: Context | None = None

    def ctx(self, shard: int) -> Context:
        """The shard's context, brought up to date with commits other processes made."""
        ctx, built = self._get(shard)
        if not built:
            sync_cache(ctx)
        return ctx

    def codec(self, shard: int) -> Codec:
        """How the shard seals a user's content (its keys when encryption is on); no git work."""
        return self._get(shard)[0].codec

    def _get(self, shard: int) -> tuple[Context, bool]:
        with self._lock:
            ctx = self._open.get(shard)
            if ctx is None:
                ctx = self._open[shard] = self._build(shard)
                return ctx, True
        return ctx, False

    def _build(self, shard: int) -> Context:
        path = shard_dir(self.root, shard)
        if not path.is_dir():
            raise RepoError(f"shard repo {path} is missing")
        own = self.settings.with_(repo_path=path, database_url=None, create=False, background=False)
        ctx = build_context(own)
        if self._shared is None:
            self._shared = ctx
            return ctx
        s = self._shared
        return replace(ctx, scanner=s.scanner, extractor=s.extractor, embedder=s.embedder,
                       detect_injection=s.detect_injection)

    def any(self) -> Context:
        """A context for work that is the same on every shard (the gate)."""
        return self._shared if self._shared is not None else self.ctx(0)

    def remote(self, shard: int) -> str | None:
        return remote_url(self.settings.remote, shard)

    def close(self) -> None:
        with self._lock:
            for ctx in self._open.values():
                ctx.cache.close()
                ctx.queue.close()
            self._open.clear()
