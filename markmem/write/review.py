"""Review items: quarantined inputs and low-confidence candidates awaiting a human.

Stored as ``wiki/u/<user>/review/<id>.yaml`` so that they sit inside the user's footprint
(erasure covers them) and are committed (decisions are auditable).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from ..errors import NotFound
from ..ids import short_hash
from ..model import Candidate, RawEntry
from ..store.codec import Codec
from ..store.pages import atomic_write


def item_path(user_id: str, item_id: str) -> str:
    return f"wiki/u/{user_id}/review/{item_id}.yaml"


def quarantine_item_id(raw_id: str) -> str:
    return "v-" + short_hash("quarantine", raw_id)


def quarantine_item(entry: RawEntry, now: str) -> dict[str, Any]:
    return {
        "id": quarantine_item_id(entry.id),
        "kind": "quarantine",
        "user_id": entry.user_id,
        "raw_id": entry.id,
        "source": entry.source,
        "reason": entry.quarantined or "injection",
        "created": now,
    }


def low_confidence_item(cand: Candidate, entry: RawEntry, now: str) -> dict[str, Any]:
    return {
        "id": "v-" + short_hash("candidate", entry.id, cand.predicate, cand.value),
        "kind": "low_confidence",
        "user_id": entry.user_id,
        "raw_id": entry.id,
        "source": entry.source,
        "reason": f"confidence {cand.confidence:.2f}",
        "candidate": asdict(cand),
        "created": now,
    }


def write_item(root: Path, item: dict[str, Any], codec: Codec) -> str:
    rel = item_path(item["user_id"], item["id"])
    text = yaml.safe_dump(item, sort_keys=False, allow_unicode=True)
    atomic_write(root / rel, codec.seal_text(item["user_id"], text), sync=False)
    return rel


def read_item(root: Path, user_id: str, item_id: str, codec: Codec) -> dict[str, Any]:
    path = root / item_path(user_id, item_id)
    if not path.exists():
        raise NotFound("review item", item_id)
    data = yaml.safe_load(codec.open_text(user_id, path.read_text("utf-8")))
    if not isinstance(data, dict):
        raise NotFound("review item", item_id)
    return data


def list_items(root: Path, codec: Codec, user_id: str | None = None) -> list[dict[str, Any]]:
    base = root / "wiki" / "u"
    users = [user_id] if user_id else sorted(p.name for p in base.iterdir()) if base.exists() else []
    out = []
    for uid in users:
        for path in sorted((base / uid / "review").glob("v-*.yaml")):
            out.append(read_item(root, uid, path.stem, codec))
    return sorted(out, key=lambda i: (i.get("created", ""), i["id"]))
