"""history(user_id=...): every operation that touched a user, from the ops log and from git.

Sources, merged newest first:
* ops records naming the user (``user_id``/``users``) or carrying the user's token (tombstones,
  verification records, records redacted by an erasure);
* commits on HEAD whose ``Markmem-Users`` trailer lists the user, whose ``Markmem-User`` trailer is
  the user's token, or that changed a file under the user's folders.

Isolation: other users' ids never appear in the result. Trailers that list several users are
reduced to ``users_in_batch`` (a count); ops records lose their user fields.
"""

from __future__ import annotations

from typing import Any

from ..context import Context
from ..store.repo import iter_ops
from . import gitio, journal, redact

_USER_TRAILERS = ("Markmem-Users", "Markmem-User")


def user_history(ctx: Context, user_id: str, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
    token = journal.user_token(ctx, user_id, create=False)
    events = _ops(ctx, user_id, token) + _commits(ctx, user_id, token)
    events.sort(key=lambda e: (str(e.get("at") or ""), e["source"]), reverse=True)
    return events[offset:None if limit is None else offset + limit]


def _ops(ctx: Context, user_id: str, token: str | None) -> list[dict[str, Any]]:
    out = []
    for rec in iter_ops(ctx.root):
        mine = redact.mentions(rec, user_id) or (token is not None and redact.mentions(rec, token))
        if not mine:
            continue
        event = {k: v for k, v in rec.items() if k not in redact.USER_KEYS}
        event.update(source="ops", user_id=user_id, at=rec.get("at"), op=rec.get("op"))
        if token is not None and redact.mentions(rec, token):
            event["pseudonymised"] = True  # recorded under the token (erasure records, redacted ops)
        out.append(event)
    return out


def _commits(ctx: Context, user_id: str, token: str | None) -> list[dict[str, Any]]:
    if ctx.git.head() is None:
        return []
    touched = _touched(ctx, user_id)
    out = []
    log = ctx.git.run("log", "--format=%x1e%H%x1f%aI%x1f%B", "HEAD")
    for chunk in log.split("\x1e")[1:]:
        sha, when, body = chunk.split("\x1f", 2)
        trailers = _trailers(body)
        users = [u.strip() for u in trailers.get("Markmem-Users", "").split(",") if u.strip()]
        named = user_id in users or (token is not None and trailers.get("Markmem-User") == token)
        if not named and sha not in touched:
            continue
        event: dict[str, Any] = {
            "source": "git", "user_id": user_id, "at": when, "op": trailers.get("Markmem-Op"), "sha": sha,
            "subject": body.splitlines()[0] if body else "",
            "trailers": {k: v for k, v in trailers.items() if k not in _USER_TRAILERS},
            "files": touched.get(sha, []),
        }
        if users:
            event["users_in_batch"] = len(users)
        if token is not None and (token in users or trailers.get("Markmem-User") == token):
            event["pseudonymised"] = True
        out.append(event)
    return out


def _touched(ctx: Context, user_id: str) -> dict[str, list[str]]:
    """Commit -> the user's files it changed (status and path), for commits on HEAD."""
    spec = [p.rstrip("/") for p in gitio.prefixes(user_id)]
    out = ctx.git.run("log", "--format=%x1e%H", "--name-status", "HEAD", "--", *spec)
    found: dict[str, list[str]] = {}
    for chunk in out.split("\x1e")[1:]:
        lines = [ln for ln in chunk.splitlines() if ln.strip()]
        if lines:
            found[lines[0]] = [" ".join(ln.split("\t")) for ln in lines[1:]]
    return found


def _trailers(body: str) -> dict[str, str]:
    found = {}
    for line in body.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.startswith("Markmem-") and " " not in key:
            found[key] = value.strip()
    return found


def tombstones(ctx: Context) -> list[dict[str, Any]]:
    """The erasure records of the ops log, newest first: token, mode, time, counts (never an id or text)."""
    verified = {r.get("erasure"): r for r in iter_ops(ctx.root) if r.get("op") == "forget-verified"}
    out = []
    for rec in iter_ops(ctx.root):
        if rec.get("op") == "forget":
            check = verified.get(rec.get("erasure"))
            out.append({k: rec.get(k) for k in ("erasure", "user", "mode", "at", "requested", "removed")}
                       | {"verified": None if check is None else {"at": check.get("at"), "hits": check.get("hits")}})
    return sorted(out, key=lambda r: str(r.get("at") or ""), reverse=True)
