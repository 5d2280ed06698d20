"""The user's family and pets, by name, from the parse: "my kids are Leo and Maya", "I've got a son,
Arjun", "mum's name is Bernadette", "we keep chickens and a goat named Gerald", "our dog Rolo is 12".

No wording list: a noun of kinship or of an animal kept at home (a lemma class, whatever the verb)
that the user holds (its possessor is "my"/"our", or it is the object of a verb whose subject is
"I"/"we", or a verbless fragment: "and now a baby girl too, Rosie") gets the proper names the parse
attaches to it, in the general shapes of spaCy's dependency labels:

* an apposition or a conjoined name: "a son, Arjun", "two hamsters, Nibbles and Squeak";
* a participle "named"/"called": "a goat named Gerald";
* the noun as the subject of "be" with a name: "my kids are Leo and Maya";
* a "<noun>'s name is <Name>" clause: "mum's name is Bernadette".

Each name is its own value: ``relationship_<kin>`` ("child", "son", "mother", ...; many-valued
except a mother, a father) or ``pet`` ("goat named Gerald", many-valued), so a second child or pet
adds, never closes. Someone else's ("my sister's kids are ...") is left alone.
"""

from __future__ import annotations

import re
from typing import Any

from .extract_change import singular
from .extract_names import _possessive_names
from .extract_rules import PETS

Open = tuple[str, str, str, bool, float, bool]  # (predicate, value, type, multi, confidence, negated)

_KIN = {  # a kinship noun -> its slot
    "kid": "child", "child": "child", "twin": "child", "baby": "child", "boy": "son", "girl": "daughter",
    "son": "son", "daughter": "daughter", "stepson": "son", "stepdaughter": "daughter", "stepkid": "child",
    "stepchild": "child", "grandson": "grandchild", "granddaughter": "grandchild", "grandkid": "grandchild",
    "grandchild": "grandchild", "mum": "mother", "mom": "mother", "mother": "mother", "mam": "mother",
    "dad": "father", "father": "father", "stepmum": "mother", "stepmom": "mother", "stepdad": "father",
    "brother": "brother", "sister": "sister", "sibling": "sibling", "wife": "partner", "husband": "partner",
    "partner": "partner", "girlfriend": "partner", "boyfriend": "partner", "fiance": "partner",
    "fiancee": "partner", "grandma": "grandmother", "gran": "grandmother", "granny": "grandmother",
    "nan": "grandmother", "nana": "grandmother", "grandmother": "grandmother", "grandad": "grandfather",
    "grandpa": "grandfather", "grandfather": "grandfather", "aunt": "aunt", "auntie": "aunt", "uncle": "uncle",
    "cousin": "cousin", "niece": "niece", "nephew": "nephew",
}
_SINGLE = frozenset({"mother", "father", "partner"})
_YOUNG = frozenset({"child", "son", "daughter", "grandchild"})  # named in a turn about them: still a member
_PETS = frozenset(singular(p) for p in PETS.split("|") if " " not in p) | {"puppy", "kitten", "pup"}
_OWNERS = frozenset({"my", "our"})
_HOLDERS = frozenset({"i", "we"})
_NAMING = frozenset({"named", "called"})
_BE = frozenset({"is", "are", "'s", "'re"})
_FORMER = frozenset({"ex", "late", "former", "old", "first"})  # "my ex-wife Sarah", "my late husband" say no member
_HAVE = frozenset("have has had having 've get gets got gotten getting keep keeps kept keeping adopt adopted adopting "
                  "rescue rescued foster fostered raise raised welcome welcomed own owns".split())  # having a member
_NOT_NAMES = frozenset("monday tuesday wednesday thursday friday saturday sunday xmas christmas easter i".split())
_GATE = re.compile(r"\b(?:" + "|".join(sorted({*_KIN, *_PETS}, key=len, reverse=True)) + r")(?:s|es|ren)?\b",
                   re.IGNORECASE)
_CAPITAL = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+")


def may_name(text: str) -> bool:
    """A kinship or pet noun and a capitalised word after it: worth a parse."""
    m = _GATE.search(text)
    return m is not None and _CAPITAL.search(text, m.end()) is not None


