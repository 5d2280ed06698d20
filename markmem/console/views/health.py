"""Health: ``doctor`` (gates, tiers, cache, problems), and ``lint`` (issues with their paths) on
request: lint reads every page, which on a large repo takes longer than a page view should."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..render import render
from .common import memory

router = APIRouter()


@router.get("/health", response_class=HTMLResponse)
def health(request: Request, lint: bool = False) -> HTMLResponse:
    mem = memory(request)
    return render(request, "health.html", doctor=mem.doctor(), lint=mem.lint(fix=False) if lint else None)
