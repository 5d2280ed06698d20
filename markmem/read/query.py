"""Turning a question into lane inputs.

* ``fts_query``: an OR of the non-stop-word terms (an AND of every word recalls far too little).
* ``literals``: syntax-shaped strings (quoted text, CLI flags, file paths, config keys, env vars,
  ``key=value``) that the exact lane matches literally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its
itself let's me more most mustn't my myself no nor not of off on once only or other ought our ours
ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that
that's the their theirs them themselves then there there's these they they'd they'll they're they've
this those through to too under until up very was wasn't we we'd we'll we're we've were weren't what
what's when when's where where's which while who who's whom why why's with won't would wouldn't you
you'd you'll you're you've your yours yourself yourselves also just did does will shall may might
must really much many thing things something anything get got go going went like
""".split())

_WORD = re.compile(r"[\w][\w'-]*", re.UNICODE)
MAX_TERMS = 32

_LITERALS = [
    re.compile(r'"([^"\n]{2,200})"|`([^`\n]{1,200})`|(?<!\w)\'([^\'\n]{2,200})\'(?!\w)'),  # quoted
    re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*(?:=\S+)?)"),  # CLI flags: --dry-run, -v, --level=3
    # paths: /etc/x, ~/x, ./x, a/b/c, src/a.py, C:\\x (not "and/or")
    re.compile(r"(?<![\w.-])((?:~|\.{1,2})?/(?:[\w.-]+/)*[\w.-]+|[\w.-]+/[\w.-]+/[\w./-]+|[\w-]+/[\w-]+\.\w+"
               r"|[A-Za-z]:\\[\w\\.-]+)"),
    re.compile(r"(?<![\w.])([A-Za-z_][\w-]+(?:\.[A-Za-z_][\w-]+)+)(?![\w])"),  # dotted keys, file.ext
    re.compile(r"(?<!\w)([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)(?!\w)"),  # snake_case, ENV_VARS
    re.compile(r"(?<!\w)(\w+=[^\s,;]+)"),  # key=value
]


@dataclass(frozen=True)
class Query:
    text: str
    terms: tuple[str, ...]
    match: str | None  # FTS5 expression, None when nothing searchable is left
    literals: tuple[str, ...]


def parse(text: str) -> Query:
    words = terms(text)
    return Query(text, tuple(words), or_query(words), literals(text))


def terms(text: str) -> list[str]:
    """Lower-cased content words, de-duplicated in order."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.casefold()):
        w = w.strip("'-")
        if len(w) > 1 and w not in STOPWORDS and w.replace("'", "") not in STOPWORDS:
            seen.setdefault(w.replace("'", " ").split()[0], None)
    return list(seen)


def or_query(words: list[str]) -> str | None:
    if not words:
        return None
    return " OR ".join(quote(w) for w in words[:MAX_TERMS])


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression, or None when nothing searchable is left."""
    return or_query(terms(text))


_LITERAL_CHAR = re.compile(r"[\"'`/\\._=-]")  # every pattern in _LITERALS needs one of these


def literals(text: str) -> tuple[str, ...]:
    """Syntax-shaped substrings worth matching literally, longest first, de-duplicated."""
    if _LITERAL_CHAR.search(text) is None:
        return ()
    found: dict[str, None] = {}
    for pattern in _LITERALS:
        for m in pattern.finditer(text):
            lit = next(g for g in m.groups() if g is not None).strip().rstrip(".,;:?!")
            if len(lit) >= 2 and re.search(r"\w", lit):
                found.setdefault(lit, None)
    return tuple(sorted(found, key=lambda s: (-len(s), s)))


def phrase(literal: str) -> str | None:
    """The FTS5 phrase of a literal's word tokens (candidates; the literal is checked afterwards)."""
    tokens = re.findall(r"\w+", literal.casefold())
    if not tokens:
        return None
    return quote(" ".join(tokens))


def quote(word: str) -> str:
    """An FTS5 string: the term is matched as a phrase, never parsed as syntax."""
    return '"' + word.replace('"', '""') + '"'
