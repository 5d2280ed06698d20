"""What kind of turn a candidate is, for ``read.facts``: chit-chat, a question or hypothetical, the
assistant's suggestion, or a statement; and whether the words of the question found it."""

from __future__ import annotations

import re

from .fuse import Cand

_CHAT = re.compile(
    r"^(?:(?:ok(?:ay)?|k|sure|yes|yeah|yep|yup|no|nope|nah|thanks|thank you|thx|ty|cool|nice|great|awesome|"
    r"perfect|lol|haha+|hehe|hmm+|oh|ah|wow|right|exactly|totally|true|same|agreed|got it|sounds good|"
    r"sounds great|makes sense|fair enough|good|fine|alright|all right|will do|of course|no problem|np|"
    r"you too|bye|goodbye|see you|good night|morning|hi|hello|hey|me too|for sure|definitely|absolutely|"
    r"i see|i know|that's (?:great|nice|cool|fair|true|right|funny|awesome)|haha yes|sounds good to me|"
    r"good to know|love it|i agree|yes please|no thanks|not really|maybe|cheers)[\s!.,?:)(]*)+$",
    re.IGNORECASE,
)


def low_content(text: str) -> bool:
    """Chit-chat that holds no fact: "ok sounds good", "haha yes exactly!"."""
    t = text.strip()
    return len(t) < 60 and bool(_CHAT.match(t))


_HYPOTHETICAL = re.compile(r"^\W*(?:what if|if i|if we|maybe|perhaps|should i|should we|would|could i|could we|"
                           r"might|i wonder|wondering)\b", re.IGNORECASE)


_SUGGESTS = re.compile(r"^\W*(?:if you|how about|what about|you could|you might|you can|maybe|perhaps|why not|"
                       r"have you (?:considered|thought|tried)|consider|i(?:'d| would)? (?:usually |always |really )?"
                       r"(?:recommend|suggest)|(?:many|most|some|a lot of|lots of) (?:people|folks))\b", re.IGNORECASE)


def suggestion(c: Cand) -> bool:
    """The assistant's suggestion or hypothetical: "How about Miso or Juniper?", "If you moved to Milan
    you'd ...", "Many people in your field move to Roche": a value the user never stated."""
    return c.kind == "turn" and c.row.get("role") == "assistant" and \
        bool(_SUGGESTS.match(str(c.row.get("content") or "")))


def not_a_statement(c: Cand) -> bool:
    """A question, a hypothetical, or the assistant's turn: none states the user's fact."""
    text = str(c.row.get("content") or "")
    return bool(c.row.get("question")) or c.row.get("role") == "assistant" or bool(_HYPOTHETICAL.match(text))


def lexical(c: Cand) -> bool:
    """Found by the words of the question (a BM25 or exact lane), not by the cosine alone."""
    return any(lane in c.ranks for lane in ("turns", "claims", "exact")) or not c.ranks




_ASKS = re.compile(r"\?\W*$|\?[^.!?]{0,40}\b(?:asking|might|maybe|thinking|considering|wondering)\b[^.!?]*$|"
                   r"^\W*(?:what|which|where|who|when|how|why)\b(?:\W+\w+){0,2}?\W+"
                   r"(?:should|shall|can|could|would|will|do|does|did|is|are|am)\b", re.IGNORECASE)
_PLANS = re.compile(r"^\W*(?:(?:i'?m|we'?re|im|been)\s+)?(?:thinking (?:about|of)|considering|wondering|"
                    r"not sure (?:if|whether|which|where|what)|"
                    r"need (?:a|an|some)\b[\w\s,']{0,40}?\b(?:ideas?|advice|help|suggestions?))\b", re.IGNORECASE)


def states_nothing(c: Cand) -> bool:
    """``not_a_statement``, or a user's turn that asks or weighs rather than states, without the
    stored question flag: "which bank should i switch to", "is zurich expensive to live in? asking bc
    i might move there", "thinking about where to move for the new job"."""
    text = str(c.row.get("content") or "")
    return not_a_statement(c) or bool(_ASKS.search(text) or _PLANS.match(text))
