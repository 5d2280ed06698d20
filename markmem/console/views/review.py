"""The review queue: each pending item with its raw turn; approve, reject or edit (one commit each)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ..render import Form, render
from .common import memory, pager

router = APIRouter()


@router.get("/review", response_class=HTMLResponse)
def queue(request: Request, user: str = "", done: str = "") -> HTMLResponse:
    mem = memory(request)
    paging = pager(request, "review")
    items = [mem.review_show(i["id"]) for i in paging.slice(mem.review(user or None))]  # a raw turn read per row
    return render(request, "review.html", items=items, user=user, done=done, pager=paging)


@router.post("/review/{item_id}")
def decide(request: Request, item_id: str, f: Form) -> RedirectResponse:
    decision = f.get("decision", "")
    result = memory(request).review_decide(item_id, decision, f.get("text") if decision == "edit" else None)
    back = f"/review?done={decision}:{item_id}:{(result.get('commit') or '')[:10]}"
    if f.get("user"):
        back += f"&user={f['user']}"
    return RedirectResponse(back, status_code=303)
