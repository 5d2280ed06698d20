"""``markmem.compat.mem0.Memory``: mem0's ``Memory`` API on a markmem repo, so a mem0 program runs
after changing one import line::

    from markmem.compat.mem0 import Memory      # was: from mem0 import Memory
    m = Memory()                                # repo: $MARKMEM_REPO, else the current directory
    m.add("I am vegetarian", user_id="alice")   # {"results": [{"id": "c-...", "memory": ..., "event": "ADD"}]}
    m.search("what do I eat?", user_id="alice") # {"results": [{"id", "memory", "score", ...}]}

A mem0 *memory* is a markmem *claim* (its id is the claim id, ``memory`` its text); search also
returns raw turns (ids ``r-...``), as markmem's search does. What differs, by design:

* ``update(id, data)`` never overwrites: a ``human_edited`` claim supersedes the old one, which
  stays readable (``get(old_id)``) and in ``history``; the new claim has a new id.
* ``delete_all(user_id=...)`` erases the user (``forget`` scrub: files removed, commit, tombstone).
* A memory belongs to one markmem user: ``user_id``, else ``agent_id``, else ``run_id`` names it
  (the others are kept with the entry). ``reset()`` is not offered: erase users one by one.
* mem0's ``vector_store`` / ``llm`` / ``embedder`` config is ignored; ``{"markmem": {...}}`` in the
  config holds markmem settings (``repo_path``, ``pii_engine``, ...).

Every call is synchronous: ``add`` compiles before it returns, as mem0's does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import NotFound
from ..memory import Memory as _Memory
from ..model import Claim, Hit, Page

UPDATED = {"message": "Memory updated successfully!"}
DELETED = {"message": "Memory deleted successfully!"}
ALL_DELETED = {"message": "Memories deleted successfully!"}


class Memory:
    """mem0's ``Memory`` method names, arguments and return shapes over :class:`markmem.Memory`."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        options = dict((config or {}).get("markmem") or {})
        repo = Path(options.pop("repo_path", None) or Settings.from_env().repo_path)
        self._mem = _Memory(repo, Settings.from_env(repo_path=repo), **{"background": False, **options})

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> Memory:
        return cls(config_dict)

    def close(self) -> None:
        self._mem.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- write ---------------------------------------------------------------------------
    def add(self, messages: Any, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
            metadata: dict[str, Any] | None = None, infer: bool = True, memory_type: str | None = None,
            prompt: str | None = None) -> dict[str, Any]:
        """Store messages; returns the memories this created, updated or closed (``infer=False``:
        the stored turns, compiled later)."""
        owner = _owner(user_id, agent_id, run_id)
        before = {c.id: c for c in self._claims(owner)}
        added = self._mem.add(messages, user_id=owner, agent_id=agent_id, run_id=run_id, metadata=metadata)
        if not infer:
            return {"results": [{"id": i, "memory": None, "event": "ADD"} for i in added.ids]}
        self._mem.flush()
        return {"results": _events(before, self._claims(owner, include_archived=True))}

    def update(self, memory_id: str, data: str) -> dict[str, str]:
        self._mem.update(memory_id, data)
        return dict(UPDATED)

    def delete(self, memory_id: str) -> dict[str, str]:
        self._mem.delete(memory_id)
        return dict(DELETED)

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, str]:
        self._mem.forget(_owner(user_id, agent_id, run_id), mode="scrub")
        return dict(ALL_DELETED)

    # -- read ----------------------------------------------------------------------------
    def search(self, query: str, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
               limit: int = 100, filters: dict[str, Any] | None = None,
               threshold: float | None = None) -> dict[str, Any]:
        owner = _owner(user_id, agent_id, run_id)
        hits = self._mem.search(query, user_id=owner, top_k=max(1, min(limit, 1000)))
        items = [_hit_item(h) for h in hits if threshold is None or h.score >= threshold]  # type: ignore[union-attr]
        return {"results": [i for i in items if _matches(i, filters)][:limit]}

    def get(self, memory_id: str) -> dict[str, Any] | None:
        try:
            found = self._mem.get(memory_id)
        except NotFound:
            return None
        if isinstance(found, Claim):
            return _claim_item(found, _owner_of(found))
        return {"id": memory_id, "memory": getattr(found, "content", None) or getattr(found, "title", ""),
                "metadata": dict(getattr(found, "metadata", None) or {}), "user_id": getattr(found, "user_id", None)}

    def get_all(self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                filters: dict[str, Any] | None = None, limit: int = 100) -> dict[str, Any]:
        owner = _owner(user_id, agent_id, run_id)
        items = [_claim_item(c, owner) for c in self._claims(owner) if c.active]
        return {"results": [i for i in items if _matches(i, filters)][:limit]}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The claim's chain of versions: ADD, then an UPDATE per correction, DELETE if it was closed."""
        chain = self._chain(memory_id)
        out = [_change(memory_id, chain[0], "ADD", None, chain[0].text)]
        out += [_change(memory_id, new, "UPDATE", old.text, new.text)
                for old, new in zip(chain[:-1], chain[1:], strict=True)]
        last = chain[-1]
        if last.valid_until is not None and not last.superseded_by:
            out.append({**_change(memory_id, last, "DELETE", last.text, None), "is_deleted": True})
        return out

    # -- helpers -------------------------------------------------------------------------
    def _claims(self, owner: str, include_archived: bool = False) -> list[Claim]:
        pages: list[Page] = self._mem.get_all(owner, include_archived=include_archived)
        return [c for p in pages for c in p.claims]

    def _chain(self, memory_id: str) -> list[Claim]:
        claim = self._mem.get(memory_id)
        if not isinstance(claim, Claim):
            raise NotFound("memory", memory_id)
        chain = [claim]
        while chain[0].supersedes and len(chain) < 1000:
            prev = self._claim_or_none(chain[0].supersedes)
            if prev is None:
                break
            chain.insert(0, prev)
        while chain[-1].superseded_by and len(chain) < 1000:
            nxt = self._claim_or_none(chain[-1].superseded_by)
            if nxt is None:
                break
            chain.append(nxt)
        return chain

    def _claim_or_none(self, claim_id: str) -> Claim | None:
        try:
            found = self._mem.get(claim_id)
        except NotFound:
            return None
        return found if isinstance(found, Claim) else None


