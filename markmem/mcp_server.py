"""The MCP server: markmem's memory as tools for Claude and other agents (official ``mcp`` SDK 2.3.x).

Tools (each one Memory call): ``wiki_search`` (search), ``wiki_read`` (get), ``wiki_list``
(get_all), ``wiki_ingest`` (add, then flush), ``wiki_supersede`` (update), ``wiki_history``
(history), ``wiki_review`` (review / review_decide), ``wiki_job`` (a background ingest's state).

A large ``wiki_ingest`` (over 100,000 characters, or ``background=true``) returns a job id at once
and runs in a thread of the server (:mod:`.jobs`); ``wiki_job`` polls it. Jobs are forgotten when
the server restarts (what a job stored stays stored).

A server is bound to a default user (``--user`` / ``MARKMEM_USER``). A tool call that names no
user works on the default user, never on all users; naming another user is refused unless the
server runs with ``--any-user``. Ids passed to read/supersede/history/review must belong to
that user. Library errors become MCP tool errors (``isError``) carrying their message.

    markmem mcp --user alice                     # stdio (Claude Code, Claude Desktop)
    python -m markmem.mcp_server                 # same; MARKMEM_REPO, MARKMEM_USER
    markmem mcp --user alice --http --port 8765  # streamable HTTP on 127.0.0.1:8765/mcp
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from .config import Settings
from .errors import InvalidInput, MarkmemError, NotFound
from .ids import validate_user_id
from .jobs import ASYNC_CHARS, Jobs, add_in_chunks
from .jsonable import to_jsonable
from .memory import Memory
from .model import Page
from .serving import BearerAuth, check_bind, warm_start

INSTRUCTIONS = """markmem is this assistant's long-term memory: plain markdown pages in a git repo.
Search before answering questions about the user (wiki_search); store what the user tells you
about themselves (wiki_ingest); correct a wrong fact with wiki_supersede (history is kept).
Every result cites ids: page ids look like u/<user>/<type>/<slug>, claims c-..., raw turns r-...."""

UserArg = Annotated[str | None, Field(description="User id; omit for the server's default user.")]
IdArg = Annotated[str, Field(description="A page id (u/<user>/<type>/<slug>), claim id (c-...) or raw id (r-...).")]


class Scope:
    """Which users a server may touch: its default user, or any named user with ``any_user``."""

    def __init__(self, default_user: str | None, any_user: bool) -> None:
        if default_user is None and not any_user:
            raise InvalidInput("the MCP server needs a default user: --user or MARKMEM_USER "
                               "(or --any-user, and every call names its user_id)", field="user_id")
        self.default_user = None if default_user is None else validate_user_id(default_user)
        self.any_user = any_user

    def user(self, requested: str | None) -> str:
        if not requested:
            if self.default_user is None:
                raise InvalidInput("user_id is required: this server has no default user", field="user_id")
            return self.default_user
        if not self.any_user and requested != self.default_user:
            raise InvalidInput(f"this server serves user {self.default_user!r} only (start it with --any-user "
                               "to serve others)", field="user_id")
        return validate_user_id(requested)


def _owner(mem: Memory, ident: str, user: str) -> None:
    """Raise NotFound unless ``ident`` belongs to ``user`` (another user's id is never confirmed)."""
    if ident.startswith(("u/", "shared/")):
        owned = ident.startswith(("shared/", f"u/{user}/"))
    else:
        found = mem.get(ident)  # a malformed id is InvalidInput; an unknown one NotFound
        owner = getattr(found, "user_id", None)
        owned = owner == user if owner is not None else any(
            c.id == ident for p in mem.get_all(user, include_archived=True) for c in p.claims)
    if not owned:
        raise NotFound("memory", ident)


def _page_view(page: Page) -> dict[str, Any]:
    return {"id": page.id, "type": page.type, "title": page.title, "updated": page.updated,
            "archived": page.archived,
            "facts": [{"id": c.id, "predicate": c.predicate, "value": c.value, "text": c.text}
                      for c in page.active_claims()]}


READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


class Tools:
    """The tool functions, each one Memory call inside the server's user scope."""

    def __init__(self, mem: Memory, scope: Scope) -> None:
        self.mem = mem
        self.scope = scope
        self.jobs = Jobs()
        self.job_owner: dict[str, str] = {}

    def wiki_search(
        self,
        query: Annotated[str, Field(description="What to look for, in natural language or keywords.")],
        user_id: UserArg = None,
        top_k: Annotated[int, Field(ge=1, le=100, description="How many hits.")] = 5,
        as_of: Annotated[str | None, Field(description="ISO-8601: what was true at that time.")] = None,
        known_at: Annotated[str | None, Field(description="ISO-8601: what memory believed at that time.")] = None,
        format: Annotated[Literal["context", "json"], Field(
            description="context: a cited, token-budgeted text block; json: typed hits.")] = "context",
    ) -> dict[str, Any]:
        user = self.scope.user(user_id)
        result = self.mem.search(query, user_id=user, top_k=top_k, as_of=as_of, known_at=known_at, format=format)
        if format == "context":
            return {"user_id": user, "context": str(result), "cited": list(getattr(result, "cited", ()))}
        return {"user_id": user, "hits": to_jsonable(result)}

    def wiki_read(self, id: IdArg, user_id: UserArg = None) -> dict[str, Any]:
        _owner(self.mem, id, self.scope.user(user_id))
        return to_jsonable(self.mem.get(id))  # type: ignore[no-any-return]

    def wiki_list(
        self,
        user_id: UserArg = None,
        type: Annotated[str | None, Field(description="Only pages of this type (profile, preference, ...).")] = None,
        include_archived: Annotated[bool, Field(
            description="Also list archived pages (deleted softly, or rolled-over history of a fact).")] = False,
    ) -> dict[str, Any]:
        user = self.scope.user(user_id)
        pages = self.mem.get_all(user, type=type, include_archived=include_archived)
        return {"user_id": user, "pages": [_page_view(p) for p in pages]}

    def wiki_ingest(
        self,
        text: Annotated[str, Field(description="What was said, e.g. the user's message.")],
        user_id: UserArg = None,
        role: Annotated[Literal["user", "assistant", "system", "tool", "other"], Field(
            description="Who said it; only the user's own words become facts about the user.")] = "user",
        occurred_at: Annotated[str | None, Field(description="ISO-8601: when it was said/happened.")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="JSON object kept with the entry.")] = None,
        flush: Annotated[bool, Field(description="Compile into pages now (else in the background).")] = True,
        background: Annotated[bool, Field(description="Return a job id at once and ingest in the background "
                                          "(always so for text over 100,000 characters); poll with wiki_job.")
                              ] = False,
    ) -> dict[str, Any]:
        user = self.scope.user(user_id)
        if background or len(text) > ASYNC_CHARS:
            turns = [{"role": role, "content": text}]
            job = self.jobs.submit("add", lambda tick: add_in_chunks(self.mem, turns, user, tick, metadata=metadata,
                                                                     occurred_at=occurred_at))
            self.job_owner[job.id] = user
            return job.to_json()
        added = self.mem.add([{"role": role, "content": text}], user_id=user, metadata=metadata,
                             occurred_at=occurred_at)
        reports = self.mem.flush() if flush else []
        return {**to_jsonable(added), "compiled": to_jsonable(reports)}

    def wiki_job(
        self,
        job: Annotated[str, Field(description="The job id (j-...) a background wiki_ingest returned.")],
        user_id: UserArg = None,
    ) -> dict[str, Any]:
        if self.job_owner.get(job) != self.scope.user(user_id):
            raise NotFound("job", job)
        return self.jobs.get(job).to_json()

    def wiki_supersede(
        self,
        id: Annotated[str, Field(description="The claim (c-...) or single-fact page to correct.")],
        text: Annotated[str, Field(description="The corrected fact.")],
        user_id: UserArg = None,
    ) -> dict[str, Any]:
        _owner(self.mem, id, self.scope.user(user_id))
        return to_jsonable(self.mem.update(id, text, by="agent"))  # type: ignore[no-any-return]  # the model edits

    def wiki_history(
        self,
        id: IdArg,
        user_id: UserArg = None,
        include_diff: Annotated[bool, Field(description="Include each commit's diff of the page (longer).")] = False,
    ) -> dict[str, Any]:
        _owner(self.mem, id, self.scope.user(user_id))
        return {"id": id, "commits": to_jsonable(self.mem.history(id, include_diff=include_diff))}

    def wiki_related(
        self,
        entity: Annotated[str, Field(description="A person, pet, place or organisation the user spoke of "
                                                 "(its name, e.g. 'Maria', or its page id).")],
        user_id: UserArg = None,
    ) -> dict[str, Any]:
        return self.mem.related(self.scope.user(user_id), entity)

    def wiki_review(
        self,
        action: Annotated[Literal["list", "approve", "reject", "edit"], Field(
            description="list pending items, or decide one.")] = "list",
        item_id: Annotated[str | None, Field(description="The review item (v-...) to decide.")] = None,
        text: Annotated[str | None, Field(description="With edit: the corrected text to compile.")] = None,
        user_id: UserArg = None,
    ) -> dict[str, Any]:
        user = self.scope.user(user_id)
        items = self.mem.review(user)
        if action == "list":
            return {"user_id": user, "items": items}
        if not item_id or all(i["id"] != item_id for i in items):
            raise NotFound("review item", str(item_id))
        return to_jsonable(self.mem.review_decide(item_id, action, text))  # type: ignore[no-any-return]


