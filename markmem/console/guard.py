"""The console's access rules: a token, a session cookie, Host and Origin checks, CSRF tokens.

* The server prints ``listening on http://127.0.0.1:PORT/?token=...``. Opening that URL checks
  the token (constant time), sets an HttpOnly SameSite=Strict session cookie and redirects to the
  same page without the token, so it stays out of history and any Referer. Scripts may send
  ``Authorization: Bearer <token>`` instead.
* Host must name this machine (loopback names or the bound address): a DNS-rebinding page cannot
  reach the console. A POST whose Origin (or Sec-Fetch-Site) is another site is refused.
* Every form carries a CSRF token tied to the session; a POST without the right one is refused.
* ``read_only``: every POST is refused (auditors browse, plan and verify; they change nothing).
* Nothing personal goes in a URL: searches, edits and confirmations are POSTed, and the server
  logs no request lines.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

from fastapi import Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from ..serving import is_loopback, token_ok

COOKIE = "markmem_console"
UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # (no-referrer would make Chrome send "Origin: null")
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class Refused(Exception):
    """A request the guard turns away (status and a short reason, never request content)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass
class Guard:
    token: str
    read_only: bool = False
    hosts: frozenset[str] = frozenset({"127.0.0.1", "localhost", "::1"})
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    sessions: set[str] = field(default_factory=set)

    def session_of(self, request: Request) -> str | None:
        """The session (or ``bearer``) this request is authenticated by, or None."""
        sid = request.cookies.get(COOKIE)
        if sid and sid in self.sessions:
            return sid
        if token_ok(request.headers.get("authorization"), self.token):
            return "bearer"
        return None

    def csrf(self, session: str) -> str:
        return hmac.new(self.secret, b"csrf:" + session.encode(), hashlib.sha256).hexdigest()

    def check_csrf(self, request: Request, given: str | None) -> None:
        session = str(request.scope.get("markmem.session", ""))
        if not (session and given and hmac.compare_digest(given, self.csrf(session))):
            raise Refused(403, "missing or wrong CSRF token: reload the page and try again")

    def login(self) -> str:
        if len(self.sessions) > 1000:
            self.sessions.clear()
        sid = secrets.token_urlsafe(32)
        self.sessions.add(sid)
        return sid

    def check_host(self, request: Request) -> None:
        if host_name(request.headers.get("host") or "") not in self.hosts:
            raise Refused(421, "this console answers only to its own address (Host check)")

    def check_origin(self, request: Request) -> None:
        origin = request.headers.get("origin")
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        if origin is not None and origin != own:
            raise Refused(403, "cross-site request refused (Origin check)")
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            raise Refused(403, "cross-site request refused (Sec-Fetch-Site check)")


def host_name(header: str) -> str:
    """``127.0.0.1:8700`` -> ``127.0.0.1``; ``[::1]:8700`` -> ``::1``."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0].lower()
    return (header.rsplit(":", 1)[0] if header.count(":") == 1 else header).lower()


def allowed_hosts(bind: str) -> frozenset[str]:
    """Loopback names, plus the bound address (or, bound to every address, this machine's names)."""
    names = {"127.0.0.1", "localhost", "::1"}
    if bind in ("0.0.0.0", "::"):
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    elif not is_loopback(bind):
        names.add(bind.strip("[]").lower())
    return frozenset(names)


Next = Callable[[Request], Awaitable[Response]]


async def middleware(request: Request, call_next: Next) -> Response:
    guard: Guard = request.app.state.guard
    try:
        guard.check_host(request)
        if request.url.path.startswith("/static/"):
            return _secure(await call_next(request))
        given = request.query_params.get("token")
        if given is not None:
            return _login(request, guard, given)
        session = guard.session_of(request)
        if session is None:
            raise Refused(401, "open the URL that `markmem console` printed (it carries the access token)")
        request.scope["markmem.session"] = session
        if request.method in UNSAFE:
            if guard.read_only:
                raise Refused(403, "this console is read-only (--read-only)")
            guard.check_origin(request)
        started = time.perf_counter()
        response = await call_next(request)
        response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
        return _secure(response)
    except Refused as exc:
        return _secure(PlainTextResponse(f"{exc.status}: {exc}\n", status_code=exc.status))


def _login(request: Request, guard: Guard, given: str) -> Response:
    if not token_ok(f"Bearer {given}", guard.token):
        raise Refused(401, "wrong token: open the URL that `markmem console` printed")
    rest = urlencode([(k, v) for k, v in parse_qsl(request.url.query) if k != "token"])
    response = RedirectResponse(request.url.path + (f"?{rest}" if rest else ""), status_code=303)
    response.set_cookie(COOKIE, guard.login(), httponly=True, samesite="strict", path="/")
    return _secure(response)


def _secure(response: Response) -> Response:
    for key, value in HEADERS.items():
        response.headers.setdefault(key, value)
    return response
