"""Background jobs for large ingests (issue 16): REST ``202 + {"job"}`` then ``GET /jobs/{id}``, MCP
``wiki_ingest(background=true)`` then ``wiki_job``; bounded; failures carry a typed error."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from markmem import Memory
from markmem.errors import InvalidInput, NotFound, TooManyJobs
from markmem.jobs import ASYNC_CHARS, Jobs, split

pytest.importorskip("fastapi")
from test_api import running_api  # noqa: E402


def wait(get: Any, job_id: str, timeout: float = 120) -> dict[str, Any]:
    """Poll until the job is done or failed; returns its last state (every state seen is checked)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = get(job_id)
        assert state["state"] in ("pending", "running", "done", "failed"), state
        if state["state"] in ("done", "failed"):
            return state  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still {state}")


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with running_api(tmp_path_factory.mktemp("jobs") / "mem") as srv, srv.client() as client:
        yield client


def poll(api: httpx.Client) -> Any:
    def get(job_id: str) -> dict[str, Any]:
        response = api.get(f"/jobs/{job_id}")
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]

    return get


def test_rest_async_add_goes_pending_to_done_and_is_searchable(api: httpx.Client) -> None:
    response = api.post("/memories?async=true", json={"messages": "I live in Reykjavik", "user_id": "ana"})
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert accepted["state"] in ("pending", "running") and accepted["job"].startswith("j-")  # may have started
    assert response.headers["location"] == accepted["poll"] == f"/jobs/{accepted['job']}"
    done = wait(poll(api), accepted["job"])
    assert done["state"] == "done" and done["error"] is None
    assert done["result"]["pieces"] == 1 and len(done["result"]["ids"]) == 1 and done["result"]["compiled"] >= 1
    assert (done["stage"], done["done"], done["total"]) == ("compile", 1, 1)
    hits = api.get("/search", params={"query": "Reykjavik", "user_id": "ana"}).json()["hits"]
    assert any("Reykjavik" in h["text"] for h in hits)


