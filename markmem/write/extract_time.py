"""When a clause's fact holds: future-dated changes and temporary states, resolved against the turn.

* A **future-dated change** ("from next month I'll work at Ostara", "starting in March I'm moving
  to Lyon", "come september I'm at Durham", "picking up my new Niro on the 3rd of april", a change
  done to the user: "they're transferring me to the Birmingham office from 1 july") is rewritten to
  the plain statement ("I work at Ostara", "I moved to the Birmingham office") and starts at the
  resolved date: :func:`scheduled` returns ``(clause, start)``. A plan without a date ("I'll move
  to Oslo someday") is not a fact: the extractor skips it. The plan is read in its own comma segment
  ("registered with the new surgery, Dr Lindqvist will be my GP from december"), and a named successor
  taking over on a date ("cancelled Virgin, Hyperoptic takes over on the 15th of may") reads as "I switched
  to Hyperoptic" from then (``extract_recall.Recall`` finds the service slot).
* A **temporary state** ("this week I'm in Lisbon", "I'm staying with my parents until Sunday",
  "for the summer I'm working at the café", "spending october at my parents' place in Dublin",
  "for a fortnight")
  holds from the turn until the period ends: :func:`temporary` returns ``(clause, end)``. It does
  not close the lasting fact.

Dates go through dateparser (``languages=["en"]``: language detection alone costs ~2 s, and a
named language ~1 ms), relative to the turn's time and preferring the future. dateparser has no
seasons, weeks' ends or "the end of the month", so those few periods are computed here.
Without dateparser installed, the same table covers weekdays, months and "next week/month/year".
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from ..ids import format_time

_MONTHS = ("january february march april may june july august september october november december").split()
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAYS = ("monday tuesday wednesday thursday friday saturday sunday").split()
_DAY = r"(?:mon|tues|tue|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?"
_NUM = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|couple of|few)"
_UNIT = r"(?:days?|weeks?|months?|years?)"
_SEASON = r"(?:spring|summer|fall|autumn|winter|holidays?|christmas|semester|term)"

# a date phrase that can open a future-dated change (prefix words are not part of the date)
_DATE = (
    rf"(?:next (?:week|month|year|{_DAY}|{_SEASON})|tomorrow|the day after tomorrow|christmas|xmas|(?:the )?new year|"
    rf"(?:the )?(?:start|beginning|first|1st|end) of (?:next (?:week|month|year)|{_MONTH})|"
    rf"(?:the )?end of (?:the |this )?(?:year|month)|"
    rf"in {_NUM} {_UNIT}|{_NUM} {_UNIT} from now|(?:this )?(?:coming )?{_DAY}|"
    rf"(?:in |early |late |mid[- ]?)?{_MONTH}(?: \d{{1,2}}(?:st|nd|rd|th)?)?(?:,? \d{{4}})?|"
    rf"the \d{{1,2}}(?:st|nd|rd|th)?(?: of {_MONTH})?|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH}|"
    rf"\d{{4}}-\d\d-\d\d|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?)"
)
_SCHEDULE = re.compile(
    rf"(?:,\s*)?\b(?P<lead>from|starting(?: on| in| from)?|beginning(?: on| in)?|as of|effective(?: from)?|after|"
    rf"come|on|in|by|at)?\s*(?P<date>{_DATE})\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(?:i|we)(?:'ll| will| shall|'m going to| am going to|'m gonna| am gonna|'m about to| am about to)\s+"
    r"|\b(?:i|we)(?:'m| am|'re| are) (?=(?:moving|relocating|starting|joining|switching|changing|leaving|"
    r"transferring|becoming|heading)\b)"
    r"|\b(?:i|we) (?=(?:start|begin|join|move|relocate|switch|become)\b)"
    r"|^(?=(?:moving|relocating|starting|joining|switching|transferring|picking up|collecting)\b)"
    r"|\b(?:will|'ll) (?=be\b)"
    # "they're transferring me to the Birmingham office from 1 july": a change done to the user
    r"|\b(?:they|he|she|it|work|[a-z]+)(?:'re|'s| are| is) "
    r"(?=(?:transferring|moving|relocating|posting) (?:me|us) to\b)",
    re.IGNORECASE,
)
# present-progressive or bare future verbs -> the simple statement the rules read
_TENSE = [
    # "they're moving me to the Penrith store from the 20th": a place of work, not a home
    (re.compile(r"\b[\w']+(?: (?:are|is))? (?:transferring|moving|relocating|posting) (me|us) to\b(?=\s+(?:the\s+)?"
                r"(?:[\w'-]+\s+){0,3}(?:office|store|branch|site|team|depot|shop|department|ward|school|hospital|"
                r"warehouse|plant|lab|campus|clinic|practice)\b)", re.IGNORECASE),
     lambda m: ("I" if m.group(1).casefold() == "me" else "we") + " work at"),
    (re.compile(r"\b[\w']+(?: (?:are|is))? (?:transferring|moving|relocating|posting) (me|us) to\b", re.IGNORECASE),
     lambda m: ("I" if m.group(1).casefold() == "me" else "we") + " moved to"),
    # "switching courses, I'll be doing midwifery": the plan's own "I'll" when _FUTURE matched elsewhere
    (re.compile(r"\b(i|we)(?:'ll| will| shall|'m going to| am going to|'re going to| are going to)\s+", re.IGNORECASE),
     r"\1 "),
    (re.compile(r"\b(moving|relocating)\b", re.IGNORECASE), "moved"),
    (re.compile(r"\b(move|relocate)\b", re.IGNORECASE), "moved"),
    (re.compile(r"\bstarting (?=at|with|as)\b|\bstart (?=at|with|as)\b|\bbegin(?:ning)? (?=at|with|as)\b",
                re.IGNORECASE), "started "),
    (re.compile(r"\bstarting (?=a |my |the |work|working)|\bstart (?=a |my |the |work|working)", re.IGNORECASE),
     "started "),
    (re.compile(r"\b(?:joining|join)\b", re.IGNORECASE), "joined"),
    (re.compile(r"\b(?:switching|switch) to\b", re.IGNORECASE), "switched to"),
    (re.compile(r"\bbecoming\b|\bbecome\b", re.IGNORECASE), "became"),
    (re.compile(r"\bi be\b", re.IGNORECASE), "I am"),  # "I'll be store manager" -> "I am store manager"
    (re.compile(r"\bwe be\b", re.IGNORECASE), "we are"),
    (re.compile(r"\bbe (?=an? |the |at |in |based|living|working|staying|studying)", re.IGNORECASE), "am "),
    (re.compile(r"\b(?:will|'ll|shall) be\b", re.IGNORECASE), "is"),
]

_TEMPORARY = re.compile(
    rf"(?:,\s*)?\b(?P<span>this (?:week|weekend|month|summer|winter|spring|fall|autumn|semester|term)|"
    rf"(?:for|over) (?:the |a )?(?:next )?(?:rest of the )?(?:long )?(?:week|weekend|fortnight|month|summer|winter|"
    rf"spring|fall|autumn|holidays|semester|term|easter)|this fortnight|"
    # "spending october at my parents'", "spending the summer in Cork", "over august"
    rf"spending (?:the )?(?:next )?(?:rest of the )?(?:week|weekend|month|summer|winter|spring|fall|autumn|holidays|"
    rf"semester|term)|(?:spending|for|over|during|throughout) (?:all of |the whole of |the month of )?{_MONTH}|"
    rf"for (?:the next )?{_NUM} {_UNIT}|for (?:a|the) (?:few|couple of) {_UNIT}|"
    rf"until (?P<until>{_DATE}|the weekend|the end of (?:the )?(?:week|month|year))|"
    rf"(?:un)?till? (?P<till>{_DATE})|temporarily|for now|for the time being)\b(?:\s*,)?",
    re.IGNORECASE,
)
_PERFECT = re.compile(r"\b(?:'ve|have|has|had|'d|was|were|used to|lived|worked|stayed|been)\b", re.IGNORECASE)
_EVENT = re.compile(r"\b(?:joined|started|moved|relocated|bought|adopted|began|became|switched|took up|signed|"
                    r"divorced|married|retired|graduated|quit|left)\b", re.IGNORECASE)
# a first-person verb in the past tense, a change ("we upped sticks", "I traded"): not a state with an end
_PAST_CHANGE = re.compile(r"\b(?:i|we)\s+(?:(?:just|finally|also|then|\w+ly)\s+)?(?!(?:stayed|lived|used|needed|"
                          r"wanted|visited|travel+ed|worked)\b)(?:[a-z]{2,}ed|sold|left|took|bought|swapped)\b",
                          re.IGNORECASE)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_SEASON_END = {"spring": (6, 1), "summer": (9, 1), "fall": (12, 1), "autumn": (12, 1), "winter": (3, 1),
               "holidays": (1, 7), "holiday": (1, 7), "semester": None, "term": None}


def parse_when(when: str | None) -> datetime:
    if not when:
        return datetime.now(timezone.utc)
    try:
        dt = datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(timezone.utc)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def scheduled(clause: str, when: str | None) -> tuple[str, str] | None:
    """A future-dated change: the clause as a plain statement and its ISO start, else None."""
    took = _takeover(clause, when)
    if took is not None:
        return took
    f = _FUTURE.search(clause)
    m = _SCHEDULE.search(clause)
    if not f:  # "starting in June I'm at Ostara", "as of january I'm going part-time": the lead says it
        if not m or m.start() > 0 or not (m.group("lead") or "").casefold().startswith(_LEADS):
            return None
        f = m
    if not m or not (m.group("lead") or m.group("date").casefold().startswith("in ")
                     or _bare_date_ok(m.group("date")) or (m.start() == 0 and m.end() < f.start())):
        return None
    base = parse_when(when)
    start = resolve_date(m.group("date"), base)
    if start is None or start <= base:
        return None
    m_start = m.start() + len(m.group(0)) - len(m.group(0).lstrip(", "))  # the date's "," belongs to no segment
    lo, hi = _segment(clause, min(f.start(), m_start), max(f.end(), m.end()))
    # the plan's own comma segment: "registered with the new surgery, Dr Lindqvist will be my GP from december"
    # (the rest tells of what led to it, and must not start then too)
    rest = (clause[lo: m.start()] + " " + clause[m.end(): hi]).strip(" ,")
    rest = _FUTURE.sub(_plain, rest, count=1)
    for pattern, repl in _TENSE:
        rest = pattern.sub(repl, rest, count=1)
    return " ".join(rest.split()), format_time(start)


def _segment(clause: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the comma segment holding [start, end), else the whole clause (the span crosses a comma)."""
    lo = clause.rfind(", ", 0, start + 1)
    hi = clause.find(", ", max(end - 1, 0))
    lo = 0 if lo < 0 else lo + 2
    hi = len(clause) if hi < 0 else hi
    return (lo, hi) if lo <= start and end <= hi else (0, len(clause))


