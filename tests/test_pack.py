"""Context packs: token budget (counted by a named real tokenizer), active claims only, every line
cited by id, deterministic, standing context first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from markmem import Memory
from markmem.adapters.tokens import count_tokens, tokenizer_name
from markmem.read.pack import HEADER, RELEVANT


def fill(mem: Memory) -> None:
    mem.add("My name is Alice and I live in Lisbon", user_id="alice", occurred_at="2026-01-01T00:00:00Z")
    mem.add("I prefer window seats", user_id="alice", occurred_at="2026-07-31T10:00:00Z")
    mem.add("Actually I prefer aisle seats now", user_id="alice", occurred_at="2026-08-02T09:12:00Z")
    for i in range(12):
        mem.add(f"we talked about seats on flight {i} to Boston and the legroom", user_id="alice",
                occurred_at=f"2026-08-{3 + i:02d}T10:00:00Z")
    mem.flush()


@pytest.mark.parametrize("budget", [12, 40, 80, 200, 800])
def test_budget_is_respected_with_a_named_tokenizer(mem: Memory, budget: int) -> None:
    fill(mem)
    pack = mem.search("seats on flights", user_id="alice", format="context", budget=budget, top_k=20)
    assert pack.tokenizer == tokenizer_name() and pack.budget == budget
    assert pack.tokens <= budget
    assert count_tokens(pack.text) <= budget
    if budget >= 200:
        assert pack.text.startswith(HEADER) and RELEVANT in pack.text


def test_active_claims_only_and_superseded_turns_left_out(mem: Memory) -> None:
    fill(mem)
    pack = mem.search("seat preference window aisle", user_id="alice", format="context", top_k=20)
    assert "aisle seats" in pack.text
    assert "window" not in pack.text, "neither the superseded claim nor the turn that stated it"
    then = mem.search("seat preference window aisle", user_id="alice", format="context",
                      as_of="2026-08-01T00:00:00Z", top_k=20)
    assert "window seats" in then.text and "aisle" not in then.text


def test_every_line_is_cited_and_the_pack_is_deterministic(tmp_repo: Path) -> None:
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as mem:
        fill(mem)
        first = mem.search("seats Boston legroom", user_id="alice", format="context", top_k=10)
        assert first.text == mem.search("seats Boston legroom", user_id="alice", format="context", top_k=10).text
    with Memory(tmp_repo, pii_engine="regex", vector_model=None, background=False) as again:
        assert again.search("seats Boston legroom", user_id="alice", format="context", top_k=10).text == first.text
    ids = []
    for line in first.text.splitlines():
        if line.startswith("## "):
            continue
        m = re.fullmatch(r"- .+ \[([rc]-[0-9a-f]+)\]", line)
        assert m, line
        ids.append(m.group(1))
    assert tuple(ids) == first.cited and len(set(ids)) == len(ids)


def test_standing_context_comes_first(mem: Memory) -> None:
    fill(mem)
    pack = mem.search("legroom", user_id="alice", format="context")
    lines = pack.text.splitlines()
    assert lines[0] == HEADER
    profile = [ln for ln in lines[1:lines.index(RELEVANT)]]
    assert profile and any("Lisbon" in ln for ln in profile), "the pinned profile page's active claims"
    assert "legroom" in pack.text.split(RELEVANT)[1]


def test_an_empty_pack_is_still_a_pack(mem: Memory) -> None:
    pack = mem.search("anything at all", user_id="nobody", format="context")
    assert pack.text == "" and pack.cited == () and pack.tokens == 0, "never a section header without a line"
