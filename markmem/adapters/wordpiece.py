"""BERT WordPiece token ids of plain ASCII text, as ``tokenizers`` computes them, without loading it.

A search embeds one short question. Loading the built-in model's tokenizer (``import tokenizers``
and ``Tokenizer.from_file``: ~0.1 s of CPU) was most of a fresh process's first search. For a
tokenizer of the plain BERT shape (``BertNormalizer`` lower-casing, ``BertPreTokenizer``,
``WordPiece`` with a ``##`` prefix; no post-processor) and text of printable ASCII characters,
tab, newline and carriage return only, the pipeline is short and fully defined:

* normalizer: tab, newline and carriage return become spaces (``clean_text``); ASCII letters are
  lower-cased (no accents, no CJK characters, no control characters to remove in that range);
* pre-tokenizer: split on whitespace, and every ASCII punctuation character is a token alone;
* model: greedy longest-match-first pieces (``##`` before a piece that continues a word); a word
  longer than ``max_input_chars_per_word`` or with a part no piece matches is one unknown token;
* truncation (when the file sets it): the first ``max_length`` ids.

Anything else (another character, an added token such as ``[UNK]`` written in the text, a
tokenizer of another shape) is None: the caller uses ``tokenizers`` itself. Checked id for id
against ``tokenizers`` in ``tests/test_vectors.py``.
"""

from __future__ import annotations

import json
import re
import weakref
import zlib
from pathlib import Path
from typing import Any

VOCAB_FILE = "wordpiece.txt"  # the token list and settings, beside tokenizer.json (``write_vocab``)
INDEX_FILE = "wordpiece.idx"  # the same tokens sorted, with their ids: looked up without a dict (``write_vocab``)
# pieces looked up in the sorted index (~3 us each) before the token dict is built (~14 ms, as much as
# ~4,500 of them): a process's first search (the question and its candidates' sentences, a few
# hundred pieces) no longer builds the dict (see ``from_file``)
PROBES_FIRST = 4000
ENABLED = True  # False: every caller uses tokenizers itself (tests compare the two)
_PLAIN = re.compile(r"[\t\n\r\x20-\x7e]*")
_PIECES = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")  # runs of letters and digits; each punctuation mark


