"""Named members of a many-valued slot: "we have two cats, Salt and Pepper" is two pets, by name.

A rule reads the slot and its kind ("pet": "cats", "puppy"); the names the user gives them are in
the parse around that noun, in three general shapes (spaCy's dependency labels, whatever the noun):

* an apposition, with its conjuncts: "a cat, Luna", "two cats, Salt and Pepper";
* a participle "named"/"called" with its object: "a greyhound called Mabel", "a rabbit, named Clover";
* a possessive "name is" clause in the same turn: "we adopted a puppy! his name is Bruno".

Each name becomes its own value, "cat named Luna" (the shape the pet rules give "a cat named
Luna"), so that one pet's death later ends that pet only, and a later mention by name finds it.
The same parse gives the other members of a coordination the rules cut off at "and": "I speak
Spanish and English", "my hobbies are bouldering and chess". Without spaCy's parse nothing changes.
"""

from __future__ import annotations

from typing import Any

from .extract_change import singular

_NAMING = frozenset({"named", "called"})
_POSSESSIVE = frozenset({"his", "her", "its", "their"})
_PRONOUNS = frozenset({"he", "she", "it", "they"})


def member_names(doc: Any, noun: str) -> list[str]:
    """The names given in ``doc`` to the thing ``noun`` ("cat", "cats", "puppy"), in order."""
    head = singular(noun.casefold().split()[-1]) if noun.split() else ""
    token = next((t for t in doc if t.pos_ == "NOUN" and singular(t.lower_) == head), None)
    if token is None:
        return []
    names: list[str] = []
    for child in token.children:
        if child.dep_ == "appos" and child.pos_ == "PROPN":
            names += _with_conjuncts(child)
        elif child.dep_ == "appos" and child.pos_ == "NOUN":  # "a second dog, a greyhound called Mabel"
            names += _participle_names(child)
    names += _participle_names(token)
    if not names:
        names = _possessive_names(doc, token, plural=token.lower_ != head)
    return list(dict.fromkeys(n for n in names if n[:1].isupper()))


def conjoined(doc: Any, value: str) -> list[str]:
    """The values coordinated with ``value`` in ``doc``: "I speak Spanish and English" -> ["English"];
    only words of the same part of speech ("I play guitar and sing" adds nothing)."""
    last = value.split()[-1].casefold() if value.split() else ""
    token = next((t for t in doc if t.lower_ == last and _nominal(t)), None)
    if token is None:
        return []
    return [_full(c) for c in token.conjuncts if (_nominal(c) or c.is_title) and c.i > token.i and c.lower_ != last
            and (c.pos_ == token.pos_ or "VBG" in (c.tag_, token.tag_) or token.pos_ == "PROPN")]  # h-revise


def _nominal(token: Any) -> bool:
    """A noun, a name, or a verb's -ing form used as one ("bouldering and chess")."""
    return token.pos_ in ("NOUN", "PROPN") or token.tag_ == "VBG"


def _participle_names(token: Any) -> list[str]:
    out: list[str] = []
    for child in token.children:
        if child.dep_ == "acl" and child.lower_ in _NAMING:
            named = [t for t in child.children if t.dep_ in ("oprd", "attr", "dobj") and t.pos_ == "PROPN"]
            out += _with_conjuncts(named[0]) if named else []
    return out


def _possessive_names(doc: Any, token: Any, plural: bool) -> list[str]:
    """ "... a puppy! his name is Bruno": a "name is" clause after the noun, its possessor a pronoun."""
    for t in doc[token.i + 1:]:
        if t.lower_ in ("name", "names") and t.dep_ == "nsubj" and any(
                c.dep_ == "poss" and c.lower_ in _POSSESSIVE for c in t.children):
            attr = [c for c in t.head.children if c.dep_ == "attr" and c.pos_ == "PROPN"]
            if attr:
                return _with_conjuncts(attr[0]) if plural or t.lower_ == "names" else [attr[0].text]
        if t.lower_ in ("called", "named") and any(c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in _PRONOUNS
                                                   for c in t.children):  # "a second cat! she's called Olive"
            said = [c for c in t.children if c.dep_ in ("oprd", "attr", "dobj") and c.pos_ == "PROPN"]
            if said:
                return _with_conjuncts(said[0]) if plural else [said[0].text]
    return []


def _with_conjuncts(token: Any) -> list[str]:
    out = [_full(token)]
    for c in token.children:
        if c.dep_ == "conj" and c.pos_ == "PROPN":
            out += _with_conjuncts(c)
    return out


def _full(token: Any) -> str:
    """The name with its compound parts: "Mister Whiskers"."""
    parts = [t for t in token.children if t.dep_ == "compound" and t.pos_ == "PROPN" and t.i < token.i]
    return " ".join(t.text for t in [*parts, token])
