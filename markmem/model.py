"""Domain nouns: frozen dataclasses shared by every layer.

Times are ISO-8601 UTC strings ending in ``Z`` (``2026-08-02T09:12:05.123456Z``): they sort
lexically, survive YAML and JSON unchanged, and are what a human sees in a page.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Provenance = Literal["user_stated", "human_edited", "tool_derived", "agent_inferred"]
PROVENANCE_TRUST: dict[str, float] = {
    "user_stated": 1.0,
    "human_edited": 1.0,
    "tool_derived": 0.8,
    "agent_inferred": 0.6,
}
HitKind = Literal["claim", "turn", "page"]


def _copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value


@dataclass(frozen=True)
class RawEntry:
    """One accepted input turn, exactly as it was written to ``raw/`` (after the gate)."""

    id: str
    user_id: str
    role: str
    content: str
    recorded_at: str
    occurred_at: str | None = None
    speaker: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    pii: tuple[str, ...] = ()
    quarantined: str | None = None  # reason, when the injection guard held it for review
    path: str = ""  # repo-relative raw file this entry lives in

    @property
    def source(self) -> str:
        return f"{self.path}#{self.id}"

    @property
    def when(self) -> str:
        """Valid time of the turn: when it happened, else when memory learned it."""
        return self.occurred_at or self.recorded_at

    def to_json(self) -> dict[str, Any]:
        """The stored line's fields in field order (as ``asdict`` gave them, without its deep copy:
        every add() serialises one; the JSON metadata is copied one level down)."""
        return {
            "id": self.id, "user_id": self.user_id, "role": self.role, "content": self.content,
            "recorded_at": self.recorded_at, "occurred_at": self.occurred_at, "speaker": self.speaker,
            "agent_id": self.agent_id, "run_id": self.run_id, "metadata": _copy_json(self.metadata),
            "pii": list(self.pii), "quarantined": self.quarantined,
        }


@dataclass(frozen=True)
class Candidate:
    """A fact an extractor proposes; the resolver turns it into a claim (or a review item)."""

    raw_id: str
    subject: str
    predicate: str
    value: str
    text: str
    confidence: float = 0.8
    provenance: Provenance = "user_stated"
    type: str = "profile"  # page type: profile | preference | relationship | fact | note
    multi: bool = False  # multi-valued predicate: a new value adds, it does not supersede
    negated: bool = False  # "I no longer X": closes the matching active claim
    valid_from: str | None = None  # a future-dated change or a correction's start; else the turn's time
    valid_until: str | None = None  # a temporary state's end ("this week I'm in Lisbon")


@dataclass(frozen=True)
class Claim:
    """One entry of a page's claim ledger. Bi-temporal: valid time and transaction time."""

    id: str
    subject: str
    predicate: str
    value: str
    text: str
    provenance: str = "user_stated"
    confidence: float = 0.8
    valid_from: str | None = None
    valid_until: str | None = None
    recorded_at: str | None = None
    closed_at: str | None = None  # transaction time at which memory closed this claim
    supersedes: str | None = None
    superseded_by: str | None = None
    sources: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.valid_until is None

    def valid_at(self, when: str) -> bool:
        started = self.valid_from is None or self.valid_from <= when
        return started and (self.valid_until is None or when < self.valid_until)

    def known_at(self, when: str) -> bool:
        """Memory believed this claim at transaction time ``when``."""
        learned = self.recorded_at is None or self.recorded_at <= when
        return learned and (self.closed_at is None or when < self.closed_at)


@dataclass(frozen=True)
class Page:
    """A compiled markdown page: frontmatter (with the claim ledger) plus generated prose."""

    id: str  # u/<user>/<type>/<slug>  or  shared/<type>/<slug>
    type: str
    user_id: str | None
    title: str
    created: str
    updated: str
    claims: tuple[Claim, ...] = ()
    body: str = ""
    pinned: bool = False
    archived: bool = False
    extra: dict[str, Any] = field(default_factory=dict)  # unknown frontmatter keys, kept verbatim

    @property
    def path(self) -> str:
        return f"wiki/{self.id}.md"

    def active_claims(self) -> tuple[Claim, ...]:
        return tuple(c for c in self.claims if c.active)


@dataclass(frozen=True)
class AddResult:
    """What ``add()`` accepted. ``ids`` are raw entry ids of the turns kept, in input order."""

    ids: tuple[str, ...]
    user_id: str
    pii: tuple[str, ...] = ()  # entity types the gate found (masked or tagged per policy)
    quarantined: tuple[str, ...] = ()  # raw ids held for review by the injection guard
    masked: tuple[str, ...] = ()  # the subset of ``pii`` replaced by <ENTITY>; the rest is tagged
    skipped: tuple[int, ...] = ()  # input positions of empty turns left out (no id)
    replaced: tuple[str, ...] = ()  # raw ids whose control characters became spaces


@dataclass(frozen=True)
class Source:
    """Where a hit came from: a raw entry with the caller's metadata."""

    raw_id: str
    path: str
    occurred_at: str | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    id: str
    kind: HitKind
    score: float
    text: str
    user_id: str
    page_id: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    sources: tuple[Source, ...] = ()
    explain: dict[str, Any] | None = None
    superseded_by: str | None = None  # a turn whose facts were since replaced: the claim that replaced them
    role: str | None = None  # a turn's role ("user", "assistant", ...)
    starts: str | None = None  # an as_of search: a turn telling of a change planned later, when it starts
    # values the text names that had been closed by the search's time, though the hit itself holds
    # ("we moved from Malmo to Lund": Malmo): each {"named", "value", "claim", "valid_until", "superseded_by"}
    stale: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Pack:
    """A prompt-ready, token-budgeted context block; every line is cited by id."""

    text: str
    tokens: int
    budget: int
    tokenizer: str
    cited: tuple[str, ...]
    hits: tuple[Hit, ...] = ()

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Commit:
    sha: str
    when: str
    message: str
    op: str | None = None
    diff: str | None = None
    changes: tuple[dict[str, Any], ...] = ()  # claim-level changes, when computed


@dataclass(frozen=True)
class CompileReport:
    """What one compiled batch did."""

    batch_id: str
    entries: int
    claims_added: int
    claims_closed: int
    reinforced: int
    to_review: int
    commit: str | None
    extractor: str
    flagged: bool = False  # the LLM extractor failed and the heuristic ran instead
