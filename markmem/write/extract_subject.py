"""Who a clause is about, and corrections of what the user just said.

* **Third parties.** "My mum lives in Malaga", "my sister Maria got a job at Ostara", "Tom moved to
  Oslo" are facts about that person, not the user. :func:`third_party` names the subject ("mum",
  "Maria", "Tom") and rewrites the clause to the first person ("I live in Malaga") so the same
  rules read it; the resolver keeps each subject's claims on pages of their own, so a third
  party's move never closes the user's home. "She/he/they ..." right after such a clause in the
  same turn is the same person. "My sister is Maria" stays the user's relationship fact.
* **Corrections.** "sorry, I meant Tuesday", "no wait, it's Porto not Lisbon", "I meant Porto, not
  Lisbon": :func:`correction` returns ``(new, old)``; the extractor applies it to the user's
  recent fact that it corrects (by the old value, else the latest fact of the last two days).
"""

from __future__ import annotations

import re

from .extract_rules import PETS, REL

_KIN = (
    rf"{REL}|wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|spouse|son|daughter|kid|kids|baby|"
    r"parents|mom and dad|mum and dad|grandparents|niece|nephew|stepmom|stepdad|in-laws|sister-in-law|"
    r"brother-in-law|mother-in-law|father-in-law|ex|ex-wife|ex-husband|flatmate|housemate|teammate|classmate|"
    r"landlord|landlady|doctor|therapist|sibling|twin"
)
_ADJ = r"(?:(?:little|big|older|younger|baby|twin|elder|best|new|old|oldest|youngest|eldest|step)\s+)*"
_ADV = r"(?:(?:just|also|finally|recently|now|still|actually|currently|apparently|already|officially)\s+)*"
_VERBS = (
    r"lives|moved|works|worked|got|is|was|has|had|started|joined|quit|left|became|married|bought|adopted|"
    r"relocated|retired|teaches|studies|speaks|runs|owns|drives|loves|hates|likes|prefers|switched|"
    r"went|goes|became|landed|found|took|accepted|'s"
)
# said without "my" at a clause's start: "mum sold the house and moved to Gozo"
_BARE_KIN = r"mum|mom|dad|mama|papa|grandma|grandpa|gran|nan|nana|granny"
_KIN_SUBJECT = re.compile(
    rf"^(?:(?:and|but|so|also|oh|btw|well|plus)[, ]+)*(?:(?:my|our) {_ADJ}(?P<rel>{_KIN})|(?P<bare>{_BARE_KIN}))"
    rf"(?:,? (?P<name>(?-i:[A-Z][a-z]+))(?=[ ,]))?,? (?P<rest>{_ADV}(?P<verb>{_VERBS}|[a-z]+(?:s|ed)|'s)\b.*)$",
    re.IGNORECASE,
)
# what a third party has: "my neighbour's dog is a huge Great Dane", "my son's teacher just moved to Coventry" are
# about the neighbour's dog and the son's teacher, never the user's own dog or home (h-ledger9)
_KIN_OWNED = re.compile(
    rf"^(?:(?:and|but|so|also|oh|btw|well|plus)[, ]+)*(?:(?:my|our) {_ADJ}(?P<rel>{_KIN}|mate)|(?P<bare>{_BARE_KIN}))"
    rf"(?:,? (?P<name>(?-i:[A-Z][a-z]+)))?'s (?P<thing>(?!name\b)[a-z]+) "
    rf"(?P<rest>{_ADV}(?:{_VERBS}|[a-z]+(?:s|ed))\b.*)$",
    re.IGNORECASE,
)
_NAME_SUBJECT = re.compile(
    rf"^(?:(?:and|but|so|also|oh|btw|well|plus)[, ]+)*(?P<name>(?-i:[A-Z][a-z]+)(?: (?-i:[A-Z][a-z]+))?) "
    rf"(?P<rest>{_ADV}(?P<verb>{_VERBS})\b.*)$",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset((
    "i it this that there here he she they we you my our your the a an what who when where why how which "
    "today tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday everyone everything "
    "nothing someone somebody anyone nobody mom mum dad god lol haha yes no ok okay well so and but also "
    "work home life dinner lunch breakfast just finally recently also now still actually currently then "
    "guess anyway update news sorry oops wait tonight everybody mine dad's mum's mom's "
    "moved started joined got lives works quit left became married bought adopted relocated retired "
    "being having getting going doing maybe probably definitely honestly literally basically apparently"
).split())
_ACTIVITY = re.compile(r"^[A-Z][a-z]+ing$")  # "Swimming is on Wednesdays now": an activity, not a person
_KIN_NAMED = re.compile(
    rf"^(?:(?:and|but|so|also|oh|btw|well|plus)[, ]+)*(?:my|our) {_ADJ}(?:{_KIN}),? (?P<name>[a-z]+),? "
    rf"(?P<rest>{_ADV}(?:{_VERBS})\b.*)$",
    re.IGNORECASE,
)
_PRONOUN = re.compile(rf"^(?:(?:and|but|so|also|then)[, ]+)*(?P<p>she|he|they)(?P<rest>(?:'s| {_ADV}[a-z']+)\b.*)$",
                      re.IGNORECASE)
_IS_NAME = re.compile(r"^(?:is|'s) (?:<[A-Z_]+>|(?-i:[A-Z][a-z]+)(?: (?-i:[A-Z][a-z]+))?)\s*[.!]*$", re.IGNORECASE)
_CALLED = re.compile(r"^(?:is|'s) (?:called|named)\b", re.IGNORECASE)
_NAME_IS = re.compile(r"^(?:'s)? ?name(?: is|'s)\b", re.IGNORECASE)
_PARTICIPLE = re.compile(r"^'s (?=(?:been|got|moved|started|joined|left|quit|become|gone|bought|adopted|"
                         r"finally|just|also|recently|already|\w+ed\b))", re.IGNORECASE)
_IRREGULAR = {"is": "am", "has": "have", "does": "do", "goes": "go", "'s": "'m", "was": "was"}
_POSSESSIVE = re.compile(r"\b(?:her|his|their)\b", re.IGNORECASE)


# the user's own household shares its home and car with the user ("my son's school is St Mary's" is no owned thing
# at all: then "we moved him to Oakfield" still finds it)
# what a third party has that is theirs, not an event the user shares ("my sister's wedding is on the 14th" stays
# the user's): their animals, their teacher or boss, their home and car (their partner stays the relationship rules')
_OWNED = re.compile(rf"(?:{PETS}|teacher|boss|car|van|house|flat|place|home)", re.IGNORECASE)
_SHARED = re.compile(r"car|van|house|flat|place|home", re.IGNORECASE)  # the household's are the user's too
_HOUSEHOLD = frozenset("son daughter kid kids baby wife husband partner girlfriend boyfriend spouse".split())
_USERS_SLOT = re.compile(r"^\s*(?:(?:is|are|'s) (?:now |still |officially |definitely )?my\b|[^,;.!?]{0,50}\bas my\b)",
                        re.IGNORECASE)


def third_party(clause: str, previous: str | None) -> tuple[str, str] | None:
    """(subject, first-person clause) when the clause is about someone else, else None.
    ``previous`` is the third party of the turn's previous clause ("she" refers to it)."""
    m = _KIN_NAMED.match(clause)  # "my flatmate kai just started at Bramble Bakery"
    if m and m.group("name").casefold() not in _NOT_NAMES:
        return m.group("name").capitalize(), _first_person(m.group("rest"))
    m = _KIN_OWNED.match(clause)
    if m and _OWNED.fullmatch(m.group("thing")) and not (_SHARED.fullmatch(m.group("thing"))
                                                        and (m.group("rel") or "").casefold() in _HOUSEHOLD):
        subject = m.group("name") or (m.group("rel") or m.group("bare")).casefold()
        return subject, f"my {m.group('thing')} {m.group('rest')}"
    m = _KIN_SUBJECT.match(clause)
    if m:
        rest = m.group("rest")
        if _IS_NAME.match(rest) or _NAME_IS.match(rest) or _CALLED.match(rest) or rest.startswith("'s name"):
            return None  # "my sister is Maria": the user's relationship fact
        subject = m.group("name") or (m.group("rel") or m.group("bare")).casefold()
        return subject, _first_person(rest)
    m = _NAME_SUBJECT.match(clause)
    if m and _USERS_SLOT.match(m.group("rest")):
        return None  # "Wet Leg is my favourite band now", "Parks and Rec has replaced X as my comfort show"
    if m and m.group("name").split()[0].casefold() not in _NOT_NAMES and not _ACTIVITY.match(m.group("name")):
        return m.group("name"), _first_person(m.group("rest"))
    m = _PRONOUN.match(clause)
    if m and previous:
        return previous, _first_person(m.group("rest").lstrip())
    return None


def _first_person(rest: str) -> str:
    """ "lives in Malaga" -> "I live in Malaga"; "'s moved to Oslo" -> "I've moved to Oslo"."""
    rest = rest.strip()
    if _PARTICIPLE.match(rest):
        return "I've " + rest[3:]
    if rest.startswith("'s "):
        return "I'm " + rest[3:]
    words = rest.split(" ", 1)
    lead: list[str] = []
    while words and re.fullmatch(r"just|also|finally|recently|now|still|actually|currently|apparently|already|"
                                 r"officially", words[0], re.IGNORECASE):
        lead.append(words[0])
        words = words[1].split(" ", 1) if len(words) > 1 else []
    if not words:
        return "I " + " ".join(lead)
    verb = _base(words[0])
    tail = _POSSESSIVE.sub("my", words[1]) if len(words) > 1 else ""
    return " ".join(["I", *lead, verb, tail]).strip()


def _base(verb: str) -> str:
    v = verb.casefold()
    if v in _IRREGULAR:
        return _IRREGULAR[v]
    if v.endswith("ies") and len(v) > 4:
        return v[:-3] + "y"
    if v.endswith(("ches", "shes", "sses", "xes", "zes")):
        return v[:-2]
    if v.endswith("s") and not v.endswith("ss") and len(v) > 3:
        return v[:-1]
    return v


_LEAD = (r"(?:(?:sorry|oops|whoops|wait|no|nope|nah|actually|scratch that|ugh|"
         r"correction(?: from (?:last time|before|earlier))?|"
         r"my bad|err|um|i mean|oh|ugh|argh|hmm|ah|ok|lol|typo(?: yesterday| earlier| before)?|autocorrect)"
         r"[,!.:]*\s+)")
_WORDS = r"[\w&:./'+-]+(?: [\w&:./'+-]+){0,3}"  # a value: at most four words
_NEW = rf"(?P<new>{_WORDS}?)"
_OLD = rf"(?P<old>{_WORDS}?)"
_STOP = r"(?=\s*(?:[,;!?]|\.(?:\s|$)|\blol\b|\bhaha\b|$))"
_CORRECTIONS = [
    re.compile(rf"^{_LEAD}*i said {_OLD},? but i meant {_NEW}{_STOP}", re.IGNORECASE),
    re.compile(rf"^{_LEAD}*i said {_OLD},? (?:but |it's |its |it is |he's |hes |she's |shes |they're |i meant )?"
               rf"(?:at |in |on )?{_NEW}{_STOP}", re.IGNORECASE),
    re.compile(rf"^{_LEAD}*(?:i meant|i mean|i meant to say|meant|make that|it should be|should be|it's actually|"
               rf"its actually|it is actually|that should be)\s+{_NEW}(?:,?\s+not\s+{_OLD})?{_STOP}", re.IGNORECASE),
    re.compile(rf"^{_LEAD}+(?:it's|its|it is|that's|that is)\s+{_NEW},?\s+not\s+{_OLD}{_STOP}", re.IGNORECASE),
    re.compile(rf"^{_LEAD}*(?:it's|its|it is|that's|that is)?\s*not\s+{_OLD},?\s+(?:but|it's|it is)\s+{_NEW}{_STOP}",
               re.IGNORECASE),
    re.compile(rf"^{_LEAD}*not\s+(?:a |an |the )?{_OLD},\s+(?:a |an |the )?{_NEW}{_STOP}",
               re.IGNORECASE),
    re.compile(rf"^{_LEAD}+{_NEW},?\s+not\s+{_OLD}{_STOP}", re.IGNORECASE),
    re.compile(rf"\b(?:is|its|it's|actually|meant|name is|called)\s+{_NEW},?\s+not\s+{_OLD}{_STOP}", re.IGNORECASE),
    re.compile(rf"^{_LEAD}+(?:it was|it's|its|it is)(?: actually)?\s+(?:a |an |the |in |at )?"
               rf"(?P<new>(?-i:[A-Z0-9])[\w&:./'+-]*(?: (?-i:[A-Z0-9])[\w&:./'+-]*){{0,3}}){_STOP}", re.IGNORECASE),
    re.compile(rf"^(?:sorry|oops|whoops|wait|correction|my bad|typo|scratch that|actually)[,!.:]*\s+(?:{_LEAD})*"
               rf"(?:it's |it is |make that )?"
               rf"(?P<new>[\w:./'-]+(?: [\w:./'-]+){{0,2}})[.!]*$", re.IGNORECASE),
]
_MAYBE = re.compile(r"\b(?:not|meant|mean|said|sorry|oops|whoops|wait|correction|typo|autocorrect|actually|scratch|"
                    r"make that|should be|my bad|no)\b", re.IGNORECASE)
_LEAD_WORD = re.compile(r"^(?:sorry|oops|whoops|wait|no|nope|nah|actually|correction|um|err|ugh|ok|lol)\b",
                        re.IGNORECASE)
# what no slot ever holds (h-ledger9): a clause of its own ("actually, I was wondering if ..."), a word pointing
# back in time or at the talk itself ("typo earlier, my dentist is ...")
_NOT_NEW = re.compile(r"^(?:(?:i|we|you|he|she|they|it)(?:'\w+)?\s+\w|(?:earlier|before|yesterday|"
                      r"today|again|then|now|though|too|here|above|below)$)", re.IGNORECASE)
_FILLER = re.compile(r"^(?:(?:her|his|its|their|my|the) name is |it's called |called |named )?"
                     r"(?:the |a |an |on |in |at |to )*|\s+(?:lol|haha|sorry|oops|obviously|of course|i mean)$",
                     re.IGNORECASE)


def correction(clause: str) -> tuple[str, str | None] | None:
    """(new value, corrected value or None) for a correction clause, else None."""
    whole = clause.strip()
    if not _MAYBE.search(whole):
        return None  # no correction without one of these words: a cheap test before eight patterns
    parts = [whole, *(p.strip() for p in whole.split(", ") if p.strip())]  # "sorry 7:40 not 6:40, misread it"
    for pattern in _CORRECTIONS:
        m = next((found for p in parts if (found := pattern.match(p) or pattern.search(p))), None)
        if m:
            new = _FILLER.sub("", m.group("new").strip(" .!"))
            old = m.groupdict().get("old")
            old = _FILLER.sub("", old.strip()) if old else None
            if new and len(new) <= 60 and (old is None or len(old) <= 60) and not _LEAD_WORD.match(new) \
                    and not _NOT_NEW.match(new):
                return new, old
    return None
