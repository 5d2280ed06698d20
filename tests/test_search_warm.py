"""The warm search's shortcuts in the fact-first steps give the plain computation's answers exactly:
the present's string, the turns naming a closed value, the successors kept per window, the speakers
kept per claim book, and the claim hits' sources read in one statement."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from markmem import Memory, ids
from markmem.index import claimbook
from markmem.read import cited, echo, facts
from markmem.read.fuse import Cand


def test_the_present_is_formatted_as_ids_formats_it(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(4)
    start = datetime(1, 1, 1, tzinfo=timezone.utc)
    moments = [start + timedelta(seconds=rng.randrange(10**11), microseconds=rng.randrange(10**6))
               for _ in range(300)] + [datetime(999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc),
                                       datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)]
    for when in moments:
        monkeypatch.setattr(facts, "datetime", _Frozen(when))
        assert facts.utc_now() == ids.format_time(when)
    monkeypatch.undo()
    assert len(facts.utc_now()) == len(ids.now())


class _Frozen:
    def __init__(self, when: datetime) -> None:
        self.when = when

    def now(self, tz: Any = None) -> datetime:
        return self.when


WORDS = ["lisbon", "porto", "Lisbon", "new york", "york", "acme", "acme corp", "o'brien", "café", "caf", "port",
         "sushi", "x", "rock-n-roll", "rock", "Zürich", "zurich", "10am", "am", "pm", "a b c"]


def _closed(rng: random.Random, n: int) -> dict[str, dict[str, Any]]:
    out = {}
    for i in range(n):
        term = rng.choice([w.casefold() for w in WORDS] + [f"w{rng.randrange(200)}"])
        out[term] = {"id": f"c-{i}", "valid_until": rng.choice(["2025-01-01", "2025-02-01"]), "superseded_by": None}
    return out


def _text(rng: random.Random) -> str:
    pieces = WORDS + ["the", "I", "moved", "to", ".", ",", "!", "’s", "'", "-", "w1", "w12", "w123", "lisbonx",
                      "xporto"]
    return "".join(rng.choice(pieces) + rng.choice([" ", "", " ", "\n", ", "]) for _ in range(rng.randint(0, 30)))


def test_looking_for_each_first_word_finds_what_listing_the_words_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(9)
    for _ in range(300):
        closed = _closed(rng, rng.randint(0, 40))
        texts = {f"r-{i}": _text(rng) for i in range(rng.randint(0, 12))}
        firsts = echo.first_words(closed) if closed else None
        few = echo.echoes(texts, closed, firsts)
        monkeypatch.setattr(echo, "FEW_FIRSTS", -1)  # every turn's words listed, as before
        assert echo.echoes(texts, closed) == few
        monkeypatch.undo()


def _book(rng: random.Random, n: int) -> claimbook.Book:
    days = [f"2025-0{m}-01T00:00:00Z" for m in range(1, 10)]
    book = claimbook.Book(("e", 1, 1))
    for i in range(n):
        start = rng.choice([None, *days])
        end = rng.choice([None, *[d for d in days if start is None or d > start]])
        nxt = f"c-{rng.randrange(n)}" if end and rng.random() < 0.8 else None
        book.by_id[f"c-{i}"] = {"id": f"c-{i}", "valid_from": start, "valid_until": end, "superseded_by": nxt,
                                "sources": "[]", "subject": None, "value": f"v{i}", "closed_by": None}
    return book


def test_successors_kept_per_window_are_the_walk_at_every_time() -> None:
    rng = random.Random(6)
    for n in (1, 5, 40):
        book = _book(rng, n)
        ledger = echo.ledger(None, "u1", book)  # type: ignore[arg-type]  # the book's rows: no cache read
        times = [f"2025-0{m}-01T{h:02d}:00:00Z" for m in range(1, 10) for h in (0, 12)] + ["2024-06-01T00:00:00Z"]
        for at in times + rng.sample(times, len(times)):
            wanted = {cid: Cand("claim", cid, {}) for cid in rng.sample(sorted(book.by_id), min(n, 6))}
            memo = echo.state(ledger, at, book).__dict__.setdefault("_succ", {})
            kept = cited.successors(None, "u1", wanted, at, book, memo)  # type: ignore[arg-type]
            assert kept == cited.successors(None, "u1", wanted, at, book)  # type: ignore[arg-type]


def _ago(days: int) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=days)).strftime("%Y-%m-%dT10:00:00Z")


TURNS = [(400, "I live in Lisbon with my partner."), (390, "My dad lives in Aberdeen."),
         (380, "My sister works at Initech in Oslo."), (300, "I work at Acme Corp as a data engineer."),
         (200, "I moved to Porto last week."), (150, "My dad moved to Glasgow."),
         (120, "I now work at Globex as a team lead."), (60, "Porto is lovely in spring, and Lisbon too."),
         (30, "Caroline: I moved to Madrid last month.")]
QUERIES = ["Where does the user live?", "Where does my dad live?", "Which company does the user work at?",
           "Where does Caroline live?", "Where does the user's sister work?", "What about Lisbon?"]


def test_warm_searches_answer_as_the_first_and_as_sql_does(tmp_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = Memory(tmp_repo, pii_engine="regex", vector_model="builtin", background=False)
    try:
        for i, (days, text) in enumerate(TURNS):
            m.add([{"role": "user" if i % 4 else "assistant", "content": text}], user_id="alice",
                  occurred_at=_ago(days))
        m.flush()

        def everything() -> list[object]:
            out: list[object] = []
            for q in QUERIES:
                for top_k in (3, 10):
                    out.append([h.to_json() for h in m.search(q, user_id="alice", top_k=top_k, explain=True)])
                out.append(m.search(q, user_id="alice", format="context").text)
            return out

        first = everything()
        assert any(h["kind"] == "claim" and h["sources"] for run in first if isinstance(run, list) for h in run)
        assert everything() == first  # kept per book and window
        monkeypatch.setattr(claimbook, "ENABLED", False)
        assert everything() == first  # the SQL path keeps nothing
    finally:
        m.close()



STALE_TURNS = [("2025-01-06T09:00:00Z", "energy supplier is Eonix"),
               ("2025-01-10T09:00:00Z", "I live in Skagen, right by the harbour"),
               ("2025-02-01T09:00:00Z", "the Eonix app keeps logging me out"),
               ("2025-03-03T09:00:00Z", "Skagen gets windy in March"),
               ("2025-04-18T09:00:00Z", "went from Eonix to Brightwatt, cheaper tariff"),
               ("2025-05-02T09:00:00Z", "we moved from Skagen to Viborg over the weekend"),
               ("2025-06-07T09:00:00Z", "Brightwatt sent the first bill, Eonix sent a final one"),
               ("2025-07-09T09:00:00Z", "still miss the beach in Skagen, Viborg is fine though")]


def test_only_the_shown_hits_need_their_stale_names(tmp_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``facts.rerank(..., shown=top_k)`` reads the closed names of the hits a search shows only; every
    other candidate is cut: the hits are those of naming every candidate's (h-warm)."""
    m = Memory(tmp_repo, pii_engine="regex", vector_model="builtin", background=False)
    try:
        for when, text in STALE_TURNS:
            m.add([{"role": "user", "content": text}], user_id="alice", occurred_at=when)
        m.flush()

        def everything() -> list[object]:
            return [[h.to_json() for h in m.search(q, user_id="alice", top_k=top_k, explain=True)]
                    for q in ("Where does the user live?", "energy supplier", "Skagen", "Eonix bill", "Viborg")
                    for top_k in (1, 2, 5)]

        shown = everything()
        assert any(h["stale"] for run in shown for h in run)  # a hit names a closed value
        whole = facts.rerank

        def all_named(cache, user_id, ranked, query="", stamp=None, shown=None):  # type: ignore[no-untyped-def]
            return whole(cache, user_id, ranked, query, stamp, None)

        monkeypatch.setattr(facts, "rerank", all_named)
        assert everything() == shown
    finally:
        m.close()
