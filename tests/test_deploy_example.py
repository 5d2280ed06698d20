"""examples/docker-compose.yml, run without Docker: its own commands and environment, as local processes.

Docker cannot run here (no daemon, no image registry), so this test takes the compose file as the
recipe it is: every markmem service's `command` and `environment` are read from the YAML and started
as real processes against a real PostgreSQL (pgserver), with only the host-side differences rewritten
(paths under /data and /remotes move into a temporary folder, the database URL points at the test
server, the API binds a free port). Then the header's two curl lines are replayed: an add through
app1, a search through app2; the workers compile it into the shard repo and push to the bare remote.
If the file names a command, option or variable that markmem does not have, this fails.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from markmem.cluster.layout import shard_of
from tests.cluster_fixtures import FAST, proc_env, stop

COMPOSE = Path(__file__).resolve().parent.parent / "examples" / "docker-compose.yml"
LISTENING = re.compile(r"markmem api listening on (http://\S+)/ \(token: (.+)\)$")
TOKEN = "compose-test-token"


def services() -> dict[str, dict[str, Any]]:
    spec = yaml.safe_load(COMPOSE.read_text("utf-8"))  # PyYAML resolves the file's anchors and `<<` merges
    return {name: svc for name, svc in spec["services"].items() if "build" in svc}


def local(svc: dict[str, Any], url: str, tmp: Path) -> tuple[list[str], dict[str, str]]:
    """The service's command and environment with the container's paths and URL made local."""
    def path(text: str) -> str:
        return text.replace("/data", str(tmp / "data")).replace("/remotes", str(tmp / "remotes"))

    args = [path(a) for a in shlex.split(svc["command"])]
    assert args[0] == "markmem", svc["command"]
    args = [str(Path(sys.executable).parent / "markmem"), *args[1:]]
    if "--port" in args:
        args[args.index("--port") + 1] = "0"  # two replicas on one host: any free port each
    env = {k: path(str(v)) for k, v in svc.get("environment", {}).items()}
    env.update(FAST, MARKMEM_DATABASE_URL=url, MARKMEM_API_TOKEN=TOKEN)  # FAST: regex gate, no model loads
    return args, {**proc_env(url), **env}


def api_url(proc: subprocess.Popen[str]) -> str:
    for line in proc.stdout:  # type: ignore[union-attr]
        if found := LISTENING.match(line.strip()):
            return found.group(1).replace("0.0.0.0", "localhost")
    raise AssertionError(f"the API did not start: {proc.stderr.read()[-2000:]}")  # type: ignore[union-attr]


def test_the_compose_file_runs_as_written(tmp_path: Path, database_url: str) -> None:
    svcs = services()
    assert {"init", "app1", "app2", "worker1", "worker2"} <= set(svcs)
    cmd, env = local(svcs["init"], database_url, tmp_path)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    procs: list[subprocess.Popen[str]] = []
    try:
        urls = []
        for name in ("app1", "app2", "worker1", "worker2"):
            cmd, env = local(svcs[name], database_url, tmp_path)
            procs.append(subprocess.Popen(cmd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            if name.startswith("app"):
                urls.append(api_url(procs[-1]))
        auth = {"Authorization": f"Bearer {TOKEN}"}
        added = httpx.post(f"{urls[0]}/memories", headers=auth, timeout=60,
                           json={"messages": "I live in Porto", "user_id": "alice"})
        assert added.status_code == 201, added.text
        found = httpx.get(f"{urls[1]}/search", headers=auth, params={"query": "Porto", "user_id": "alice"},
                          timeout=60)
        assert found.status_code == 200, found.text
        assert "Porto" in found.text  # read-your-writes across replicas, before any worker compiled it
        shards = int(svcs["init"]["environment"]["MARKMEM_SHARDS"])
        bare = tmp_path / "remotes" / f"shard-{shard_of('alice', shards):02d}.git"
        deadline = time.monotonic() + 90
        while True:  # a worker compiles the intake row into the shard repo and pushes it
            log = subprocess.run(["git", "--git-dir", str(bare), "log", "--all", "--format=%s"],
                                 capture_output=True, text=True)
            if log.returncode == 0 and "u/alice" in log.stdout:
                break
            assert time.monotonic() < deadline, f"nothing pushed to {bare}: {log.stderr or log.stdout}"
            time.sleep(0.5)
        cloned = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", str(bare), str(cloned)], check=True)
        assert any("Porto" in p.read_text("utf-8") for p in cloned.rglob("*.jsonl")), "the raw turn is in the remote"
    finally:
        for proc in procs:
            stop(proc)
    assert all(p.returncode in (0, -15) for p in procs), [(p.args, p.returncode) for p in procs]


def test_the_compose_file_names_only_real_settings() -> None:
    """Every MARKMEM_* variable the file sets is one markmem reads."""
    source = "\n".join(p.read_text("utf-8") for p in (COMPOSE.parent.parent / "markmem").rglob("*.py"))
    names = {k for svc in services().values() for k in svc.get("environment", {})}
    assert names, "the compose file sets no environment"
    for name in names:
        assert f'"{name}"' in source, f"{name} is set in docker-compose.yml but markmem never reads it"


pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
