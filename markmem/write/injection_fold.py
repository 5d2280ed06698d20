"""How the injection guard folds text before reading it: one form for every rule and the classifier.

:func:`prepare` unwraps hidden payloads (:func:`~markmem.write.injection_text.unwrap`), then folds:
NFKC/NFKD compatibility, casefold, accents, zero-width and tag characters, Cyrillic/Greek
homoglyphs, simple leetspeak, chat slang, spaced-out letters and whitespace (line starts kept:
role headers such as ``system:`` are matched there).
"""

from __future__ import annotations

import re
import unicodedata

from .injection_text import unwrap

__all__ = ["fold", "normalize", "prepare"]

_INVISIBLE = "\u00ad\u034f\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
_FOLD: dict[int, int | None] = dict.fromkeys(map(ord, _INVISIBLE))
_FOLD.update(str.maketrans("\u2018\u2019\u201a\u201b\u201c\u201d\u2032\u2013\u2014", "''''\"\"'--"))
# Cyrillic / Greek letters that render like Latin ones (compared after casefold).
_FOLD.update(str.maketrans("\u0430\u0435\u043e\u0440\u0441\u0445\u0443\u0456\u0458\u0455\u03bf\u03b1", "aeopcxyijsoa"))
_FOLD[0x0131] = ord("i")  # Turkish dotless i (no decomposition folds it)
# Unicode "tag" characters smuggle invisible ASCII (U+E0020..E007E): make it visible.
_FOLD.update({0xE0000 + c: c for c in range(0x20, 0x7F)})
_COMBINING = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u20d0-\u20ff]+")
_LEET = str.maketrans("013457@$\u20ac", "oieastase")
_LEET_HINT = re.compile(r"[a-z][013457@$\u20ac]|[013457@$\u20ac][a-z]")
_LEET_CHAR = re.compile(r"[013457@$\u20ac]")  # what _LEET_HINT cannot match without: one fast scan
# a word holding a leet character; translated only if it holds a letter too (a number stays one)
_LEET_TOKEN = re.compile(r"[a-z0-9@$\u20ac]*[013457@$\u20ac][a-z0-9@$\u20ac]*")
_NOT_LETTERS = "0123456789@$\u20ac"  # a word of only these has no letter
_SLANG = {"u": "you", "ur": "your", "r": "are", "ya": "you", "pls": "please", "plz": "please"}
_SLANG_RE = re.compile(r"\b(?:u|ur|r|ya|pls|plz)\b(?!['-])")
_TOKEN = re.compile(r"[a-z0-9_]+")  # splits wherever a regex \b can fall: hints stay sound
_SPACED = re.compile(r"(?<![\w'])(?:[a-z] ){3,}[a-z](?![\w'])")  # "i g n o r e" -> "ignore"
_LETTERS = frozenset("bcdefghjklmnopqrstuvwxyz")  # single-letter words other than "a" and "i"


def fold(text: str) -> str:
    """Compatibility-folded, case-folded, de-obfuscated ``text`` with single spaces (line starts kept)."""
    if text.isascii():
        text = text.casefold()
    else:  # compatibility fold (fullwidth, ligatures...), then drop accents, invisibles, homoglyphs
        text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
        text = _COMBINING.sub("", text).translate(_FOLD)
    if _LEET_CHAR.search(text) and _LEET_HINT.search(text):
        text = _LEET_TOKEN.sub(_unleet, text)
    if "\n" in text:  # keep line starts: role headers ("system:") are matched there
        return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
    return " ".join(text.split())


def _unleet(match: re.Match[str]) -> str:
    """A word's leetspeak read as letters (``pa55w0rd`` -> ``password``), if it holds a letter:
    the same text as translating every word with a letter, called for far fewer words."""
    word = match.group()
    return word if not word.strip(_NOT_LETTERS) else word.translate(_LEET)


def prepare(text: str) -> tuple[str, str, set[str]]:
    """The unwrapped, folded text as one line and with its line breaks, and its set of words."""
    lined = fold(unwrap(text))
    words = set(_TOKEN.findall(lined))
    if len(_LETTERS.intersection(words)) > 1:
        lined = _SPACED.sub(lambda m: m.group().replace(" ", ""), lined)
        words = set(_TOKEN.findall(lined))
    if not words.isdisjoint(_SLANG):
        lined = _SLANG_RE.sub(lambda m: _SLANG[m.group()], lined)
        words = set(_TOKEN.findall(lined))
    return lined.replace("\n", " "), lined, words


def normalize(text: str) -> str:
    """Fold ``text`` into the form the rules expect: lower-case, de-obfuscated, single spaces."""
    return prepare(text)[1]


