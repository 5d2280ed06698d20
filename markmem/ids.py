"""Ids, user-id validation and time stamps. Nothing here touches disk."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import date, datetime, timezone

from .errors import InvalidInput, InvalidUserId

_USER_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_PAGE_ID_RE = re.compile(r"(u/[a-z0-9][a-z0-9._-]{0,63}|shared)(/[a-z0-9][a-z0-9._-]{0,63}){2}")


def validate_user_id(user_id: object) -> str:
    """Return the id unchanged if valid, else raise :class:`InvalidUserId`.

    Ids are lowercase so that a case-insensitive filesystem can never merge two users
    (``alice`` vs ``ALICE``); no path separators, no ``..``, no leading dot, no control chars.
    """
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidUserId("user_id is required (an empty id is never a global scope)", user_id=user_id)
    if ".." in user_id or not _USER_RE.fullmatch(user_id):
        hint = " (ids are lowercase)" if _USER_RE.fullmatch(user_id.lower()) else ""
        raise InvalidUserId(
            "invalid user_id: use 1-64 chars of a-z 0-9 . _ - starting with a letter or digit" + hint,
            user_id=user_id,
        )
    return user_id


def validate_page_id(page_id: object) -> str:
    if not isinstance(page_id, str) or not _PAGE_ID_RE.fullmatch(page_id) or ".." in page_id:
        raise InvalidInput(f"invalid page id: {page_id!r} (expected u/<user>/<type>/<slug>)", field="id")
    return page_id


def short_hash(*parts: str, n: int = 10) -> str:
    h = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=16)
    return h.hexdigest()[:n]


def new_raw_id() -> str:
    return "r-" + secrets.token_hex(6)


def new_batch_id() -> str:
    return "b-" + secrets.token_hex(5)


def claim_id(raw_id: str, subject: str, predicate: str, value: str) -> str:
    """Deterministic: recompiling the same raw entry yields the same claim (idempotent)."""
    return "c-" + short_hash(raw_id, subject, predicate, value.casefold())


def now() -> str:
    return format_time(datetime.now(timezone.utc))


def format_time(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    dt = dt.astimezone(timezone.utc)
    # strftime's "%Y-%m-%dT%H:%M:%S.%fZ" (but %Y is not zero-padded before 1000), at half its cost: every add() stamps
    return (f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
            f".{dt.microsecond:06d}Z")


def parse_time(value: object, *, field: str = "time") -> str:
    """Accept a datetime, a date string or an ISO-8601 string; return canonical UTC text."""
    try:
        if isinstance(value, datetime):
            return format_time(value)
        if isinstance(value, str) and value.strip():
            text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
            return format_time(datetime.fromisoformat(text))
    except (ValueError, OverflowError):  # not ISO-8601, or out of datetime's range once in UTC
        pass
    raise InvalidInput(f"{field} must be an ISO-8601 time or datetime, got {value!r}", field=field)


_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_moment(value: object, *, field: str = "time") -> str:
    """:func:`parse_time` for the moment a question is asked of memory (``as_of``, ``known_at``): a
    calendar date alone (``"2023-05-27"``, a ``date``) means the end of that day, so "what was true
    on May 27" includes what was said that day (at midnight it hid the whole day)."""
    if isinstance(value, date) and not isinstance(value, datetime):
        value = value.isoformat()
    if isinstance(value, str) and _DATE_ONLY.fullmatch(value.strip()):
        return parse_time(value.strip() + "T23:59:59.999999+00:00", field=field)
    return parse_time(value, field=field)


OCCURRED_MIN, OCCURRED_MAX = "1900-01-01T00:00:00.000000Z", "2200-01-01T00:00:00.000000Z"


def parse_occurred(value: object, *, field: str = "occurred_at") -> str:
    """:func:`parse_time` bounded to [1900-01-01, 2200-01-01): the range of a life's events and plans;
    year 1 or 9999 is a caller's bug (a zero date, a sentinel), not a memory."""
    text = parse_time(value, field=field)
    if not OCCURRED_MIN <= text < OCCURRED_MAX:
        raise InvalidInput(f"{field} must lie between {OCCURRED_MIN[:10]} and {OCCURRED_MAX[:10]} "
                           f"(exclusive), got {text}", field=field)
    return text


_ARTICLE = re.compile(r"^(?:the|a|an|my|our)\s+", re.IGNORECASE)


def entity_key(name: str) -> str:
    """A name as entities are matched: case, spacing and a leading article ignored."""
    return " ".join(_ARTICLE.sub("", name.strip()).casefold().split())


def entity_page_id(user_id: str, name: str) -> str:
    """``u/<user>/entity/self`` for the user, else ``e-<hash of the name>``: never user text."""
    if name == user_id:
        return f"u/{user_id}/entity/self"
    return f"u/{user_id}/entity/e-{short_hash(entity_key(name), n=10)}"


# Relations an entity has one of at a time (a new one supersedes); others add ("owns", "sister_of").
SINGLE_RELATIONS = frozenset({"lives_in", "works_at", "studies_at", "staying_in", "from", "partner"})
