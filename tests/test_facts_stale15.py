"""A hit that still holds may name a value that has since changed: ``Hit.stale`` lists those values,
and the context pack notes them (branch h-stale4, #12 point 5).

End to end with real git, SQLite and spaCy's parser (no mock), a user per scenario:

* a turn or claim naming a value the ledger closed ("we moved from Skagen to Viborg": Skagen), with
  the closed claim and when it changed (``facts.NAMES_CLOSED``);
* what the user's text itself says is over ("went from Eonix to Brightwatt": Eonix), ended when said
  (``facts.OWN_ENDINGS``);
* the value of a claim this search marked ended, named by another hit (``facts.REPLACED_STALE``);
* "I used to ..." and "<verb> ... from X to Y" end a claim naming X (``ended.MORE``).

Each behaviour is checked with its switch off too: the test fails without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from markmem import Memory
from markmem.jsonable import to_jsonable
from markmem.read import ended, facts

pytest.importorskip("spacy")

Turn = tuple[str, str, str]  # (role, occurred_at, text)
SCENARIOS: dict[str, list[Turn]] = {
    "u-move": [("user", "2025-01-10T09:00:00Z", "I live in Skagen, right by the harbour"),
               ("user", "2025-05-02T09:00:00Z", "we moved from Skagen to Viborg over the weekend")],
    "u-dog": [("user", "2025-01-14T09:00:00Z", "my girlfriend Nadia and I adopted a dog"),
              ("user", "2025-04-20T09:00:00Z", "Nadia and I split up, she moved out")],
    "u-energy": [("user", "2025-01-06T09:00:00Z", "energy supplier is Eonix"),
                 ("user", "2025-04-18T09:00:00Z", "went from Eonix to Brightwatt, cheaper tariff")],
    "u-oboe": [("user", "2025-01-17T09:00:00Z", "I play the oboe in a wind band"),
               ("user", "2025-10-01T09:00:00Z", "I used to play oboe, these days it's mostly the flute")],
    "u-bank": [("user", "2025-02-16T09:00:00Z", "I bank with Tallybank, always have"),
               ("user", "2025-05-12T09:00:00Z", "moved my current account from Tallybank to Nestwell")],
}


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root: Path = tmp_path_factory.mktemp("factsstale15") / "memory"
    m = Memory(root, pii_engine="regex", background=False, clause_parser="spacy")
    for user, turns in SCENARIOS.items():
        for role, when, text in turns:
            m.add([{"role": role, "content": text}], user_id=user, occurred_at=when)
    m.flush()
    yield m
    m.close()


@pytest.fixture
def switch(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    return monkeypatch


def _named(mem: Memory, query: str, user: str, word: str) -> list[tuple[str, dict]]:
    """(hit text, its stale entry) for each top-5 hit whose ``stale`` lists ``word``."""
    return [(h.text, s) for h in mem.search(query, user_id=user, top_k=5) for s in h.stale
            if word.casefold() in str(s["named"]).casefold()]


def test_a_change_turn_lists_the_closed_value_it_names(mem: Memory, switch: pytest.MonkeyPatch) -> None:
    q = "Where does the user live?"
    found = _named(mem, q, "u-move", "Skagen")
    assert found, [(h.text, h.stale) for h in mem.search(q, user_id="u-move", top_k=5)]
    text, entry = found[0]
    assert "Viborg" in text and entry["valid_until"].startswith("2025-05-02") and entry["claim"]
    hit = next(h for h in mem.search(q, user_id="u-move", top_k=5) if h.text == text)
    assert hit.valid_until is None, "the hit itself still holds"
    assert json.loads(json.dumps(to_jsonable(hit)))["stale"][0]["named"] == "Skagen", "in every interface's JSON"
    pack = str(mem.search(q, user_id="u-move", top_k=5, format="context"))
    assert any("Viborg" in ln and "Skagen: superseded on 2025-05-02" in ln for ln in pack.splitlines()), pack
    switch.setattr(facts, "NAMES_CLOSED", False)
    assert not _named(mem, q, "u-move", "Skagen")
    pack = str(mem.search(q, user_id="u-move", top_k=5, format="context"))
    assert "Skagen: superseded" not in pack


@pytest.fixture(autouse=True)
def _fresh_endings() -> Iterator[None]:
    ended.things.cache_clear()
    yield
    ended.things.cache_clear()


def test_the_ending_turn_names_the_closed_partner(mem: Memory, switch: pytest.MonkeyPatch) -> None:
    q = "Who is the user's girlfriend?"
    hits = mem.search(q, user_id="u-dog", top_k=5)
    split = [h for h in hits if "split up" in h.text]
    assert split and split[0].valid_until is None, [(h.text, h.valid_until) for h in hits]
    ledger = [s for s in split[0].stale if s["claim"]]
    assert ledger and ledger[0]["named"] == "Nadia" and ledger[0]["valid_until"].startswith("2025-04-20"), split
    switch.setattr(facts, "NAMES_CLOSED", False)
    split = [h for h in mem.search(q, user_id="u-dog", top_k=5) if "split up" in h.text]
    assert split and not [s for s in split[0].stale if s["claim"]], split


def test_what_the_text_says_is_over_is_listed(mem: Memory, switch: pytest.MonkeyPatch) -> None:
    q = "Who is the user's energy supplier?"
    own = [(t, s) for t, s in _named(mem, q, "u-energy", "Eonix") if "Brightwatt" in t]
    assert own and own[0][1]["valid_until"].startswith("2025-04-18"), own
    pack = str(mem.search(q, user_id="u-energy", top_k=5, format="context"))
    assert any("Brightwatt" in ln and "Eonix: ended on 2025-04-18" in ln for ln in pack.splitlines()), pack
    switch.setattr(facts, "OWN_ENDINGS", False)
    hits = mem.search(q, user_id="u-energy", top_k=5)
    assert not any(s.get("turn") == h.id for h in hits for s in h.stale), [(h.text, h.stale) for h in hits]


def test_used_to_ends_the_claim_it_names(mem: Memory, switch: pytest.MonkeyPatch) -> None:
    q = "What instrument does the user play?"
    claims = [h for h in mem.search(q, user_id="u-oboe", top_k=5) if h.kind == "claim" and "wind band" in h.text]
    assert claims and claims[0].valid_until is not None and claims[0].valid_until.startswith("2025-10-01"), claims
    pack = str(mem.search(q, user_id="u-oboe", top_k=5, format="context"))
    assert "wind band [" not in pack, "left out of what is remembered"
    switch.setattr(ended, "MORE", False)
    ended.things.cache_clear()  # memoised
    claims = [h for h in mem.search(q, user_id="u-oboe", top_k=5) if h.kind == "claim" and "wind band" in h.text]
    assert claims and claims[0].valid_until is None


def test_a_claim_ended_by_a_from_to_sentence_is_named_as_such(mem: Memory, switch: pytest.MonkeyPatch) -> None:
    q = "Which bank does the user use?"
    hits = mem.search(q, user_id="u-bank", top_k=5)
    old = [h for h in hits if h.kind == "claim" and h.text.startswith("I bank with Tallybank")]
    assert old and old[0].valid_until is not None and old[0].valid_until.startswith("2025-05-12"), \
        [(h.text, h.valid_until) for h in hits]
    change = [h for h in hits if "Nestwell" in h.text]
    assert change and any("Tallybank" in str(s["named"]) for s in change[0].stale), [(h.text, h.stale) for h in hits]
    switch.setattr(facts, "OWN_ENDINGS", False)  # the change turn still names the claim the search ended
    change = [h for h in mem.search(q, user_id="u-bank", top_k=5) if "Nestwell" in h.text]
    assert change and any(s.get("claim") == old[0].id for s in change[0].stale), change
    switch.setattr(facts, "REPLACED_STALE", False)
    change = [h for h in mem.search(q, user_id="u-bank", top_k=5) if "Nestwell" in h.text]
    assert change and not any(s.get("claim") == old[0].id for s in change[0].stale), change


@pytest.mark.parametrize(("text", "runs"), [
    ("switched broadband from Virgin Media to Community Fibre", ["Virgin Media"]),
    ("got an e-bike so no more 73 bus for me", ["73 bus"]),
    ("swapped my Pixel 8 for an iPhone 16", ["Pixel 8"]),
    ("I used to teach at Westbrook Academy, now I tutor online", ["Westbrook Academy"]),
    ("moved my current account from Barclays to Monzo", ["Barclays"]),
    ("we moved to Odense in August", []),
    ("I went to the gym and from there home", []),
])
def test_what_a_sentence_says_is_over(text: str, runs: list[str]) -> None:
    assert ended.runs(text, ended.things(text)) == runs
