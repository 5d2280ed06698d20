"""What maintenance planning works on: the pages being changed (a :class:`Ledger`) and its :class:`Action` list."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..model import Claim, Page
from ..store.pages import render_body


@dataclass(frozen=True)
class Action:
    """One planned change. ``detail`` holds ids and numbers only (plans are printed and logged)."""

    kind: str  # expire-claim | decay | merge | expire-sources | drop-raw
    path: str
    claim: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "claim": self.claim, **dict(self.detail)}


class Ledger:
    """The pages being planned; claims are replaced by id, the originals tell what changed."""

    def __init__(self, pages: Mapping[str, Page], owners: Mapping[str, str]) -> None:
        self.original = dict(pages)
        self.pages = dict(pages)
        self.owners = dict(owners)

    def claim(self, rel: str, cid: str) -> Claim:
        return next(c for c in self.pages[rel].claims if c.id == cid)

    def put(self, rel: str, claim: Claim) -> None:
        page = self.pages[rel]
        self.pages[rel] = replace(page, claims=tuple(claim if c.id == claim.id else c for c in page.claims))

    def active(self) -> Iterator[tuple[str, Page, Claim]]:
        for rel, page in self.pages.items():
            if not page.archived:
                yield from ((rel, page, c) for c in page.claims if c.active)

    def changed(self, at: str) -> list[Page]:
        out = []
        for rel, page in sorted(self.pages.items()):
            if page.claims != self.original[rel].claims:
                page = replace(page, updated=at)
                out.append(replace(page, body=render_body(page)))
        return out