def _owner(user_id: str | None, agent_id: str | None, run_id: str | None) -> str:
    owner = user_id or agent_id or run_id
    if not owner:
        raise ValueError("At least one of 'user_id', 'agent_id', or 'run_id' must be provided.")
    return owner


def _owner_of(claim: Claim) -> str | None:
    for source in claim.sources:
        parts = str(source).split("/")
        if len(parts) > 2 and parts[0] == "raw" and parts[1] == "u":
            return parts[2]
    return None


def _claim_item(c: Claim, user_id: str | None) -> dict[str, Any]:
    return {"id": c.id, "memory": c.text, "hash": hashlib.md5(c.text.encode()).hexdigest(),
            "metadata": dict(c.metadata), "created_at": c.recorded_at, "updated_at": c.closed_at or c.recorded_at,
            "user_id": user_id}


def _hit_item(h: Hit) -> dict[str, Any]:
    return {"id": h.id, "memory": h.text, "score": h.score, "metadata": {}, "created_at": h.valid_from,
            "updated_at": h.valid_from, "user_id": h.user_id}


def _matches(item: dict[str, Any], filters: dict[str, Any] | None) -> bool:
    meta = item.get("metadata") or {}
    return all(meta.get(k) == v or item.get(k) == v for k, v in (filters or {}).items())


def _events(before: dict[str, Claim], after: list[Claim]) -> list[dict[str, Any]]:
    """mem0's add() events from the user's claims before and after compiling."""
    now = {c.id: c for c in after}
    out = []
    for c in after:
        if c.id in before:
            continue
        old = before.get(c.supersedes or "")
        if old is not None:
            out.append({"id": c.id, "memory": c.text, "event": "UPDATE", "previous_memory": old.text})
        else:
            out.append({"id": c.id, "memory": c.text, "event": "ADD"})
    for cid, old in before.items():
        new = now.get(cid)
        if old.active and new is not None and not new.active and not new.superseded_by:
            out.append({"id": cid, "memory": old.text, "event": "DELETE"})
    return out


def _change(memory_id: str, c: Claim, event: str, old: str | None, new: str | None) -> dict[str, Any]:
    return {"id": c.id, "memory_id": memory_id, "old_memory": old, "new_memory": new, "event": event,
            "created_at": c.recorded_at, "updated_at": c.closed_at, "is_deleted": False}


__all__ = ["Memory"]