_LEADS = ("from", "starting", "beginning", "as of", "effective", "after", "come")

# "cancelled Virgin, Hyperoptic takes over on the 15th of may", "Community Fibre goes live for us on the 5th":
# a named successor that starts on a date (the user's switch to it, from then; the old one holds until then)
_TAKEOVER = re.compile(
    r"(?:^|[,;]\s*|\b(?:and|so|then|but)\s+)(?P<name>(?-i:[A-Z][\w&'.-]*)(?:\s+(?-i:[A-Z][\w&'.-]*)){0,2})\s+"
    r"(?:takes over|will take over|'ll take over|is taking over|are taking over|goes live|will go live|"
    r"is going live|kicks in|will kick in|comes in)\b",
    re.IGNORECASE,
)


def _takeover(clause: str, when: str | None) -> tuple[str, str] | None:
    """A named successor taking over on a date after the turn: ("I switched to <name>", its ISO start)."""
    t = _TAKEOVER.search(clause)
    if not t:
        return None
    m = _SCHEDULE.search(clause, t.end())
    if not m or not (m.group("lead") or "").strip():
        return None
    base = parse_when(when)
    start = resolve_date(m.group("date"), base)
    if start is None or start <= base:
        return None
    return f"I switched to {t.group('name')}", format_time(start)


