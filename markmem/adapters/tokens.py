"""Token counts for context packing: the built-in model's WordPiece tokenizer, or a regex.

``count_tokens`` runs the all-MiniLM-L6-v2 WordPiece tokenizer shipped with the built-in
embedding model (``markmem/models/minilm-m2v/tokenizer.json``) through the ``tokenizers``
library, without special tokens, truncation or padding. It is not any LLM's own tokenizer but
counts sub-words the same way (a rare word is several tokens), so budgets hold in practice.

When ``tokenizers`` is not installed, or the tokenizer file is missing, counts fall back to a
regex (one token per word and per punctuation mark) and :func:`tokenizer_name` says so, for
``markmem doctor``. The tokenizer loads on first use (~25 ms), not at import.
``TOKENIZER_NAME`` is the same string as ``tokenizer_name()``; reading it also loads.
A plain ASCII text is counted without loading ``tokenizers`` (``adapters/wordpiece``: the same
ids), so a fresh process's first context pack does not pay for it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from .wordpiece import WordPiece

TOKENIZER_JSON = Path(__file__).parent.parent / "models" / "minilm-m2v" / "tokenizer.json"
WORDPIECE_NAME = "all-MiniLM-L6-v2 wordpiece"
REGEX_NAME = "regex word/punct count (tokenizers or the model's tokenizer.json unavailable)"

_WORDS = re.compile(r"\w+|[^\w\s]")
_LOCK = threading.Lock()
_state: list[Tokenizer | None] = []  # empty: not tried yet; [None]: regex fallback

TOKENIZER_NAME: str  # computed on first access, by __getattr__ below


def _tokenizer() -> Tokenizer | None:
    if not _state:
        with _LOCK:
            if not _state:
                _state.append(_load())
    return _state[0]


def _load() -> Tokenizer | None:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return None
    if not TOKENIZER_JSON.is_file():  # installed without markmem's package data
        return None
    try:
        tokenizer = Tokenizer.from_file(str(TOKENIZER_JSON))
    except Exception:  # noqa: BLE001 - tokenizers raises a bare Exception on a corrupt file
        return None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


_fast: list[WordPiece | None] = []  # empty: not tried yet


def _wordpiece() -> WordPiece | None:
    """The fast WordPiece for plain ASCII texts, when ``tokenizers`` (which counts the rest) is
    installed and the model's tokenizer is of the plain BERT shape."""
    if not _fast:
        with _LOCK:
            if not _fast:
                import importlib.util

                from .wordpiece import WordPiece

                try:
                    installed = importlib.util.find_spec("tokenizers") is not None
                except ValueError:
                    installed = False
                _fast.append(WordPiece.from_file(TOKENIZER_JSON) if installed else None)
    return _fast[0]


def _fast_count(text: str) -> int | None:
    fast = _wordpiece()
    ids = fast.ids(text, truncate=False) if fast is not None else None
    return None if ids is None else len(ids)


def tokenizer_name() -> str:
    """What :func:`count_tokens` counts with: WordPiece, or the regex fallback."""
    return WORDPIECE_NAME if _wordpiece() is not None or _tokenizer() is not None else REGEX_NAME


def count_tokens(text: str) -> int:
    """Number of tokens in ``text`` (0 for an empty string)."""
    if not text:
        return 0
    fast = _fast_count(text)
    if fast is not None:
        return fast
    tokenizer = _tokenizer()
    if tokenizer is None:
        return len(_WORDS.findall(text))
    return len(tokenizer.encode(text, add_special_tokens=False))


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    """``[count_tokens(t) for t in texts]``, tokenised in one parallel batch."""
    if isinstance(texts, str):  # one text, not one per character
        texts = [texts]
    counts = [_fast_count(t) for t in texts]
    rest = [t for t, n in zip(texts, counts, strict=True) if n is None]
    if not rest:
        return [int(n or 0) for n in counts]
    tokenizer = _tokenizer()
    if tokenizer is None:
        got = [len(_WORDS.findall(t)) for t in rest]
    else:
        encode_batch = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)  # < 0.21
        got = [len(e) for e in encode_batch(rest, add_special_tokens=False)]
    it = iter(got)
    return [n if n is not None else next(it) for n in counts]


def __getattr__(name: str) -> str:
    if name == "TOKENIZER_NAME":
        return tokenizer_name()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
