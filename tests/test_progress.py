"""Counting progress bars (issue 16): each long command draws a bar with its counts on a terminal's
stderr, and nothing on stdout (``--json`` stays parseable). The commands run in a real child process
whose stderr is a pty; the library side is checked through the ``progress=`` callbacks."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from markmem import Memory

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def _memory(repo: Path) -> Memory:
    return Memory(repo, pii_engine="regex", vector_model=None, background=False, create=True)


@pytest.fixture
def repo(tmp_repo: Path) -> Path:
    with _memory(tmp_repo) as mem:
        for i in range(6):
            mem.add(f"I live in Lisbon number {i}", user_id="ana")
            mem.add(f"My favourite colour is blue {i}", user_id="bo")
        mem.flush()
    return tmp_repo


def cli_on_tty(repo: Path, *args: str) -> tuple[int, str, str]:
    """Run ``markmem ARGS --repo REPO`` with stderr on a pty, stdout on a pipe: (exit, stdout, stderr)."""
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MARKMEM_PII_ENGINE": "regex", "MARKMEM_VECTOR_MODEL": "none",
           "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "markmem.cli", *args, "--repo", str(repo)], env=env,
                            stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    err = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the pty
                return
            if not chunk:
                return
            err.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = proc.communicate(timeout=300)
    reader.join(timeout=30)
    os.close(master)
    return proc.returncode, out.decode(), ANSI.sub(b"", bytes(err)).decode("utf-8", "replace")


def test_lint_bar_counts_pages_and_json_stays_clean(repo: Path) -> None:
    code, out, err = cli_on_tty(repo, "lint", "--json")
    pages = json.loads(out)["pages"]  # stdout is the JSON document and nothing else
    assert code in (0, 1)
    assert "lint pages" in err and f"{pages}/{pages}" in err
    assert "lint check" in err


def test_export_bar_counts_users(repo: Path, tmp_path: Path) -> None:
    code, out, err = cli_on_tty(repo, "export", "--out", str(tmp_path / "all.jsonl"))
    assert code == 0 and "wrote" in out
    assert "exporting jsonl users" in err and "2/2" in err


def test_import_bar_counts_turns(repo: Path, tmp_path: Path) -> None:
    convo = [{"id": "c1", "chat_messages": [
        {"uuid": f"m{i}", "sender": "human", "text": f"I work at Acme number {i}",
         "created_at": f"2026-01-0{i + 1}T10:00:00Z"} for i in range(3)]}]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(convo))
    code, out, err = cli_on_tty(repo, "import", str(path), "--from", "claude", "--user", "cy", "--json")
    assert code == 0, err
    assert json.loads(out)["raw"] == 3
    assert "importing claude turns" in err and "3/3" in err


def test_maintenance_bar_counts_pages(repo: Path) -> None:
    code, out, err = cli_on_tty(repo, "maintenance", "--dry-run", "--json")
    assert code == 0 and isinstance(json.loads(out), dict)
    assert re.search(r"maintenance pages .*?(\d+)/\1", err), err


def test_forget_rewrite_bar_counts_steps_and_history(repo: Path) -> None:
    commits = int(subprocess.run(["git", "-C", str(repo), "rev-list", "--all", "--count"], capture_output=True,
                                 text=True, check=True).stdout)
    code, out, err = cli_on_tty(repo, "forget", "ana", "--mode", "rewrite", "--yes", "--json")
    assert code == 0, out + err
    assert json.loads(out)["ok"] is True
    assert "forgetting (rewrite) steps" in err and "8/8" in err
    found = [int(n) for n, total in re.findall(r"forgetting \(rewrite\) history\s.*?(\d+)/(\d+)", err)
             if int(total) >= commits]
    assert found and max(found) >= commits  # every commit (and the scrub's own) counted


def test_no_bar_without_a_terminal(repo: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "markmem.cli", "lint", "--json", "--repo", str(repo)],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "MARKMEM_PII_ENGINE": "regex",
                               "MARKMEM_VECTOR_MODEL": "none"})
    assert "lint pages" not in proc.stderr
    json.loads(proc.stdout)


def test_library_callbacks_count_up_to_their_totals(repo: Path) -> None:
    seen: list[tuple[str, int, int]] = []

    def tick(stage: str, done: int, total: int) -> None:
        seen.append((stage, done, total))

    with _memory(repo) as mem:
        mem.lint(progress=tick)
        mem.maintenance(progress=tick)
        mem.forget("bo", mode="scrub", progress=tick)
    stages = {s for s, _d, _t in seen}
    assert {"pages", "check", "steps"} <= stages
    for stage in stages:
        last = [(d, t) for s, d, t in seen if s == stage][-1]
        assert last[0] == last[1], (stage, last)
    assert ("steps", 5, 5) in seen