def _plain(m: re.Match[str]) -> str:
    """ "I'll " -> "I ", "we're going to " -> "we ", "will be" -> "will be" (see _TENSE)."""
    words = m.group(0).split()
    if not words or words[0].casefold() in ("will", "'ll"):
        return m.group(0)
    return words[0].split("'")[0] + " "


def _bare_date_ok(date: str) -> bool:
    """Without "from"/"starting"/"in", only an unambiguous date opens a change ("next month ...")."""
    return date.casefold().startswith(("next ", "tomorrow", "the day after"))


def temporary(clause: str, when: str | None) -> tuple[str, str, str] | None:
    """A temporary state: the clause without its period, the ISO end of that period and the comma
    segment the period was in (without it), else None."""
    m = _TEMPORARY.search(clause)
    if not m:
        return None
    span = m.group("span").casefold()
    if span.startswith(("for", "over", "spending", "during", "throughout")) and _PERFECT.search(clause):
        return None  # "I've lived in Boston for five years": how long it has lasted, not when it ends
    if (span.startswith(("this", "over", "during", "throughout"))) and \
            (_EVENT.search(clause) or _PAST_CHANGE.search(clause)):
        return None  # "I joined Vantage Bank this spring", "we swapped Sydney for Melbourne over the holidays":
        #              when a change happened, not how long a state lasts
    base = parse_when(when)
    end: datetime | None
    if span in ("for now", "for the time being", "temporarily"):
        end = base + timedelta(days=30)  # open-ended but not lasting: a month, then it is history
    else:
        end = _period_end(span, m.group("until") or m.group("till"), base)
    if end is None or end <= base:
        return None
    rest = (clause[: m.start()] + " " + clause[m.end():]).strip(" ,")
    cut = [0] + [i + 1 for i, ch in enumerate(clause) if ch == ","] + [len(clause) + 1]
    lo = max(i for i in cut if i <= m.start())
    hi = min(i for i in cut if i > m.start())
    segment = (clause[lo: m.start()] + " " + clause[m.end(): hi - 1]).strip(" ,")
    return " ".join(rest.split()), format_time(end), " ".join(segment.split())


