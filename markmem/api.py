"""The REST API (FastAPI + uvicorn): ``markmem api --port 8000``. OpenAPI at /openapi.json, /docs.

Endpoints mirror the Memory facade, one Memory call each, same names::

    POST   /memories                    add            GET    /review                  review
    POST   /flush                       flush          POST   /review/{item_id}        review_decide
    GET    /search                      search         DELETE /users/{user_id}         forget
    GET    /pages/{id}                  get            GET    /users/{id}/verify-erasure  verify_erasure
    GET    /users/{user_id}/pages       get_all        GET    /export                  export
    GET    /history/{id}                history        POST   /import                  import_
    GET    /users/{user_id}/history     history(user)  POST   /lint, /maintenance      lint, maintenance
    PUT    /claims/{id}                 update         POST   /reindex                 reindex
    DELETE /memories/{id}               delete         GET    /doctor, /stats, /health
    GET    /jobs/{id}                   a background job's state (see below)

Large ingests run as background jobs (:mod:`.jobs`): ``POST /memories`` whose text is over
100,000 characters, or any ``POST /memories`` / ``POST /import`` with ``?async=true``, answers
202 ``{"job": "j-...", "state": "pending", ...}``; ``GET /jobs/{id}`` then gives the state
(pending, running, done, failed), ``done``/``total`` and the result or a typed error. Jobs are
kept in the server process only: a restart forgets them (what a job stored stays stored).

Security (see :mod:`.serving`): binds 127.0.0.1 by default; a non-loopback bind needs a token.
Every request passes a Host allow-list (421) and an Origin check (403); state-changing requests
take JSON bodies only (415). The server always has a bearer token: ``--token`` (then every
endpoint but /health and the docs needs it) or one generated at start and printed on the
"listening on" line (then state-changing calls need it, reads on loopback do not). Errors have
one shape everywhere: ``{"error": <name>, "message": ..., ...}``.
"""
from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import uvicorn
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import errors as E
from . import jobs as background
from .api_docs import mount_docs
from .config import Settings
from .ids import validate_user_id
from .jsonable import to_jsonable
from .memory import Memory
from .serving import BrowserGuard, allowed_hosts, check_bind, token_ok, warm_start

ERROR_STATUS: dict[type[E.MarkmemError], int] = {
    E.MarkmemError: 400, E.InvalidInput: 422, E.InvalidUserId: 422, E.NotFound: 404, E.PiiBlocked: 422,
    E.GateUnavailable: 503, E.RepoError: 409, E.MalformedPage: 409, E.LockTimeout: 503,
    E.ExtractionError: 502, E.EncryptionError: 409, E.ErasureError: 409, E.TooManyJobs: 429,
}
HTTP_ERROR_NAMES = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
                    405: "MethodNotAllowed", 413: "PayloadTooLarge", 415: "UnsupportedMediaType",
                    421: "MisdirectedRequest", 422: "InvalidInput"}
BEARER = HTTPBearer(auto_error=False, description="The token given with --token, or the one printed at start.")
EXPORT_MEDIA = {"jsonl": "application/x-ndjson", "mem0": "application/json", "memory-md": "text/markdown"}
Role = Literal["user", "assistant", "system", "tool", "other"]


class Message(BaseModel):
    role: Role = "user"
    content: str
    name: str | None = Field(None, description="Speaker name (each named speaker is its own subject).")


class AddRequest(BaseModel):
    messages: str | list[Message] = Field(description="A user message, or a list of {role, content} turns.")
    user_id: str
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] | None = Field(None, description="Kept with the entry; travels to claims and hits.")
    occurred_at: str | None = Field(None, description="ISO-8601: when it happened (valid time).")


class UpdateRequest(BaseModel):
    text: str = Field(description="The corrected fact; gated like any input, then supersedes the claim.")
    by: Literal["human", "agent"] = Field("human", description="Who made the edit: a person (human_edited) "
                                          "or an agent acting on its own (agent_inferred).")


class DecisionRequest(BaseModel):
    decision: Literal["approve", "reject", "edit"]
    text: str | None = Field(None, description="With edit: the text to compile instead.")


class ImportRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    text: str = Field(description="The file's content (markmem jsonl, a mem0 JSON export, or memory-md).")
    from_: Literal["jsonl", "mem0", "memory-md"] = Field("jsonl", alias="from")
    user_id: str | None = Field(None, description="With mem0 / memory-md: the user to file it under.")


