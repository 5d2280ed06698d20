"""Cluster mode on a real PostgreSQL (pgserver) and real git: a running worker keeps its shard
leases between passes (warm repo, no recovery), up to its share of the shards, and gives a lease up
to whoever waits for it (forget)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg

from markmem import Memory
from markmem.cluster.layout import shard_of
from markmem.cluster.lease import holders
from markmem.cluster.worker import Worker
from tests.cluster_fixtures import SETTINGS, pending


def until(check: object, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < end, "timed out"
        time.sleep(0.1)


def running(work: Worker) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    thread = threading.Thread(target=work.run, args=(stop,), kwargs={"idle": 0.05})
    thread.start()
    return stop, thread


def test_a_running_worker_keeps_its_lease_and_gives_it_to_a_forget(tmp_path: Path, database_url: str) -> None:
    from tests.conftest import git

    root = tmp_path / "cluster"
    with Memory(root, database_url=database_url, shards=1, **SETTINGS) as mem:  # type: ignore[arg-type]
        work = Worker(mem._cluster.shards, database_url)  # type: ignore[union-attr]
        stop, thread = running(work)
        try:
            mem.add("I live in Lisbon", user_id="ana")
            until(lambda: pending(database_url) == 0)
            mem.add("I work as a pilot", user_id="ben")
            until(lambda: pending(database_url) == 0)
            with psycopg.connect(database_url, autocommit=True) as conn:
                assert holders(conn) == [0]  # kept between passes
            log = git(root / "shards" / "00", "log", "--format=%s")
            assert "recover" not in log
            mem.forget("ana", mode="rewrite")  # waits for the lease: the worker lets it go
            check = mem.verify_erasure("ana")
            assert check.ok, check.findings[:5]
            mem.add("I have a cat", user_id="ben")
            until(lambda: pending(database_url) == 0)  # taken again, after a recovery check
            assert mem.get("u/ben/profile/job").user_id == "ben"  # type: ignore[union-attr]
        finally:
            stop.set()
            thread.join(timeout=60)
            work.close()
        with psycopg.connect(database_url, autocommit=True) as conn:
            assert holders(conn) == []  # a stopped worker holds nothing


def test_two_running_workers_split_the_shards(tmp_path: Path, database_url: str) -> None:
    root = tmp_path / "cluster"
    users = [f"user{i}" for i in range(40)]
    with Memory(root, database_url=database_url, shards=4, **SETTINGS) as mem:  # type: ignore[arg-type]
        assert {shard_of(u, 4) for u in users} == {0, 1, 2, 3}
        works = [Worker(mem._cluster.shards, database_url) for _ in range(2)]  # type: ignore[union-attr]
        loops = [running(w) for w in works]
        try:
            time.sleep(0.5)  # both registered before the first adds
            for round_ in range(3):
                for u in users:
                    mem.add(f"I live in Town{round_}{u}", user_id=u)
                until(lambda: pending(database_url) == 0)
            assert all(len(w.held) <= 2 for w in works)
            assert not works[0].held & works[1].held
            for u in users[:4]:
                assert [h for h in mem.search(f"Town2{u}", user_id=u)]  # type: ignore[union-attr]
        finally:
            for stop, thread in loops:
                stop.set()
                thread.join(timeout=60)
            for w in works:
                w.close()
