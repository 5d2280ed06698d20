"""Time in a question: a date window that turns' dates are boosted by, and the events a comparison names.

* :func:`window`: a temporal expression ("a month ago", "last summer", "in May 2023", "in the past
  three months", "from July to October", "yesterday") resolved against the question's date (``as_of``,
  else now) into a day range. Search multiplies the score of every memory dated inside it
  (``Recipe.time_boost``), so the window re-ranks and never hides anything.
* :func:`events`: the event phrases of a question that compares or measures events ("how many days
  between A and B", "which did I do first, A or B", "the order of ..."). Search runs one search per
  phrase and interleaves their rankings with the question's own, so both events come back.

* :func:`anchor`: a span hung on another event ("two weeks after my trip", "before I moved"); search
  dates the event by its own best hit, and the span from there is the window.

A cheap pre-check (:func:`has_cue`, a set of time words) runs first: a question without a time word
costs one token scan and never reaches dateparser. Relative spans ("N weeks ago", seasons, "last
month") are arithmetic; dates with a month name go through dateparser (``languages=["en"]``, dates
from the past preferred, as in ``write/extract_time``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

_MONTHS = "january february march april may june july august september october november december".split()
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_NUM = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few|few|" \
       r"couple of|several)"
_UNIT = r"(?:days?|weeks?|months?|years?)"
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2,
            "a few": 3, "few": 3, "several": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11), "winter": (12, 2)}

# the cheap pre-check: a question with none of these words (or a year) has no temporal expression
CUE_WORDS = frozenset("""ago last past previous yesterday today tonight this week weekend month year morning first
earlier before after between order since spring summer fall autumn winter""".split()) | frozenset(
    m for full in _MONTHS for m in (full, full[:3])) | {"sept", "june", "july"}
_TOKEN = re.compile(r"[a-z]+|(?:19|20)\d\d")


def has_cue(question: str) -> bool:
    """Whether the question holds a time word or a year (one regex scan and a set look-up)."""
    tokens = _TOKEN.findall(question.casefold())
    return not CUE_WORDS.isdisjoint(tokens) or any(t[0].isdigit() for t in tokens)


class _Lazy:
    """A pattern compiled on its first use: only a question with a time cue (``has_cue``) reads these,
    and compiling them all cost a fresh process's first search ~3-8 ms of CPU."""

    __slots__ = ("_args", "_re")

    def __init__(self, *args: object) -> None:
        self._args = args
        self._re: re.Pattern[str] | None = None

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]  # search, finditer, fullmatch, sub
        if self._re is None:
            self._re = re.compile(*self._args)  # type: ignore[call-overload]  # two threads: the same pattern
        return getattr(self._re, name)


_AGO = _Lazy(rf"\b({_NUM}) ({_UNIT}) ago\b", re.IGNORECASE)
_SPAN = _Lazy(rf"\b(?:in |over |during |within )?the (?:past|last) (?:({_NUM}) )?({_UNIT})\b", re.IGNORECASE)
_LAST = _Lazy(rf"\b(?:last|previous) (week(?:end)?|month|year|spring|summer|fall|autumn|winter|{_MONTH})\b",
                   re.IGNORECASE)
_THIS = _Lazy(r"\b(?:this|the current) (week|month|year)\b", re.IGNORECASE)
_DAYWORD = _Lazy(r"\b(yesterday|today|tonight|this morning)\b", re.IGNORECASE)
_RANGE = _Lazy(rf"\bfrom ({_MONTH})(?: (\d{{4}}))? (?:to|until|through|till) ({_MONTH})(?: (\d{{4}}))?\b",
                    re.IGNORECASE)
_DATE = _Lazy(rf"\b(?:(?:on|in|of|since|during) )?(?:the )?(?:(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?)?({_MONTH})"
                   rf"(?: (\d{{1,2}})(?:st|nd|rd|th)?)?,?(?: (\d{{4}}))?\b|\bin ((?:19|20)\d\d)\b", re.IGNORECASE)