def _error_body(exc: E.MarkmemError) -> dict[str, Any]:
    body: dict[str, Any] = {"error": type(exc).__name__, "message": str(exc)}
    for attr in ("field", "what", "ident", "entities", "path", "limit"):
        if getattr(exc, attr, None) is not None:
            body[attr] = to_jsonable(getattr(exc, attr))
    return body


def _handler(status: int) -> Any:
    async def handle(request: Request, exc: Exception) -> JSONResponse:
        headers = {"Retry-After": "5"} if status == 503 else None
        return JSONResponse(_error_body(exc), status_code=status, headers=headers)  # type: ignore[arg-type]

    return handle


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    name = HTTP_ERROR_NAMES.get(exc.status_code, "HTTPError")
    return JSONResponse({"error": name, "message": str(exc.detail)}, status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = [{"field": ".".join(str(p) for p in e.get("loc", ())), "message": e.get("msg", "")}
               for e in exc.errors()]
    message = "; ".join(f"{d['field']}: {d['message']}" for d in details) or "invalid request"
    return JSONResponse({"error": "InvalidInput", "message": message, "details": details}, status_code=422)


@dataclass(frozen=True)
class Guard:
    """The server's access rules, kept on ``app.state``. ``token`` is always set: ``reads_need_token``
    when the operator chose it (``--token``), else it was generated and guards writes only."""

    token: str
    reads_need_token: bool = True
    open_writes: bool = False


def memory(request: Request) -> Memory:
    return request.app.state.memory  # type: ignore[no-any-return]


def authorized(request: Request, creds: Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)]) -> bool:
    """Whether a valid token was shown; with ``reads_need_token``, every call must show one."""
    guard: Guard = request.app.state.guard
    shown = bool(creds and token_ok(f"Bearer {creds.credentials}", guard.token))
    if guard.reads_need_token and not shown:
        raise HTTPException(401, "bearer token required", headers={"WWW-Authenticate": "Bearer"})
    return shown


def jobs(request: Request) -> background.Jobs:
    return request.app.state.jobs  # type: ignore[no-any-return]


Mem = Annotated[Memory, Depends(memory)]
Jobs = Annotated[background.Jobs, Depends(jobs)]
Async = Annotated[bool, Query(alias="async", description="Run as a background job: 202 and a job id to poll "
                              "at /jobs/{id}.")]
Token = Annotated[bool, Depends(authorized)]  # cached per request: the router already ran it


def writer(request: Request, has_token: Token) -> None:
    """State-changing calls need the token, also on loopback (unless the operator opened writes)."""
    if not has_token and not request.app.state.guard.open_writes:
        raise HTTPException(401, "state-changing calls need the bearer token printed by `markmem api` at start "
                                 "(or the one given with --token)", headers={"WWW-Authenticate": "Bearer"})


Write = Depends(writer)
router = APIRouter(dependencies=[Depends(authorized)])


@router.post("/memories", status_code=201, tags=["write"], dependencies=[Write],
             responses={202: {"description": "Accepted as a background job (large text, or ?async=true)."}})
def add(req: AddRequest, mem: Mem, queue: Jobs, run_async: Async = False) -> Any:
    messages = req.messages if isinstance(req.messages, str) else [m.model_dump() for m in req.messages]
    kw: dict[str, Any] = {"agent_id": req.agent_id, "run_id": req.run_id, "metadata": req.metadata,
                          "occurred_at": req.occurred_at}
    if run_async or background.size(messages) > background.ASYNC_CHARS:
        user = validate_user_id(req.user_id)  # a bad id fails now, not in the job
        return _accepted(queue.submit("add", lambda tick: background.add_in_chunks(mem, messages, user, tick, **kw)))
    return to_jsonable(mem.add(messages, user_id=req.user_id, **kw))


@router.get("/jobs/{job_id}", tags=["write"])
def job(queue: Jobs, job_id: str) -> Any:
    """A background job: ``state`` pending | running | done | failed, ``done``/``total`` of its current
    ``stage``, then ``result`` or ``error`` (``{"error": <name>, "message": ...}``)."""
    return queue.get(job_id).to_json()


