"""What the views share: the open Memory, and time fields as typed in a form."""

from __future__ import annotations

from datetime import datetime, timezone

from fastapi import Request

from ...errors import InvalidInput
from ...memory import Memory


def memory(request: Request) -> Memory:
    return request.app.state.memory  # type: ignore[no-any-return]


def when(value: str | None, field: str) -> datetime | None:
    """A date (``2026-03-01``) or ISO time from a form field; blank is None."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"{field} must be a date (YYYY-MM-DD) or an ISO-8601 time", field=field) from None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
