"""Users, a user's memory (pages by type, each with its claim timeline), one page, and history."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ...model import Page
from .. import timeline
from ..render import render
from .common import memory, pager, when

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
def users(request: Request, q: str = "") -> HTMLResponse:
    pages = pager(request, "users")
    limit, offset = pages.window
    found = pages.take(memory(request).users(q or None, limit=limit, offset=offset))  # counts for this page only
    return render(request, "users.html", users=found, q=q, pager=pages)


@router.get("/users/{user_id}", response_class=HTMLResponse)
def user(request: Request, user_id: str, as_of: str = "", known_at: str = "", archived: bool = False) -> HTMLResponse:
    times = {"as_of": when(as_of, "as_of"), "known_at": when(known_at, "known_at")}
    paging = pager(request, "pages")
    limit, offset = paging.window
    pages = paging.take(memory(request).get_all(user_id, include_archived=archived, limit=limit, offset=offset))
    by_type: dict[str, list[dict[str, Any]]] = {}
    for page in pages:
        by_type.setdefault(page.type, []).append(_view(page, **times))
    return render(request, "user.html", user_id=user_id, by_type=by_type, pages=len(pages), as_of=as_of,
                  known_at=known_at, archived=archived, pager=paging)


@router.get("/pages/{page_id:path}", response_class=HTMLResponse)
def page(request: Request, page_id: str, as_of: str = "", known_at: str = "") -> HTMLResponse:
    found = memory(request).get(page_id)
    if not isinstance(found, Page):
        return render(request, "error.html", 404, title="Not a page", message=f"{page_id} is not a page id")
    view = _view(found, when(as_of, "as_of"), when(known_at, "known_at"))
    return render(request, "page.html", p=view, as_of=as_of, known_at=known_at)


@router.get("/history/{page_id:path}", response_class=HTMLResponse)
def history(request: Request, page_id: str) -> HTMLResponse:
    paging = pager(request, "commits")
    limit, offset = paging.window
    commits = paging.take(memory(request).history(page_id, include_diff=True, limit=limit, offset=offset))
    owner = page_id.split("/")[1] if page_id.startswith("u/") else None
    return render(request, "history.html", page_id=page_id, commits=commits, user_id=owner, pager=paging)


@router.get("/users/{user_id}/history", response_class=HTMLResponse)
def user_history(request: Request, user_id: str) -> HTMLResponse:
    paging = pager(request, "history")
    limit, offset = paging.window
    events = paging.take(memory(request).history(user_id=user_id, limit=limit, offset=offset))
    return render(request, "user_history.html", user_id=user_id, events=events, pager=paging)


def _view(page: Page, as_of: datetime | None = None, known_at: datetime | None = None) -> dict[str, Any]:
    """A page with its timeline and the claims that held at ``as_of`` as memory knew them at ``known_at``."""
    now = datetime.now(timezone.utc)
    at, seen = timeline.iso(as_of or now), timeline.iso(known_at) if known_at else None
    held = [c for c in page.claims if c.valid_at(at) and (seen is None or c.known_at(seen))]
    if as_of is None and known_at is None:
        held = list(page.active_claims())
    return {"page": page, "timeline": timeline.layout(page.claims, page.user_id, now, as_of, known_at),
            "held": held, "closed": sum(1 for c in page.claims if not c.active)}
