"""The heuristic extractor: first-person facts from the user's own turns, no model needed.

Only turns whose role is ``user`` are read; a statement by the assistant or by anyone else
is never the user's fact. Each named speaker is its own subject. Patterns are ordered tables:
(regex, predicate, page type, multi-valued, confidence). Hedged statements get a low
confidence (they go to review); questions and past-tense "used to" are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model import Candidate, RawEntry
from ..ports import Extraction

_V = r"(?P<v>[^,.;!?]+?)"  # a value: up to punctuation or a clause break
_END = r"(?=\s*(?:[,.;!?]|\band\b|\bbut\b|\bbecause\b|\bsince\b|\bso\b|$))"
_JOBS = (
    "engineer|developer|teacher|nurse|doctor|designer|manager|writer|student|lawyer|chef|cook|artist|"
    "scientist|analyst|consultant|accountant|architect|musician|photographer|programmer|researcher|"
    "professor|pilot|driver|farmer|firefighter|officer|counselor|therapist|pharmacist|dentist|mechanic|"
    "electrician|plumber|entrepreneur|founder|ceo|cto|intern|barista|waiter|waitress|cashier|journalist|"
    "editor|librarian|veterinarian|vet|paramedic|surgeon|recruiter|translator|carpenter|baker|painter|"
    "actor|actress|dancer|singer|coach|trainer|freelancer|realtor|banker|economist|biologist|chemist|"
    "physicist|mathematician|historian|psychologist|social worker|data scientist|product manager"
)
_REL = (
    "sister|brother|mother|mom|mum|father|dad|son|daughter|best friend|friend|boss|manager|cousin|aunt|"
    "uncle|grandma|grandmother|grandpa|grandfather|roommate|colleague|coworker|neighbor|neighbour"
)
_SINGLE_REL = {"mother", "mom", "mum", "father", "dad", "boss", "manager", "best friend"}
_PETS = "dog|cat|puppy|kitten|parrot|bird|rabbit|bunny|hamster|fish|turtle|snake|horse|guinea pig|lizard"

Rule = tuple[re.Pattern[str], str, str, bool, float]


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


RULES: list[Rule] = [
    (_r(rf"\bi(?:'m| am)? (?:now |currently |still )?(?:live|living|reside|residing) in {_V}{_END}"), "lives_in", "profile", False, 0.9),
    (_r(rf"\bi(?: have|'ve)? (?:just |recently |finally |now )?(?:moved|relocated) (?:back )?(?:to|into) {_V}{_END}"), "lives_in", "profile", False, 0.9),
    (_r(rf"\bi(?:'m| am) (?:now |currently )?based in {_V}{_END}"), "lives_in", "profile", False, 0.85),
    (_r(rf"\bi(?:'m| am) (?:originally )?from {_V}{_END}"), "hometown", "profile", False, 0.85),
    (_r(rf"\bi grew up in {_V}{_END}"), "hometown", "profile", False, 0.85),
    (_r(rf"\bi(?:'m| am)? (?:now |currently )?work(?:ing)? as (?:a |an )?{_V}{_END}"), "job", "profile", False, 0.9),
    (_r(rf"\bi(?: just)? (?:got|started|have) a (?:new )?job as (?:a |an )?{_V}{_END}"), "job", "profile", False, 0.9),
    (_r(rf"\bi(?:'m| am) (?:now |currently |actually )?(?:a |an )(?P<v>(?:[a-z-]+ )?(?:{_JOBS})){_END}"), "job", "profile", False, 0.85),
    (_r(rf"\bmy (?:job|profession|occupation) is (?:a |an )?{_V}{_END}"), "job", "profile", False, 0.9),
    (_r(rf"\bi(?:'m| am)? (?:now |currently )?work(?:ing)? (?:at|for) {_V}{_END}"), "employer", "profile", False, 0.85),
    (_r(rf"\bi (?:just )?(?:joined|got a job at|started (?:working )?at) {_V}{_END}"), "employer", "profile", False, 0.8),
    (_r(r"\bi(?:'m| am| have become| became| went) (?:now |a |an |fully |strictly )*(?P<v>vegetarian|vegan|pescatarian|keto|paleo|gluten[- ]free|lactose[- ]intolerant|flexitarian)\b"), "diet", "profile", False, 0.9),
    (_r(rf"\bi(?:'m| am) (?:now )?on an? {_V} diet{_END}"), "diet", "profile", False, 0.85),
    (_r(rf"\bmy name is {_V}{_END}"), "name", "profile", False, 0.95),
    (_r(rf"\b(?:please )?call me {_V}{_END}"), "preferred_name", "profile", False, 0.9),
    (_r(r"\bi(?:'m| am| just turned) (?P<v>\d{1,3})(?: years old| yo)?\b(?! (?:kids|children|dogs|cats|times|days|hours|minutes|weeks|months))"), "age", "profile", False, 0.7),
    (_r(rf"\bmy birthday is (?:on )?{_V}{_END}"), "birthday", "profile", False, 0.9),
    (_r(rf"\bmy (?:new )?(?:phone|cell|mobile)(?: number)? is {_V}{_END}"), "phone", "profile", False, 0.9),
    (_r(rf"\bi changed my (?:phone )?number to {_V}{_END}"), "phone", "profile", False, 0.9),
    (_r(rf"\bmy (?:new )?e-?mail(?: address)? is {_V}{_END}"), "email", "profile", False, 0.9),
    (_r(rf"\bmy (?:wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|spouse)(?:'s name)? is {_V}{_END}"), "partner", "relationship", False, 0.9),
    (_r(rf"\bi(?:'m| am) (?:now )?(?:married to|engaged to|dating|seeing) {_V}{_END}"), "partner", "relationship", False, 0.85),
    (_r(r"\bi(?:'m| am| got) (?:now )?(?P<v>married|single|divorced|engaged|widowed)\b"), "marital_status", "profile", False, 0.85),
    (_r(rf"\bi (?:drive|own) an? {_V}{_END}(?<!\bhouse)(?<!\bapartment)"), "car", "profile", False, 0.6),
    (_r(rf"\bi(?:'m| am)? (?:now )?(?:study|studying|majoring in) {_V}{_END}"), "studies", "profile", False, 0.8),
    (_r(rf"\bi have (?P<v>(?:no|one|two|three|four|five|\d+) (?:kids|children|sons|daughters|son|daughter|kid|child)){_END}"), "children", "profile", False, 0.85),
    (_r(rf"\bi (?:now |actually |really |much |still )*prefer {_V}{_END}"), "prefers", "preference", False, 0.85),
    (_r(r"\bmy (?:favou?rite|fav) (?P<k>[a-z][a-z ]{0,30}?) (?:is|are) (?P<v>[^,.;!?]+?)(?=\s*(?:[,.;!?]|\bbut\b|$))"), "favorite", "preference", False, 0.85),
    (_r(rf"\bi(?:'m| am) allergic to {_V}{_END}"), "allergy", "preference", True, 0.9),
    (_r(rf"\bi (?:really |absolutely |also |just |truly )?(?:like|love|enjoy|adore)(?! to be\b) {_V}{_END}"), "likes", "preference", True, 0.7),
    (_r(rf"\bi (?:really |absolutely |also |just )?(?:hate|dislike|detest|can't stand|cannot stand|don't like|do not like|don't enjoy) {_V}{_END}"), "dislikes", "preference", True, 0.7),
    (_r(rf"\bmy hobb(?:y is|ies are|ies include) {_V}{_END}"), "hobby", "preference", True, 0.85),
    (_r(rf"\bi (?:speak|am fluent in|'m fluent in) {_V}{_END}"), "speaks", "fact", True, 0.8),
    (_r(rf"\bi(?:'m| am) learning {_V}{_END}"), "learning", "fact", True, 0.75),
    (_r(rf"\bmy (?P<k>{_REL})(?:'s name)? is {_V}{_END}"), "relationship", "relationship", True, 0.85),
    (_r(rf"\bi have an? (?P<k>{_REL}) (?:named|called) {_V}{_END}"), "relationship", "relationship", True, 0.85),
    (_r(rf"\bi (?:have|got|adopted) (?:an?|two|three|\d+) (?:new )?(?P<v>(?:[a-z]+ )?(?:{_PETS})s?(?: (?:named|called) [^,.;!?]+?)?){_END}"), "pet", "relationship", True, 0.85),
]

# "I no longer X" / "I don't X anymore" / "I stopped X-ing": the rest is matched as "I X" and closes it.
_NEGATION = [
    _r(r"\bi (?:no longer|don't|do not|dont|won't) (?P<rest>.+?) (?:any ?more|these days)\b"),
    _r(r"\bi (?:no longer|am no longer|'m no longer|stopped being) (?P<rest>.+)$"),
]
_CLOSE_ALL = [
    (_r(r"\bi (?:quit|left|lost) my job\b"), ("job", "employer")),
    (_r(r"\bi (?:broke up with|divorced|split up with|separated from) (?:my )?\w+"), ("partner",)),
    (_r(r"\bi(?:'m| am) (?:now )?(?:unemployed|between jobs|out of work)\b"), ("job", "employer")),
]
_HEDGE = _r(r"\b(?:maybe|perhaps|probably|i think|i guess|might|not sure|kind of|sort of|thinking about|considering|planning to|hoping to|someday)\b")
_SKIP = _r(r"\b(?:used to|would like|'d like|if i|when i was|wish i|do you|are you|don't you|should i)\b")
_TRAIL = _r(r"\s+(?:now|these days|nowadays|anymore|any more|too|as well|again|lately|recently|currently|at the moment|right now|instead|actually|though|really|a lot|so much|very much|yesterday|today|last (?:year|month|week|summer|winter|spring|fall|autumn|weekend)|this (?:year|month|week)|in \d{4}|(?:a few|\w+) (?:days|weeks|months|years) ago|a (?:day|week|month|year) ago|for (?:good|now))$")
_LEAD = _r(r"^(?:oh|well|so|also|and|but|btw|by the way|actually|anyway|yeah|yes|no|ok|okay|hey|hi|update|fyi|just so you know|now)\b[,:]?\s*")
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_PREFER_SPLIT = _r(r"\s+(?:over|to|rather than|instead of|more than)\s+")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s.strip()]


def clean_value(value: str) -> str:
    value = " ".join(value.split()).strip(" \"'`-:")
    value = re.sub(r"^(?:named|called)\s+", "", value, flags=re.IGNORECASE)
    for _ in range(3):
        stripped = _TRAIL.sub("", value)
        if stripped == value:
            break
        value = stripped
    return value.strip(" \"'`-:")


def norm_value(value: str) -> str:
    v = re.sub(r"^(?:a|an|the|my)\s+", "", value.casefold().strip())
    return re.sub(r"[^\w<> ]+", "", v).strip()


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def _predicate(base: str, match: re.Match[str], value: str) -> tuple[str, str]:
    if base == "prefers":
        head_part = _PREFER_SPLIT.split(value)[0]
        words = re.findall(r"[a-z]+", head_part.casefold())
        head = _singular(words[-1]) if words else "thing"
        return f"{head}_preference", head_part
    if base == "favorite":
        kind = re.sub(r"[^a-z]+", "_", match.group("k").casefold()).strip("_")
        return f"favorite_{kind}", value
    if base == "relationship":
        kind = re.sub(r"[^a-z]+", "_", match.group("k").casefold()).strip("_")
        kind = {"mom": "mother", "mum": "mother", "dad": "father"}.get(kind, kind)
        return f"relationship_{kind}", value
    return base, value


def facts_in(sentence: str) -> list[tuple[str, str, str, bool, float]]:
    """(predicate, value, type, multi, confidence) for every rule that matches."""
    s = _LEAD.sub("", sentence.strip())
    out: list[tuple[str, str, str, bool, float]] = []
    seen: set[str] = set()
    for pattern, base, kind, multi, conf in RULES:
        m = pattern.search(s)
        if not m:
            continue
        value = clean_value(m.group("v"))
        if not value or len(value) > 120 or value.casefold() in ("it", "that", "this", "them", "you"):
            continue
        predicate, value = _predicate(base, m, value)
        value = clean_value(value)
        if predicate in seen or not value:
            continue
        seen.add(predicate)
        if base == "relationship" and m.group("k").casefold() in _SINGLE_REL:
            multi = False
        out.append((predicate, value, kind, multi, conf))
    return out


class HeuristicExtractor:
    name = "heuristic"

    def extract(self, entries: Sequence[RawEntry]) -> Extraction:
        out: list[Candidate] = []
        for entry in entries:
            if entry.role != "user" or entry.quarantined:
                continue
            subject = _subject(entry)
            for sentence in sentences(entry.content):
                out.extend(self._sentence(entry.id, subject, sentence))
        return Extraction(out)

    def _sentence(self, raw_id: str, subject: str, sentence: str) -> list[Candidate]:
        if sentence.rstrip().endswith("?") or _SKIP.search(sentence):
            return []
        text = sentence.strip()[:300]
        hedged = bool(_HEDGE.search(sentence))
        for pattern, predicates in _CLOSE_ALL:
            if pattern.search(sentence):
                return [Candidate(raw_id, subject, p, "", text, 0.9, type="profile", negated=True) for p in predicates]
        for pattern in _NEGATION:
            m = pattern.search(sentence)
            if m:
                rest = "I " + m.group("rest")
                return [
                    Candidate(raw_id, subject, p, v, text, c, type=k, multi=mu, negated=True)
                    for p, v, k, mu, c in facts_in(rest)
                    if p not in ("dislikes",)
                ]
        return [
            Candidate(raw_id, subject, p, v, text, 0.4 if hedged else c, type=k, multi=mu)
            for p, v, k, mu, c in facts_in(sentence)
        ]


def _subject(entry: RawEntry) -> str:
    if entry.speaker and entry.speaker.casefold() != entry.user_id:
        return entry.speaker.strip()
    return entry.user_id
