"""A slot of many values loses one: the hits still naming the others are not wrong, the one value is
(branch h-stale5, #12 point 5).

End to end with real git, SQLite and spaCy's parser (no mock), a user per scenario:

* a value a LATER user turn says is over ("my German is gone") is listed in ``Hit.stale`` of an earlier
  hit naming it beside values that still hold ("I'm fluent in French and German"), and the pack notes
  it (``facts.LATER_ENDINGS``);
* for a what/which question, a first turn that only tells of an ending ("my gravel bike got stolen")
  gives its place to a statement of what holds (``facts.WHAT_HOLDS``);
* a user's turn saying a replaced name is over ("closed my Tallybank account, everything is on
  Nestwell now") is not itself marked replaced for naming it (``turnmarks.OWN_ENDING_KEPT``);
* the everyday endings added to ``read.ended`` (didn't make it, got stolen, rehome, gave ... to,
  unsubscribed from), and what is not one.

Each behaviour is checked with its switch off too: the test fails without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from facts_fixtures import scripted_memory

from markmem import Memory
from markmem.jsonable import to_jsonable
from markmem.read import ended, facts, turnmarks

pytest.importorskip("spacy")

SCENARIOS = {
    "u-lang": [("user", "2025-01-03T09:00:00Z", "I'm fluent in French and German"),
               ("user", "2025-10-03T09:00:00Z", "honestly my German is gone, I haven't spoken it in years"),
               ("user", "2025-10-05T09:00:00Z", "French still fine though")],
    "u-bank": [("user", "2025-01-27T09:00:00Z", "my current account has been with Tallybank since school"),
               ("user", "2025-06-06T09:00:00Z", "closed my Tallybank account, everything is on Nestwell now"),
               ("user", "2025-07-07T09:00:00Z", "Tallybank sent a letter asking me to come back lol")],
    "u-bikes": [("user", "2025-03-09T09:00:00Z", "I own two bikes, a Dahon folder and a gravel bike"),
                ("user", "2025-06-03T09:00:00Z", "my gravel bike got stolen outside the gym"),
                ("user", "2025-06-04T09:00:00Z", "the Dahon is all I ride these days")],
}


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    m = scripted_memory(tmp_path_factory.mktemp("factsstale18") / "memory", SCENARIOS)
    yield m
    m.close()


def _named(mem: Memory, query: str, user: str, word: str) -> list[tuple[str, dict]]:
    return [(h.text, s) for h in mem.search(query, user_id=user, top_k=5) for s in h.stale
            if word.casefold() in str(s["named"]).casefold()]


def test_a_later_ending_lists_the_one_value_that_ended(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    q = "What languages does the user speak, French or German?"  # (no vectors here: the words find the ending)
    found = _named(mem, q, "u-lang", "German")
    hits = mem.search(q, user_id="u-lang", top_k=5)
    assert any("French and German" in text for text, _ in found), [(h.text, h.stale) for h in hits]
    text, entry = next((t, e) for t, e in found if "French and German" in t)
    assert entry["valid_until"].startswith("2025-10-03") and (entry["turn"] or entry["claim"])
    hit = next(h for h in hits if h.text == text)
    assert hit.valid_until is None and not any("French" in str(s["named"]) for s in hit.stale), "French holds"
    assert json.loads(json.dumps(to_jsonable(hit)))["stale"][0]["named"] == "German", "in every interface's JSON"
    pack = str(mem.search(q, user_id="u-lang", top_k=5, format="context"))
    assert any("French and German" in ln and "German: ended on 2025-10-03" in ln for ln in pack.splitlines()), pack
    monkeypatch.setattr(facts, "LATER_ENDINGS", False)
    assert not any("French and German" in t for t, _ in _named(mem, q, "u-lang", "German"))


def test_an_ending_alone_is_not_the_first_answer_to_what_holds(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    q = "Which bikes does the user own?"
    first = mem.search(q, user_id="u-bikes", top_k=5)[0]
    assert "stolen" not in first.text, first.text
    monkeypatch.setattr(facts, "WHAT_HOLDS", False)
    assert "stolen" in mem.search(q, user_id="u-bikes", top_k=5)[0].text


def test_the_turn_ending_a_name_is_not_marked_for_naming_it(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    q = "Which bank account does the user have?"

    def change() -> list:
        return [h for h in mem.search(q, user_id="u-bank", top_k=5) if "Nestwell" in h.text]
    hits = mem.search(q, user_id="u-bank", top_k=5)
    assert change() and change()[0].valid_until is None, [(h.text, h.valid_until) for h in hits]
    old = next(h for h in hits if "since school" in h.text)
    assert old.valid_until, "the old statement is marked"
    monkeypatch.setattr(turnmarks, "OWN_ENDING_KEPT", False)
    assert change()[0].valid_until, "without the rule the change itself is marked replaced"


@pytest.mark.parametrize(("text", "gone"), [
    ("Clover didn't make it through the winter", {"clover"}),
    ("my gravel bike got stolen outside the gym", {"gravel", "bike"}),
    ("we had to rehome Pip, she hated the dog", {"pip"}),
    ("gave the goldfish to my nephew", {"goldfish"}),
    ("unsubscribed from Radiolab last week", {"radiolab"}),
    ("uninstalled Kaspersky, using Bitdefender instead", {"kaspersky"}),
    ("I gave my mum a lift to the station", set()),
    ("did the rabbit make it through the winter?", set()),
])
def test_everyday_endings(text: str, gone: set[str]) -> None:
    assert set(ended.things(text)) == gone


@pytest.mark.parametrize(("text", "only"), [
    ("sold my trumpet, I'm done with the brass band", True),
    ("unsubscribed from Radiolab, not my thing anymore", True),
    ("got an e-bike so no more 73 bus for me", False),
    ("dropped Portuguese, switched to Greek", False),
    ("handed in my notice at Boots, starting at Lloyds on monday", False),
])
def test_what_only_tells_of_an_ending(text: str, only: bool) -> None:
    assert ended.ends_only(text) is only
