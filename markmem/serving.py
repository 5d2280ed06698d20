"""Network exposure rules shared by the two servers (REST and MCP over HTTP), and their warm start.

Both bind 127.0.0.1 by default. Binding any other address without a bearer token is refused
before the socket opens. Tokens are compared in constant time.
"""

from __future__ import annotations

import ipaddress
import secrets
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .errors import InvalidInput, MarkmemError

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to expose memory on a non-loopback address without a bearer token."""
    if not is_loopback(host) and not token:
        raise InvalidInput(f"binding {host} exposes memory beyond this machine: a bearer token is required "
                           "(--token, or MARKMEM_API_TOKEN / MARKMEM_MCP_TOKEN)", field="token")


def token_ok(header: str | None, token: str) -> bool:
    scheme, _, given = (header or "").partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), token.encode())


class BearerAuth:
    """Pure ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            header = headers.get(b"authorization", b"").decode("latin-1")
            if not token_ok(header, self.token):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                body = b'{"error":"Unauthorized","message":"bearer token required"}'
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_WILDCARD = ("0.0.0.0", "::", "")


def allowed_hosts(bind: str, extra: tuple[str, ...] = ()) -> frozenset[str] | None:
    """Host names a request may name (port ignored): the loopback names, the bound address and
    ``extra``. None (no Host check) for a wildcard bind with no ``extra``: the token guards it."""
    bind = bind.strip("[]").lower()
    if bind in _WILDCARD and not extra:
        return None
    names = {*LOOPBACK_NAMES, *(h.strip("[]").lower() for h in extra)}
    if bind not in _WILDCARD:
        names.add(bind)
    return frozenset(names)


def host_name(value: str) -> str:
    """``example.org:8000`` -> ``example.org``; ``[::1]:80`` -> ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value


def _origin_host(origin: str) -> str | None:
    scheme, sep, rest = origin.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or "/" in rest:
        return None
    return host_name(rest)


def _json_type(value: str) -> bool:
    media = value.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class BrowserGuard:
    """Pure ASGI middleware that keeps web pages out (DNS rebinding, cross-site requests).

    * ``Host`` must name an allowed host, else 421 (a rebound DNS name shows up here);
    * an ``Origin`` header, when sent, must be ``http(s)://<allowed host>[:port]``, else 403;
    * a state-changing request (POST, PUT, PATCH, DELETE) with a body must be ``application/json``,
      else 415: a cross-site "simple" request (text/plain, form) can never reach a handler.
    """

    def __init__(self, app: ASGIApp, hosts: frozenset[str] | None) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            refused = self.refusal(scope)
            if refused is not None:
                await _send_error(send, *refused)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get(b"host")
        if self.hosts is not None and (host is None or host_name(host) not in self.hosts):
            return 421, "MisdirectedRequest", "Host header not allowed (DNS rebinding protection)"
        origin = headers.get(b"origin")
        if origin is not None and (self.hosts is None or _origin_host(origin) not in self.hosts):
            if not (self.hosts is None and host is not None and _origin_host(origin) == host_name(host)):
                return 403, "Forbidden", "cross-origin requests are refused"
        if scope.get("method") in WRITE_METHODS:
            ctype = headers.get(b"content-type")
            has_body = headers.get(b"content-length", "0") not in ("", "0") or b"transfer-encoding" in headers
            if (ctype is not None or has_body) and not _json_type(ctype or ""):
                return 415, "UnsupportedMediaType", "state-changing requests take application/json bodies only"
        return None


async def _send_error(send: Any, status: int, error: str, message: str) -> None:
    import json

    body = json.dumps({"error": error, "message": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def warm_start(mem: Any, user_id: str | None = None) -> None:
    """``Memory.warm`` before the first request, so that request costs what a later one does. A
    failure here (a user's unreadable index) is said on stderr and left to that user's requests:
    the server still starts for everyone else."""
    try:
        mem.warm(user_id)
    except MarkmemError as exc:
        print(f"markmem: warm-up skipped: {exc}", file=sys.stderr, flush=True)
