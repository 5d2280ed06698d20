"""The Python Porter stemmer agrees with SQLite FTS5's porter tokenizer (it steers query pruning)."""

from __future__ import annotations

import json
import re
import sqlite3

from markmem.adapters.tokens import TOKENIZER_JSON
from markmem.read.stem import stem

WORDS = """caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized
hopping tanned falling hissing fizzed failing filing happy sky relational conditional rational valenci
hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication
operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate
formative formalize electriciti electrical hopeful goodness revival allowance inference airliner
gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou
communism activate angulariti homologous effective bowdlerize probate rate cease controll roll
caroline melanie pottery painting researching adoption agencies running longer distances""".split()


def fts5_stems(words: list[str]) -> list[str]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(t, tokenize='porter unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    db.executemany("INSERT INTO f(rowid, t) VALUES (?, ?)", list(enumerate(words)))
    got = {doc: term for term, doc in db.execute("SELECT term, doc FROM v")}
    return [got[i] for i in range(len(words))]


def test_stems_match_fts5_on_classic_examples() -> None:
    assert [stem(w) for w in WORDS] == fts5_stems(WORDS)


def test_stems_match_fts5_on_a_large_vocabulary() -> None:
    vocab = json.loads(TOKENIZER_JSON.read_text())["model"]["vocab"]
    words = sorted(w for w in vocab if re.fullmatch(r"[a-z]{2,}", w))[::3]
    assert len(words) > 5000
    assert [stem(w) for w in words] == fts5_stems(words)