_BACK = _Lazy(r"\b(?:ago|last (?:week(?:end)?|month|year|spring|summer|fall|autumn|winter|night)|yesterday|"
                   r"recently|the other day|earlier this (?:week|month|year))\b", re.IGNORECASE)
_ANCHOR = _Lazy(rf"\b(?:({_NUM}) ({_UNIT}) )?(after|before|since) (.+?)(?:[?,.!]|$)", re.IGNORECASE)
_NAMED = _Lazy(rf"\b(?:{_MONTH}|\d+)\b", re.IGNORECASE)

# comparisons: "between A and B", "..., A or B?", "the order of ..."
_BETWEEN = _Lazy(r"\bbetween (.+?) and (.+?)(?:\?|$)", re.IGNORECASE)
_DURATION = _Lazy(r"\b(?:days?|weeks?|months?|years?|time|long)\b.*\bbetween\b", re.IGNORECASE)
_FIRST = _Lazy(r"\b(?:first|earlier|sooner|before|later|last|most recently|order)\b", re.IGNORECASE)
_LEAD = _Lazy(r"^(?:the )?(?:day|time|date|moment) (?:when |that )?|^when ", re.IGNORECASE)


def _day(iso: str | None) -> date | None:
    """The day of an ISO timestamp, ``None`` when there is none or it does not parse."""
    try:
        return date.fromisoformat(iso[:10]) if iso else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Window:
    phrase: str  # the words of the question it came from
    start: date  # first day inside
    end: date  # last day inside

    def holds(self, iso: str | None) -> bool:
        day = _day(iso)
        return day is not None and self.start <= day <= self.end

    def soon_after(self, iso: str | None) -> bool:
        """Dated after the window by at most its length and a week: a turn may tell of it then."""
        day = _day(iso)
        return day is not None and self.end < day <= self.end + (self.end - self.start) + timedelta(days=7)

    @staticmethod
    def looks_back(text: str | None) -> bool:
        """The text tells of an earlier time ("last month we went to ..."): a turn tells of an event
        on the day it happened or later, never earlier."""
        return bool(text) and _BACK.search(text or "") is not None

    def as_dict(self) -> dict[str, str]:
        return {"phrase": self.phrase, "start": self.start.isoformat(), "end": self.end.isoformat()}


def window(question: str, ref: datetime) -> Window | None:
    """The date window a question's temporal expression names, resolved against ``ref``, else None."""
    if not has_cue(question):
        return None
    return _window(question, ref.date())


@lru_cache(maxsize=1024)
def _window(question: str, today: date) -> Window | None:
    for resolve in (_ago, _span, _range, _between, _last, _this, _dayword, _dated):
        found = resolve(question, today)
        if found is not None:
            return found
    return None


def _count(word: str | None) -> int:
    if not word:
        return 1
    word = word.casefold()
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def _days(n: int, unit: str) -> int:
    return n * _UNIT_DAYS[unit.casefold().rstrip("s")]


