"""The Porter stemmer as SQLite's FTS5 ``porter`` tokenizer applies it (ext/fts5/fts5_porter.c).

Used to look a query term up in ``fts5vocab`` (how many rows it would match) before
querying; a term this gets wrong is simply treated as rare. Tokens shorter than 3 or longer than
64 characters pass through unchanged, as in FTS5. Checked against FTS5 itself by the tests.
"""

from __future__ import annotations

from functools import lru_cache

_MAX = 64


def _vowel(c: str, y_is_vowel: bool) -> bool:
    return c in "aeiou" or (y_is_vowel and c == "y")


def _gobble_vc(s: str, prev_cons: bool) -> int:
    """Length of the first vowel-run + consonant in ``s`` (0 when there is none)."""
    cons = prev_cons
    i = 0
    while i < len(s):
        cons = not _vowel(s[i], cons)
        if not cons:
            break
        i += 1
    i += 1
    while i < len(s):
        cons = not _vowel(s[i], cons)
        if cons:
            return i + 1
        i += 1
    return 0


def _m_gt0(s: str) -> bool:
    return _gobble_vc(s, False) > 0


def _m_gt1(s: str) -> bool:
    n = _gobble_vc(s, False)
    return bool(n and _gobble_vc(s[n:], True))


def _m_eq1(s: str) -> bool:
    n = _gobble_vc(s, False)
    return bool(n and not _gobble_vc(s[n:], True))


def _ostar(s: str) -> bool:
    if not s or s[-1] in "wxy":
        return False
    mask, cons = 0, False
    for c in s:
        cons = not _vowel(c, cons)
        mask = (mask << 1) + int(cons)
    return (mask & 7) == 5


def _has_vowel(s: str) -> bool:
    return any(_vowel(c, i > 0) for i, c in enumerate(s))


def _st_m_gt1(s: str) -> bool:
    return bool(s) and s[-1] in "st" and _m_gt1(s)


STEP2 = [("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
         ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"),
         ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"),
         ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log")]
STEP3 = [("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""),
         ("ness", "")]
STEP4 = ["al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism",
         "ate", "iti", "ous", "ive", "ize"]


def _replace(w: str, rules: list[tuple[str, str]], cond) -> str:  # type: ignore[no-untyped-def]
    best = max((r for r in rules if w.endswith(r[0]) and len(w) > len(r[0])), key=lambda r: len(r[0]),
               default=None)
    if best is None:
        return w
    stem = w[: -len(best[0])]
    return stem + best[1] if cond(stem) else w


def _step4(w: str) -> str:
    best = max((x for x in STEP4 if w.endswith(x) and len(w) > len(x)), key=len, default=None)
    if best is None:
        return w
    stem = w[: -len(best)]
    return stem if (_st_m_gt1(stem) if best == "ion" else _m_gt1(stem)) else w


def _step1(w: str) -> str:
    if w.endswith("s"):
        if w.endswith("e", 0, len(w) - 1):
            if (len(w) > 4 and w.endswith("sses")) or (len(w) > 3 and w.endswith("ies")):
                w = w[:-2]
            else:
                w = w[:-1]
        elif not w.endswith("ss"):
            w = w[:-1]
    removed = False
    if w.endswith("eed") and len(w) > 3:
        if _m_gt0(w[:-3]):
            w = w[:-1]
    elif w.endswith("ing") and len(w) > 3 and _has_vowel(w[:-3]):
        w, removed = w[:-3], True
    elif w.endswith("ed") and len(w) > 2 and _has_vowel(w[:-2]):
        w, removed = w[:-2], True
    if removed:
        if w.endswith(("at", "bl", "iz")) and len(w) > 2:
            w += "e"
        elif len(w) > 1 and not _vowel(w[-1], False) and w[-1] not in "lsz" and w[-1] == w[-2]:
            w = w[:-1]
        elif _m_eq1(w) and _ostar(w):
            w += "e"
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    return w


@lru_cache(maxsize=8192)
def stem(token: str) -> str:
    """FTS5's porter stem of one lower-cased token."""
    if len(token) < 3 or len(token) > _MAX:
        return token
    w = _step1(token)
    w = _replace(w, STEP2, _m_gt0)
    w = _replace(w, STEP3, _m_gt0)
    w = _step4(w)
    if w.endswith("e") and (_m_gt1(w[:-1]) or (_m_eq1(w[:-1]) and not _ostar(w[:-1]))):
        w = w[:-1]
    if len(w) > 1 and w.endswith("ll") and _m_gt1(w[:-1]):
        w = w[:-1]
    return w
