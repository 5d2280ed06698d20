"""Cluster mode on a real PostgreSQL (pgserver): a claim id finds its shard through the index
(``mm_claims`` by id), so get / history / update / delete of a claim open one shard repo, not all."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from markmem import Memory
from markmem.cluster.layout import shard_of
from tests.cluster_fixtures import SETTINGS

USERS = ["ana", "ben", "cy", "dee", "eli", "fay"]


def open_cluster(root: Path, url: str) -> Memory:
    return Memory(root, database_url=url, shards=4, **SETTINGS)  # type: ignore[arg-type]


def claims(mem: Memory) -> dict[str, str]:
    """claim id -> owner, for every user's active claims."""
    return {c.id: u for u in USERS for p in mem.get_all(u) for c in p.active_claims()}


def opened(mem: Memory) -> set[int]:
    return set(mem._cluster.shards._open)  # type: ignore[union-attr]


def test_a_claim_id_opens_only_its_owners_shard(tmp_path: Path, database_url: str) -> None:
    root = tmp_path / "cluster"
    with open_cluster(root, database_url) as mem:
        for u in USERS:
            mem.add(f"I live in {u.title()}ville", user_id=u)
        mem.flush()
        owners = claims(mem)
    assert len({shard_of(u, 4) for u in owners.values()}) > 1
    for claim_id, user in list(owners.items())[:3]:
        with open_cluster(root, database_url) as fresh:  # a new replica: no shard opened yet
            assert fresh.get(claim_id).id == claim_id  # type: ignore[union-attr]
            assert opened(fresh) == {shard_of(user, 4)}
            assert fresh.history(claim_id)
            assert opened(fresh) == {shard_of(user, 4)}
    claim_id, user = next(iter(owners.items()))
    with open_cluster(root, database_url) as fresh:
        new = fresh.update(claim_id, "I live in Newtown")
        assert opened(fresh) == {shard_of(user, 4)}
        assert new.id in [h.id for h in fresh.search("Newtown", user_id=user)]  # type: ignore[union-attr]


def test_a_claim_the_index_lacks_is_still_found_by_looking_in_every_shard(tmp_path: Path, database_url: str) -> None:
    from markmem.errors import NotFound

    root = tmp_path / "cluster"
    with open_cluster(root, database_url) as mem:
        mem.add("I work as a pilot", user_id="kim")
        mem.flush()
        claim_id = next(iter(claims_of(mem, "kim")))
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DELETE FROM mm_claims")  # an index behind its repos (say, before a reindex)
    with open_cluster(root, database_url) as fresh:
        assert fresh.get(claim_id).id == claim_id  # type: ignore[union-attr]
        assert len(opened(fresh)) >= 1
        with pytest.raises(NotFound):
            fresh.get("c-0000000000")
        assert opened(fresh) == {0, 1, 2, 3}  # nobody owns it: every shard was looked in


def claims_of(mem: Memory, user: str) -> list[str]:
    return [c.id for p in mem.get_all(user) for c in p.active_claims()]
