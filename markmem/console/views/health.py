"""Health: ``doctor`` (gates, tiers, cache, problems), and ``lint`` (issues with their paths) on
request. Lint reads every page, which on a large repo takes seconds, so it runs as a background
job (:mod:`markmem.jobs`): ``/health?lint=true`` starts one and redirects to ``/health?lint=<job>``,
which shows its counts (pages read, pages checked) and reloads itself until the report is there."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ...jobs import Jobs
from ..render import render
from .common import memory

router = APIRouter()


@router.get("/health", response_class=HTMLResponse)
def health(request: Request, lint: str = "") -> Response:
    mem = memory(request)
    jobs: Jobs = request.app.state.jobs
    if lint == "true":
        started = jobs.submit("lint", lambda tick: mem.lint(fix=False, progress=tick))
        return RedirectResponse(f"/health?lint={started.id}", status_code=303)
    job = jobs.get(lint) if lint else None
    running = job is not None and job.state in ("pending", "running")  # polled each second: keep it cheap
    return render(request, "health.html", doctor=None if running else mem.doctor(), job=job,
                  lint=job.result if job is not None and job.state == "done" else None)