def _accepted(job: background.Job) -> JSONResponse:
    return JSONResponse({**job.to_json(), "poll": f"/jobs/{job.id}"}, status_code=202,
                        headers={"Location": f"/jobs/{job.id}"})


@router.post("/flush", tags=["write"], dependencies=[Write])
def flush(mem: Mem) -> Any:
    return to_jsonable(mem.flush())


@router.get("/search", tags=["read"])
def search(mem: Mem, query: str, user_id: str, top_k: Annotated[int, Query(ge=1, le=1000)] = 5,
           as_of: str | None = None, known_at: str | None = None, format: Literal["json", "context"] = "json",
           explain: bool = False, budget: Annotated[int | None, Query(ge=1, le=100_000)] = None) -> Any:
    """One envelope for both formats: ``{"format", "hits": [...], "pack": null | {text, tokens, ...}}``."""
    found = mem.search(query, user_id=user_id, top_k=top_k, as_of=as_of, known_at=known_at,
                       format=format, explain=explain, budget=budget)
    if isinstance(found, list):
        return {"format": format, "hits": to_jsonable(found), "pack": None}
    pack = to_jsonable(found)
    return {"format": format, "hits": pack.pop("hits"), "pack": pack}


@router.get("/pages/{id:path}", tags=["read"])
def get(mem: Mem, id: str) -> Any:
    return to_jsonable(mem.get(id))


@router.get("/users/{user_id}/pages", tags=["read"])
def get_all(mem: Mem, user_id: str, type: str | None = None, include_archived: bool = False) -> Any:
    return to_jsonable(mem.get_all(user_id, type=type, include_archived=include_archived))


@router.get("/users/{user_id}/related", tags=["read"])
def related(mem: Mem, user_id: str, entity: str) -> Any:
    """An entity's neighbourhood: its relations (sister_of, works_at, lives_in, owns ...), out and in."""
    return mem.related(user_id, entity)


@router.get("/history/{id:path}", tags=["read"])
def history(mem: Mem, id: str, include_diff: bool = True) -> Any:
    return to_jsonable(mem.history(id, include_diff=include_diff))


@router.get("/users/{user_id}/history", tags=["compliance"])
def user_history(mem: Mem, user_id: str) -> Any:
    return to_jsonable(mem.history(user_id=user_id))


@router.put("/claims/{id:path}", tags=["write"], dependencies=[Write])
def update(mem: Mem, id: str, req: UpdateRequest) -> Any:
    return to_jsonable(mem.update(id, req.text, by=req.by))


@router.delete("/memories/{id:path}", tags=["write"], dependencies=[Write])
def delete(mem: Mem, id: str, hard: bool = False) -> Any:
    return {"id": id, "hard": hard, "commit": mem.delete(id, hard=hard)}


@router.get("/review", tags=["review"])
def review(mem: Mem, user_id: str | None = None) -> Any:
    return to_jsonable(mem.review(user_id))


@router.post("/review/{item_id}", tags=["review"], dependencies=[Write])
def review_decide(mem: Mem, item_id: str, req: DecisionRequest) -> Any:
    return to_jsonable(mem.review_decide(item_id, req.decision, req.text))


@router.delete("/users/{user_id}", tags=["compliance"])
def forget(mem: Mem, request: Request, has_token: Token, user_id: str,
           mode: Literal["scrub", "rewrite", "shred"] = "scrub", dry_run: bool = False) -> Any:
    """A dry run only plans (no token needed); the erasure itself needs the token."""
    if not dry_run:
        writer(request, has_token)
    return to_jsonable(mem.forget(user_id, mode=mode, dry_run=dry_run))


@router.get("/users/{user_id}/verify-erasure", tags=["compliance"])
def verify_erasure(mem: Mem, user_id: str) -> Any:
    return to_jsonable(mem.verify_erasure(user_id))


@router.get("/export", tags=["portability"], responses={200: {"content": {m: {} for m in EXPORT_MEDIA.values()}}})
def export(mem: Mem, to: Literal["jsonl", "mem0", "memory-md", "access"] = "jsonl", user_id: str | None = None) -> Any:
    result = mem.export(user_id, to=to)
    text = getattr(result, "text", None)
    return Response(text, media_type=EXPORT_MEDIA[to]) if isinstance(text, str) else to_jsonable(result)


