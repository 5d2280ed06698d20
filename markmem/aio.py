"""AsyncMemory: the whole :class:`~markmem.Memory` facade for asyncio, by wrapping the sync core.

Every public method of ``Memory`` becomes a coroutine here that runs the sync method in a worker
thread (:func:`asyncio.to_thread`). The methods are generated from ``Memory`` itself, never
copied by hand, so the two surfaces cannot drift (a test compares the method sets)::

    async with AsyncMemory("chat-memory") as mem:
        await mem.add("I prefer aisle seats", user_id="alice")
        await mem.flush()
        hits = await mem.search("seat", user_id="alice")
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from .memory import Memory


def public_methods(cls: type) -> list[str]:
    """Names of a class's public callables (no leading underscore), properties excluded."""
    return sorted(
        name for name, value in inspect.getmembers(cls)
        if not name.startswith("_") and callable(value) and not isinstance(inspect.getattr_static(cls, name), property)
    )


def public_properties(cls: type) -> list[str]:
    return sorted(name for name, value in vars(cls).items() if isinstance(value, property) and not name.startswith("_"))


class AsyncMemory:
    """Async twin of :class:`Memory`, generated from it. Constructor arguments are Memory's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._sync = Memory(*args, **kwargs)

    @classmethod
    async def open(cls, *args: Any, **kwargs: Any) -> AsyncMemory:
        """Open without blocking the event loop (opening may init git and sync the cache)."""
        self = cls.__new__(cls)
        self._sync = await asyncio.to_thread(Memory, *args, **kwargs)
        return self

    @property
    def sync(self) -> Memory:
        """The wrapped sync facade (for code that is not async)."""
        return self._sync

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    if TYPE_CHECKING:  # the generated coroutines, for type checkers

        def __getattr__(self, name: str) -> Callable[..., Coroutine[Any, Any, Any]]: ...

        async def close(self) -> None: ...


def _coroutine(name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    sync_method = getattr(Memory, name)

    @functools.wraps(sync_method)
    async def method(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self._sync, name), *args, **kwargs)

    method.__doc__ = f"Async :meth:`Memory.{name}` (runs in a worker thread).\n\n{sync_method.__doc__ or ''}".rstrip()
    return method


def _property(name: str) -> property:
    return property(lambda self: getattr(self._sync, name), doc=getattr(Memory, name).__doc__)


for _name in public_methods(Memory):
    setattr(AsyncMemory, _name, _coroutine(_name))
for _name in public_properties(Memory):
    if _name != "sync":
        setattr(AsyncMemory, _name, _property(_name))

__all__ = ["AsyncMemory", "public_methods"]
