"""``tokenizer.encode(text, add_special_tokens=False).ids`` for short ASCII texts, from a per-word cache.

A ``tokenizers`` call costs 20-150 us for one short line (a search encodes its query, a context pack
counts the tokens of each of its lines); most of it is crossing into Rust and building the
``Encoding``. For a BERT WordPiece tokenizer (``BertNormalizer`` lower-casing, ``BertPreTokenizer``,
``WordPiece``: the built-in model's) an ASCII text's pieces are known without it: the normalizer
lower-cases and drops control characters, the pre-tokenizer splits at whitespace and makes every
ASCII punctuation mark a word of its own, and WordPiece splits each word alone. So the text is
split here (``_WORDS``) and each word's ids come from ``tokenizer.model.tokenize(word)`` (the
tokenizer's own WordPiece), once per word. Anything else is handed to ``encode``: a non-ASCII text,
a control character (the normalizer's ``clean_text`` would join the words around it), an added
token's text ("[UNK]" is one token), another tokenizer layout, truncation that applies, padding.
tests/test_search_exact.py checks the ids against ``encode`` on varied texts.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")  # runs of letters and digits; each ASCII punctuation mark
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # what clean_text drops (tab, newline, return stay)
MAX_WORDS = 200_000  # cached words before the cache starts again
ENABLED = True  # False: always ``encode`` (tests compare the two)


class Pieces:
    """The WordPiece ids of texts, as one tokenizer's ``encode`` gives them (see the module doc)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.plain, self.added, self.max_length = _layout(tokenizer)
        self._words: dict[str, tuple[int, ...]] = {}
        _ALL.add(self)

    def ids(self, text: str) -> list[int]:
        if not (ENABLED and self.plain and text.isascii()) or _CONTROL.search(text) is not None \
                or any(a in text for a in self.added):
            return list(self.tokenizer.encode(text, add_special_tokens=False).ids)
        words = self._words
        out: list[int] = []
        for w in _WORDS.findall(text.lower()):
            got = words.get(w)
            if got is None:
                got = self._word(w)
            out += got
        if self.max_length is not None and len(out) > self.max_length:  # truncation applies: encode's own
            return list(self.tokenizer.encode(text, add_special_tokens=False).ids)
        return out

    def _word(self, word: str) -> tuple[int, ...]:
        got = tuple(t.id for t in self.tokenizer.model.tokenize(word))
        if len(self._words) >= MAX_WORDS:
            self._words = {}
        self._words[word] = got
        return got


_ALL: weakref.WeakSet[Pieces] = weakref.WeakSet()


def forget_all() -> None:
    """Empty every word cache (an erasure: the words came from the users' texts)."""
    for pieces in list(_ALL):
        pieces._words = {}


def _layout(tokenizer: Any) -> tuple[bool, tuple[str, ...], int | None]:
    """(a lower-casing BERT WordPiece tokenizer without padding, its added tokens' texts, the
    truncation length); anything unexpected: not plain (``Pieces`` then always encodes). Read from
    the tokenizer's parts, not ``to_str()`` (a first search would pay ~8 ms to serialise the vocabulary)."""
    try:
        norm = tokenizer.normalizer
        plain = (type(norm).__name__ == "BertNormalizer" and norm.lowercase is True and norm.clean_text is True
                 and type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
                 and type(tokenizer.model).__name__ == "WordPiece" and tokenizer.post_processor is None
                 and (tokenizer.padding is None or _no_padding(tokenizer.padding)))
        added = tuple(str(a.content) for a in tokenizer.get_added_tokens_decoder().values())
        trunc = tokenizer.truncation  # a text it would cut goes to encode
        return plain, added, None if trunc is None else int(trunc["max_length"])
    except Exception:  # noqa: BLE001 - an unknown tokenizer: encode it is
        return False, (), None


def _no_padding(padding: Any) -> bool:
    """Padding that adds nothing to one text (``StaticModel`` sets a fixed length of 0)."""
    return isinstance(padding, dict) and not padding.get("length") and not padding.get("pad_to_multiple_of")
