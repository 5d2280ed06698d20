"""REST, MCP (stdio, the SDK's real client) and the web console on a cluster config: each is a real
server process pointed at a real PostgreSQL (pgserver) by ``MARKMEM_DATABASE_URL`` alone, and each
works as it does on the embedded default (issue 14: one setting turns cluster mode on)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from markmem import Memory
from markmem.cluster.layout import shard_dir, shard_of
from tests.cluster_fixtures import FAST, SETTINGS

pytest.importorskip("fastapi")
pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

from tests._console import running_console  # noqa: E402
from tests.test_api import running_api  # noqa: E402


@pytest.fixture
def cluster_env(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A 2-shard cluster with ana and bob compiled; the servers started below inherit the URL."""
    for key, value in {**FAST, "MARKMEM_DATABASE_URL": database_url, "MARKMEM_SHARDS": "2"}.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "cluster"
    with Memory(root, database_url=database_url, shards=2, **SETTINGS) as mem:  # type: ignore[arg-type]
        mem.add("I live in Porto", user_id="ana", occurred_at="2026-01-05T10:00:00Z")
        mem.add("I work as a luthier in Cremona", user_id="bob")
        mem.flush()
    return root


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_rest_on_a_cluster_reads_its_writes_and_forgets(cluster_env: Path) -> None:
    with running_api(cluster_env) as srv, srv.client() as api:
        assert ok(api.get("/doctor"))["cluster"]["shards"] == 2
        added = ok(api.post("/memories", json={"messages": "I play the cello", "user_id": "ana"}), 201)
        found = ok(api.get("/search", params={"query": "cello", "user_id": "ana"}))  # before any compile
        assert added["ids"][0] in [h["id"] for h in found["hits"]]
        porto = ok(api.get("/search", params={"query": "where do I live", "user_id": "ana", "format": "context"}))
        assert "Porto" in porto["pack"]["text"]
        assert ok(api.get("/pages/u/ana/profile/lives-in"))["user_id"] == "ana"
        ok(api.delete("/users/bob", params={"mode": "rewrite"}))
        assert ok(api.get("/users/bob/verify-erasure"))["ok"] is True
        assert ok(api.get("/search", params={"query": "luthier", "user_id": "bob"}))["hits"] == []
    bob = shard_dir(cluster_env, shard_of("bob", 2))
    assert not (bob / "raw" / "u" / "bob").exists() and not (bob / "wiki" / "u" / "bob").exists()


def test_mcp_over_stdio_on_a_cluster(cluster_env: Path) -> None:
    env = {**os.environ, "MARKMEM_REPO": str(cluster_env), "MARKMEM_USER": "ana"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "markmem.mcp_server"], env=env)

    async def scenario() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            ingested = await client.call_tool("wiki_ingest", {"text": "I speak Danish"})
            assert not ingested.is_error, ingested.content
            hits = await client.call_tool("wiki_search", {"query": "Danish", "format": "json"})
            assert not hits.is_error, hits.content
            page = await client.call_tool("wiki_read", {"id": "u/ana/profile/lives-in"})
            assert not page.is_error, page.content
            other = await client.call_tool("wiki_search", {"query": "luthier", "user_id": "bob"})
            assert other.is_error  # the server is scoped to ana, cluster or not
            return {"hits": hits.structured_content["hits"], "page": page.structured_content}  # type: ignore[index]

    out = anyio.run(scenario)
    assert any("Danish" in h["text"] for h in out["hits"])
    assert out["page"]["claims"][0]["value"] == "Porto"


def test_the_console_on_a_cluster_shows_a_users_memory(cluster_env: Path) -> None:
    with running_console(cluster_env, "--token", "cluster-console") as (url, _proc), \
            httpx.Client(base_url=url, follow_redirects=True, timeout=60) as client:
        assert client.get("/?token=cluster-console").status_code == 200
        page = client.get("/users/ana")
        assert page.status_code == 200 and "Porto" in page.text
        assert "luthier" not in page.text  # another user's memory is not on ana's page
        listing = client.get("/")
        assert "ana" in listing.text and "bob" in listing.text
