"""Entity pages and relations (write/entities.py), the graph lane (read/graph.py) and the doors to
an entity's neighbourhood: Memory.related, MCP wiki_related, REST /users/{id}/related, CLI related."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from markmem import Memory
from markmem.cli import main
from markmem.errors import InvalidInput, NotFound
from markmem.model import Hit
from markmem.read import graph
from markmem.read.fuse import Recipe
from markmem.read.search import search as searching

SAID = ["My sister Maria moved to Oslo", "I work at Ostara", "my mum lives in Malaga",
        "I have a dog named Rex", "I live in Berlin", "We went hiking with Maria last week, it rained",
        "The weather was grey all week", "I made pasta for dinner", "Rex chewed my shoes"]


GRAPH = Recipe(graph_depth=10)  # the graph lane is off by default (measured: bench/results/recall.md)


def walk(mem: Memory, query: str, user_id: str, top_k: int = 5) -> list[Hit]:
    """A search with the graph lane on, explained."""
    return searching(mem.context, query, user_id, top_k, explain=True, recipe=GRAPH)


@pytest.fixture
def told(mem: Memory) -> Memory:
    for text in SAID:
        mem.add(text, user_id="alice")
    mem.flush()
    return mem


def entity_files(repo: Path, user: str = "alice") -> list[Path]:
    return sorted((repo / "wiki" / "u" / user / "entity").glob("*.md"))


def rel(found: dict, direction: str = "out") -> set[tuple[str, str]]:
    return {(r["predicate"], r["title"]) for r in found["relations"] if r["direction"] == direction}


def test_entity_pages_have_hashed_names_and_link_their_relations(told: Memory) -> None:
    files = entity_files(told.context.root)
    assert {f.name for f in files} >= {"self.md"} and len(files) == 8  # Maria, mum, Oslo, Malaga, Ostara, Rex, Berlin
    assert all(re.fullmatch(r"self\.md|e-[0-9a-f]{10}\.md", f.name) for f in files)  # no user text in paths
    maria = told.related("alice", "Maria")
    assert maria["kind"] == "person" and rel(maria) == {("sister_of", "alice"), ("lives_in", "Oslo")}
    page = told.get(maria["id"])
    oslo = next(r["id"] for r in maria["relations"] if r["title"] == "Oslo")
    assert f"[Oslo]({oslo.rsplit('/', 1)[1]}.md)" in page.body and "[alice](self.md)" in page.body  # type: ignore[union-attr]
    assert (told.context.root / f"wiki/{oslo}.md").exists()  # the link leads to a page
    me = told.related("alice", "alice")
    assert rel(me) == {("works_at", "Ostara"), ("owns", "Rex"), ("lives_in", "Berlin")}
    assert ("mum_of", "mum") in rel(me, "in") and ("sister_of", "Maria") in rel(me, "in")
    assert told.related("alice", "OSTARA")["kind"] == "organisation"
    assert told.related("alice", "rex")["kind"] == "pet" and told.related("alice", "Malaga")["kind"] == "place"


def test_a_relation_is_bitemporal(told: Memory) -> None:
    told.add("Maria moved to Lisbon", user_id="alice")
    told.flush()
    maria = told.related("alice", "maria")
    assert rel(maria) == {("sister_of", "alice"), ("lives_in", "Lisbon")}  # "knows" is not added: she is known
    page = told.get(maria["id"])
    [old] = [c for c in page.claims if c.value == "Oslo"]  # type: ignore[union-attr]
    [new] = [c for c in page.claims if c.value == "Lisbon"]  # type: ignore[union-attr]
    assert old.valid_until == new.valid_from and old.superseded_by == new.id and new.supersedes == old.id
    assert "~~lives in [Oslo]" in page.body  # type: ignore[union-attr]
    profile = {c.id for p in told.get_all("alice") if p.type != "entity" for c in p.claims}
    assert not {c.id for c in page.claims} & profile  # type: ignore[union-attr]  # own ids, never a fact claim's


def test_compiling_again_changes_nothing(told: Memory) -> None:
    before = {f.name: f.read_text() for f in entity_files(told.context.root)}
    from markmem.store import raw
    from markmem.store.pages import page_loader
    from markmem.write import entities
    from markmem.write.extract import HeuristicExtractor

    ctx = told.context
    files = [str(p.relative_to(ctx.root)) for p in sorted((ctx.root / "raw/u/alice").rglob("*.jsonl"))]
    entries = [e for f in files for e, _s, _e in raw.read_range(ctx.root, f, 0, 1 << 30, ctx.codec, "alice")]
    cands = HeuristicExtractor().extract(entries).candidates
    again = entities.build(cands, {e.id: e for e in entries}, page_loader(ctx.root, ctx.codec), "2030-01-01T00:00:00Z",
                           0.5)
    assert again == {} and before == {f.name: f.read_text() for f in entity_files(ctx.root)}


def test_phrases_are_not_entities(mem: Memory) -> None:
    for text in ["I live in a small flat", "I work at to help out", "Lots of people came"]:
        mem.add(text, user_id="bo")
    mem.flush()
    titles = {mem.get(f"u/bo/entity/{f.stem}").title for f in entity_files(mem.context.root, "bo")}  # type: ignore[union-attr]
    assert titles <= {"bo"}


def test_related_errors(told: Memory) -> None:
    with pytest.raises(NotFound):
        told.related("alice", "Gandalf")
    with pytest.raises(NotFound):
        told.related("bob", "Maria")  # another user's entity is not found
    with pytest.raises(InvalidInput):
        told.related("alice", "  ")


def test_graph_lane_explains_its_rank_and_weight(told: Memory) -> None:
    hits = walk(told, "what did Maria do last week?", "alice")
    walked = [h for h in hits if "graph" in h.explain["lanes"]]  # type: ignore[index]
    assert walked and all(h.explain["graph_weight"] > 0 and 0 < h.explain["graph"] <= 1 for h in walked)  # type: ignore[index]
    assert any("hiking" in h.text for h in walked)
    plain = walk(told, "what did I make for dinner?", "alice")  # names no entity
    assert plain and not any("graph" in h.explain["lanes"] for h in plain)  # type: ignore[index]
    default = told.search("what did Maria do last week?", user_id="alice", explain=True)  # the lane is off
    assert default and not any("graph" in h.explain["lanes"] for h in default)  # type: ignore[index]


def test_the_graph_lane_setting_turns_it_on(told: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    on = Memory(told.root, pii_engine="regex", vector_model=None, background=False, graph_lane=True)
    try:
        hits = on.search("what did Maria do last week?", user_id="alice", explain=True)
    finally:
        on.close()
    assert any("graph" in h.explain["lanes"] for h in hits)  # type: ignore[index]
    assert [(h.id, h.score) for h in hits] == [(h.id, h.score) for h in walk(told, "what did Maria do last week?",
                                                                              "alice")]
    monkeypatch.setenv("MARKMEM_GRAPH_LANE", "1")
    from markmem.config import Settings

    assert Settings.from_env().graph_lane is True


def test_graph_stays_fresh_and_is_per_user(told: Memory) -> None:
    walk(told, "Maria", "alice")
    told.add("Maria adopted a kitten named Miso", user_id="alice")  # a turn only: no entity page changes
    found = walk(told, "Maria", "alice", 10)
    assert any("kitten" in h.text and "graph" in h.explain["lanes"] for h in found)  # type: ignore[index]
    told.add("Maria works at Ostara", user_id="alice")  # a new relation, no new name: mentions are kept
    told.flush()
    found = walk(told, "what did Maria do last week?", "alice", 10)
    assert any("hiking" in h.text and "graph" in h.explain["lanes"] for h in found)  # type: ignore[index]
    assert ("works_at", "Ostara") in rel(told.related("alice", "Maria"))
    told.add("Maria is lovely", user_id="carl")
    told.flush()
    assert all(h.user_id == "carl" for h in told.search("Maria", user_id="carl"))


def test_stats_count_entities_and_relations(told: Memory) -> None:
    s = told.stats()
    assert s["entities"] == 7 and s["relations"] == 7  # alice's own page is not counted as an entity


def test_reindex_rebuilds_the_graph_from_the_markdown(told: Memory) -> None:
    before = told.related("alice", "Maria"), told.stats()["relations"]
    shutil.rmtree(told.context.root / ".markmem" / "cache")
    graph._graphs.clear()
    told.reindex()
    assert (told.related("alice", "Maria"), told.stats()["relations"]) == before
    hits = walk(told, "what did Maria do last week?", "alice")
    assert any("graph" in h.explain["lanes"] for h in hits)  # type: ignore[index]


def test_erasure_removes_entity_pages(told: Memory) -> None:
    told.add("My brother Tom lives in Leeds", user_id="bob")
    told.flush()
    told.search("Maria", user_id="alice")
    told.forget("alice")
    root = told.context.root
    assert not (root / "wiki/u/alice").exists() and entity_files(root, "bob")
    assert not any(k[1] == "alice" for k in graph._graphs)
    with pytest.raises(NotFound):
        told.related("alice", "Maria")
    assert told.stats()["entities"] == 2 and told.related("bob", "tom")["kind"] == "person"
    assert "Maria" not in (root / ".git").as_posix()
    assert told.verify_erasure("alice")


def test_a_malformed_entity_page_does_not_stop_compiling(told: Memory) -> None:
    maria = told.related("alice", "Maria")["id"]
    (told.context.root / f"wiki/{maria}.md").write_text("not a page")
    told.add("Maria lives in Rome", user_id="alice")
    told.flush()  # the fact still lands on her profile page
    assert any(c.value == "Rome" for p in told.get_all("alice") for c in p.claims)


def test_mcp_rest_and_cli_doors(told: Memory, tmp_path: Path) -> None:
    from mcp import Client

    from markmem.mcp_server import build_server

    async def scenario() -> None:
        async with Client(build_server(told, "alice")) as client:
            result = await client.call_tool("wiki_related", {"entity": "Maria"})
            assert not result.is_error and result.structured_content["title"] == "Maria"  # type: ignore[index]
            missing = await client.call_tool("wiki_related", {"entity": "Gandalf"})
            assert missing.is_error

    anyio.run(scenario)
    from fastapi.testclient import TestClient

    from markmem.api import create_app

    with TestClient(create_app(told), base_url="http://127.0.0.1") as api:
        found = api.get("/users/alice/related", params={"entity": "maria"})
        assert found.status_code == 200 and found.json()["kind"] == "person"
        assert api.get("/users/alice/related", params={"entity": "nobody"}).status_code == 404
    root = told.context.root
    told.close()
    env = {"MARKMEM_PII_ENGINE": "regex", "MARKMEM_VECTOR_MODEL": "none", "MARKMEM_REPO": str(root)}
    out = CliRunner(env=env).invoke(main, ["related", "Maria", "--user", "alice"])
    assert out.exit_code == 0 and "sister_of" in out.output and "Oslo (place)" in out.output
    out = CliRunner(env=env).invoke(main, ["stats", "--json"])
    assert out.exit_code == 0 and '"entities": 7' in out.output
