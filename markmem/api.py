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

Security: binds 127.0.0.1 by default; a non-loopback bind needs a bearer token; with a token,
every endpoint but /health (and the schema) requires it. Destructive calls (forget, hard delete)
need the token even on loopback unless ``allow_unauthenticated_destructive``. Each markmem
error class has one handler mapping it to a 4xx (or 503) with ``{"error", "message", ...}``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, FastAPI, HTTPException, Query, Request, Security
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from . import errors as E
from .config import Settings
from .jsonable import to_jsonable
from .memory import Memory
from .serving import check_bind, token_ok

ERROR_STATUS: dict[type[E.MarkmemError], int] = {
    E.MarkmemError: 400, E.InvalidInput: 422, E.InvalidUserId: 422, E.NotFound: 404, E.PiiBlocked: 422,
    E.GateUnavailable: 503, E.RepoError: 409, E.MalformedPage: 409, E.LockTimeout: 503,
    E.ExtractionError: 502, E.EncryptionError: 409, E.ErasureError: 409,
}
BEARER = HTTPBearer(auto_error=False, description="Required when the server was started with a token.")
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


def _error_body(exc: E.MarkmemError) -> dict[str, Any]:
    body: dict[str, Any] = {"error": type(exc).__name__, "message": str(exc)}
    for attr in ("field", "what", "ident", "entities", "path"):
        if getattr(exc, attr, None) is not None:
            body[attr] = to_jsonable(getattr(exc, attr))
    return body


def _handler(status: int) -> Any:
    async def handle(request: Request, exc: Exception) -> JSONResponse:
        headers = {"Retry-After": "5"} if status == 503 else None
        return JSONResponse(_error_body(exc), status_code=status, headers=headers)  # type: ignore[arg-type]

    return handle


@dataclass(frozen=True)
class Guard:
    """The server's access rules, kept on ``app.state``."""

    token: str | None
    allow_unauthenticated_destructive: bool = False


def memory(request: Request) -> Memory:
    return request.app.state.memory  # type: ignore[no-any-return]


def authorized(request: Request, creds: Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)]) -> bool:
    """With a token configured, every call must show it. Returns whether a valid token was shown."""
    token = request.app.state.guard.token
    if token and not (creds and token_ok(f"Bearer {creds.credentials}", token)):
        raise HTTPException(401, "bearer token required", headers={"WWW-Authenticate": "Bearer"})
    return bool(token)


def destructive(request: Request, has_token: bool) -> None:
    if not has_token and not request.app.state.guard.allow_unauthenticated_destructive:
        raise HTTPException(403, "destructive operations need a bearer token: start the server with --token "
                                 "(or --allow-unauthenticated-destructive on a trusted machine)")


Mem = Annotated[Memory, Depends(memory)]
Token = Annotated[bool, Depends(authorized)]  # cached per request: the router already ran it
router = APIRouter(dependencies=[Depends(authorized)])


@router.post("/memories", status_code=201, tags=["write"])
def add(req: AddRequest, mem: Mem) -> Any:
    messages = req.messages if isinstance(req.messages, str) else [m.model_dump() for m in req.messages]
    return to_jsonable(mem.add(messages, user_id=req.user_id, agent_id=req.agent_id, run_id=req.run_id,
                               metadata=req.metadata, occurred_at=req.occurred_at))


@router.post("/flush", tags=["write"])
def flush(mem: Mem) -> Any:
    return to_jsonable(mem.flush())


@router.get("/search", tags=["read"])
def search(mem: Mem, query: str, user_id: str, top_k: Annotated[int, Query(ge=1, le=1000)] = 5,
           as_of: str | None = None, known_at: str | None = None, format: Literal["json", "context"] = "json",
           explain: bool = False, budget: Annotated[int | None, Query(ge=1, le=100_000)] = None) -> Any:
    return to_jsonable(mem.search(query, user_id=user_id, top_k=top_k, as_of=as_of, known_at=known_at,
                                  format=format, explain=explain, budget=budget))


@router.get("/pages/{id:path}", tags=["read"])
def get(mem: Mem, id: str) -> Any:
    return to_jsonable(mem.get(id))


@router.get("/users/{user_id}/pages", tags=["read"])
def get_all(mem: Mem, user_id: str, type: str | None = None, include_archived: bool = False) -> Any:
    return to_jsonable(mem.get_all(user_id, type=type, include_archived=include_archived))


