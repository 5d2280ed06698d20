"""A question that lists one named person's things: "what martial arts has John done?", "what kinds of
art does Caroline make?". Its answer is several of that person's own turns, each naming an instance
(kickboxing, taekwondo) rather than the kind, so the turns by the person named count for more than in
other questions (``Recipe.list_speaker_boost``; read.search). Only the wording decides: one regex.
"""

from __future__ import annotations

import re
from functools import lru_cache

# a plural kind or "kinds/types/sorts of X", then has/have/does/do and a capitalised name (not I/you/we)
_LIST = re.compile(r"^\s*(?i:what|which)\s+((?:kinds? of |types? of |sorts? of )(?:[\w'-]+ ){1,3}?|"
                   r"(?:[\w'-]+ ){0,2}?[\w'-]+[^s\W]s )(?:has|have|does|do)\s+(?!I\b|you\b|we\b)([A-Z]\w*)")


@lru_cache(maxsize=1024)
def whose(question: str) -> str | None:
    """The person a listing question is about ("John"), else None."""
    m = _LIST.search(question)
    return m.group(2) if m else None