def _period_end(span: str, until: str | None, base: datetime) -> datetime | None:
    if until:
        u = until.casefold()
        if "weekend" in u or u.endswith(("end of the week", "end of week")):
            return _week_end(base)
        if "end of" in u and "month" in u:
            return _month_start(base, 1)
        if "end of" in u and "year" in u:
            return base.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0).replace(year=base.year + 1)
        day = resolve_date(until, base)
        return None if day is None else day + timedelta(days=1)
    words = span.split()
    if "fortnight" in words:
        return base + timedelta(days=14)
    if "easter" in words:
        return base + timedelta(days=14)  # dateparser has no Easter: two weeks covers the holiday
    month = re.fullmatch(_MONTH, words[-1])
    if month:  # "spending october": to the first of the month after it (the turn's own month counts)
        index = next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(words[-1][:3]))
        ahead = (index - base.month) % 12
        return _month_start(base, ahead + 1)
    if "week" in words or "weekend" in words:
        return _week_end(base) if words[0] in ("this", "over") or "the" in words else base + timedelta(days=7)
    if words[-1] in _SEASON_END or words[-1] in ("semester", "term"):
        return _season_end(words[-1], base)
    if "month" in words and ("this" in words or "the" in words):
        return _month_start(base, 1)
    n = re.search(rf"({_NUM}) ({_UNIT})", span)
    if n:
        count = _NUMBERS.get(n.group(1), None) or (int(n.group(1)) if n.group(1).isdigit() else 1)
        return base + timedelta(days=count * _UNIT_DAYS[n.group(2).rstrip("s")])
    return None


def _week_end(base: datetime) -> datetime:
    monday = base + timedelta(days=7 - base.weekday())
    return monday.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(base: datetime, ahead: int) -> datetime:
    month = base.month - 1 + ahead
    return base.replace(year=base.year + month // 12, month=month % 12 + 1, day=1, hour=0, minute=0, second=0,
                        microsecond=0)


def _season_end(season: str, base: datetime) -> datetime:
    if season in ("semester", "term"):
        return base + timedelta(days=120)
    month, day = _SEASON_END[season] or (1, 1)
    end = base.replace(month=month, day=day, hour=0, minute=0, second=0, microsecond=0)
    return end if end > base else end.replace(year=end.year + 1)


def resolve_date(phrase: str, base: datetime) -> datetime | None:
    """A date phrase relative to ``base`` (preferring the future): dateparser, else the table below."""
    p = " ".join(phrase.casefold().split())
    table = _table_date(p, base)
    if table is not None:
        return table
    found = _dateparser(p, format_time(base))
    return None if found is None else datetime.fromisoformat(found)


