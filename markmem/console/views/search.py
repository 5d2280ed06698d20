"""Search a user's memory with ``explain``, and the context pack exactly as a chatbot gets it.

The query is POSTed (it is free text, possibly personal: it never goes in a URL)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..render import Form, render
from .common import memory, when

router = APIRouter()


@router.get("/users/{user_id}/search", response_class=HTMLResponse)
def search_form(request: Request, user_id: str) -> HTMLResponse:
    return render(request, "search.html", user_id=user_id, f={"top_k": "5"}, hits=None, pack=None)


@router.post("/users/{user_id}/search", response_class=HTMLResponse)
def search(request: Request, user_id: str, f: Form) -> HTMLResponse:
    mem, query = memory(request), f.get("q", "")
    args: dict[str, Any] = {"user_id": user_id, "as_of": when(f.get("as_of"), "as_of"),
                            "known_at": when(f.get("known_at"), "known_at"), "top_k": _int(f.get("top_k"), 5)}
    hits = mem.search(query, explain=True, **args)
    pack = mem.search(query, format="context", budget=_int(f.get("budget"), 0) or None, **args)
    return render(request, "search.html", user_id=user_id, f=f, hits=hits, pack=pack)


def _int(value: str | None, default: int) -> int:
    try:
        return int(value or default)
    except ValueError:
        return default
