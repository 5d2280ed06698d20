"""AsyncMemory mirrors the whole Memory facade (generated, not copied) and runs under asyncio."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest

from markmem import InvalidUserId, Memory, NotFound
from markmem.aio import AsyncMemory, public_methods, public_properties


def test_method_set_equals_memory() -> None:
    assert set(public_methods(AsyncMemory)) == set(public_methods(Memory)) | {"open"}
    assert set(public_properties(AsyncMemory)) == set(public_properties(Memory)) | {"sync"}


@pytest.mark.parametrize("name", public_methods(Memory))
def test_each_method_is_a_coroutine_with_the_same_signature(name: str) -> None:
    method = getattr(AsyncMemory, name)
    assert inspect.iscoroutinefunction(method)
    assert inspect.signature(method) == inspect.signature(getattr(Memory, name))
    assert method.__doc__ and f"Memory.{name}" in method.__doc__


def _open(path: Path) -> AsyncMemory:
    return AsyncMemory(path, pii_engine="regex", vector_model=None)


def test_concurrent_calls_stay_isolated(tmp_path: Path) -> None:
    users = [f"user{i}" for i in range(6)]

    async def scenario() -> None:
        async with await AsyncMemory.open(tmp_path / "m", pii_engine="regex", vector_model=None) as mem:
            added = await asyncio.gather(*(mem.add(f"I live in City{i} and I like dish{i}", user_id=u)
                                           for i, u in enumerate(users) for _ in range(3)))
            assert len({rid for a in added for rid in a.ids}) == 18
            await mem.flush()
            results = await asyncio.gather(*(mem.search(f"City{i} dish{i}", user_id=u) for i, u in enumerate(users)),
                                           *(mem.get_all(u) for u in users), mem.stats())
            hits, pages, stats = results[:6], results[6:12], results[12]
            for i, u in enumerate(users):
                assert hits[i] and all(h.user_id == u for h in hits[i])
                assert all(f"City{i}" in h.text or f"dish{i}" in h.text for h in hits[i])
                assert pages[i] and all(p.user_id == u for p in pages[i])
            assert stats["raw_entries"] == 18 and stats["users"] == 6

    asyncio.run(scenario())


def test_errors_are_the_same_typed_errors(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _open(tmp_path / "m") as mem:
            with pytest.raises(InvalidUserId):
                await mem.search("x", user_id="../etc")
            with pytest.raises(NotFound):
                await mem.get("u/nobody/profile/x")
            bad, good = await asyncio.gather(mem.add("x", user_id="Bad"), mem.add("I like tea", user_id="ok"),
                                             return_exceptions=True)
            assert isinstance(bad, InvalidUserId) and good.user_id == "ok"  # type: ignore[union-attr]

    asyncio.run(scenario())


def test_calls_do_not_block_the_event_loop(tmp_path: Path) -> None:
    async def scenario() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        async with _open(tmp_path / "m") as mem:
            task = asyncio.create_task(ticker())
            for i in range(5):
                await mem.add(f"I work as a pilot number {i}", user_id="ann")
                await mem.flush()  # git commits: real blocking work, off the loop
            task.cancel()
            assert mem.sync.stats()["raw_entries"] == 5 and mem.context.root == (tmp_path / "m").resolve()
        return ticks

    assert asyncio.run(scenario()) > 5