def is_member_slot(predicate: str) -> bool:
    """ "boy" of "our boys are Sami and Jonah" read as an open slot: a kinship or pet noun."""
    return predicate != "partner" and (singular(predicate) in _KIN or singular(predicate) in _PETS)


def kin_names(doc: Any) -> list[tuple[Open, str]]:
    """(fact, its sentence) for every name the user gives a member of their family or a pet."""
    out: list[tuple[Open, str]] = []
    for token in doc:
        kind = _kind(token)
        if kind is None or any(c.lower_ in _FORMER for c in token.children):
            continue
        named = _named_by(token)  # "my wife Clare works nights", "we adopted a kitten, Tofu"
        owned = any(c.dep_ == "poss" for c in token.children)
        if named is not None and not owned and any(c.dep_ == "poss" for c in named.children):
            held = any(c.dep_ == "poss" and c.lower_ in _OWNERS for c in named.children)  # "my" on the name
        else:
            held = _held(token) if named is None or owned else _held(named)
        if not held:
            continue
        names = [_full(named)] if named is not None else list(dict.fromkeys(_names(token)))
        if not names and kind in _PETS and token.dep_ in ("dobj", "obj") and token.lower_ != kind:
            unnamed: Open = ("pet", token.lower_, "relationship", True, 0.75, False)  # "we keep chickens"
            out.append((unnamed, _clause(token, "")))
        for name in names:
            if kind in _PETS:
                fact: Open = ("pet", f"{kind} named {name}", "relationship", True, 0.8, False)
            else:  # a partner is the rules' own slot ("partner"), so a new partner replaces the old
                slot = _KIN[kind]
                pred = "partner" if slot == "partner" else f"relationship_{slot}"
                fact = (pred, name, "relationship", slot not in _SINGLE, 0.8, False)
            out.append((fact, _clause(token, name)))
    return out


def _named_by(token: Any) -> Any:
    """The name a kinship or pet noun modifies in the parse ("my wife Clare": wife/compound of Clare,
    "a kitten, Tofu": kitten/amod of Tofu), else None."""
    head = token.head
    if token.dep_ in ("compound", "amod") and head is not token and head.i > token.i and _is_name(head):
        return head
    return None


_CUT = frozenset({"conj", "advcl", "ccomp", "parataxis", "relcl", "punct", "cc"})


def _clause(token: Any, name: str) -> str:
    """The words that say it, not the whole sentence ("my boyfriend Piotr" of "..., my boyfriend Piotr is a
    chef in Warsaw"): the noun's own phrase, with its verb and subject when it is their object, or the
    "be" clause that names it."""
    words = _kept(token)
    head = token.head
    named = [c for c in head.children if c.dep_ == "attr" and _is_name(c)]
    if token.dep_ in ("dobj", "obj") or token.dep_ == "nsubj" and head.lower_ in _BE and named:
        words |= {head} | {t for c in head.children if c.dep_ in ("nsubj", "aux", "neg") or c in named
                           for t in (c.subtree if c.dep_ == "nsubj" else _kept(c))}
    elif token.dep_ == "poss" and head.dep_ == "nsubj":  # "mum's name is Bernadette"
        words |= _kept(head.head)
    if name not in " ".join(t.text for t in words):  # "my boyfriend Marco": the name's own token too
        words |= {t for t in token.sent if t.text == name.split()[-1]}
    lo, hi = min(t.i for t in words), max(t.i for t in words)
    return token.doc[lo:hi + 1].text.strip(" ,").removesuffix(" and").removesuffix(",")


def _kept(token: Any) -> set[Any]:
    out = {token}
    for c in token.children:
        if c.dep_ not in _CUT or c.dep_ == "conj" and c.pos_ == "PROPN" or c.dep_ == "cc" and token.pos_ == "PROPN":
            out |= _kept(c)
    return out


def _kind(token: Any) -> str | None:
    word = singular(token.lower_.removesuffix("ren") if token.lower_ == "children" else token.lower_)
    if word in _KIN and token.pos_ in ("NOUN", "PROPN"):
        return word
    return word if word in _PETS and token.pos_ == "NOUN" else None


