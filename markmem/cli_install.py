"""``markmem install claude-desktop|claude-code``: write the MCP server entry into the client's config.

The entry runs this very ``markmem`` (an absolute path: Claude Desktop expands no variables) on an
absolute repo path, for one user. The config file is merged, never replaced: other servers and
keys stay as they were; a previous ``markmem`` entry is replaced. The file written and the entry
are printed.

* claude-desktop: ``claude_desktop_config.json`` in ``~/Library/Application Support/Claude/`` (macOS),
  ``%APPDATA%\\Claude\\`` (Windows), else ``~/.config/Claude/``;
* claude-code, ``--scope user`` (default): ``~/.claude.json`` (what ``claude mcp add --scope user`` writes);
* claude-code, ``--scope project``: ``./.mcp.json``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from .cli_common import dumps, json_option, open_memory, repo_option
from .errors import InvalidInput
from .ids import validate_user_id

CLIENTS = ("claude-desktop", "claude-code")


def config_path(client: str, scope: str, home: Path, platform: str = sys.platform) -> Path:
    """Where ``client`` reads its MCP servers from."""
    if client == "claude-code":
        return Path.cwd() / ".mcp.json" if scope == "project" else home / ".claude.json"
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if platform == "win32":
        appdata = os.environ.get("APPDATA")
        return (Path(appdata) if appdata else home / "AppData" / "Roaming") / "Claude" / "claude_desktop_config.json"
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def server_entry(client: str, repo: Path, user_id: str) -> dict[str, Any]:
    """The ``mcpServers.markmem`` entry: this interpreter's markmem, absolute paths, no variables."""
    script = Path(sys.executable).parent / ("markmem.exe" if sys.platform == "win32" else "markmem")
    command, prefix = (str(script), []) if script.exists() else (sys.executable, ["-m", "markmem.cli"])
    entry: dict[str, Any] = {"command": command,
                             "args": [*prefix, "mcp", "--repo", str(repo.resolve()), "--user", user_id]}
    return {"type": "stdio", **entry, "env": {}} if client == "claude-code" else entry


def merge(path: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """The config at ``path`` (or a new one) with ``mcpServers.markmem`` set to ``entry``."""
    config: dict[str, Any] = {}
    if path.exists():
        try:
            config = json.loads(path.read_text("utf-8") or "{}")
        except ValueError as exc:
            raise InvalidInput(f"{path} is not valid JSON ({exc}); fix or move it first") from None
        if not isinstance(config, dict):
            raise InvalidInput(f"{path} does not hold a JSON object; fix or move it first")
    servers = config.get("mcpServers")
    config["mcpServers"] = {**(servers if isinstance(servers, dict) else {}), "markmem": entry}
    return config


def _write(path: Path, config: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.markmem-tmp")
    tmp.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, path)


@click.command()
@click.argument("client", type=click.Choice(CLIENTS))
@repo_option
@click.option("--user", "user_id", envvar="MARKMEM_USER", required=True,
              help="The server's default user [$MARKMEM_USER].")
@click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
              help="claude-code only: ~/.claude.json (user) or ./.mcp.json (project).")
@click.option("--init", "init", is_flag=True, help="Create the repo if it does not exist.")
@click.option("--dry-run", is_flag=True, help="Print what would be written; write nothing.")
@json_option
def install(client: str, repo: Path, user_id: str, scope: str, init: bool, dry_run: bool, as_json: bool) -> None:
    """Add markmem's MCP server to Claude Desktop or Claude Code's config (and print what was written)."""
    validate_user_id(user_id)
    with open_memory(repo, create=init) as mem:  # refuse a missing repo
        root = mem.root
    entry = server_entry(client, root, user_id)
    path = config_path(client, scope, Path.home())
    config = merge(path, entry)
    if not dry_run:
        _write(path, config)
    if as_json:
        click.echo(dumps({"client": client, "path": str(path), "written": not dry_run, "server": entry}))
        return
    click.echo(f"{'would write' if dry_run else 'wrote'} {path}:")
    click.echo(dumps({"mcpServers": {"markmem": entry}}))
    if not dry_run:
        click.echo(f"restart {client.replace('-', ' ').title()} to load it.")
