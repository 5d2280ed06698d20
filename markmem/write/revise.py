"""How a claim changes the ledger, read from the structure of the clause rather than its phrasing.

Two rules, both over candidates the extractor already made:

* **A lasting negative is a value of its own.** "I don't drink alcohol", "I never eat pork", "I
  don't smoke at all now": a negation in the present tense, said by the user about themself, with
  no sign that something *ended* (no past tense, no "anymore"/"no longer", no ending verb such as
  quit or stop). It still closes what it contradicts (the negated candidate stays), and it also
  records the negative state ("don't drink alcohol") so the ledger answers "does the user drink?".
  A stated end ("I don't play football anymore", "Biscuit died") only closes; an ending verb on a
  habit of one value ("I quit smoking" closing "smokes: ten a day") also leaves its end as the
  slot's value ("quit smoking"), unless the slot holds names or many values (:func:`ended_phrase`).
  Read from spaCy's parse: the ``neg`` dependent, its head's tense (``VBD``/``VBN`` on the head or
  its ``aux``), the head's lemma class (:data:`ENDING`) and ``advmod`` "anymore"/"longer".
* **Ending one member restates the others.** Two values of a many-valued slot said in one clause
  ("I play piano and violin") are two claims with that clause as their text. When one ends ("I quit
  violin"), the others are restated with a text that no longer names it ("I play piano"): the old
  claim is closed and superseded by the same value with the narrowed text (:func:`without`), so the
  ledger never shows the ended value as current beside the one that stays.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..model import Candidate, RawEntry
from .extract_fix import contrasted

# verbs whose negation or use tells of an ending, not of a lasting state (lemma class)
ENDING = frozenset("quit stop leave give cancel end finish die pass break split divorce sell lose drop ditch retire "
                   "resign move change switch".split())
_AGAIN = frozenset({"anymore", "longer", "again"})
_SELF = frozenset({"i", "we"})
_COPULA = re.compile(r"^(?:'m|am|'re|are|is|'s)\s+", re.IGNORECASE)


def settle(entry: RawEntry, turn: list[Candidate], parse: Callable[[str], Any] | None, recall: Any) -> list[Candidate]:
    """The extractor's hook: every value of the turn is remembered (so "I quit violin" later finds the
    violin a coordination added), then the turn's lasting negatives are added."""
    facts = recall.own(entry)  # before this turn's own facts are remembered
    recall.remember_all(entry, turn)
    mine = not entry.speaker or entry.speaker.casefold() == entry.user_id  # another speaker corrects nothing of mine
    fixes = contrasted(entry.content, facts, parse) if mine else []
    if fixes:
        turn = recall.fixed(entry, fixes, turn)
    return lasting_negatives(turn, parse)


def lasting_negatives(turn: Sequence[Candidate], parse: Callable[[str], Any] | None) -> list[Candidate]:
    """``turn`` plus, for each present-tense negation of the user's own, a claim of the negative state."""
    out = list(turn)
    if parse is None or not any(c.negated for c in turn):
        return out
    have = {(c.predicate, c.value.casefold()) for c in turn}
    for c in turn:
        if not c.negated or not c.text:
            continue
        doc = parse(c.text)
        phrase = negative_phrase(doc) or _end_state(doc, c)
        if phrase and (c.predicate, phrase.casefold()) not in have:
            have.add((c.predicate, phrase.casefold()))
            out.append(replace(c, value=phrase, negated=False, valid_until=None))
    return out


def negative_phrase(doc: Any) -> str | None:
    """ "I don't drink alcohol" -> "don't drink alcohol"; None for an ending, a past or another's negation."""
    neg = next((t for t in doc if t.dep_ == "neg"), None)
    if neg is None:
        return None
    head = neg.head
    if _ends(head) or head.tag_ in ("VBD", "VBN"):
        return None
    kids = list(head.children)
    if any(k.dep_ in ("aux", "auxpass") and k.tag_ in ("VBD", "MD") for k in kids):
        return None  # "I didn't like it", "I won't eat meat": a past or a plan, no lasting state
    if any(t.lower_ in _AGAIN for t in doc) or not any(k.dep_ == "nsubj" and k.lower_ in _SELF for k in kids):
        return None
    keep = [t for k in kids if k.dep_ not in ("nsubj", "cc", "conj", "punct", "advcl", "mark", "parataxis")
            for t in k.subtree] + [head]
    start = min(t.i for t in keep)
    end = max(t.i for t in keep) + 1
    phrase = _COPULA.sub("", doc[start:end].text.strip(" ,.!"))
    return phrase if 1 < len(phrase.split()) <= 8 else None


def ended_phrase(doc: Any) -> str | None:
    """ "I quit smoking" -> "quit smoking", "gave up energy drinks" -> "gave up energy drinks": an ending
    verb (:data:`ENDING`) of the user's own with what it ended; else None."""
    head = next((t for t in doc if t.dep_ == "ROOT"), None)
    if head is None or head.pos_ != "VERB" or not _ends(head):
        return None
    subj = [k for k in head.children if k.dep_ in ("nsubj", "nsubjpass")]
    if any(k.lower_ not in _SELF for k in subj):
        return None
    keep = [t for k in head.children if k.dep_ in ("prt", "dobj", "xcomp") for t in k.subtree]
    if not any(k.dep_ in ("dobj", "xcomp") for k in head.children):
        return None
    end = max(t.i for t in keep) + 1
    phrase = doc[head.i:end].text.strip(" ,.!")
    return phrase if 1 < len(phrase.split()) <= 6 else None


def _end_state(doc: Any, c: Candidate) -> str | None:
    """A habit of one value that ended ("I quit smoking" closing "smokes: ten a day") leaves its end
    as the slot's value, unless the slot holds names or many values, or the end restates the old value."""
    if c.multi or not c.value or any(w[:1].isupper() for w in c.value.split()):
        return None
    phrase = ended_phrase(doc)
    if phrase is None or set(phrase.casefold().split()) & set(c.value.casefold().split()):
        return None
    return phrase


_IRREGULAR = {"left": "leave", "gave": "give", "given": "give", "broke": "break", "broken": "break", "sold": "sell",
              "lost": "lose"}


def _ends(token: Any) -> bool:
    """Is the token a form of an ending verb? The clause parser has no lemmatizer: inflections are stripped."""
    w = token.lemma_.casefold() if token.lemma_ else token.lower_
    if w in ENDING or _IRREGULAR.get(w) in ENDING:
        return True
    for suffix in ("ing", "ed", "es", "s", "d"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            stem = w[: -len(suffix)]
            stem = stem[:-1] if stem[-1] == stem[-2] else stem  # "stopped" -> "stop"
            if stem in ENDING or stem + "e" in ENDING:
                return True
    return False


def without(text: str, value: str) -> str | None:
    """``text`` with ``value`` and its coordinating word taken out ("I play piano and violin" without
    violin -> "I play piano"); None when ``value`` does not stand coordinated in it."""
    v = re.escape(value)
    for pattern in (rf"(?:\s*,\s*|\s+(?:and|&|or|plus)\s+)(?:(?:a|an|the|my)\s+)?{v}(?!\w)",
                    rf"(?<!\w)(?:(?:a|an|the|my)\s+)?{v}(?:\s*,\s*|\s+(?:and|&|or|plus)\s+)"):
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            cut = (text[:m.start()] + (" " if pattern.startswith("(?<!") else "") + text[m.end():]).strip()
            return re.sub(r"\s{2,}", " ", cut)
    return None