def _held(token: Any) -> bool:
    """The user's own: "my/our <noun>", the object of an "I/we" verb, or a verbless fragment."""
    if token.dep_ in ("nsubj", "nsubjpass") and token.head.lower_ not in _BE and not (
            _KIN.get(singular(token.lower_)) in _YOUNG
            and any(c.dep_ == "appos" and _is_name(c) for c in token.children)
            and any(c.dep_ == "poss" and c.lower_ in _OWNERS for c in token.children)):
        return False  # "my brother Sam starts at KFC": a turn about him (the third-party path's); one that
        #               names a child ("my daughter Isla starts school", "our son Finn was born") names a member
    if any(c.dep_ == "poss" for c in token.children):
        return any(c.dep_ == "poss" and c.lower_ in _OWNERS for c in token.children)
    if token.dep_ == "poss":
        return token.head.lower_ in ("name", "names")  # "mum's name is Bernadette"
    head = token
    while head.dep_ in ("conj", "appos", "dep") and head.head is not head:
        head = head.head
    if head.dep_ in ("dobj", "obj") or head.pos_ in ("VERB", "AUX") and head is not token:
        head = head.head if head.dep_ in ("dobj", "obj") else head
        if head.lower_ not in _HAVE:  # the model has no lemmatizer: word forms
            return False  # "I met a girl called Emma": not the user's
    elif head.dep_ != "ROOT" or head.pos_ not in ("NOUN", "PROPN"):
        return False
    subjects = [c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")]
    if not subjects:  # "adopted a rescue cat", "and now a baby girl too, Rosie": the speaker's
        return head.pos_ in ("NOUN", "PROPN") or head.i == head.sent.start
    return subjects[0].lower_ in _HOLDERS


def _names(token: Any) -> list[str]:
    names: list[str] = []
    for c in token.children:
        if c.dep_ in ("appos", "conj") and _is_name(c):
            names += _with_conjuncts(c)
        elif c.dep_ == "acl" and c.lower_ in _NAMING:
            named = [g for g in c.children if g.dep_ in ("oprd", "attr", "dobj") and _is_name(g)]
            names += _with_conjuncts(named[0]) if named else []
    after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if not names and after is not None and after.head in (token, token.head) and after.dep_ != "attr" \
            and _is_name(after):  # "our cat Miso is sixteen": the tagger's second subject
        names += [_full(after)]
    verb = token.head
    if token.dep_ == "nsubj" and verb.lower_ in _BE:  # "my kids are Leo and Maya"
        names += [n for a in verb.children if a.dep_ == "attr" and _is_name(a) for n in _with_conjuncts(a)]
    if token.dep_ == "poss" and token.head.lower_ in ("name", "names") and token.head.dep_ == "nsubj":
        names += [n for a in token.head.head.children if a.dep_ == "attr" and _is_name(a) for n in _with_conjuncts(a)]
    if not names:  # "adopted a cat, her name is Pepper"
        names = [n for n in _possessive_names(token.doc, token, plural=token.lower_ != singular(token.lower_))
                 if _is_name_text(n)]
    return names


def _is_name_text(text: str) -> bool:
    return text[:1].isupper() and text.casefold() not in _NOT_NAMES


def _is_name(token: Any) -> bool:
    """A capitalised proper noun, or a capitalised noun inside the sentence (the tagger's "Theo/NOUN")."""
    proper = token.pos_ == "PROPN" or token.pos_ == "NOUN" and token.i > token.sent.start
    return (proper and token.text[:1].isupper() and token.lower_ not in _NOT_NAMES
            and token.ent_type_ not in ("GPE", "LOC", "ORG", "DATE", "TIME"))


def _with_conjuncts(token: Any) -> list[str]:
    out = [_full(token)]
    for c in token.children:
        if c.dep_ == "conj" and _is_name(c):
            out += _with_conjuncts(c)
    return out


def _full(token: Any) -> str:
    parts = [t for t in token.children if t.dep_ == "compound" and t.pos_ == "PROPN" and t.i < token.i]
    return " ".join(t.text for t in [*parts, token])
