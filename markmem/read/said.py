"""Questions about what the assistant said: "you told me", "what did you recommend", "remind me".

Fusion trusts an assistant turn less than the user's own words (``fuse.ROLE_TRUST``): what the user
said of themselves is the better fact. A question that asks back for the assistant's own earlier
answer ("which game did you say ...", "the phone number you provided", "remind me what you
suggested", "in our previous conversation") is the one case where that answer *is* the fact, so
those questions rank assistant turns at the user's trust (:data:`ASKED_ROLES`).

The test is a few English phrasings of the assistant's past speech acts: a past-tense verb of
saying after "you" ("you said/told/suggested/recommended/provided/gave/listed/mentioned ..."),
"remind me", and references to an earlier conversation. A request in the present ("can you
recommend", "what do you suggest") is a new question, not a look back, and does not count.
"""

from __future__ import annotations

import re

from .fuse import ROLE_TRUST

ASKED_ROLES = {**ROLE_TRUST, "assistant": ROLE_TRUST["user"]}

_VERBS = r"(?:said|told|mentioned|suggested|recommended|provided|gave|listed|shared|created|wrote|described|" \
         r"explained|named|offered|proposed|came up with|showed|pointed out|advised|helped me)"
_ASKED = re.compile(
    rf"\byou(?: had| have|'d|'ve)? (?:just |already |previously |earlier |once )?{_VERBS}\b"
    rf"|\bdid you (?:say|tell|mention|suggest|recommend|provide|give|list|share|create|write|describe|explain|name|"
    rf"offer|propose|come up with|show|advise)\b"
    r"|\bremind me\b"
    r"|\b(?:our|the) (?:previous|last|earlier|past|prior) (?:conversation|chat|discussion|session)s?\b"
    r"|\bwe (?:talked|spoke|chatted) about\b|\bwe discussed\b",
    re.IGNORECASE,
)


def asks_assistant(question: str) -> bool:
    """Whether ``question`` asks back for something the assistant said earlier."""
    return _ASKED.search(question) is not None
