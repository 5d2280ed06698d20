"""Network exposure rules shared by the two servers (REST and MCP over HTTP).

Both bind 127.0.0.1 by default. Binding any other address without a bearer token is refused
before the socket opens. Tokens are compared in constant time.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .errors import InvalidInput

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
