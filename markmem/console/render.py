"""Jinja2 templates (shipped in the package, autoescaped) and the form reader every POST uses."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qsl

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from .guard import Refused

HERE = Path(__file__).parent
ENV = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html", "svg"]),
                  trim_blocks=True, lstrip_blocks=True)
MAX_FORM = 256 * 1024


def _when(value: str | None) -> str:
    """``2026-08-02T09:12:05.123456Z`` -> ``2026-08-02 09:12``."""
    return (value or "")[:16].replace("T", " ")


ENV.filters["when"] = _when


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    guard = request.app.state.guard
    session = request.scope.get("markmem.session")
    context.update(read_only=guard.read_only, csrf=guard.csrf(session) if session else "",
                   path=request.url.path, now=datetime.now(timezone.utc))
    return HTMLResponse(ENV.get_template(template).render(**context), status_code=status)


async def form(request: Request) -> dict[str, str]:
    """The urlencoded body of a POST, after its CSRF token is checked (no multipart needed)."""
    body = await request.body()
    if len(body) > MAX_FORM:
        raise Refused(413, "form too large")
    data = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    request.app.state.guard.check_csrf(request, data.pop("csrf", None))
    return data


Form = Annotated[dict[str, str], Depends(form)]