@router.get("/history/{id:path}", tags=["read"])
def history(mem: Mem, id: str, include_diff: bool = True) -> Any:
    return to_jsonable(mem.history(id, include_diff=include_diff))


@router.get("/users/{user_id}/history", tags=["compliance"])
def user_history(mem: Mem, user_id: str) -> Any:
    return to_jsonable(mem.history(user_id=user_id))


@router.put("/claims/{id:path}", tags=["write"])
def update(mem: Mem, id: str, req: UpdateRequest) -> Any:
    return to_jsonable(mem.update(id, req.text, by=req.by))


@router.delete("/memories/{id:path}", tags=["write"])
def delete(mem: Mem, request: Request, has_token: Token, id: str, hard: bool = False) -> Any:
    if hard:
        destructive(request, has_token)
    return {"id": id, "hard": hard, "commit": mem.delete(id, hard=hard)}


@router.get("/review", tags=["review"])
def review(mem: Mem, user_id: str | None = None) -> Any:
    return to_jsonable(mem.review(user_id))


@router.post("/review/{item_id}", tags=["review"])
def review_decide(mem: Mem, item_id: str, req: DecisionRequest) -> Any:
    return to_jsonable(mem.review_decide(item_id, req.decision, req.text))


@router.delete("/users/{user_id}", tags=["compliance"])
def forget(mem: Mem, request: Request, has_token: Token, user_id: str,
           mode: Literal["scrub", "rewrite", "shred"] = "scrub", dry_run: bool = False) -> Any:
    if not dry_run:
        destructive(request, has_token)
    return to_jsonable(mem.forget(user_id, mode=mode, dry_run=dry_run))


@router.get("/users/{user_id}/verify-erasure", tags=["compliance"])
def verify_erasure(mem: Mem, user_id: str) -> Any:
    return to_jsonable(mem.verify_erasure(user_id))


@router.get("/export", tags=["portability"], responses={200: {"content": {m: {} for m in EXPORT_MEDIA.values()}}})
def export(mem: Mem, to: Literal["jsonl", "mem0", "memory-md", "access"] = "jsonl", user_id: str | None = None) -> Any:
    result = mem.export(user_id, to=to)
    text = getattr(result, "text", None)
    return Response(text, media_type=EXPORT_MEDIA[to]) if isinstance(text, str) else to_jsonable(result)


@router.post("/import", tags=["portability"])
def import_(mem: Mem, body: Annotated[str, Body(media_type="text/plain", description="The file's content.")],
            from_: Annotated[Literal["jsonl", "mem0", "memory-md"], Query(alias="from")] = "jsonl",
            user_id: str | None = None) -> Any:
    with _spooled(body) as path:
        return to_jsonable(mem.import_(path, from_=from_, user_id=user_id))


@router.post("/lint", tags=["lifecycle"])
def lint(mem: Mem, fix: bool = False) -> Any:
    return to_jsonable(mem.lint(fix=fix))


@router.post("/maintenance", tags=["lifecycle"])
def maintenance(mem: Mem, dry_run: bool = False) -> Any:
    return to_jsonable(mem.maintenance(dry_run=dry_run))


@router.post("/reindex", tags=["meta"])
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


def create_app(mem: Memory, *, token: str | None = None, allow_unauthenticated_destructive: bool = False) -> FastAPI:
    """The app over one open Memory; the caller owns (and closes) ``mem``."""
    from . import __version__

    app = FastAPI(title="markmem", version=__version__,
                  description="Chatbot memory as markdown in git: the Memory facade over HTTP.")
    app.state.memory = mem
    app.state.guard = Guard(token, allow_unauthenticated_destructive)
    for cls, status in ERROR_STATUS.items():
        app.add_exception_handler(cls, _handler(status))
    app.add_api_route("/health", health, methods=["GET"], tags=["meta"])
    app.include_router(router)
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
          allow_unauthenticated_destructive: bool = False) -> None:
    """Run the API with uvicorn until interrupted (a background worker compiles new input)."""
    import uvicorn

    check_bind(host, token)
    with Memory(repo, Settings.from_env(repo_path=Path(repo))) as mem:
        app = create_app(mem, token=token, allow_unauthenticated_destructive=allow_unauthenticated_destructive)
        uvicorn.run(app, host=host, port=port, log_level="warning")
