"""Entity pages: the people, pets, places and organisations a user speaks of, linked by relations.

Derived from the candidates the extractor emits (this stage never parses text of its own beyond
"my sister Maria" in a candidate's clause): a third-party subject is a person ("mum", "Maria"),
``lives_in``/``hometown``/``staying_in`` values are places, ``employer``/``school``/``member_of``
values organisations, ``pet`` values pets. Each gets a page ``u/<user>/entity/e-<hash of its
name>`` (no user text in paths); the user is ``u/<user>/entity/self``. A **relation** is a
bi-temporal claim on its subject's page (``sister_of``, ``lives_in``, ``works_at``, ``owns``...)
whose value names the target, rendered as a markdown link to the target's page. Relations are
resolved like any claim (:func:`..resolve.apply`): "Maria moved to Lisbon" closes her ``lives_in``
Oslo. Their ids are distinct from the fact claims they come from (one raw id, subject,
predicate and value would otherwise give both the same id).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..errors import MalformedPage
from ..ids import SINGLE_RELATIONS, claim_id, short_hash
from ..ids import entity_page_id as page_id
from ..model import Candidate, Claim, Page, RawEntry
from ..store.pages import render_body
from .extract import norm_value
from .extract_rules import REL
from .resolve import apply, normalise_predicate

KINDS = ("user", "person", "pet", "place", "organisation")
# fact predicate -> (relation, kind of the target)
_TARGETS = {
    "lives_in": ("lives_in", "place"), "hometown": ("from", "place"), "staying_in": ("staying_in", "place"),
    "employer": ("works_at", "organisation"), "school": ("studies_at", "organisation"),
    "member_of": ("member_of", "organisation"), "pet": ("owns", "pet"), "partner": ("partner", "person"),
}
RELATIONS = frozenset({r for r, _ in _TARGETS.values()} | {"knows"})  # plus "<kin>_of"
_KIN_WORDS = frozenset(
    (REL + "|wife|husband|partner|girlfriend|boyfriend|fiancé|fiancee|spouse|son|daughter|kid|baby|parents|niece|"
     "nephew|flatmate|housemate|teammate|classmate|landlord|landlady|doctor|therapist|sibling|twin").split("|"))
_MY_KIN_NAME = re.compile(rf"\bmy (?:\w+ )?(?P<rel>{'|'.join(sorted(_KIN_WORDS, key=len, reverse=True))}),? "
                          r"(?P<name>[A-Za-z]+)\b", re.IGNORECASE)
_NAMED = re.compile(r"\b(?:named|called) (?P<name>[A-Za-z][\w'-]*)", re.IGNORECASE)
log = logging.getLogger("markmem")
Loader = Callable[[str], "Page | None"]


@dataclass(frozen=True)
class Relation:
    subject: str  # the name, or the user id for the user
    predicate: str
    target: str
    kind: str  # the target's kind



def relations(user_id: str, cand: Candidate) -> list[Relation]:
    """The relations one accepted candidate states (none for most)."""
    out: list[Relation] = []
    subject, predicate = cand.subject, normalise_predicate(cand.predicate)
    if subject != user_id:
        if not (_is_name(subject) or subject.casefold() in _KIN_WORDS):
            return []
        out += _kinship(user_id, subject, cand.text)
    if predicate.startswith("relationship_") and subject == user_id and _is_name(cand.value):
        rel = predicate[len("relationship_"):]
        out.append(Relation(cand.value.strip(), f"{rel}_of", user_id, "user"))
    target = _TARGETS.get(predicate)
    if target and _is_name(cand.value) and _proper(cand.value, cand.text):
        relation, kind = target
        value = cand.value.strip()
        if kind == "pet":
            m = _NAMED.search(value) or _NAMED.search(cand.text)
            value = m.group("name") if m else value  # "a dog named Rex" is Rex; "a cat" stays "cat"
        out.append(Relation(subject, relation, value, kind))
    return out


def _kinship(user_id: str, subject: str, text: str) -> list[Relation]:
    word = subject.casefold()
    if word in _KIN_WORDS:  # "my mum lives in Malaga": the subject is "mum"
        return [Relation(subject, f"{word.replace(' ', '_')}_of", user_id, "user")]
    m = _MY_KIN_NAME.search(text)  # "my sister Maria moved to Oslo"
    if m and m.group("name").casefold() == word:
        return [Relation(subject, f"{m.group('rel').casefold().replace(' ', '_')}_of", user_id, "user")]
    return [Relation(subject, "knows", user_id, "user")]  # someone the user speaks of


_NOT_LEAD = frozenset(
    "a an in on at to for of from with by about into this that these those it its it's some any every all "
    "lots lot much many more most such what which who whom whose how when where why there here i you he she we "
    "they me him her us them my your his our their not no just also very really so".split())


def _is_name(value: str) -> bool:
    """Does this value name one thing ("Ostara", "Lisbon", "writers group"), rather than being a
    phrase a rule caught ("in", "to help out", "a tech company I like")? A masked value never does."""
    words = value.strip().split()
    if not words or len(words) > 4 or value.startswith("<") or len(value) > 60:
        return False
    if words[0].casefold() in _NOT_LEAD or any(w.casefold() in ("i", "me", "my", "we") for w in words):
        return False
    return any(c.isalpha() for c in value) and len(value.strip()) >= 2


def _proper(value: str, text: str) -> bool:
    """A value of several words names a place or organisation only when the clause writes one of
    them capitalised ("Blue Bottle Coffee", not "a small flat" that the open-vocabulary path read
    as where the user lives); one word ("lisbon") is given the benefit of the doubt."""
    words = value.split()
    if len(words) < 2:
        return True
    at = text.casefold().find(value.casefold())
    said = text[at:at + len(value)] if at >= 0 else value
    return any(w[:1].isupper() for w in said.split())


def build(candidates: Sequence[Candidate], entries: dict[str, RawEntry], load: Loader, now: str,
          review_below: float) -> dict[str, Page]:
    """The entity pages these candidates create or change (low-confidence ones go to review, not here)."""
    pages: dict[str, Page] = {}
    for cand in candidates:
        entry = entries.get(cand.raw_id)
        if entry is None or cand.confidence < review_below:
            continue
        for rel in relations(entry.user_id, cand):
            try:
                _ensure(pages, load, entry.user_id, rel.target, rel.kind, now)
                kind = "person" if rel.subject != entry.user_id else "user"
                page = _ensure(pages, load, entry.user_id, rel.subject, kind, now)
            except MalformedPage:  # a human broke the page: its relations wait until it is fixed
                log.warning("entity page for a relation is malformed; relation skipped")
                continue
            if rel.predicate == "knows" and any(c.predicate.endswith("_of") and c.value == rel.target
                                                and c.valid_until is None for c in page.claims):
                continue  # "Maria moved" after "my sister Maria": she is known already
            rc = replace(cand, subject=rel.subject, predicate=rel.predicate, value=rel.target,
                         multi=rel.predicate not in SINGLE_RELATIONS)
            claims, counts = _apply(list(page.claims), rc, entry, now)
            if counts != (0, 0, 0):
                pages[page.id] = replace(page, claims=tuple(claims), updated=now)
    return {pid: replace(p, body=render_body(p)) for pid, p in pages.items()}




def _ensure(pages: dict[str, Page], load: Loader, user_id: str, name: str, kind: str, now: str) -> Page:
    pid = page_id(user_id, name)
    page = pages.get(pid) or load(pid)
    if page is None:
        title = user_id if name == user_id else name
        page = Page(pid, "entity", user_id, title, now, now, extra={"kind": kind})
        pages[pid] = page
    return page


def _apply(claims: list[Claim], cand: Candidate, entry: RawEntry, now: str) -> tuple[list[Claim], tuple[int, ...]]:
    """:func:`resolve.apply` with the relation's own claim id (see the module docstring); a
    many-valued relation (``owns``, ``sister_of``) adds a value instead of superseding."""
    cid = claim_id(entry.id, cand.subject, cand.predicate, norm_value(cand.value))
    rid = "c-" + short_hash("relation", cid)
    if any(rid in (c.id, c.supersedes, c.superseded_by) for c in claims):
        return claims, (0, 0, 0)
    if cand.multi:
        return _add(claims, cand, entry, now, rid)
    out, counts = apply(claims, cand, entry, now)
    return [_renamed(c, cid, rid) for c in out], counts


_MAX_SOURCES = 8  # "Maria knows you" said in a hundred turns: the first few are enough


def _add(claims: list[Claim], cand: Candidate, entry: RawEntry, now: str, rid: str
         ) -> tuple[list[Claim], tuple[int, ...]]:
    value = norm_value(cand.value)
    when = cand.valid_from or entry.when
    for i, c in enumerate(claims):
        if c.predicate != cand.predicate or norm_value(c.value) != value or not c.valid_at(when):
            continue
        if cand.negated:
            claims[i] = replace(c, valid_until=when, closed_at=now)
            return claims, (0, 1, 0)
        if entry.source in c.sources or len(c.sources) >= _MAX_SOURCES:
            return claims, (0, 0, 0)
        claims[i] = replace(c, sources=(*c.sources, entry.source))
        return claims, (0, 0, 1)
    if cand.negated:
        return claims, (0, 0, 0)
    claims.append(Claim(id=rid, subject=cand.subject, predicate=cand.predicate, value=cand.value.strip(),
                        text=cand.text, provenance=cand.provenance, confidence=round(float(cand.confidence), 4),
                        valid_from=when, recorded_at=now, sources=(entry.source,)))
    return claims, (1, 0, 0)


def _renamed(c: Claim, old: str, new: str) -> Claim:
    if old not in (c.id, c.supersedes, c.superseded_by):
        return c
    return replace(c, id=new if c.id == old else c.id, supersedes=new if c.supersedes == old else c.supersedes,
                   superseded_by=new if c.superseded_by == old else c.superseded_by)
