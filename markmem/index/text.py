"""What text is indexed for each unit. Kept in one place: it shapes recall more than fusion does."""

from __future__ import annotations

import hashlib

from ..model import Claim, RawEntry


def turn_body(entry: RawEntry) -> str:
    """``[YYYY-MM-DD] Speaker: text``: the date helps temporal questions, the speaker who-questions."""
    who = f"{entry.speaker}: " if entry.speaker else ""
    return f"[{entry.when[:10]}] {who}{entry.content}"


def claim_body(claim: Claim) -> str:
    pred = claim.predicate.replace("_", " ")
    return f"{claim.text} ({pred}: {claim.value})"


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()