def _ago(q: str, today: date) -> Window | None:
    """"a month ago": that day, give or take a quarter of the distance (at least two days)."""
    m = _AGO.search(q)
    if not m:
        return None
    back = _days(_count(m.group(1)), m.group(2))
    slack = max(2, back // 4)
    center = today - timedelta(days=back)
    return Window(m.group(0), center - timedelta(days=slack), min(today, center + timedelta(days=slack)))


def _span(q: str, today: date) -> Window | None:
    """"in the past three months": from that far back until the question."""
    m = _SPAN.search(q)
    if not m:
        return None
    n = _count(m.group(1)) if m.group(1) else 1
    return Window(m.group(0).strip(), today - timedelta(days=_days(n, m.group(2))), today)


def _range(q: str, today: date) -> Window | None:
    m = _RANGE.search(q)
    if not m:
        return None
    first = _month_span(m.group(1), m.group(2), today)
    last = _month_span(m.group(3), m.group(4), today)
    if last[1] < first[0]:
        first = (first[0].replace(year=first[0].year - 1), first[1].replace(year=first[1].year - 1))
    return Window(m.group(0), first[0], last[1])


def _between(q: str, today: date) -> Window | None:
    """"between August 11 and August 15, 2023": from the first date to the second (whose year the first
    borrows when it has none)."""
    m = _BETWEEN.search(q)
    if not m or not (_is_date(m.group(1)) and _is_date(m.group(2))):
        return None
    last = _dated(m.group(2), today)
    year = re.search(r"\b(?:19|20)\d\d\b", m.group(2))
    first_text = m.group(1) if re.search(r"\b(?:19|20)\d\d\b", m.group(1)) or not year else \
        f"{m.group(1)} {year.group(0)}"
    first = _dated(first_text, today)
    if first is None or last is None or last.end < first.start:
        return None
    return Window(m.group(0).rstrip("?"), first.start, last.end)


def _is_date(text: str) -> bool:
    return _DATE.fullmatch(text.strip(" ?.,")) is not None


def _last(q: str, today: date) -> Window | None:
    """"last week/month/year/summer/May": the most recent such period before the question."""
    m = _LAST.search(q)
    if not m:
        return None
    what = m.group(1).casefold()
    if what in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday() + 7)
        return Window(m.group(0), monday, monday + timedelta(days=6))
    if what == "month":
        end = today.replace(day=1) - timedelta(days=1)
        return Window(m.group(0), end.replace(day=1), end)
    if what == "year":
        return Window(m.group(0), date(today.year - 1, 1, 1), date(today.year - 1, 12, 31))
    if what in _SEASONS:
        return Window(m.group(0), *_season(what, today))
    start, end = _month_span(what, None, today, strictly_before=True)
    return Window(m.group(0), start, end)


def _this(q: str, today: date) -> Window | None:
    m = _THIS.search(q)
    if not m:
        return None
    what = m.group(1).casefold()
    start = {"week": today - timedelta(days=today.weekday()), "month": today.replace(day=1),
             "year": today.replace(month=1, day=1)}[what]
    return Window(m.group(0), start, today)


def _dayword(q: str, today: date) -> Window | None:
    m = _DAYWORD.search(q)
    if not m:
        return None
    day = today - timedelta(days=1) if m.group(1).casefold() == "yesterday" else today
    return Window(m.group(0), day, day)


def _dated(q: str, today: date) -> Window | None:
    """A date with a month name ("on May 5th", "in May 2023") or a year ("in 2022"), through dateparser:
    the day (give or take one), else the whole month, else the whole year."""
    for m in _DATE.finditer(q):
        if m.group(2) and m.group(2).casefold() == "may" and not (m.group(1) or m.group(3) or m.group(4)) \
                and m.group(0).casefold().startswith("may"):
            continue  # "may" the verb, not the month
        if m.group(5):
            year = int(m.group(5))
            return Window(m.group(0), date(year, 1, 1), date(year, 12, 31))
        day = m.group(1) or m.group(3)
        if day is None:
            start, end = _month_span(m.group(2), m.group(4), today)
            return Window(m.group(0), start, end)
        found = _parse(f"{m.group(2)} {day} {m.group(4) or ''}".strip(), today)
        if found is not None:
            return Window(m.group(0), found - timedelta(days=1), found + timedelta(days=1))
    return None


