"""Build a :class:`Context` from Settings: open or initialise the repo, pick adapters, sync the cache.

Every fallback (no Presidio -> regex gate, no vector model -> BM25 only, no LLM -> heuristic) is
recorded in ``ctx.warnings`` for ``doctor`` and logged once.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from .adapters.deferred import DeferredEmbedder, DeferredExtractor, DeferredScanner, probe
from .config import Settings
from .context import Context
from .errors import GateUnavailable, MalformedPage, MarkmemError, RepoError
from .index.cache import Cache
from .index.rebuild import apply_review_ops, rebuild
from .index.split import SplitCache
from .index.text import content_hash
from .ports import Embedder, Extractor, PiiScanner
from .store import raw
from .store.codec import Codec, PlainCodec
from .store.git import Git
from .store.lock import FileLock
from .store.pages import read_page
from .store.repo import init_repo, read_repo_config
from .write.queue import Queue

log = logging.getLogger("markmem")


def build_context(settings: Settings) -> Context:
    root = Path(settings.repo_path).resolve()
    if root.exists() and not root.is_dir():
        raise RepoError(f"{root} is not a directory")
    warnings: list[str] = []
    scanner = _scanner(settings, warnings)  # first: a gate that cannot run refuses before any write
    git = Git(root, (settings.author_name, settings.author_email))
    init_repo(root, git, encryption=settings.encryption, create=settings.create, adopt=settings.adopt_existing)
    codec = _codec(root, settings)
    ctx = Context(
        settings=settings, root=root, git=git, codec=codec,
        cache=_cache(root, settings, codec),
        queue=Queue(root / ".markmem" / "state.db"),
        write_lock=FileLock(root / ".markmem" / "write.lock", settings.lock_timeout),
        append_lock=FileLock(root / ".markmem" / "append.lock", settings.lock_timeout),
        scanner=scanner, extractor=_extractor(settings, warnings),
        detect_injection=_injection_guard(warnings), embedder=_embedder(settings, warnings),
        warnings=warnings,
    )
    for w in warnings:
        log.warning("markmem: %s", w)
    sync_cache(ctx)
    return ctx


def _codec(root: Path, settings: Settings) -> Codec:
    mode = read_repo_config(root).get("encryption", "none")
    if mode == "none":
        if settings.encryption:
            raise RepoError("this repo was created without encryption; enabling it needs an explicit migration")
        return PlainCodec()
    try:
        from .erase.crypto import AesCodec
    except ImportError as exc:
        raise RepoError(f"repo is encrypted ({mode}) but the crypto layer is unavailable: {exc}") from None
    return AesCodec(root / ".markmem" / "keys", settings.master_key)  # type: ignore[return-value]


# Entity types only Presidio finds (NER, or recognizers the regex gate lacks).
REGEX_BLIND = ("PERSON", "LOCATION", "NRP", "US_ITIN", "CRYPTO", "US_PASSPORT", "US_DRIVER_LICENSE",
               "US_BANK_NUMBER", "UK_NHS", "UK_NINO", "UK_PASSPORT", "UK_DRIVING_LICENCE", "ES_NIF",
               "IT_FISCAL_CODE", "IN_AADHAAR", "IN_PAN", "AU_TFN", "SG_NRIC_FIN")


def _scanner(settings: Settings, warnings: list[str]) -> PiiScanner:
    """The PII gate. Presidio (seconds to load) is only probed here and loads on the first write
    (``adapters.deferred``): read-only commands never pay for spaCy."""
    engine = settings.pii_engine
    if engine not in ("auto", "presidio"):
        from .adapters.presidio import load_scanner

        scanner, _none = load_scanner(engine, settings.spacy_model)
    elif (missing := probe(settings.spacy_model)) is None:
        scanner = DeferredScanner("presidio", lambda: _load_presidio(settings, warnings))
    elif engine == "presidio":
        raise GateUnavailable(f"Presidio gate requested but unavailable: {missing}")
    else:
        from .write.regex_pii import RegexScanner

        scanner = RegexScanner()
        warnings.append(f"presidio unavailable ({missing}): using the regex PII gate")
    _check_block_coverage(settings, scanner, warnings)
    return scanner


def _load_presidio(settings: Settings, warnings: list[str]) -> PiiScanner:
    """Runs on the first write: the real scanner, or (a broken install under ``auto``) the regex one."""
    from .adapters.presidio import load_scanner

    scanner, warning = load_scanner(settings.pii_engine, settings.spacy_model)
    if warning:
        warnings.append(warning)
        log.warning("markmem: %s", warning)
    _check_block_coverage(settings, scanner, warnings)
    return scanner


def _check_block_coverage(settings: Settings, scanner: PiiScanner, warnings: list[str]) -> None:
    """With ``block``, nothing unscanned is accepted silently.

    A policy that blocks entity types the active scanner cannot see refuses to open
    (GateUnavailable) when the weaker gate was not chosen explicitly: ``auto`` falling back to
    the regex gate, or ``off``. Choosing ``pii_engine="regex"`` is the explicit allowance; the
    gap is then reported by ``doctor``.
    """
    policy = settings.pii_policy
    if scanner.name == "off":
        blocks = policy.default == "block" or "block" in policy.per_entity.values()
        gaps = ["any PII"] if blocks else []
    else:
        gaps = [e for e in REGEX_BLIND if scanner.name == "regex" and policy.action(e) == "block"]
    if not gaps:
        return
    what = ", ".join(gaps)
    if settings.pii_engine in ("auto", "off"):
        raise GateUnavailable(
            f"the PII policy blocks {what}, which the {scanner.name!r} gate cannot detect; install "
            "Presidio and its spaCy model, change the policy for those types (e.g. PERSON=mask), or "
            "choose pii_engine='regex' explicitly to accept the weaker gate"
        )
    warnings.append(f"{scanner.name} PII gate cannot detect {what}: the block policy does not cover them")


def _extractor(settings: Settings, warnings: list[str]) -> Extractor:
    from .write.clauses import load_splitter

    try:
        splitter, name = load_splitter(settings.clause_parser, settings.spacy_model)
    except ImportError as exc:
        raise GateUnavailable(f"clause_parser='spacy' needs spaCy and its model ({exc})") from exc
    if name != "spacy" and settings.clause_parser == "auto":
        warnings.append("clause parser: regex fallback (spaCy or its model is not installed)")
    heuristic = DeferredExtractor("heuristic", lambda: _heuristic(splitter))
    if settings.extractor == "heuristic":
        return heuristic
    try:
        from .adapters.llm import build_extractor

        return build_extractor(settings.extractor, settings.llm_model, heuristic, settings.llm_timeout)
    except (ImportError, MarkmemError) as exc:
        warnings.append(f"LLM extractor {settings.extractor!r} unavailable ({exc}): using the heuristic extractor")
        return heuristic


def _heuristic(splitter: Callable[[str], list[str]]) -> Extractor:
    from .write.extract import HeuristicExtractor  # its rules compile on the first compile, not at open

    return HeuristicExtractor(splitter)


def _injection_guard(warnings: list[str]):  # type: ignore[no-untyped-def]
    """The injection guard, imported by the first text it checks (a write): its patterns compile in
    ~0.2 s (0.7 s on a busy machine), most of what opening a repo cost, and a read-only process
    never needs them."""
    if importlib.util.find_spec(".write.injection", __package__) is None:  # pragma: no cover - a broken install
        warnings.append("injection guard unavailable")
        return None
    loaded: list[Callable[..., str | None]] = []
    lock = threading.Lock()

    def detect_injection(text: str, *, model: bool = True) -> str | None:
        if not loaded:
            with lock:
                if not loaded:
                    from .write.injection import detect_injection as real

                    loaded.append(real)
        return loaded[0](text, model=model)

    return detect_injection


def _embedder(settings: Settings, warnings: list[str]) -> Embedder | None:
    """The vector model, probed here and loaded on the first search or compile that embeds."""
    if settings.vector_model is None:
        return None
    try:
        from .adapters.vecspec import load_embedder, probe_embedder

        name = probe_embedder(settings.vector_model)
    except (ImportError, MarkmemError, OSError) as exc:
        warnings.append(f"vector tier unavailable ({exc}): search falls back to BM25 only")
        return None
    spec = settings.vector_model
    return DeferredEmbedder(name, lambda: _loaded(load_embedder(spec)))


def _loaded(embedder: Embedder | None) -> Embedder:
    assert embedder is not None  # load_embedder returns None only for an empty spec, excluded above
    return embedder


def _cache(root: Path, settings: Settings, codec: Codec) -> Cache:
    """A shared file plus a file per user (``index.split``): each user's BM25 statistics are their
    own (adding or erasing someone changes nobody else's results), and erasing a user's plaintext
    from the cache is deleting a file. ``cache_layout="one"`` keeps every user in one file
    (statistics shared by the users in it), for a repo that serves one user."""
    split = settings.cache_layout != "one"
    return (SplitCache if split else Cache)(root / ".markmem" / "cache" / "index.db")


def sync_cache(ctx: Context) -> None:
    """Rebuild a missing/corrupt/old cache; catch up with commits made outside this process."""
    head = ctx.git.head()
    if not ctx.cache.ok():
        rebuild(ctx.root, ctx.cache, ctx.codec)
        if head:
            ctx.cache.set_meta("head", head)
        return
    seen = ctx.cache.get_meta("head")
    if head is None or seen == head:
        return
    changed = ctx.git.changed_since(seen) if seen else None
    if changed is None:
        rebuild(ctx.root, ctx.cache, ctx.codec)
    else:
        _apply_changes(ctx, changed)
    ctx.cache.set_meta("head", head)


def _apply_changes(ctx: Context, paths: list[str]) -> None:
    with ctx.cache.tx():
        for rel in paths:
            full = ctx.root / rel
            if rel.startswith("wiki/") and rel.endswith(".md"):
                page_id = rel[5:-3]
                if not full.exists():
                    ctx.cache.delete_page(page_id)
                    continue
                try:
                    page = read_page(ctx.root, rel, ctx.codec)
                except MalformedPage as exc:
                    ctx.cache.delete_page(page_id)
                    ctx.cache.set_problem(rel, exc.reason)
                    continue
                ctx.cache.set_problem(rel, None)
                ctx.cache.upsert_page(page, content_hash(page.body))
            elif rel.startswith("raw/u/") and rel.endswith(".jsonl") and full.exists():
                uid = rel.split("/")[2]
                upto = raw.read_checkpoint(ctx.root, uid).get(rel, 0)
                bad: list[raw.BadLine] = []
                for entry, _s, end in raw.read_range(ctx.root, rel, 0, None, ctx.codec, uid, bad):
                    ctx.cache.upsert_raw([entry], compiled=end <= upto)
                ctx.cache.clear_problems(rel + ":")
                for b in bad:
                    ctx.cache.set_problem(b.where, b.reason)
        if any(p.startswith(".markmem/ops/") for p in paths):  # review decisions made elsewhere
            apply_review_ops(ctx.root, ctx.cache)
