"""Background jobs for the servers: a large ingest (REST ``POST /memories`` over a threshold or with
``?async=true``, ``POST /import?async=true``; MCP ``wiki_ingest(background=true)``) returns a job id
at once and runs in a thread of the server process, calling Memory in chunks; the client polls
``GET /jobs/{id}`` (MCP ``wiki_job``) for its state, ``done``/``total`` and result or typed error.

Bounded: at most ``max_running`` jobs run at once (one more is :class:`~markmem.errors.TooManyJobs`,
REST 429) and the newest ``max_kept`` finished ones are remembered. Jobs live in the server's
memory only: a restart forgets them (a job cut short by a restart keeps what it had stored: every
chunk it added is durable in the raw log and compiles when the server starts again).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import MarkmemError, NotFound, TooManyJobs
from .ids import now
from .jsonable import to_jsonable
from .memory import Memory

Progress = Callable[[str, int, int], None]
ASYNC_CHARS = 100_000  # an add whose text is longer than this runs as a job (REST: 202 + job id)
CHUNK_CHARS = 20_000  # a job adds the text in pieces of about this size, each gated and stored on its own


@dataclass
class Job:
    id: str
    kind: str  # "add" | "import"
    state: str = "pending"  # pending -> running -> done | failed
    stage: str = ""
    done: int = 0
    total: int = 0
    created: str = field(default_factory=now)
    finished: str | None = None
    result: Any = None
    error: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"job": self.id, "kind": self.kind, "state": self.state, "stage": self.stage, "done": self.done,
                "total": self.total, "created": self.created, "finished": self.finished,
                "result": self.result, "error": self.error}


class Jobs:
    """The jobs of one server process (thread-safe)."""

    def __init__(self, max_running: int = 2, max_kept: int = 100) -> None:
        self.max_running = max_running
        self.max_kept = max_kept
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def submit(self, kind: str, work: Callable[[Progress], Any]) -> Job:
        """Start ``work(progress)`` in a thread; its return value becomes the job's (JSON) result."""
        with self._lock:
            running = sum(1 for j in self._jobs.values() if j.state in ("pending", "running"))
            if running >= self.max_running:
                raise TooManyJobs(self.max_running)
            job = Job("j-" + secrets.token_hex(6), kind)
            self._jobs[job.id] = job
            self._forget_oldest()
        threading.Thread(target=self._run, args=(job, work), name=f"markmem-{job.id}", daemon=True).start()
        return job

    def get(self, job_id: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise NotFound("job", job_id)
        return job

    def _run(self, job: Job, work: Callable[[Progress], Any]) -> None:
        def progress(stage: str, done: int, total: int) -> None:
            job.stage, job.done, job.total = stage, done, total

        job.state = "running"
        try:
            result = to_jsonable(work(progress))
        except MarkmemError as exc:
            field_ = getattr(exc, "field", None)
            job.error = {"error": type(exc).__name__, "message": str(exc), **({"field": field_} if field_ else {})}
            job.state = "failed"
        except Exception as exc:  # a bug: the job says so instead of dying silently in its thread
            job.error = {"error": "InternalError", "message": f"{type(exc).__name__}: {exc}"}
            job.state = "failed"
        else:
            job.result, job.state = result, "done"
        job.finished = now()

    def _forget_oldest(self) -> None:
        finished = [j for j in self._jobs.values() if j.state in ("done", "failed")]
        for old in finished[: max(0, len(finished) - self.max_kept)]:  # dicts keep insertion order
            del self._jobs[old.id]


def add_in_chunks(mem: Memory, messages: str | list[dict[str, Any]], user_id: str, progress: Progress,
                  chunk_chars: int = CHUNK_CHARS, **kw: Any) -> dict[str, Any]:
    """Memory.add over pieces of the input (each gated and stored on its own), then flush(), so the
    job is done when its memories are searchable. Progress: ``("add", pieces, total)``, ``("compile", ...)``."""
    pieces = split(messages, chunk_chars)
    ids: list[str] = []
    masked: set[str] = set()
    quarantined: list[str] = []
    for i, piece in enumerate(pieces, 1):
        added = mem.add(piece, user_id=user_id, **kw)
        ids += added.ids
        masked |= set(added.masked)
        quarantined += added.quarantined
        progress("add", i, len(pieces))
    progress("compile", 0, 1)
    reports = mem.flush()
    progress("compile", 1, 1)
    return {"ids": ids, "pieces": len(pieces), "masked": sorted(masked), "quarantined": quarantined,
            "compiled": sum(r.entries for r in reports)}


def size(messages: str | list[dict[str, Any]]) -> int:
    if isinstance(messages, str):
        return len(messages)
    return sum(len(str(m.get("content", ""))) for m in messages)


def split(messages: str | list[dict[str, Any]], limit: int) -> list[list[dict[str, Any]]]:
    """Turns grouped up to ``limit`` characters; a longer turn is cut at paragraph, then line, then
    space boundaries (a piece is never empty)."""
    turns = [{"role": "user", "content": messages}] if isinstance(messages, str) else messages
    pieces: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    used = 0
    for turn in turns:
        for text in _cut(str(turn.get("content", "")), limit):
            if current and used + len(text) > limit:
                pieces.append(current)
                current, used = [], 0
            current.append({**turn, "content": text})
            used += len(text)
    return [*pieces, current] if current else pieces


def _cut(text: str, limit: int) -> list[str]:
    out: list[str] = []
    while len(text) > limit:
        head = text[:limit]
        at = max(head.rfind("\n\n"), head.rfind("\n"), head.rfind(" "))
        at = at if at > limit // 2 else limit
        piece, text = text[:at].strip(), text[at:].lstrip()
        if piece:
            out.append(piece)
    return [*out, text] if text.strip() or not out else out
