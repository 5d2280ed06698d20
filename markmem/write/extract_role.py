"""A role said with "as": "I earn my money as a UX researcher", "got hired as a sous chef at Marlow's".

Whatever the verb, a first-person clause whose verb takes "as <noun phrase>" and whose noun is a job
title (:func:`~.extract_rules.looks_like_job`: the job table or a job suffix, "-er", "-ist", ...) says
the user's job; a proper name after "at"/"for" on the same verb is the employer. Read from spaCy's
parse (the verb's ``prep`` "as" and its ``pobj``), so no wording list is needed. A plain past ("I
worked as a waiter in college") is history and says nothing, unless the verb changes a state
("hired", "retrained", "promoted", "joined").
"""

from __future__ import annotations

from typing import Any

from .extract_rules import looks_like_job

Open = tuple[str, str, str, bool, float, bool]
_CHANGE = frozenset("hire hired retrain retrained requalify requalified promote promoted appoint appointed join joined "
                    "start started take taken took sign signed transfer transferred become became".split())
_MODIFIERS = frozenset({"compound", "amod", "nmod"})
# "as" after these is a view or an unpaid role, not the user's job ("I volunteer as a coach")
_NOT_ROLE = frozenset("volunteer volunteers volunteering see sees regard describe consider know think treat dress "
                      "dressed identify use used".split())


def as_role(verb: Any, negated: bool) -> list[Open]:
    """[job, employer?] of a verb with an "as <job>" phrase, else []."""
    if verb.tag_ == "VBD" and verb.lower_ not in _CHANGE or verb.lower_ in _NOT_ROLE:
        return []
    role = next((p for p in verb.children if p.dep_ == "prep" and p.lower_ == "as"), None)
    noun = next((t for t in role.children if t.dep_ == "pobj" and t.pos_ == "NOUN"), None) if role else None
    if noun is None:
        return []
    words = [t for t in noun.lefts if t.dep_ in _MODIFIERS] + [noun]
    job = " ".join(t.text for t in words)
    if not looks_like_job(job):
        return []
    out: list[Open] = [("job", job, "profile", False, 0.8, negated)]
    for holder in (noun, verb):
        for prep in holder.children:
            org = next((t for t in prep.children if t.dep_ == "pobj" and t.pos_ == "PROPN"), None)
            if prep.dep_ == "prep" and prep.lower_ in ("at", "for", "with") and org is not None:
                parts = [t for t in org.lefts if t.dep_ == "compound"] + [org]
                return [*out, ("employer", " ".join(t.text for t in parts), "profile", False, 0.8, negated)]
    return out
