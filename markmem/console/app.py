"""The console app: ``markmem console`` serves it with uvicorn over one open Memory.

Same process style as the REST API (FastAPI over the facade), but server-rendered HTML with
its few static files shipped in the package: no CDN, no build step, works offline.
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles

from .. import errors as E
from ..config import Settings
from ..jobs import Jobs
from ..memory import Memory
from ..serving import check_bind
from .guard import Guard, Refused, allowed_hosts, middleware
from .render import HERE, render
from .views import erasure, health, review, search, users

STATUS: dict[type[E.MarkmemError], int] = {
    E.MarkmemError: 400, E.InvalidInput: 422, E.InvalidUserId: 422, E.NotFound: 404, E.PiiBlocked: 422,
    E.GateUnavailable: 503, E.LockTimeout: 503, E.ExtractionError: 502, E.TooManyJobs: 429,
}


def create_app(mem: Memory, *, token: str, read_only: bool = False, host: str = "127.0.0.1") -> FastAPI:
    """The console over one open Memory; the caller owns (and closes) ``mem``."""
    app = FastAPI(title="markmem console", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.memory = mem
    app.state.jobs = Jobs()  # lint runs (health view); kept in this process only
    app.state.guard = Guard(token, read_only, allowed_hosts(host))
    app.middleware("http")(middleware)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    for view in (users, search, review, erasure, health):
        app.include_router(view.router)

    @app.exception_handler(E.MarkmemError)
    async def failed(request: Request, exc: E.MarkmemError) -> HTMLResponse:
        status = next(STATUS[cls] for cls in type(exc).__mro__ if cls in STATUS)
        return render(request, "error.html", status, title=type(exc).__name__, message=str(exc))

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> PlainTextResponse:
        return PlainTextResponse(f"{exc.status}: {exc}\n", status_code=exc.status)

    return app


def bind(host: str, port: int) -> socket.socket:
    """Open the listening socket first, so the printed URL carries the real port (``--port 0``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)  # a browser opening the printed URL at once waits in the backlog for uvicorn
    return sock


def serve(repo: str | Path, *, host: str = "127.0.0.1", port: int = 8700, token: str | None = None,
          read_only: bool = False, echo: Callable[[str], None] = print) -> None:
    """Run the console until interrupted; prints ``listening on http://HOST:PORT/?token=...``."""
    import uvicorn

    check_bind(host, token)  # beyond loopback, the operator must choose the token
    token = token or secrets.token_urlsafe(24)
    with Memory(repo, Settings.from_env(repo_path=Path(repo))) as mem:
        app = create_app(mem, token=token, read_only=read_only, host=host)
        sock = bind(host, port)
        shown = f"[{host}]" if ":" in host else host
        echo(f"markmem console{' (read-only)' if read_only else ''}: listening on "
             f"http://{shown}:{sock.getsockname()[1]}/?token={token}")
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        server.run(sockets=[sock])
