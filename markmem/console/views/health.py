"""Health: ``doctor`` (gates, tiers, cache, problems) and ``lint`` (issues with their paths)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..render import render
from .common import memory

router = APIRouter()


@router.get("/health", response_class=HTMLResponse)
def health(request: Request) -> HTMLResponse:
    mem = memory(request)
    return render(request, "health.html", doctor=mem.doctor(), lint=mem.lint(fix=False))
