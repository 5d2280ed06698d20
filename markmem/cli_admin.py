"""``markmem`` admin commands: erasure, review, lifecycle, portability, and the two servers.

Each command parses, makes one Memory call (or starts one server), and prints: a result's
``summary()`` when it has one, else JSON; ``--json`` always prints JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from . import cli_render as render
from .cli_common import Group, busy, counting, dumps, emit, json_option, open_memory, repo_option
from .jsonable import to_jsonable

init_option = click.option("--init", "init", is_flag=True,
                           help="Create the repo if it does not exist (without it, a missing repo is refused).")
FORMATS_OUT = ("jsonl", "mem0", "memory-md", "access")
FORMATS_IN = ("jsonl", "mem0", "memory-md", "chatgpt", "claude")


def _show(result: Any, as_json: bool) -> dict[str, Any] | Any:
    """Print a result (JSON with --json, else its human summary or rendering); return its JSON view
    for exit-code decisions."""
    data = to_jsonable(result)
    if as_json:
        click.echo(dumps(data))
    elif not isinstance(result, (dict, list, tuple, str)) and not callable(getattr(result, "summary", None)) \
            and type(result).__str__ is not object.__str__:
        click.echo(str(result))
    else:
        render.show(result)
    return data


def _failed(data: Any) -> bool:
    """An outcome a CI job must notice: lint issues left, erasure hits found."""
    if not isinstance(data, dict):
        return False
    hits = data.get("hits")
    return data.get("ok") is False or bool(hits if not isinstance(hits, list) else len(hits))


@click.command()
@repo_option
@click.argument("user_id")
@click.option("--mode", type=click.Choice(["scrub", "rewrite", "shred"]), default="scrub", show_default=True,
              help="scrub: delete and commit; rewrite: also purge git history; shred: delete the user's key.")
@click.option("--dry-run", is_flag=True, help="Print the erasure plan; change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
def forget(repo: Path, user_id: str, mode: str, dry_run: bool, yes: bool, as_json: bool) -> None:
    """Erase everything memory holds about USER_ID (plan first with --dry-run)."""
    if not (dry_run or yes):
        click.confirm(f"Erase every memory of {user_id!r} ({mode})? This cannot be undone", abort=True)
    with open_memory(repo) as mem, counting(f"forgetting ({mode})") as tick:
        data = _show(mem.forget(user_id, mode=mode, dry_run=dry_run, progress=tick), as_json)
    sys.exit(1 if _failed(data) else 0)


@click.command(name="verify-erasure")
@repo_option
@click.argument("user_id")
@json_option
def verify_erasure(repo: Path, user_id: str, as_json: bool) -> None:
    """Scan every git object for USER_ID's content; exit 1 on any hit."""
    with open_memory(repo) as mem, busy("scanning git objects"):
        data = _show(mem.verify_erasure(user_id), as_json)
    sys.exit(1 if _failed(data) else 0)


@click.group(cls=Group)
def review() -> None:
    """Pending review items: quarantined inputs and low-confidence facts."""


@review.command(name="list")
@repo_option
@click.option("--user", "user_id", default=None, help="Only this user's items.")
@json_option
def review_list(repo: Path, user_id: str | None, as_json: bool) -> None:
    """List pending review items."""
    with open_memory(repo) as mem:
        items = mem.review(user_id)
    if as_json:
        emit(items, True)
    else:
        render.rows(("item", "user", "kind", "reason"), ((i["id"], i["user_id"], i["kind"], i.get("reason"))
                                                         for i in items), "no pending review items")


@review.command(name="show")
@repo_option
@click.argument("item_id")
@json_option
def review_show(repo: Path, item_id: str, as_json: bool) -> None:
    """Show one pending review item and the (PII-gated) turn it holds."""
    with open_memory(repo) as mem:
        item = mem.review_show(item_id)
    if as_json:
        emit(item, True)
    else:
        render.review_item(item)


def _decide(decision: str, summary: str) -> click.Command:
    @click.command(name=decision, help=summary)
    @repo_option
    @click.argument("item_id")
    @json_option
    def decide(repo: Path, item_id: str, as_json: bool, text: str | None = None) -> None:
        with open_memory(repo) as mem:
            result = mem.review_decide(item_id, decision, text)
        if as_json:
            emit(result, True)
        else:
            render.decision(result)

    return decide


review.add_command(_decide("approve", "Approve ITEM_ID: compile it into the wiki."))
review.add_command(_decide("reject", "Reject ITEM_ID: it is never compiled."))
review.add_command(click.argument("text")(_decide("edit", "Replace ITEM_ID's text with TEXT, then approve it.")))


@click.command()
@repo_option
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@json_option
def maintenance(repo: Path, dry_run: bool, as_json: bool) -> None:
    """Decay, consolidation and retention sweeps (one commit)."""
    with open_memory(repo) as mem, counting("maintenance") as tick:
        _show(mem.maintenance(dry_run=dry_run, progress=tick), as_json)


@click.command()
@repo_option
@click.option("--fix", is_flag=True, help="Fix what is safely fixable (one commit).")
@json_option
def lint(repo: Path, fix: bool, as_json: bool) -> None:
    """Check pages (links, sources, injection text, drift, YAML, validity); exit 1 on issues."""
    with open_memory(repo) as mem, counting("lint") as tick:
        data = _show(mem.lint(fix=fix, progress=tick), as_json)
    sys.exit(1 if _failed(data) else 0)


@click.command()
@repo_option
@click.option("--to", "to", type=click.Choice(FORMATS_OUT), default="jsonl", show_default=True,
              help="jsonl (lossless), mem0, memory-md (Claude Code), access (one user's data-subject export).")
