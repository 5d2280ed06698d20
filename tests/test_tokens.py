"""Token counting: the shipped WordPiece tokenizer, and the regex fallback without it."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.util import find_spec

import pytest

from markmem.adapters import tokens
from markmem.adapters.tokens import count_tokens, count_tokens_batch, tokenizer_name

needs_tokenizers = pytest.mark.skipif(find_spec("tokenizers") is None, reason="no tokenizers")


@needs_tokenizers
def test_wordpiece_is_used() -> None:
    assert tokenizer_name() == "all-MiniLM-L6-v2 wordpiece"
    assert tokens.TOKENIZER_NAME == tokenizer_name()
    from markmem.adapters.tokens import TOKENIZER_NAME

    assert TOKENIZER_NAME == tokenizer_name()


@needs_tokenizers
def test_counts_sub_words_without_special_tokens() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello") == 1  # no [CLS]/[SEP]
    assert count_tokens("Hello, world!") == 4
    # a rare word splits into several word pieces
    assert count_tokens("Lufthansa") > 1
    assert count_tokens("I prefer aisle seats on Lufthansa flights.") > 7


@needs_tokenizers
def test_long_text_is_not_truncated() -> None:
    assert count_tokens("word " * 5000) == 5000


@needs_tokenizers
def test_batch_matches_single() -> None:
    texts = ["", "hello", "I prefer aisle seats.", "Ich mag Gänge — 通路側 🙂", "x" * 3000]
    assert count_tokens_batch(texts) == [count_tokens(t) for t in texts]
    assert count_tokens_batch([]) == []
    assert count_tokens_batch("one text") == [count_tokens("one text")]


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError):
        _ = tokens.NO_SUCH_NAME


def test_regex_fallback_without_tokenizers() -> None:
    code = (
        "import sys\n"
        "sys.modules['tokenizers'] = None  # as if tokenizers were not installed\n"
        "from markmem.adapters.tokens import TOKENIZER_NAME, count_tokens, count_tokens_batch\n"
        "print(TOKENIZER_NAME)\n"
        "print(count_tokens('Hello, world! Lufthansa'), count_tokens(''))\n"
        "print(count_tokens_batch(['a b', 'c.']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    name, counts, batch = proc.stdout.splitlines()
    assert name.startswith("regex")
    assert counts == "5 0"  # Hello , world ! Lufthansa
    assert batch == "[2, 2]"
