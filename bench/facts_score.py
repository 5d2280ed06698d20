"""Scoring rules of ``bench/facts.py``: pure functions over texts, claims, hits and pack lines.

Kept apart from the runner so ``tests/test_bench_facts.py`` can check them on hand-made inputs.
The rules are described in the docstring of ``bench/facts.py``; this module is their one home.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

# markmem's own "this is old" marks in a pack line (a JSON hit is marked by its fields instead)
PACK_MARKS = ("superseded", "replaced", "ended", "was true until", "(until", "(old)", "[old]", "no longer true",
              "not yet true")
# the text itself says the value is past ("I used to live in Lisbon", "moved from Lisbon to Porto")
CHANGE_CUES = ("no longer", "not anymore", "anymore", "any more", "used to", "formerly", "previously",
               "passed away", "moved from", "moved away", "switched from", "instead of", "ex-", "quit ",
               "stopped", "cancelled", "canceled", " left ", "gave up", "not in ", "rather than", "don't",
               "dont", "do not", "isn't", "not ")


@lru_cache(maxsize=4096)
def _pattern(value: str) -> re.Pattern[str]:
    """Case-insensitive match of ``value`` as whole words (so "Rome" does not match "Romeo")."""
    body = re.escape(_norm(value))
    return re.compile(rf"(?<![\w]){body}(?![\w])")


def _norm(text: str) -> str:
    return text.lower().replace("\u2019", "'").replace("\u2018", "'")


def mentions(text: str | None, values: Iterable[str]) -> bool:
    """Whether ``text`` holds any of ``values`` (case-insensitive, on word boundaries)."""
    if not text:
        return False
    low = _norm(text)
    return any(_pattern(v).search(low) for v in values if v)


def says_past(text: str) -> bool:
    """The line's own words mark something in it as past or negated ("used to", "no longer", ...)."""
    low = f" {_norm(text)} "
    return any(cue in low for cue in CHANGE_CUES)


def pack_marked(line: str) -> bool:
    low = _norm(line)
    return any(mark in low for mark in PACK_MARKS) or says_past(line)


def hit_marked(hit: dict[str, Any], t: str) -> bool:
    """A JSON hit is marked old when it says so: a past ``valid_until``, ``superseded_by``, a stale flag."""
    until = hit.get("valid_until")
    if until and until <= t:
        return True
    if hit.get("superseded_by") or hit.get("stale") or hit.get("superseded"):
        return True
    starts = hit.get("starts")  # an as_of hit telling of a change planned after the check time
    if starts and starts > t:
        return True
    return says_past(str(hit.get("text") or ""))


def stale_unmarked(text: str, stale: Sequence[str], marked: bool) -> bool:
    return bool(stale) and mentions(text, stale) and not marked


def line_pass(text: str | None, expect: Sequence[str], stale: Sequence[str], marked: bool) -> bool:
    """A line answers the check: it holds an expected value (any, when ``expect`` is empty: then it
    must merely not show a stale one) and shows no stale value unmarked."""
    if text is None:
        return not expect
    if expect and not mentions(text, expect):
        return False
    return not stale_unmarked(text, stale, marked)


def content_lines(pack_text: str) -> list[str]:
    """The pack's lines minus headers (``## ...``) and blanks, in order."""
    return [ln for ln in pack_text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


# -- the claim ledger --------------------------------------------------------------------------

def active_at(claim: Any, t: str, current: bool) -> bool:
    """valid_from <= t < valid_until; for a "now" check, also not superseded and not archived."""
    start, until = getattr(claim, "valid_from", None), getattr(claim, "valid_until", None)
    if start is not None and start > t:
        return False
    if until is not None and until <= t:
        return False
    meta = getattr(claim, "metadata", None) or {}
    if meta.get("archived"):
        return False
    return not (current and getattr(claim, "superseded_by", None))


def about(claim: Any, page: Any, user_id: str, subject: str) -> bool:
    """Whether the claim is about the check's subject. "user": the claim's subject is the user id or
    "user" (or missing); a third party: the name appears in the claim's subject or its page."""
    subj = getattr(claim, "subject", None)
    if subject == "user":
        return subj is None or _norm(str(subj)) in (_norm(user_id), "user", "i", "me", "")
    name = _norm(subject)
    where = " ".join(str(x) for x in (subj, getattr(page, "id", ""), getattr(page, "title", "")) if x)
    return name in _norm(where).replace("-", " ").replace("_", " ")


def ledger_current(pairs: Sequence[tuple[Any, Any]], check: dict[str, Any], t: str) -> bool:
    """PASS iff an active claim about the subject holds an expected value (in its value or text) and
    no active claim about the subject holds a stale one (value: always; text: unless it says so)."""
    current = check.get("at") is None
    claims = [c for page, c in pairs
              if not getattr(page, "archived", False) and about(c, page, check["user_id"], check["subject"])
              and active_at(c, t, current)]
    expect, stale = check["expect"], check["stale"]
    if expect and not any(mentions(c.value, expect) or mentions(c.text, expect) for c in claims):
        return False
    return not any(mentions(c.value, stale) or stale_unmarked(c.text, stale, says_past(c.text)) for c in claims)


def pct(num: int, den: int) -> str:
    return f"{100 * num / den:5.1f}% ({num}/{den})" if den else "    -"