def _table_date(p: str, base: datetime) -> datetime | None:
    midnight = base.replace(hour=0, minute=0, second=0, microsecond=0)
    if p in ("next week",):
        return midnight + timedelta(days=7 - base.weekday())
    if p in ("next month", "start of next month", "beginning of next month", "the start of next month",
             "the beginning of next month", "first of next month", "the first of next month", "1st of next month"):
        return _month_start(base, 1)
    if p in ("next year", "the start of next year", "the beginning of next year", "start of next year"):
        return midnight.replace(year=base.year + 1, month=1, day=1)
    if p in ("end of the year", "the end of the year", "end of this year", "the end of this year", "end of year"):
        return midnight.replace(year=base.year + 1, month=1, day=1)  # "at the end of the year": from the new year
    if p in ("end of the month", "the end of the month", "end of this month", "the end of this month"):
        return _month_start(base, 1)
    if p == "tomorrow":
        return midnight + timedelta(days=1)
    if p in ("christmas", "xmas", "new year", "the new year"):  # a holiday of fixed date: the next one
        day = midnight.replace(month=12, day=25) if p in ("christmas", "xmas") else midnight.replace(month=1, day=1)
        return day if day > base else day.replace(year=day.year + 1)
    if p == "the day after tomorrow":
        return midnight + timedelta(days=2)
    m = re.fullmatch(rf"(?:next |in )?({_SEASON})", p)
    if m and m.group(1) in ("spring", "summer", "fall", "autumn", "winter"):
        start = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}[m.group(1)]
        day = midnight.replace(month=start, day=1)
        return day if day > base else day.replace(year=day.year + 1)
    m = re.fullmatch(rf"(?:the )?(start|beginning|first|1st|end) of ({_MONTH})", p)
    if m:  # "at the end of June": from the first of July (as "the end of the month" above); "the start of June"
        month = next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(m.group(2)[:3]))
        day = midnight.replace(month=month, day=1)
        day = _month_start(day, 1) if m.group(1) == "end" else day
        return day if day > base else day.replace(year=day.year + 1)
    m = re.fullmatch(rf"(?:in |early |mid[- ]?|late )?({_MONTH})", p)
    if m:  # "in March": the first of the next March after the turn (this month counts when still ahead)
        month = next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(m.group(1)[:3]))
        day = midnight.replace(month=month, day=1)
        return day if day > base else day.replace(year=day.year + 1)
    m = re.fullmatch(rf"(?:next |this |this coming |coming )?({_DAY})", p)
    if m:
        target = next(i for i, name in enumerate(_DAYS) if name.startswith(m.group(1)[:3]))
        ahead = (target - base.weekday()) % 7 or 7
        return midnight + timedelta(days=ahead)
    m = re.fullmatch(rf"(?:on )?(?:the )?(\d{{1,2}})(?:st|nd|rd|th)?(?: (?:of )?({_MONTH}))?", p)
    if m and 1 <= int(m.group(1)) <= 31:  # "the 3rd": the next 3rd after the turn (of that month, if named)
        return _next_day_of_month(int(m.group(1)), m.group(2), midnight, base)
    m = re.fullmatch(rf"in ({_NUM}) ({_UNIT})", p)
    if m:
        count = _NUMBERS.get(m.group(1)) or (int(m.group(1)) if m.group(1).isdigit() else 1)
        return base + timedelta(days=count * _UNIT_DAYS[m.group(2).rstrip("s")])
    return None


def _next_day_of_month(day: int, month_name: str | None, midnight: datetime, base: datetime) -> datetime | None:
    months = [next(i for i, n in enumerate(_MONTHS, 1) if n.startswith(month_name[:3]))] if month_name else None
    for ahead in range(25):
        month = (base.month - 1 + ahead) % 12 + 1
        year = base.year + (base.month - 1 + ahead) // 12
        if months and month not in months:
            continue
        try:
            day_at = midnight.replace(year=year, month=month, day=day)
        except ValueError:
            continue  # the 31st of a 30-day month
        if day_at > base:
            return day_at
    return None


@lru_cache(maxsize=2048)
def _dateparser(phrase: str, base: str) -> str | None:
    try:
        import dateparser
    except ImportError:
        return None
    found = dateparser.parse(
        phrase, languages=["en"],
        settings={"RELATIVE_BASE": parse_when(base).replace(tzinfo=None), "PREFER_DATES_FROM": "future",
                  "PREFER_DAY_OF_MONTH": "first", "RETURN_AS_TIMEZONE_AWARE": False},
    )
    return None if found is None else found.replace(tzinfo=timezone.utc).isoformat()