def _month_span(name: str, year: str | None, today: date, strictly_before: bool = False) -> tuple[date, date]:
    """A month by name: in ``year``, else the most recent one that has begun by ``today``."""
    month = next(i for i, full in enumerate(_MONTHS, 1) if full.startswith(name.casefold()[:3]))
    y = int(year) if year else today.year
    if not year and (month > today.month or (strictly_before and month == today.month)):
        y -= 1
    start = date(y, month, 1)
    nxt = date(y + month // 12, month % 12 + 1, 1)
    return start, nxt - timedelta(days=1)


def _season(name: str, today: date) -> tuple[date, date]:
    """The most recent season of that name that has ended by ``today`` (winter spans the new year)."""
    first, last = _SEASONS[name]
    y = today.year
    while True:
        start = date(y - (1 if first > last else 0), first, 1)
        end = date(y + (last // 12), last % 12 + 1, 1) - timedelta(days=1)
        if end < today:
            return start, end
        y -= 1


@lru_cache(maxsize=1024)
def _parse(phrase: str, today: date) -> date | None:
    try:
        import dateparser
    except ImportError:  # dateparser is a dependency; without it a dated question just gets no window
        return None
    found = dateparser.parse(phrase, languages=["en"], settings={
        "RELATIVE_BASE": datetime(today.year, today.month, today.day), "PREFER_DATES_FROM": "past"})
    return None if found is None else found.date()


@dataclass(frozen=True)
class Anchor:
    """"two weeks after my trip to Rome", "before I moved": a span of time relative to another event."""
    phrase: str  # the event the span hangs on ("my trip to Rome")
    relation: str  # "after" | "before"
    days: int | None  # how far from it ("two weeks": 14), None: any time on that side

    def window(self, at: date, today: date) -> Window:
        """The span, once the anchor event is dated ``at``."""
        label = f"{self.relation} {self.phrase} ({at.isoformat()})"
        if self.days is None:
            if self.relation == "after":
                return Window(label, at, max(at, today))
            return Window(label, date(1900, 1, 1), at)
        slack = max(2, self.days // 4)
        center = at + timedelta(days=self.days if self.relation == "after" else -self.days)
        return Window(label, center - timedelta(days=slack), center + timedelta(days=slack))


def anchor(question: str) -> Anchor | None:
    """The event a relative span hangs on ("what did I buy two weeks after my trip?"), else None."""
    if not has_cue(question):
        return None
    m = _ANCHOR.search(question)
    if not m or len(m.group(4).split()) < 2 and not m.group(2):
        return None  # "have I been there before?": no event named
    rel = "before" if m.group(3).casefold() == "before" else "after"
    days = _days(_count(m.group(1)), m.group(2)) if m.group(2) else None
    phrase = " ".join(m.group(4).split())
    return Anchor(phrase, rel, days) if phrase else None


def without(question: str, span: Window) -> str:
    """The question without a relative date expression ("a month ago", "last summer": words no memory of
    that time needs to contain); a named date ("in June", "May 2023") stays, as text may say it too."""
    if _NAMED.search(span.phrase):
        return question
    rest = " ".join(question.replace(span.phrase, " ").split())
    return rest if rest.strip(" ?.!") else question


def events(question: str) -> tuple[str, ...]:
    """The event phrases a comparing question names (two or more), else ``()``."""
    if not has_cue(question):
        return ()
    m = _BETWEEN.search(question)
    # how long between two events (two dates are a window; "between John and Tim" is no span of time)
    if m and _DURATION.search(question) and not (_is_date(m.group(1)) or _is_date(m.group(2))):
        return _clean([m.group(1), m.group(2)])
    first = _FIRST.search(question)
    comma = question.find(",", first.end()) if first else -1
    head, tail = question[:comma], question[comma + 1:]
    if comma > 0 and " or " in tail:
        options = [o for part in tail.split(" or ") for o in part.split(", ")]
        context = _FIRST.sub(" ", head)
        return _clean([f"{context} {o}" for o in options])
    return ()


def _clean(parts: list[str]) -> tuple[str, ...]:
    out = [" ".join(_LEAD.sub("", p.strip(" ?.,'\"")).split()) for p in parts]
    out = [p for p in out if p]
    return tuple(out) if len(out) >= 2 else ()