@router.post("/import", tags=["portability"], dependencies=[Write],
             responses={202: {"description": "Accepted as a background job (?async=true)."}})
def import_(mem: Mem, req: ImportRequest, queue: Jobs, run_async: Async = False) -> Any:
    def work(progress: background.Progress | None = None) -> Any:
        with _spooled(req.text) as path:
            return mem.import_(path, from_=req.from_, user_id=req.user_id, progress=progress)

    return _accepted(queue.submit("import", work)) if run_async else to_jsonable(work())


@router.post("/lint", tags=["lifecycle"], dependencies=[Write])
def lint(mem: Mem, fix: bool = False) -> Any:
    return to_jsonable(mem.lint(fix=fix))


@router.post("/maintenance", tags=["lifecycle"], dependencies=[Write])
def maintenance(mem: Mem, dry_run: bool = False) -> Any:
    return to_jsonable(mem.maintenance(dry_run=dry_run))


@router.post("/reindex", tags=["meta"], dependencies=[Write])
def reindex(mem: Mem) -> Any:
    return to_jsonable(mem.reindex())


@router.get("/doctor", tags=["meta"])
def doctor(mem: Mem) -> Any:
    return to_jsonable(mem.doctor())


@router.get("/stats", tags=["meta"])
def stats(mem: Mem) -> Any:
    return to_jsonable(mem.stats())


def health() -> dict[str, str]:
    from . import __version__

    return {"status": "ok", "version": __version__}


def create_app(mem: Memory, *, token: str | None = None, host: str = "127.0.0.1",
               allow_hosts: tuple[str, ...] = (), allow_unauthenticated_writes: bool = False) -> FastAPI:
    """The app over one open Memory, behind :class:`BrowserGuard`; the caller owns (and closes) ``mem``.

    With no ``token`` one is generated (``app.state.guard.token``) and guards state-changing calls."""
    from . import __version__

    app = FastAPI(title="markmem", version=__version__, docs_url=None, redoc_url=None,
                  description="Chatbot memory as markdown in git: the Memory facade over HTTP.")
    app.state.memory = mem
    app.state.jobs = background.Jobs()
    app.state.guard = Guard(token or secrets.token_urlsafe(24), token is not None, allow_unauthenticated_writes)
    for cls, status in ERROR_STATUS.items():
        app.add_exception_handler(cls, _handler(status))
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_api_route("/health", health, methods=["GET"], tags=["meta"])
    mount_docs(app)
    app.include_router(router)
    app.add_middleware(BrowserGuard, hosts=allowed_hosts(host, allow_hosts))  # type: ignore[arg-type]
    return app


@contextmanager
def _spooled(body: str) -> Iterator[str]:
    """The request body in a private temp file for the duration of an import."""
    fd, path = tempfile.mkstemp(prefix="markmem-import-", suffix=".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(body)
        yield path
    finally:
        os.unlink(path)


def serve(repo: str | Path, *, host: str = "127.0.0.1", port: int = 8000, token: str | None = None,
          allow_hosts: tuple[str, ...] = (), allow_unauthenticated_writes: bool = False) -> None:
    """Run the API with uvicorn until interrupted (a background worker compiles new input).

    Prints ``markmem api listening on http://HOST:PORT/ (token: ...)`` once the socket accepts
    connections (``--port 0`` picks a free port; the line names it)."""
    check_bind(host, token)
    with Memory(repo, Settings.from_env(repo_path=Path(repo))) as mem:
        warm_start(mem)  # the read side and the query model, before the first request rather than in it
        app = create_app(mem, token=token, host=host, allow_hosts=allow_hosts,
                         allow_unauthenticated_writes=allow_unauthenticated_writes)
        shown = "as given with --token" if token else app.state.guard.token
        server = _AnnouncingServer(uvicorn.Config(app, host=host, port=port, log_level="warning"), shown)
        server.run()


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's Server, printing the 'listening on' line once the sockets are bound."""

    def __init__(self, config: uvicorn.Config, token_text: str) -> None:
        super().__init__(config)
        self.token_text = token_text

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started and self.servers:
            bound = self.servers[0].sockets[0].getsockname()
            name = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
            print(f"markmem api listening on http://{name}:{bound[1]}/ (token: {self.token_text})", flush=True)
