"""The fact-first steps' view of the valid claims (read/live.py) is the passes over the ledger it
replaces, exactly: the same rows in the same order, at any time, kept or not."""

from __future__ import annotations

import random
from typing import Any

from markmem.index import claimbook
from markmem.read import echo, live

DAYS = [f"2025-0{m}-1{d}T00:00:00Z" for m in range(1, 8) for d in range(3)]


def _ledger(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        start = rng.choice([None, *DAYS])
        end = rng.choice([None, None, *[d for d in DAYS if start is None or d > start]])
        refs = [f"r-{rng.randrange(30)}" for _ in range(rng.randint(0, 3))]  # a ref may repeat
        out.append({"id": f"c-{i}", "subject": rng.choice([None, "u1", "u1", "dad", "Caroline"]),
                    "valid_from": start, "valid_until": end, "_refs": refs, "_closers": [],
                    "_terms": tuple(rng.sample(["lisbon", "porto", "acme", "sushi", "new york"], rng.randint(0, 2))),
                    "value": "x"})
    return out


def _passes(ledger: list[dict[str, Any]], at: str, user_id: str) -> dict[str, Any]:
    """What read/facts.py computed by scanning the ledger on every search."""
    mine = [r for r in ledger if str(r.get("subject") or user_id) != user_id and echo.active(r, at)]
    cites: dict[str, list[str]] = {}
    for r in ledger:
        if echo.active(r, at):
            for ref in r["_refs"]:
                cites.setdefault(ref, []).append(r["id"])
    own = {t for r in ledger if str(r.get("subject") or user_id) == user_id and echo.active(r, at) for t in r["_terms"]}
    return {"mine": mine, "cites": cites, "own": own, "terms": {t: r for r in mine for t in r["_terms"]}}


def test_the_view_is_the_passes_at_every_time() -> None:
    rng = random.Random(3)
    for n in (0, 1, 5, 60):
        ledger = _ledger(rng, n)
        book = claimbook.Book(("e", 1, 1))
        times = sorted({*DAYS, *(d.replace("T00", "T12") for d in DAYS), "2024-01-01T00:00:00Z",
                        "2030-01-01T00:00:00Z"})
        for at in times + rng.sample(times, len(times)):  # in order, then jumping back and forth
            for kept in (book, None):
                got = live.view(ledger, at, "u1", kept)
                want = _passes(ledger, at, "u1")
                assert got.mine == want["mine"] and got.own == want["own"] and got.cites == want["cites"]
                assert list(got.mine_terms.items()) == list(want["terms"].items())
                for ref in {f"r-{i}" for i in range(30)}:  # the claims of ``mine`` citing each turn, in order
                    citing = [r for r in want["mine"] if ref in r["_refs"]]
                    assert [got.mine[i] for i in got.mine_at.get(ref, [])] == citing


def test_a_view_is_kept_on_its_book_only_for_its_user_and_window() -> None:
    ledger = _ledger(random.Random(8), 40)
    book = claimbook.Book(("e", 1, 1))
    first = live.view(ledger, "2025-03-11T06:00:00Z", "u1", book)
    assert first.lo <= "2025-03-11T06:00:00Z" < str(first.hi)
    assert live.view(ledger, "2025-03-11T06:00:01Z", "u1", book) is first  # the same window
    assert live.view(ledger, "2025-03-11T06:00:00Z", "dad", book).user_id == "dad"  # another user: not reused
    late = live.view(ledger, "2031-01-01T00:00:00Z", "u1", book)
    assert late.mine == _passes(ledger, "2031-01-01T00:00:00Z", "u1")["mine"]
