"""The user moved on, the ledger did not: the later statement says so, the older one is marked
(branch h-stale6, #12 point 5).

End to end with real git, SQLite and spaCy's parser (no mock), a user per scenario:

* a claim of a one-valued slot the user's later statement moved on from ("chess club is on Wednesday
  evenings for me", then "the library changed the club night to Fridays from this term") lists its value
  in ``Hit.stale``, the assistant's earlier echo of it too, the pack moves it after what holds with its
  note, and the later statement is the first hit (``facts.RESTATED``);
* a user's turn no claim cites, then the user's later word on the same thing: the later one comes first
  (``facts.LATER_WORD``) and the older one's names are listed (``facts.TURNS_RESTATED``);
* what is not such a change: a later statement sharing only a word of the question ("I don't live on
  takeaways anymore" is not about "I moved to Kendal"), a repeat of the value.

Each behaviour is checked with its switch off too: the test fails without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from facts_fixtures import scripted_memory

from markmem import Memory
from markmem.jsonable import to_jsonable
from markmem.read import facts

pytest.importorskip("spacy")

SCENARIOS = {
    "u-chess": [("user", "2025-02-04T19:00:00Z", "chess club is on Wednesday evenings for me"),
                ("assistant", "2025-02-04T19:01:00Z", "Wednesday chess, nice."),
                ("user", "2025-05-06T19:00:00Z", "the library changed the club night to Fridays from this term")],
    "u-power": [("user", "2025-01-10T09:00:00Z", "our energy comes from Northgrid"),
                ("user", "2025-06-12T09:00:00Z", "Brightwatt Power are looking after our energy these days")],
    "u-home": [("user", "2025-03-01T09:00:00Z", "I moved to Kendal last spring"),
               ("user", "2025-09-01T09:00:00Z", "I don't live on takeaways anymore, new year new me")],
    "u-same": [("user", "2025-02-01T09:00:00Z", "choir is on Monday evenings for me"),
               ("user", "2025-08-01T09:00:00Z", "choir is still on Monday evenings now, new conductor though")],
}


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    m = scripted_memory(tmp_path_factory.mktemp("factsstale21") / "memory", SCENARIOS)
    yield m
    m.close()


def _stale(mem: Memory, query: str, user: str) -> list[tuple[str, tuple[dict, ...]]]:
    return [(h.text, h.stale) for h in mem.search(query, user_id=user, top_k=5)]


def test_a_claim_the_user_moved_on_from_is_marked_and_goes_after(mem: Memory,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    q = "Which evening does the user go to chess club?"
    hits = mem.search(q, user_id="u-chess", top_k=5)
    assert "Fridays" in hits[0].text, [(h.text, h.stale) for h in hits]
    old = next(h for h in hits if h.kind == "claim" and "Wednesday" in h.text)
    assert old.valid_until is None, "the ledger still holds it: the read side marks it"
    entry = old.stale[0]
    assert "Wednesday" in entry["named"] and entry["claim"] == old.id and entry["valid_until"].startswith("2025-05-06")
    echo = next(h for h in hits if h.role == "assistant")
    assert any("Wednesday" in s["named"] for s in echo.stale), echo.stale
    assert json.loads(json.dumps(to_jsonable(old)))["stale"][0]["named"] == entry["named"], "in every interface"
    pack = str(mem.search(q, user_id="u-chess", top_k=5, format="context"))
    lines = [ln for ln in pack.splitlines() if ln.startswith("- ")]
    assert "Fridays" in lines[0] and "ended on 2025-05-06" in next(ln for ln in lines if "evenings for me" in ln), pack
    monkeypatch.setattr(facts, "RESTATED", False)
    hits = mem.search(q, user_id="u-chess", top_k=5)
    assert "Fridays" not in hits[0].text and not any(h.stale for h in hits if "Wednesday" in h.text)


def test_the_later_word_on_an_unread_turn_comes_first(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    q = "Who is the user's energy supplier?"
    hits = mem.search(q, user_id="u-power", top_k=5)
    assert "Brightwatt" in hits[0].text, [(h.text, h.stale) for h in hits]
    old = next(h for h in hits if "Northgrid" in h.text)
    assert [s["named"] for s in old.stale] == ["Northgrid"], old.stale
    monkeypatch.setattr(facts, "TURNS_RESTATED", False)
    assert not next(h for h in mem.search(q, user_id="u-power", top_k=5) if "Northgrid" in h.text).stale
    monkeypatch.setattr(facts, "RESTATED", False)
    monkeypatch.setattr(facts, "LATER_WORD", False)
    assert "Northgrid" in mem.search(q, user_id="u-power", top_k=5)[0].text


def test_a_word_of_the_question_alone_or_a_repeat_is_no_change(mem: Memory) -> None:
    for user, q, word in (("u-home", "Where does the user live?", "Kendal"),
                          ("u-same", "Which evening does the user go to choir?", "Monday")):
        hits = mem.search(q, user_id=user, top_k=5)
        shown = [(h.text, h.stale) for h in hits]
        assert hits and not any(word in str(s["named"]) for h in hits for s in h.stale), shown
