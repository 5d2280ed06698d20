"""The built-in model's fast query tokenizer (adapters/wordpiece) gives tokenizers' own ids, and a
search in a fresh process neither imports tokenizers nor changes a vector."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from markmem.adapters import vectors as adapter
from markmem.adapters.vectors import BUILTIN_DIR, Model2VecEmbedder
from markmem.adapters.wordpiece import WordPiece

ALPHA = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
         " \t\n\r    ")
WORDS = ("the user live where pottery glaze unbelievable antidisestablishmentarianism [UNK] [PAD] UNK PAD ## ### "
         "don't e-mail U.S.A. 3.14 @home #tag Zürich café 東京 🎉 x\x0by a\x00b").split(" ")


def texts(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    out = ["", " ", "Where does the user live?", " ".join(["a"] * 700), "x" * 101, "x" * 100, "[PAD]x", "ab[UNK]"]
    for i in range(n):
        if i % 2:
            out.append("".join(rng.choice(ALPHA) for _ in range(rng.randint(0, 60))))
        else:
            out.append(" ".join(rng.choice(WORDS) if rng.random() < 0.5 else
                                "".join(rng.choice(ALPHA[:62]) for _ in range(rng.randint(1, 130)))
                                for _ in range(rng.randint(0, 8))))
    return out


@pytest.fixture(scope="module")
def tokenizer():  # type: ignore[no-untyped-def]
    return adapter._tokenizer(BUILTIN_DIR)


def test_the_fast_ids_are_the_tokenizers_ids(tokenizer) -> None:  # type: ignore[no-untyped-def]
    fast = WordPiece.from_file(BUILTIN_DIR / "tokenizer.json")
    assert fast is not None
    taken = 0
    for text in texts(6000):
        got = fast.ids(text)
        if got is not None:
            taken += 1
            assert got == tokenizer.encode(text, add_special_tokens=False).ids, repr(text)
    assert taken > 4000  # most of them take the fast path
    assert fast.ids("Zürich") is None and fast.ids("a [UNK] b") is None and fast.ids("x\x0by") is None


def test_a_tokenizer_of_another_shape_is_not_taken(tmp_path: Path) -> None:
    import json

    conf = json.loads((BUILTIN_DIR / "tokenizer.json").read_text())
    for change in ({"normalizer": {"type": "NFC"}}, {"pre_tokenizer": {"type": "Whitespace"}},
                   {"post_processor": {"type": "BertProcessing"}}, {"model": {**conf["model"], "type": "BPE"}}):
        path = tmp_path / "tokenizer.json"
        path.write_text(json.dumps({**conf, **change}))
        assert WordPiece.from_file(path) is None
    path.write_text("{not json")
    assert WordPiece.from_file(path) is None


def test_vectors_are_unchanged_bit_for_bit(tokenizer) -> None:  # type: ignore[no-untyped-def]
    light = adapter._Builtin.load(str(BUILTIN_DIR), "builtin")
    assert light is not None and light._tokenizer is None  # nothing loaded yet
    full = adapter._load_static_model(str(BUILTIN_DIR), "builtin")
    a, b = Model2VecEmbedder(light, "x"), Model2VecEmbedder(full, "x")  # type: ignore[arg-type]
    for text in texts(400, seed=9):
        assert np.array_equal(a.embed([text]), b.embed([text])), repr(text)
    assert np.array_equal(np.asarray(light.embedding), np.asarray(full.embedding))


def test_a_search_in_a_fresh_process_does_not_import_tokenizers(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from markmem import Memory\n"
        f"m = Memory({str(tmp_path / 'repo')!r}, pii_engine='regex', vector_model='builtin', background=False)\n"
        "m.add('I live in Lisbon', user_id='a')\n"
        "hits = m.search('where do I live?', user_id='a')\n"
        "print(bool(hits), 'tokenizers' in sys.modules, 'safetensors' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ), check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False", "False"]


def test_the_shipped_token_list_is_the_tokenizer_json_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import shutil

    from markmem.adapters import wordpiece

    monkeypatch.setattr(wordpiece, "INDEX", False)  # the list (the sorted index: the next test)
    shipped = BUILTIN_DIR / wordpiece.VOCAB_FILE
    assert shipped.is_file()
    conf = json.loads((BUILTIN_DIR / "tokenizer.json").read_bytes())
    by_json = WordPiece._of(conf)
    by_list = WordPiece.from_file(BUILTIN_DIR / "tokenizer.json")
    assert by_json is not None and by_list is not None
    assert list(by_list.vocab.items()) == list(by_json.vocab.items())
    assert (by_list.unk_id, by_list.prefix, by_list.max_chars, by_list.max_length, by_list.added) == \
        (by_json.unk_id, by_json.prefix, by_json.max_chars, by_json.max_length, by_json.added)
    # a token list made from another tokenizer.json is not used
    shutil.copy(BUILTIN_DIR / "tokenizer.json", tmp_path / "tokenizer.json")
    shutil.copy(shipped, tmp_path / wordpiece.VOCAB_FILE)
    conf["model"]["vocab"] = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "zebra"])}
    (tmp_path / "tokenizer.json").write_text(json.dumps(conf))
    other = WordPiece.from_file(tmp_path / "tokenizer.json")
    assert other is not None and other.ids("zebra crossing") == [2, 1]


def test_token_counts_are_the_tokenizers_counts(tokenizer) -> None:  # type: ignore[no-untyped-def]
    from markmem.adapters import tokens

    real = tokens._load()
    assert real is not None
    sample = texts(1500, seed=11) + ["Zürich café", "", "a [UNK] b"]
    assert tokens.count_tokens_batch(sample) == [len(e) for e in real.encode_batch(sample, add_special_tokens=False)]
    assert [tokens.count_tokens(t) for t in sample] == [len(real.encode(t, add_special_tokens=False)) if t else 0
                                                        for t in sample]
    assert tokens.count_tokens(" ".join(["a"] * 700)) == 700  # no truncation when counting


def test_the_sorted_index_gives_the_lists_ids_then_hands_over_to_the_dict(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from markmem.adapters import wordpiece

    assert (BUILTIN_DIR / wordpiece.INDEX_FILE).is_file()  # shipped beside the list (write_vocab)
    by_index = WordPiece.from_file(BUILTIN_DIR / "tokenizer.json")
    monkeypatch.setattr(wordpiece, "INDEX", False)
    by_list = WordPiece.from_file(BUILTIN_DIR / "tokenizer.json")
    monkeypatch.setattr(wordpiece, "INDEX", True)
    assert by_index is not None and by_list is not None
    assert isinstance(by_index.vocab, wordpiece.Sorted) and isinstance(by_list.vocab, dict)
    assert len(by_index.vocab) == len(by_list.vocab) and by_index.unk_id == by_list.unk_id
    assert all(by_index.vocab.get(t) == i for t, i in by_list.vocab.items())
    rng = random.Random(2)
    junk = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789#!") for _ in range(rng.randint(1, 30)))
            for _ in range(3000)] + ["", "x" * 40, "a\0", "##", "zürich"]
    assert [by_index.vocab.get(w) for w in junk] == [by_list.vocab.get(w) for w in junk]
    sample = texts(400, seed=5)
    assert [by_index.ids(t) for t in sample] == [by_list.ids(t) for t in sample]
    assert isinstance(by_index.vocab, dict)  # past PROBES_FIRST pieces: the dict, built from the list
    assert list(by_index.vocab.items()) == list(by_list.vocab.items())
    # an index made from another tokenizer.json (or damaged) is not used: the list serves
    for name in ("tokenizer.json", wordpiece.VOCAB_FILE, wordpiece.INDEX_FILE):
        shutil.copy(BUILTIN_DIR / name, tmp_path / name)
    body = (tmp_path / wordpiece.INDEX_FILE).read_bytes()
    (tmp_path / wordpiece.INDEX_FILE).write_bytes(body[:-1] + bytes([body[-1] ^ 1]))
    damaged = WordPiece.from_file(tmp_path / "tokenizer.json")
    assert damaged is not None and isinstance(damaged.vocab, dict)
