"""The ``markmem`` command line: each command parses, makes one Memory call, prints.

Every command takes ``--repo PATH`` (default: $MARKMEM_REPO, else the current directory).
Exit codes: 0 success; 1 a library error (its message is printed), lint issues, or erasure
hits; 2 a usage error. Admin commands (forget, review, lint, export, api, mcp...) live in
:mod:`markmem.cli_admin`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from . import cli_admin, cli_install
from . import cli_render as render
from .cli_common import Group, counting, json_option, repo_option
from .cli_common import emit as _emit
from .cli_common import open_memory as _open
from .errors import MarkmemError


class _Group(Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MarkmemError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=_Group, context_settings={"max_content_width": 120})
@click.version_option(package_name="markmem")
def main() -> None:
    """markmem: chatbot memory as plain markdown in a git repo."""


@main.command()
@click.argument("path", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--encryption", is_flag=True, help="Encrypt every user's content (AES-256-GCM, per-user keys).")
@json_option
def init(path: Path, encryption: bool, as_json: bool) -> None:
    """Create (or open) a memory repo at PATH."""
    with _open(path, encryption=encryption, create=True) as mem:
        _emit({"repo": str(mem.root)} if as_json else f"memory repo ready at {mem.root}", as_json)


@main.command()
@repo_option
@click.argument("text", required=False)
@click.option("--user", "user_id", required=True, help="User id (lowercase a-z 0-9 . _ -).")
@click.option("--role", default="user", show_default=True, help="Role of the message.")
@click.option("--occurred-at", default=None, help="When it happened (ISO-8601).")
@click.option("--metadata", default=None, help="JSON object kept with the entry.")
@click.option("--flush/--no-flush", default=True, show_default=True, help="Compile right away.")
@json_option
def add(repo: Path, text: str | None, user_id: str, role: str, occurred_at: str | None, metadata: str | None,
        flush: bool, as_json: bool) -> None:
    """Add TEXT (or stdin) to a user's memory."""
    content = text if text is not None else sys.stdin.read()
    try:
        meta = json.loads(metadata) if metadata else None
    except ValueError:
        raise click.BadParameter("must be a JSON object", param_hint="--metadata") from None
    with _open(repo, create=True) as mem:  # writing creates the repo; reading never does
        result = mem.add([{"role": role, "content": content}], user_id=user_id, metadata=meta, occurred_at=occurred_at)
        if flush:
            mem.flush()
    _emit(result if as_json else _added(result), as_json)


def _added(result: Any) -> str:
    """``added r-1; masked EMAIL_ADDRESS; tagged PERSON; quarantined r-1 (held for review)``."""
    tagged = [e for e in result.pii if e not in result.masked]
    parts = ["added " + ", ".join(result.ids)]
    parts += [f"{what} {', '.join(items)}" for what, items in (("masked", result.masked), ("tagged", tagged)) if items]
    if result.quarantined:
        parts.append(f"quarantined {', '.join(result.quarantined)} (held for review: markmem review)")
    return "; ".join(parts)


@main.command()
@repo_option
@json_option
def flush(repo: Path, as_json: bool) -> None:
    """Compile everything queued into pages (one commit per batch)."""
    with _open(repo) as mem:
        reports = mem.flush()
    _emit(reports if as_json else f"compiled {sum(r.entries for r in reports)} entries in {len(reports)} batches",
          as_json)


@main.command()
@repo_option
@click.argument("query")
@click.option("--user", "user_id", required=True, help="Search within this user only.")
@click.option("-k", "--top-k", default=5, show_default=True, help="How many hits.")
@click.option("--as-of", default=None,
              help="What was true at this time (valid time); a date alone means the end of that day.")
@click.option("--known-at", default=None,
              help="What memory believed at this time (transaction time); a date alone: the end of that day.")
@click.option("--context", "as_context", is_flag=True, help="Print a token-budgeted context pack.")
@click.option("--explain", is_flag=True, help="Include per-lane ranks and weights.")
@json_option
def search(repo: Path, query: str, user_id: str, top_k: int, as_of: str | None, known_at: str | None,
           as_context: bool, explain: bool, as_json: bool) -> None:
    """Search a user's memory."""
    with _open(repo) as mem:
        result = mem.search(query, user_id=user_id, top_k=top_k, as_of=as_of, known_at=known_at,
                            format="context" if as_context else "json", explain=explain)
        found = getattr(result, "cited", result)
        known = bool(found) or bool(mem.get_all(user_id, include_archived=True))
    if as_json:
        _emit(result, True)
    elif not known:
        render.hits([], user_id, has_memories=False)
    elif as_context:
        click.echo(str(result), nl=False)
    else:
        render.hits(result, user_id, has_memories=True)  # type: ignore[arg-type]


@main.command()
@repo_option
@click.argument("ident")
@json_option
def get(repo: Path, ident: str, as_json: bool) -> None:
    """Show a page (u/<user>/<type>/<slug>), claim (c-...) or raw entry (r-...)."""
    with _open(repo) as mem:
        found = mem.get(ident)
    if as_json:
        _emit(found, True)
    else:
        render.obj(found)