def test_rest_a_large_body_becomes_a_job_in_pieces(api: httpx.Client) -> None:
    line = "I collect vintage typewriters from Olivetti and Hermes, and I repair them on weekends.\n"
    text = line * (ASYNC_CHARS // len(line) + 50)
    response = api.post("/memories", json={"messages": text, "user_id": "bo"})  # no ?async: the size decides
    assert response.status_code == 202, response.text
    done = wait(poll(api), response.json()["job"])
    assert done["state"] == "done", done
    assert done["result"]["pieces"] >= 5 and len(done["result"]["ids"]) == done["result"]["pieces"]
    assert done["stage"] == "compile"
    hits = api.get("/search", params={"query": "typewriters", "user_id": "bo"}).json()["hits"]
    assert hits


def test_rest_a_small_add_stays_synchronous(api: httpx.Client) -> None:
    response = api.post("/memories", json={"messages": "I like tea", "user_id": "cy"})
    assert response.status_code == 201 and "job" not in response.json()


def test_rest_a_failing_job_reports_a_typed_error(api: httpx.Client) -> None:
    bad = api.post("/memories?async=true", json={"messages": "I like tea", "user_id": "cy", "occurred_at": "soon"})
    assert bad.status_code == 202
    failed = wait(poll(api), bad.json()["job"])
    assert failed["state"] == "failed" and failed["result"] is None
    assert failed["error"]["error"] == "InvalidInput" and failed["error"]["field"] == "occurred_at"


def test_rest_a_bad_user_id_fails_before_any_job(api: httpx.Client) -> None:
    response = api.post("/memories?async=true", json={"messages": "x", "user_id": "../etc"})
    assert response.status_code == 422 and response.json()["error"] == "InvalidUserId"


def test_rest_async_import(api: httpx.Client) -> None:
    lines = "- I speak Icelandic\n- I play the cello\n"
    response = api.post("/import?async=true", json={"text": lines, "from": "memory-md", "user_id": "di"})
    assert response.status_code == 202, response.text
    done = wait(poll(api), response.json()["job"])
    assert done["state"] == "done" and done["kind"] == "import" and done["result"]["users"] == ["di"]
    broken = api.post("/import?async=true", json={"text": "{not json", "from": "jsonl"})
    failed = wait(poll(api), broken.json()["job"])
    assert failed["state"] == "failed" and failed["error"]["error"] == "InvalidInput"


def test_rest_unknown_job_is_404(api: httpx.Client) -> None:
    response = api.get("/jobs/j-000000000000")
    assert response.status_code == 404 and response.json() == {"error": "NotFound", "message":
                                                                "job not found: j-000000000000", "what": "job",
                                                                "ident": "j-000000000000"}


def test_jobs_are_bounded() -> None:
    release = threading.Event()
    jobs = Jobs(max_running=2, max_kept=3)
    first = [jobs.submit("add", lambda tick: release.wait(30)) for _ in range(2)]
    with pytest.raises(TooManyJobs) as refused:
        jobs.submit("add", lambda tick: None)
    assert refused.value.limit == 2
    release.set()
    for job in first:
        wait(lambda i: jobs.get(i).to_json(), job.id)
    finished = []
    for n in range(5):  # each submit trims the finished ones to the newest max_kept
        finished.append(jobs.submit("add", lambda tick, n=n: n))
        assert wait(lambda i: jobs.get(i).to_json(), finished[-1].id)["result"] == n
    kept = [j for j in [*first, *finished] if _exists(jobs, j.id)]
    assert kept == finished[-4:]  # the newest three finished before the last submit, and the last one


def _exists(jobs: Jobs, job_id: str) -> bool:
    try:
        jobs.get(job_id)
    except NotFound:
        return False
    return True


def test_a_job_that_crashes_says_so() -> None:
    jobs = Jobs()

    def broken(tick: Any) -> None:
        raise RuntimeError("boom")

    def invalid(tick: Any) -> None:
        raise InvalidInput("no good", field="text")

    crashed = wait(lambda i: jobs.get(i).to_json(), jobs.submit("add", broken).id)
    assert crashed["error"] == {"error": "InternalError", "message": "RuntimeError: boom"}
    typed = wait(lambda i: jobs.get(i).to_json(), jobs.submit("add", invalid).id)
    assert typed["error"] == {"error": "InvalidInput", "message": "no good", "field": "text"}


def test_split_keeps_every_character_of_content() -> None:
    text = ("word " * 30 + "\n\n") * 40
    pieces = split(text, 500)
    assert all(sum(len(t["content"]) for t in p) <= 500 for p in pieces)
    joined = " ".join(t["content"] for p in pieces for t in p)
    assert joined.split() == text.split()
    turns = [{"role": "user", "content": "a" * 300}, {"role": "assistant", "content": "b" * 300}]
    assert [[t["role"] for t in p] for p in split(turns, 500)] == [["user"], ["assistant"]]
    assert split("", 10) == [[{"role": "user", "content": ""}]]  # the empty text reaches add()'s own check


def test_mcp_background_ingest_and_wiki_job(tmp_repo: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from markmem.mcp_server import build_server

    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        async def scenario() -> None:
            server = build_server(mem, None, any_user=True)
            async with Client(server) as client:
                started = await client.call_tool("wiki_ingest", {"text": "I live in Tromso", "user_id": "eve",
                                                                 "background": True})
                job = started.structured_content
                assert job["state"] in ("pending", "running", "done") and job["job"].startswith("j-")
                for _ in range(600):
                    state = (await client.call_tool("wiki_job", {"job": job["job"], "user_id": "eve"}))
                    if state.structured_content["state"] in ("done", "failed"):
                        break
                    await anyio.sleep(0.1)
                assert state.structured_content["state"] == "done", state.content
                other = await client.call_tool("wiki_job", {"job": job["job"], "user_id": "fay"})
                assert other.is_error and "not found" in json.dumps(other.content[0].text)

        anyio.run(scenario)
        assert any("Tromso" in c.value for p in mem.get_all("eve") for c in p.claims)
