"""Erasure: the forget plan per mode (a dry run), a typed confirmation, the result and the
verification report; and the tombstones of erased users (tokens and counts, no PII)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ...errors import MarkmemError
from ..render import Form, render
from .common import memory

router = APIRouter()
MODES = ("scrub", "rewrite", "shred")


@router.get("/users/{user_id}/forget", response_class=HTMLResponse)
def plan(request: Request, user_id: str, mode: str = "scrub") -> HTMLResponse:
    return _plan_page(request, user_id, mode if mode in MODES else "scrub")


@router.post("/users/{user_id}/forget", response_class=HTMLResponse)
def forget(request: Request, user_id: str, f: Form) -> HTMLResponse:
    mode = f.get("mode", "scrub")
    if f.get("confirm", "").strip() != user_id:
        return _plan_page(request, user_id, mode, 400, "The confirmation did not match the user id: nothing was done.")
    mem = memory(request)
    report = mem.forget(user_id, mode=mode)
    verify = getattr(report, "verify", None) or mem.verify_erasure(user_id)
    return render(request, "forgotten.html", user_id=user_id, mode=mode, report=report, verify=verify)


@router.get("/users/{user_id}/verify-erasure", response_class=HTMLResponse)
def verify(request: Request, user_id: str) -> HTMLResponse:
    report = memory(request).verify_erasure(user_id)
    return render(request, "verify.html", user_id=user_id, verify=report)


@router.get("/erased", response_class=HTMLResponse)
def erased(request: Request) -> HTMLResponse:
    return render(request, "erased.html", stones=memory(request).tombstones())


def _plan_page(request: Request, user_id: str, mode: str, status: int = 200, error: str = "") -> HTMLResponse:
    plan: Any = None
    problem = ""
    try:
        plan = memory(request).forget(user_id, mode=mode, dry_run=True)
    except MarkmemError as exc:  # e.g. shred on a repo without encryption: shown, not a crash
        problem = str(exc)
    return render(request, "forget.html", status, user_id=user_id, mode=mode, modes=MODES, plan=plan,
                  problem=problem, error=error)
