"""Starting the servers as a new user would: a missing repo is refused, startup is logged to stderr
(stdout is the stdio protocol), HTTP says where it listens, argument errors read cleanly, and
``markmem install`` writes a client config (against a temporary HOME)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

from markmem import Memory  # noqa: E402
from markmem.cli import main  # noqa: E402

MARKMEM = str(Path(sys.executable).parent / "markmem")
FAST = {"MARKMEM_PII_ENGINE": "regex", "MARKMEM_VECTOR_MODEL": "none"}


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, **FAST, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), **extra}


@pytest.mark.parametrize("command", ["mcp", "api"])
def test_servers_refuse_a_missing_repo_unless_init(tmp_path: Path, command: str) -> None:
    literal = tmp_path / "${HOME}" / "chat-memory"  # what an unexpanded config variable looks like
    result = CliRunner(env={**FAST, "MARKMEM_USER": "alice"}).invoke(main, [command, "--repo", str(literal)])
    assert result.exit_code == 1 and "not a markmem memory repo" in result.output
    assert not (tmp_path / "${HOME}").exists()


def test_stdio_logs_its_startup_to_stderr_only(tmp_path: Path) -> None:
    repo = tmp_path / "mem"
    run = subprocess.run([MARKMEM, "mcp", "--repo", str(repo), "--user", "alice", "--init"], env=env(),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""  # stdout belongs to the protocol
    assert f"markmem MCP server on stdio: repo {repo.resolve()}, user alice" in run.stderr
    assert (repo / ".markmem-schema").exists()  # --init created it


def test_http_prints_where_it_listens_and_errors_carry_no_url(tmp_path: Path) -> None:
    cmd = [MARKMEM, "mcp", "--repo", str(tmp_path / "mem"), "--init", "--user", "alice", "--http", "--port", "0",
           "--token", "tok"]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()  # type: ignore[union-attr]
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+/mcp) \(bearer token required", line)
        assert found, line
        url = found.group(1)

        async def scenario() -> None:
            http = create_mcp_http_client(headers={"Authorization": "Bearer tok"})
            async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client:
                bad = await client.call_tool("wiki_search", {"query": "x", "top_k": 1000})
                assert bad.is_error
                text = bad.content[0].text  # type: ignore[union-attr]
                assert text.startswith("InvalidInput: top_k: ") and "http" not in text, text
                missing = await client.call_tool("wiki_search", {})
                assert missing.content[0].text == "InvalidInput: query: Field required"  # type: ignore[union-attr]

        anyio.run(scenario)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("client,where", [
    ("claude-desktop", ".config/Claude/claude_desktop_config.json"),
    ("claude-code", ".claude.json"),
])
def test_install_writes_the_client_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, client: str,
                                          where: str) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(sys, "platform", "linux")
    config = home / where
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}))
    repo = tmp_path / "mem"
    runner = CliRunner(env=FAST)
    refused = runner.invoke(main, ["install", client, "--repo", str(repo), "--user", "alice"])
    assert refused.exit_code == 1 and "not a markmem memory repo" in refused.output
    result = runner.invoke(main, ["install", client, "--repo", str(repo), "--user", "alice", "--init"])
    assert result.exit_code == 0, result.output
    assert f"wrote {config}" in result.output and str(repo.resolve()) in result.output
    written = json.loads(config.read_text())
    assert written["theme"] == "dark" and written["mcpServers"]["other"] == {"command": "x"}
    entry = written["mcpServers"]["markmem"]
    assert entry["args"][-5:] == ["mcp", "--repo", str(repo.resolve()), "--user", "alice"]
    assert Path(entry["command"]).is_absolute() and "${" not in json.dumps(entry)
    # the written command starts a server that answers (run as the client would, stdin closed)
    run = subprocess.run([entry["command"], *entry["args"]], env=env(), stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "user alice" in run.stderr, run.stderr
    with Memory(repo, pii_engine="regex", vector_model=None, background=False) as mem:
        assert mem.get_all("alice") == []


def test_install_dry_run_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    Memory(tmp_path / "mem", pii_engine="regex", vector_model=None, background=False).close()
    result = CliRunner(env=FAST).invoke(main, ["install", "claude-code", "--repo", str(tmp_path / "mem"),
                                               "--user", "alice", "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["written"] is False
    assert not (tmp_path / "home").exists()