TOOLS: list[tuple[str, str, ToolAnnotations]] = [
    ("wiki_search", "Search the user's memory; returns a cited context block or typed hits.", READ_ONLY),
    ("wiki_read", "Read one page (with its claim ledger), claim or raw turn by id.", READ_ONLY),
    ("wiki_list", "List the user's pages with their current facts.", READ_ONLY),
    ("wiki_ingest", "Store a message in memory (PII-gated, durable); facts are compiled into pages.", WRITES),
    ("wiki_supersede", "Correct a fact: your correction (recorded as the agent's) supersedes the old one, which "
                       "stays in history.", WRITES),
    ("wiki_history", "Git history of a page or claim, with claim-level changes.", READ_ONLY),
    ("wiki_related", "An entity's neighbourhood: who or what a person, pet, place or organisation is related to "
                     "(sister_of, works_at, lives_in, owns ...), each with its page.", READ_ONLY),
    ("wiki_review", "List pending review items (quarantined or uncertain), or approve/reject/edit one.", WRITES),
    ("wiki_job", "State of a background wiki_ingest: pending, running, done (with its result) or failed (with "
                 "the error); done/total of its current stage.", READ_ONLY),
]


def build_server(mem: Memory, user_id: str | None, any_user: bool = False) -> MCPServer:
    """An MCPServer whose tools call ``mem``; transports are chosen by :func:`serve`."""
    from . import __version__

    tools = Tools(mem, Scope(user_id, any_user))
    server = _Server("markmem", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    for name, description, hints in TOOLS:
        server.add_tool(_mapped(getattr(tools, name)), name=name, description=description, annotations=hints)
    return server


class _Server(MCPServer):
    """MCPServer whose argument errors read like markmem's: ``InvalidInput: top_k: ...``, no URL."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                                 for e in cause.errors(include_url=False))
            raise ToolError(f"InvalidInput: {problems}") from None


def _mapped(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Map markmem errors to MCP tool errors, once, for every tool."""

    @functools.wraps(fn)
    def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MarkmemError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from None

    return tool


def serve(repo: str | Path, *, user_id: str | None, any_user: bool = False, http: bool = False,
          host: str = "127.0.0.1", port: int = 8765, token: str | None = None, create: bool = False) -> None:
    """Run until interrupted: stdio by default, streamable HTTP (at ``/mcp``) with ``http=True``.

    A missing repo is refused unless ``create`` (an unexpanded ``${HOME}`` in a client's config
    must not create ``./${HOME}/chat-memory``). Startup is logged to stderr only: on stdio,
    stdout is the protocol. Over HTTP a ``listening on http://...`` line says when it is ready.
    """
    if http:
        check_bind(host, token)
    Scope(user_id, any_user)  # refuse a server with no user scope before opening anything
    with Memory(repo, Settings.from_env(repo_path=Path(repo)), create=create) as mem:
        server = build_server(mem, user_id, any_user)
        warm_start(mem, user_id)  # the scoped user's indexes too: the first tool call costs what a later one does
        who = f"user {user_id}" if user_id else "any user"
        if not http:
            _log(f"markmem MCP server on stdio: repo {mem.root}, {who}; waiting for a client")
            server.run("stdio")
            return
        _serve_http(server, host, port, token, f"repo {mem.root}, {who}")


def _serve_http(server: MCPServer, host: str, port: int, token: str | None, what: str) -> None:
    import uvicorn

    app: Any = server.streamable_http_app(host=host)

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                bound = self.servers[0].sockets[0].getsockname()[1]  # the real port, also for --port 0
                auth = "bearer token required: the --token / $MARKMEM_MCP_TOKEN value" if token else "no token"
                _log(f"markmem MCP server listening on http://{_url_host(host)}:{bound}/mcp ({auth}); {what}")

    config = uvicorn.Config(BearerAuth(app, token) if token else app, host=host, port=port, log_level="warning")
    Announcing(config).run()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _log(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    """``python -m markmem.mcp_server``: the options of ``markmem mcp``, defaults from the environment."""
    import argparse
    import os
    import sys

    env = os.environ
    p = argparse.ArgumentParser(prog="python -m markmem.mcp_server",
                                description="markmem's MCP server (the options of `markmem mcp`).")
    p.add_argument("--repo", default=env.get("MARKMEM_REPO", "."), help="memory repo [$MARKMEM_REPO]")
    p.add_argument("--user", default=env.get("MARKMEM_USER"), help="default user [$MARKMEM_USER]")
    p.add_argument("--any-user", action="store_true", help="let tool calls name another user_id")
    p.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", default=env.get("MARKMEM_MCP_TOKEN"), help="HTTP bearer token [$MARKMEM_MCP_TOKEN]")
    p.add_argument("--init", action="store_true", help="create the repo if missing (else it is refused)")
    a = p.parse_args(argv)
    try:
        serve(a.repo, user_id=a.user, any_user=a.any_user, http=a.http, host=a.host, port=a.port, token=a.token,
              create=a.init)
    except MarkmemError as exc:
        sys.exit(f"Error: {exc}")


if __name__ == "__main__":  # pragma: no cover
    main()