class WordPiece:
    def __init__(self, vocab: dict[str, int] | Sorted, unk: str, prefix: str, max_chars: int,
                 max_length: int | None, added: list[str], token_list: tuple[Path, int] | None = None) -> None:
        self.vocab = vocab
        # (the token list, its tokenizer.json's CRC-32): the dict, once a ``Sorted`` vocab has served enough words
        self._token_list = token_list
        self._looked_up = 0
        self.unk_id = vocab[unk]
        self.prefix = prefix
        self.max_chars = max_chars
        self.max_length = max_length
        self.added = added
        self._words: dict[str, list[int]] = {}  # word -> its ids, cached (words of the users' texts)
        _ALL.add(self)

    @classmethod
    def from_file(cls, path: Path) -> WordPiece | None:
        """The fast tokenizer of a ``tokenizer.json``; None when it is not of the plain BERT shape.

        Reads ``wordpiece.txt`` beside it instead when that file was made from this very
        ``tokenizer.json`` (its CRC-32 matches; see ``write_vocab``): parsing the JSON costs ~10 ms
        of a fresh process's first search. Reading that list into a dict still costs 5-10 ms (30k
        strings), most of a small repo's first search, so ``wordpiece.idx`` (the same tokens,
        sorted, with their ids) is read first when it is there and matches: a process's first
        ``PROBES_FIRST`` pieces are looked up in it by bisection (~5 us each), then the dict is
        built from the list. Both give the same ids (``tests/test_wordpiece.py``)."""
        try:
            raw = Path(path).read_bytes()
            crc = zlib.crc32(raw)
            fast = cls._from_index(Path(path).with_name(INDEX_FILE), crc) if INDEX else None
            fast = fast or cls._from_list(Path(path).with_name(VOCAB_FILE), crc)
            return fast if fast is not None else cls._of(json.loads(raw))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @classmethod
    def _from_list(cls, path: Path, source_crc: int) -> WordPiece | None:
        try:
            head, _, body = path.read_text(encoding="utf-8").partition("\n")
            conf = json.loads(head)
        except (OSError, ValueError):
            return None
        if conf.get("source_crc") != source_crc:
            return None  # made from another tokenizer.json: not used
        tokens = body.split("\n")
        if tokens and tokens[-1] == "":
            tokens.pop()
        if len(tokens) != conf["size"]:
            return None
        vocab = dict(zip(tokens, range(len(tokens)), strict=True))
        return cls(vocab, conf["unk"], conf["prefix"], conf["max_chars"], conf["max_length"], conf["added"])

    @classmethod
    def _from_index(cls, path: Path, source_crc: int) -> WordPiece | None:
        try:
            head, _, body = path.read_bytes().partition(b"\n")
            conf = json.loads(head)
        except (OSError, ValueError):
            return None
        if conf.get("source_crc") != source_crc:
            return None
        size, width = int(conf["size"]), int(conf["width"])
        if len(body) != size * (width + 4) or zlib.crc32(body) != conf.get("crc"):
            return None
        vocab = Sorted(body, size, width)
        if conf["unk"] not in vocab:
            return None
        return cls(vocab, conf["unk"], conf["prefix"], conf["max_chars"], conf["max_length"], conf["added"],
                   (path.with_name(VOCAB_FILE), source_crc))

    def _dict(self) -> None:
        """Swap the sorted index for the token dict (``from_file``); kept as it is if the list fails."""
        if self._token_list is None:
            return
        got = type(self)._from_list(*self._token_list)
        if got is not None and isinstance(got.vocab, dict) and len(got.vocab) == len(self.vocab):
            self.vocab = got.vocab
        self._token_list = None

    @classmethod
    def _of(cls, conf: dict[str, Any]) -> WordPiece | None:
        norm, pre, model, trunc = conf["normalizer"], conf["pre_tokenizer"], conf["model"], conf.get("truncation")
        if not (isinstance(norm, dict) and norm.get("type") == "BertNormalizer" and norm.get("clean_text") is True
                and norm.get("lowercase") is True and norm.get("strip_accents") in (None, True)):
            return None
        if pre != {"type": "BertPreTokenizer"} or conf.get("post_processor") is not None:
            return None
        if model.get("type") != "WordPiece" or not isinstance(model.get("vocab"), dict):
            return None
        if trunc is not None and not (trunc.get("direction") == "Right" and trunc.get("stride") == 0):
            return None
        vocab: dict[str, int] = model["vocab"]  # json.loads: str keys, int values
        added = [str(t["content"]) for t in conf.get("added_tokens") or ()]
        if model["unk_token"] not in vocab or any(vocab.get(t) is None for t in added):
            return None
        return cls(vocab, model["unk_token"], str(model.get("continuing_subword_prefix", "##")),
                   int(model.get("max_input_chars_per_word", 100)),
                   None if trunc is None else int(trunc["max_length"]), added)

    def ids(self, text: str, truncate: bool = True) -> list[int] | None:
        """The ids ``Tokenizer.encode(text, add_special_tokens=False).ids`` gives (``truncate``
        False: with truncation off), or None when the text is outside the fast path (see the
        module doc)."""
        if not ENABLED or not _PLAIN.fullmatch(text) or any(a in text for a in self.added):
            return None
        out: list[int] = []
        words = self._words
        # whitespace ends a word and no piece holds any, so the text's pieces are its words' pieces
        for tok in _PIECES.findall(text.lower()):
            got = words.get(tok)
            if got is None:
                got = self._word(tok)
                if len(words) < 100_000:
                    words[tok] = got
            out += got
        return out[: self.max_length] if truncate and self.max_length is not None else out

    def _word(self, word: str) -> list[int]:
        if self._token_list is not None and self._looked_up > PROBES_FIRST:
            self._dict()
        if len(word) > self.max_chars:
            return [self.unk_id]
        vocab, out, start, n, probes = self.vocab, [], 0, len(word), 0
        while start < n:
            end, found = n, None
            while start < end:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                found = vocab.get(piece)
                probes += 1
                if found is not None:
                    break
                end -= 1
            if found is None:
                break
            out.append(found)
            start = end
        self._looked_up += probes
        return out if start >= n else [self.unk_id]


