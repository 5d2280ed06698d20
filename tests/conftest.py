"""Shared fixtures: a real git repo in tmp_path, real SQLite; regex PII gate unless a test asks for Presidio."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from markmem import Memory  # noqa: E402
from tests.cluster_fixtures import database_url, pg_server  # noqa: E402,F401  (a real PostgreSQL, for cluster tests)


@pytest.fixture
def tmp_repo(tmp_path: Path) -> Path:
    """An empty folder for a memory repo, with git identity pinned for any manual commits."""
    repo = tmp_path / "memory"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.name", "Test"], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.email", "test@example.com"], check=True)
    return repo


@pytest.fixture
def mem(tmp_repo: Path):
    """A Memory with no background worker (tests call flush()), regex gate, no vectors: fast."""
    m = Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False)
    yield m
    m.close()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


from pg_fixture import pg_conn, pg_url  # noqa: E402,F401  (PostgreSQL for the cluster-mode tests)
