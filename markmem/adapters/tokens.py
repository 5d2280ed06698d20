"""Token counts for context packing: the built-in model's WordPiece tokenizer, or a regex.

``count_tokens`` runs the all-MiniLM-L6-v2 WordPiece tokenizer shipped with the built-in
embedding model (``markmem/models/minilm-m2v/tokenizer.json``) through the ``tokenizers``
library, without special tokens, truncation or padding. It is not any LLM's own tokenizer but
counts sub-words the same way (a rare word is several tokens), so budgets hold in practice.

When ``tokenizers`` is not installed, or the tokenizer file is missing, counts fall back to a
regex (one token per word and per punctuation mark) and :func:`tokenizer_name` says so, for
``markmem doctor``. The tokenizer loads on first use (~25 ms), not at import.
``TOKENIZER_NAME`` is the same string as ``tokenizer_name()``; reading it also loads.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from .wordpiece import Pieces

TOKENIZER_JSON = Path(__file__).parent.parent / "models" / "minilm-m2v" / "tokenizer.json"
WORDPIECE_NAME = "all-MiniLM-L6-v2 wordpiece"
REGEX_NAME = "regex word/punct count (tokenizers or the model's tokenizer.json unavailable)"

_WORDS = re.compile(r"\w+|[^\w\s]")
_LOCK = threading.Lock()
_state: list[Tokenizer | None] = []  # empty: not tried yet; [None]: regex fallback
_pieces: list[Pieces] = []  # the tokenizer's per-word cache (adapters/wordpiece.py), once loaded

TOKENIZER_NAME: str  # computed on first access, by __getattr__ below


def _tokenizer() -> Tokenizer | None:
    if not _state:
        with _LOCK:
            if not _state:
                tokenizer = _load()
                if tokenizer is not None:
                    from .wordpiece import Pieces

                    _pieces.append(Pieces(tokenizer))
                _state.append(tokenizer)
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


def tokenizer_name() -> str:
    """What :func:`count_tokens` counts with: WordPiece, or the regex fallback."""
    return WORDPIECE_NAME if _tokenizer() is not None else REGEX_NAME


def count_tokens(text: str) -> int:
    """Number of tokens in ``text`` (0 for an empty string)."""
    if not text:
        return 0
    tokenizer = _tokenizer()
    if tokenizer is None:
        return len(_WORDS.findall(text))
    return len(_pieces[0].ids(text))  # = len(tokenizer.encode(text, add_special_tokens=False))


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    """``[count_tokens(t) for t in texts]``, tokenised in one parallel batch."""
    if isinstance(texts, str):  # one text, not one per character
        texts = [texts]
    texts = list(texts)
    tokenizer = _tokenizer()
    if tokenizer is None:
        return [len(_WORDS.findall(t)) for t in texts]
    if not texts:
        return []
    encode_batch = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)  # < 0.21
    return [len(e) for e in encode_batch(texts, add_special_tokens=False)]


def __getattr__(name: str) -> str:
    if name == "TOKENIZER_NAME":
        return tokenizer_name()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