_ALL: weakref.WeakSet[WordPiece] = weakref.WeakSet()
INDEX = True  # False: never read ``wordpiece.idx`` (tests compare the two)


class Sorted:
    """A token -> id map over ``wordpiece.idx``'s body: ``size`` tokens (UTF-8, NUL-padded to
    ``width`` bytes) in byte order, then their ids (int32, little-endian); looked up by bisection."""

    def __init__(self, body: bytes, size: int, width: int) -> None:
        import numpy as np

        self._keys = np.frombuffer(body, dtype=f"S{width}", count=size)
        self._ids = np.frombuffer(body, dtype="<i4", count=size, offset=size * width)
        self._width = width

    def get(self, token: str, default: int | None = None) -> int | None:
        key = token.encode("utf-8")
        if not key or len(key) > self._width or key.endswith(b"\0"):  # numpy would cut or strip it
            return default
        i = int(self._keys.searchsorted(key))
        if i < len(self._keys) and self._keys[i] == key:
            return int(self._ids[i])
        return default

    def __getitem__(self, token: str) -> int:
        got = self.get(token)
        if got is None:
            raise KeyError(token)
        return got

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.get(token) is not None

    def __len__(self) -> int:
        return len(self._keys)


def forget_all() -> None:
    """Empty every word cache (an erasure: the cached words came from the users' texts)."""
    for fast in list(_ALL):
        fast._words = {}


def write_vocab(tokenizer_json: Path) -> bool:
    """Write ``wordpiece.txt`` beside ``tokenizer_json``: a JSON line (the CRC-32 of the
    tokenizer.json it was made from and the WordPiece settings), then every token in id order, one
    a line. False (nothing written) when the tokenizer is not of the plain shape, its ids are not
    0..n-1, or a token holds a line break."""
    raw = Path(tokenizer_json).read_bytes()
    fast = WordPiece._of(json.loads(raw))
    if fast is None or not isinstance(fast.vocab, dict):
        return False
    tokens = sorted(fast.vocab, key=fast.vocab.__getitem__)
    if [fast.vocab[t] for t in tokens] != list(range(len(tokens))) or any("\n" in t or "\r" in t for t in tokens):
        return False
    unk = next(t for t in tokens if fast.vocab[t] == fast.unk_id)
    head = {"source_crc": zlib.crc32(raw), "size": len(tokens), "unk": unk, "prefix": fast.prefix,
            "max_chars": fast.max_chars, "max_length": fast.max_length, "added": fast.added}
    Path(tokenizer_json).with_name(VOCAB_FILE).write_text(json.dumps(head) + "\n" + "\n".join(tokens) + "\n",
                                                          encoding="utf-8")
    keys = sorted((t.encode("utf-8"), i) for i, t in enumerate(tokens))
    width = max(len(k) for k, _ in keys)
    if any(not k or k.endswith(b"\0") for k, _ in keys):
        return True  # no index: the list serves
    body = b"".join(k.ljust(width, b"\0") for k, _ in keys) + b"".join(i.to_bytes(4, "little") for _, i in keys)
    index = {**head, "width": width, "crc": zlib.crc32(body)}
    Path(tokenizer_json).with_name(INDEX_FILE).write_bytes(json.dumps(index).encode() + b"\n" + body)
    return True
