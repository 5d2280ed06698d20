"""Configuration is a value: a frozen :class:`Settings`, built once by a shell and passed down.

The environment is read in exactly one place, :meth:`Settings.from_env`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import InvalidInput
from .ports import PiiPolicy

DEFAULT_SPACY_MODEL = "en_core_web_sm"
DEFAULT_VECTOR_MODEL = "builtin"  # the distilled model shipped in markmem/models/
EXTRACTORS = ("heuristic", "litellm", "anthropic", "openai")
PII_ENGINES = ("auto", "presidio", "regex", "off")
CACHE_LAYOUTS = ("auto", "one", "split")
CLAUSE_PARSERS = ("auto", "spacy", "regex")
# Names, places and groups are what a chatbot's memory is for: kept in the text, tagged as PII in
# the raw entry (access export and erasure see them). Identifiers are masked. ``pii_policy="mask"``
# masks names and places too; ``"default,US_SSN=block"`` starts from this and changes one type.
NAME_ENTITIES = ("PERSON", "LOCATION", "NRP")
DEFAULT_PII_POLICY = "mask," + ",".join(f"{e}=tag" for e in NAME_ENTITIES)


@dataclass(frozen=True)
class Settings:
    repo_path: Path = Path(".")
    pii_policy: PiiPolicy = field(default_factory=lambda: parse_policy(None))  # DEFAULT_PII_POLICY
    pii_engine: str = "auto"  # auto: Presidio if importable, else regex (doctor reports which)
    spacy_model: str = DEFAULT_SPACY_MODEL
    extractor: str = "heuristic"
    clause_parser: str = "auto"  # the heuristic extractor's clause splitter: spaCy's parse if installed, else regex
    llm_model: str | None = None
    llm_timeout: float = 30.0
    vector_model: str | None = DEFAULT_VECTOR_MODEL  # None disables the vector lane
    max_input_bytes: int = 1_000_000
    batch_size: int = 1000
    review_below: float = 0.5  # candidates under this confidence go to review
    token_budget: int = 800
    # The graph lane (read/graph.py: a personalized PageRank from entities the question names) in
    # every search. Off by default: it changed no labelled LoCoMo/LongMemEval result and costs ~2 ms
    # CPU per search at 10k (bench/results/recall.md); entity pages and `related` work either way.
    graph_lane: bool = False
    encryption: bool = False
    cache_layout: str = "auto"  # split (auto): a file per user, per-user statistics; one: a single file
    master_key: str | None = None  # wraps per-user data keys when set
    background: bool = True  # run a compile worker thread; False: compile only in flush()
    create: bool = True  # initialise the repo if missing; shells other than `init` pass False
    adopt_existing: bool = False  # allow turning an existing, non-memory git repo into a memory repo
    lock_timeout: float = 60.0
    author_name: str = "markmem"
    author_email: str = "markmem@localhost"
    # Cluster mode (markmem/cluster/): set database_url and repo_path is the cluster root, holding
    # one ordinary repo per shard (shards/NN). shards is fixed at init (None: what the cluster
    # recorded, else 8); remote is a git URL template with {shard}, pushed to after each batch.
    database_url: str | None = None
    shards: int | None = None
    remote: str | None = None
    # True: add() returns after PostgreSQL flushed its commit to disk (survives a database crash).
    # False: synchronous_commit = off for add()'s commit only; a PostgreSQL crash (not a replica's)
    # can lose the adds of its last ~0.6 s (3 x wal_writer_delay). docs/DEPLOY.md says more.
    durable_add: bool = True

    def __post_init__(self) -> None:
        if self.extractor not in EXTRACTORS:
            raise InvalidInput(f"extractor must be one of {EXTRACTORS}", field="extractor")
        if self.pii_engine not in PII_ENGINES:
            raise InvalidInput(f"pii_engine must be one of {PII_ENGINES}", field="pii_engine")
        if self.clause_parser not in CLAUSE_PARSERS:
            raise InvalidInput(f"clause_parser must be one of {CLAUSE_PARSERS}", field="clause_parser")
        if self.cache_layout not in CACHE_LAYOUTS:
            raise InvalidInput(f"cache_layout must be one of {CACHE_LAYOUTS}", field="cache_layout")
        if self.max_input_bytes <= 0 or self.batch_size <= 0:
            raise InvalidInput("max_input_bytes and batch_size must be positive")
        if self.shards is not None and not 1 <= self.shards <= 4096:
            raise InvalidInput("shards must be between 1 and 4096", field="shards")
        if self.remote is not None and "{shard}" not in self.remote:
            raise InvalidInput("remote must be a git URL template containing {shard}", field="remote")

    def with_(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from ``MARKMEM_*`` variables; keyword overrides win."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        if "MARKMEM_REPO" in env:
            values["repo_path"] = Path(env["MARKMEM_REPO"])
        if "MARKMEM_PII_POLICY" in env:
            values["pii_policy"] = parse_policy(env["MARKMEM_PII_POLICY"])
        simple = {
            "MARKMEM_PII_ENGINE": "pii_engine",
            "MARKMEM_SPACY_MODEL": "spacy_model",
            "MARKMEM_LLM_PROVIDER": "extractor",
            "MARKMEM_LLM_COMPILE_MODEL": "llm_model",
            "MARKMEM_MASTER_KEY": "master_key",
            "MARKMEM_CACHE_LAYOUT": "cache_layout",
            "MARKMEM_CLAUSE_PARSER": "clause_parser",
            "MARKMEM_DATABASE_URL": "database_url",
            "MARKMEM_REMOTE": "remote",
        }
        for var, name in simple.items():
            if env.get(var):
                values[name] = env[var]
        if "MARKMEM_VECTOR_MODEL" in env:
            model = env["MARKMEM_VECTOR_MODEL"].strip()
            values["vector_model"] = None if model.lower() in ("", "none", "off") else model
        if env.get("MARKMEM_MAX_INPUT_BYTES"):
            values["max_input_bytes"] = int(env["MARKMEM_MAX_INPUT_BYTES"])
        if env.get("MARKMEM_BACKGROUND"):  # a cluster replica that leaves compiling to `markmem worker`: 0
            values["background"] = env["MARKMEM_BACKGROUND"].lower() in ("1", "true", "yes", "on")
        if env.get("MARKMEM_GRAPH_LANE"):
            values["graph_lane"] = env["MARKMEM_GRAPH_LANE"].lower() in ("1", "true", "yes", "on")
        if env.get("MARKMEM_SHARDS"):
            values["shards"] = int(env["MARKMEM_SHARDS"])
        if env.get("MARKMEM_DURABLE_ADD"):
            values["durable_add"] = env["MARKMEM_DURABLE_ADD"].lower() in ("1", "true", "yes", "on")
        if env.get("MARKMEM_ENCRYPTION"):
            values["encryption"] = env["MARKMEM_ENCRYPTION"].lower() in ("1", "true", "yes", "on")
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def parse_policy(text: str | PiiPolicy | None) -> PiiPolicy:
    """``"mask"`` or ``"mask,PERSON=tag,US_SSN=block"`` -> PiiPolicy, taken literally; ``"default"``
    (also None) is :data:`DEFAULT_PII_POLICY`, and ``"default,US_SSN=block"`` changes one type of it."""
    if text is None:
        text = "default"
    if isinstance(text, PiiPolicy):
        return text
    default = "mask"
    per: dict[str, Any] = {}
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        key, _, val = part.partition("=")
        if not val and key.strip().lower() == "default":
            per.update((e, "tag") for e in NAME_ENTITIES)
            continue
        action = (val or key).strip().lower()
        if action not in ("tag", "mask", "block"):
            raise InvalidInput(f"PII action must be tag, mask or block, not {action!r}")
        if val:
            per[key.strip().upper()] = action
        else:
            default = action
    return PiiPolicy(default, per)  # type: ignore[arg-type]
