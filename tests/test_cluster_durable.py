"""Cluster mode on a real PostgreSQL (pgserver) and real git: a worker deletes a batch's intake
rows only after what the batch's commit wrote is fsynced (``cluster/durable.py``): the pack that
holds the commit, the branch ref, git's index, the users' pages and checkpoints."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from markmem import Memory
from markmem.cluster import durable
from markmem.cluster.layout import shard_dir
from markmem.cluster.worker import Worker
from tests.cluster_fixtures import SETTINGS, pending


def pack_objects(idx: Path) -> set[str]:
    out = subprocess.run(["git", "show-index"], input=idx.read_bytes(), capture_output=True, check=True).stdout
    return {line.split()[1].decode() for line in out.splitlines()}


def test_intake_rows_go_only_after_the_commit_is_fsynced(tmp_path: Path, database_url: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cluster"
    seen: list[dict[str, Any]] = []
    real = durable.settle

    def watched(mark: durable.Mark, users: Any) -> int:  # the real fsyncs, with a look around them
        paths = durable.written(mark, users)
        repo = mark.root
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
        seen.append({"pending": pending(database_url), "paths": paths, "head": head, "repo": repo})
        return real(mark, users)

    monkeypatch.setattr(durable, "settle", watched)
    with Memory(root, database_url=database_url, shards=1, **SETTINGS) as mem:  # type: ignore[arg-type]
        mem.add("I live in Lisbon", user_id="ana")
        mem.add("I work as a pilot", user_id="ben")
        work = Worker(mem._cluster.shards, database_url)  # type: ignore[union-attr]
        try:
            assert work.run_once()
            mem.add("I have a cat named Tom", user_id="ana")
            assert work.run_once()  # a second visit by the same worker (no recovery): its users only
        finally:
            work.close()
        assert pending(database_url) == 0
    assert len(seen) == 2
    for visit in seen:
        assert visit["pending"] >= 1  # fsynced while the rows were still in the intake
        repo, paths = visit["repo"], set(visit["paths"])
        packs = [p for p in paths if p.suffix == ".idx"]
        assert any(visit["head"] in pack_objects(p) for p in packs)  # the commit's own pack
        assert repo / ".git" / "refs" / "heads" / "main" in paths
        assert repo / ".git" / "index" in paths
        assert repo / "raw" / "u" / "ana" / "checkpoint.json" in paths
        assert any(str(p).startswith(str(repo / "wiki" / "u" / "ana")) and p.suffix == ".md" for p in paths)
    second = set(seen[1]["paths"])
    assert not any("/ben/" in str(p) for p in second)  # ben was not in the second batch


def test_written_lists_every_users_files_after_a_recovery(tmp_path: Path, database_url: str) -> None:
    root = tmp_path / "cluster"
    with Memory(root, database_url=database_url, shards=1, **SETTINGS) as mem:  # type: ignore[arg-type]
        ctx = mem._cluster.shards.ctx(0)  # type: ignore[union-attr]
        mark = durable.Mark(ctx)
        mem.add("I live in Lisbon", user_id="ana")
        mem.add("I work as a pilot", user_id="ben")
        mem.flush()
        everyone = {str(p) for p in durable.written(mark, None)}
        assert any("/wiki/u/ana/" in p for p in everyone) and any("/wiki/u/ben/" in p for p in everyone)
        assert str(shard_dir(root, 0) / "raw" / "u" / "ben" / "checkpoint.json") in everyone
        only = {str(p) for p in durable.written(mark, ["ana"])}
        assert not any("/ben/" in p for p in only)
        later = durable.Mark(ctx)
        assert not [p for p in durable.written(later, ["ana"]) if p.suffix in (".pack", ".idx")]


def test_settle_flushes_by_syncfs_or_else_path_by_path(tmp_path: Path, database_url: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    root = tmp_path / "cluster"
    with Memory(root, database_url=database_url, shards=1, **SETTINGS) as mem:  # type: ignore[arg-type]
        ctx = mem._cluster.shards.ctx(0)  # type: ignore[union-attr]
        mark = durable.Mark(ctx)
        mem.add("I live in Lisbon", user_id="ana")
        mem.flush()
        if sys.platform.startswith("linux"):
            assert durable.settle(mark, ["ana"]) == 0  # one syncfs
        monkeypatch.setattr(durable, "_LIBC", [None])  # a system without syncfs
        assert durable.settle(mark, ["ana"]) == len(durable.written(mark, ["ana"])) > 3
