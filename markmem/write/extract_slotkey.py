"""An open "my <key> is <value>" slot is named by its noun, checked on the parse.

The open-slot rule reads the words between "my" and "is" as the slot's key. The parse says what they
are: the key is the subject noun phrase of "is", so

* a key with a verb in it is no slot at all: "my cousin thinks Eindhoven is boring" (the rule's key
  "cousin thinks eindhoven") makes no claim;
* the key is the head noun with its compounds, without determiners, superlatives and time phrases:
  "my main goal this year is ..." and "my goal is ..." are one slot, ``goal``; "my biggest fear"
  is ``fear``; "my blood type", "my comfort film" keep their compounds.

Only facts whose predicate is spelled by words of the clause after "my"/"our" are touched, so the
named slots of the rules are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Open = tuple[str, str, str, bool, float, bool]
_KEEP = frozenset({"compound"})
_DROP_ADJ = frozenset("main new current usual old latest own real actual go-to".split())


def keyed(facts: list[Open], clause: str, parse: Callable[[str], Any]) -> list[Open]:
    """The facts with each open slot's key checked and named by its head noun."""
    out: list[Open] = []
    for fact in facts:
        span = _key_span(fact[0], clause)
        if span is None:
            out.append(fact)
            continue
        key = _head_key(parse(clause), span)
        if key is None:
            continue  # a verb in the key: not a slot
        out.append((key or fact[0], *fact[1:]))
    return out


def _key_span(predicate: str, clause: str) -> tuple[int, int] | None:
    words = [w for w in predicate.split("_") if w]
    if len(words) < 2 or predicate.startswith(("routine_", "favorite_", "relationship_")):
        return None
    pattern = r"\b(?:my|our)\s+(" + r"[\s'-]+(?:\w+[\s'-]+){0,2}?".join(re.escape(w) + r"\w*" for w in words) + r")"
    m = re.search(pattern, clause, re.IGNORECASE)
    return m.span(1) if m else None


def _head_key(doc: Any, span: tuple[int, int]) -> str | None:
    """None: the key holds a verb; "": keep the rule's key; else the head noun and its compounds."""
    tokens = [t for t in doc if span[0] <= t.idx < span[1]]
    if not tokens:
        return ""
    if any(t.pos_ in ("VERB", "AUX") and t.tag_ in ("VBZ", "VBP", "VBD") for t in tokens):
        return None
    head = next((t for t in tokens if t.head not in tokens or t.head is t), None)
    if head is None or head.pos_ not in ("NOUN", "PROPN") or head.dep_ not in ("nsubj", "nsubjpass"):
        return ""  # only the subject of "is" is renamed ("the Wolves are my team for sure" keeps its key)
    words = [t for t in head.lefts if t in tokens and (t.dep_ in _KEEP or t.dep_ == "amod" and t.tag_ != "JJS"
                                                        and t.lower_ not in _DROP_ADJ)] + [head]
    key = re.sub(r"[^a-z]+", "_", " ".join(t.lower_ for t in words)).strip("_")
    return key or ""