@main.command(name="list")
@repo_option
@click.option("--user", "user_id", required=True, help="Whose pages.")
@click.option("--type", "type_", default=None, help="Only this page type.")
@json_option
def list_(repo: Path, user_id: str, type_: str | None, as_json: bool) -> None:
    """List a user's pages."""
    with _open(repo) as mem:
        pages = mem.get_all(user_id, type=type_)
    if as_json:
        _emit(pages, True)
    else:
        render.pages(pages, user_id)


@main.command()
@repo_option
@click.argument("entity")
@click.option("--user", "user_id", required=True, help="Whose entity.")
@json_option
def related(repo: Path, entity: str, user_id: str, as_json: bool) -> None:
    """An entity's relations: a person, pet, place or organisation (by name or page id)."""
    with _open(repo) as mem:
        found = mem.related(user_id, entity)
    if as_json:
        _emit(found, True)
        return
    click.echo(f"{found['title']} ({found['kind']})  {found['id']}")
    for r in found["relations"]:
        arrow = "->" if r["direction"] == "out" else "<-"
        click.echo(f"  {arrow} {r['predicate']:<14} {r['title']} ({r['kind']})  {r['id']}")
    if not found["relations"]:
        click.echo("  (no relations)")


@main.command()
@repo_option
@click.argument("ident", required=False)
@click.option("--user", "user_id", default=None, help="Every operation touching this user.")
@click.option("--no-diff", is_flag=True, help="Leave out the diffs.")
@json_option
def history(repo: Path, ident: str | None, user_id: str | None, no_diff: bool, as_json: bool) -> None:
    """Git history of a page or claim, with claim-level changes."""
    with _open(repo) as mem:
        commits = mem.history(ident, include_diff=not no_diff, user_id=user_id)
    if as_json:
        _emit(commits, True)
    elif user_id:
        render.user_history(commits, user_id)
    else:
        render.commits(commits)


@main.command()
@repo_option
@click.argument("ident")
@click.argument("text")
@json_option
def update(repo: Path, ident: str, text: str, as_json: bool) -> None:
    """Correct a claim (or a single-claim page): a human_edited claim supersedes it."""
    with _open(repo) as mem:
        claim = mem.update(ident, text)
    _emit(claim if as_json else f"recorded {claim.id} (supersedes {claim.supersedes})", as_json)


@main.command()
@repo_option
@click.argument("ident")
@click.option("--hard", is_flag=True, help="Remove instead of archiving/closing.")
@json_option
def delete(repo: Path, ident: str, hard: bool, as_json: bool) -> None:
    """Archive a page / close a claim (or remove it with --hard); one commit."""
    with _open(repo) as mem:
        sha = mem.delete(ident, hard=hard)
    _emit({"id": ident, "commit": sha} if as_json else f"done ({sha[:10] if sha else 'no change'})", as_json)


@main.command()
@repo_option
@json_option
def reindex(repo: Path, as_json: bool) -> None:
    """Rebuild the SQLite cache from the markdown and raw logs."""
    with _open(repo) as mem, counting("indexing") as tick:
        report = mem.reindex(progress=tick)
    if as_json:
        _emit(report, True)
        return
    click.echo(f"indexed {report.raw} raw entries, {report.pages} pages, {report.claims} claims")
    for path, reason in report.problems:
        click.echo(f"problem: {path}: {reason}", err=True)


@main.command()
@repo_option
@json_option
def doctor(repo: Path, as_json: bool) -> None:
    """Check the repo, the cache and which gates/tiers are active (and which fell back)."""
    with _open(repo) as mem:
        report = mem.doctor()
    if as_json:
        _emit(report, True)
    else:
        render.doctor(report)
    if report["problems"] or not report["cache"]["ok"]:
        sys.exit(1)


@main.command()
@repo_option
@json_option
def stats(repo: Path, as_json: bool) -> None:
    """Counts: users, entries, pages, claims, commits, pending work."""
    with _open(repo) as mem:
        data = mem.stats()
    if as_json:
        _emit(data, True)
    else:
        render.pairs(data.items())


@main.command()
@repo_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address (non-loopback needs --token).")
@click.option("--port", default=8700, show_default=True, help="TCP port (0: any free port).")
@click.option("--token", envvar="MARKMEM_CONSOLE_TOKEN", default=None,
              help="Access token [$MARKMEM_CONSOLE_TOKEN]; default: a new random one, printed.")
@click.option("--read-only", is_flag=True, help="Browse, plan and verify only (for auditors): nothing can change.")
def console(repo: Path, host: str, port: int, token: str | None, read_only: bool) -> None:
    """Serve the web console: users, claim timelines, search, review, history, erasure, health."""
    try:
        from .console.app import serve
    except ImportError as exc:
        raise click.ClickException(f"the console needs the console extra: pip install 'markmem[console]' ({exc})"
                                   ) from None
    serve(repo, host=host, port=port, token=token, read_only=read_only, echo=click.echo)


cli_admin.register(main)
main.add_command(cli_install.install)

if __name__ == "__main__":  # pragma: no cover
    main()