@click.option("--user", "user_id", default=None, help="Only this user (required for access).")
@click.option("--out", type=click.Path(dir_okay=True, path_type=Path), default=None,
              help="Write here instead of stdout.")
@json_option
def export(repo: Path, to: str, user_id: str | None, out: Path | None, as_json: bool) -> None:
    """Export memory: the export itself to stdout, or to --out PATH (then a line saying what was written)."""
    with open_memory(repo) as mem, counting(f"exporting {to}") as tick:
        result = mem.export(user_id, to=to, path=out, progress=tick)
    text = getattr(result, "text", None)
    if out is None and isinstance(text, str) and not as_json:
        click.echo(text, nl=False)
        return
    data = to_jsonable(result)
    if out is not None and isinstance(data, dict):  # the file has the content; print what was written
        data = {k: v for k, v in data.items() if k in ("format", "users", "user_id", "records", "path", "files",
                                                       "summary")}
    if as_json or out is None:  # without --out the output is the export: a JSON document (access)
        emit(data, True)
    else:
        render.exported(data)


@click.command(name="import")
@repo_option
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--from", "from_", type=click.Choice(FORMATS_IN), default="jsonl", show_default=True,
              help="jsonl (a markmem export), mem0 (its JSON export), memory-md (bullets; needs --user), "
                   "chatgpt / claude (their conversations.json; needs --user).")
@click.option("--user", "user_id", default=None,
              help="Only this user's records (the owner, for memory-md, chatgpt and claude).")
@json_option
def import_(repo: Path, path: Path, from_: str, user_id: str | None, as_json: bool) -> None:
    """Import PATH through the canonical store (raw + pages, one commit)."""
    with open_memory(repo, create=True) as mem, counting(f"importing {from_}") as tick:
        result = mem.import_(path, from_=from_, user_id=user_id, progress=tick)
    if as_json:
        emit(result, True)
    else:
        click.echo(f"imported {result.raw} entries, {result.pages} pages, {result.claims} claims, "
                   f"{result.review} review items ({result.skipped} skipped); commit {(result.commit or '-')[:10]}")


@click.command()
@repo_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address (non-loopback needs --token).")
@click.option("--port", default=8000, show_default=True, help="TCP port (0: any free port, named on the "
              "'listening on' line).")
@click.option("--token", envvar="MARKMEM_API_TOKEN", default=None,
              help="Bearer token for every call [$MARKMEM_API_TOKEN]; without it one is generated and printed, "
                   "and guards state-changing calls.")
@click.option("--allow-host", "allow_hosts", multiple=True, help="Another Host name clients may use (repeatable).")
@click.option("--allow-unauthenticated-writes", "--allow-unauthenticated-destructive", "open_writes", is_flag=True,
              help="Let state-changing calls (add, forget, import...) through without the token on loopback.")
@init_option
def api(repo: Path, host: str, port: int, token: str | None, allow_hosts: tuple[str, ...], open_writes: bool,
        init: bool) -> None:
    """Serve the REST API (FastAPI + uvicorn) and print where it listens; OpenAPI at /docs."""
    try:
        from .api import serve
    except ImportError as exc:
        raise click.ClickException(f"the REST API needs the api extra: pip install 'markmem[api]' ({exc})") from None
    with open_memory(repo, create=init):  # refuse a missing repo before the server starts
        pass
    serve(repo, host=host, port=port, token=token, allow_hosts=allow_hosts, allow_unauthenticated_writes=open_writes)


@click.command()
@repo_option
@click.option("--user", "user_id", envvar="MARKMEM_USER", default=None, help="Default user [$MARKMEM_USER].")
@click.option("--any-user", is_flag=True, help="Let tool calls name another user_id (multi-user servers).")
@click.option("--http", "http", is_flag=True, help="Streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address (non-loopback needs --token).")
@click.option("--port", default=8765, show_default=True, help="HTTP port.")
@click.option("--token", envvar="MARKMEM_MCP_TOKEN", default=None, help="HTTP bearer token [$MARKMEM_MCP_TOKEN].")
@init_option
def mcp(repo: Path, user_id: str | None, any_user: bool, http: bool, host: str, port: int, token: str | None,
        init: bool) -> None:
    """Serve the MCP tools (wiki_search, wiki_read, ...) over stdio or streamable HTTP."""
    try:
        from .mcp_server import serve
    except ImportError as exc:
        raise click.ClickException(f"the MCP server needs the mcp extra: pip install 'markmem[mcp]' ({exc})") from None
    serve(repo, user_id=user_id, any_user=any_user, http=http, host=host, port=port, token=token, create=init)


@click.command()
@repo_option
@click.option("--shards", "only", default=None, help="Comma-separated shard numbers to serve (default: any).")
@click.option("--once", is_flag=True, help="Drain what is pending, then exit.")
@json_option
def worker(repo: Path, only: str | None, once: bool, as_json: bool) -> None:
    """Cluster mode: compile shards' PostgreSQL intake into their git repos (needs $MARKMEM_DATABASE_URL)."""
    import signal
    import threading

    shards = None if only is None else [int(s) for s in only.split(",") if s.strip()]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with open_memory(repo) as mem:
        try:
            reports = mem.worker(once=once, shards=shards, stop=stop)
        except KeyboardInterrupt:
            reports = []
    if once:
        emit({"batches": len(reports), "entries": sum(r.entries for r in reports)} if as_json
             else f"compiled {sum(r.entries for r in reports)} entries in {len(reports)} batches", as_json)


COMMANDS = (worker, forget, verify_erasure, review, maintenance, lint, export, import_, api, mcp)


def register(group: click.Group) -> None:
    for command in COMMANDS:
        group.add_command(command)
