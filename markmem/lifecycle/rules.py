"""Lint rules: pure checks over scanned pages. Messages carry ids, counts and line numbers only,
never page or claim text, so a CI log never leaks a user's memory.

==========================  ========================================================  ========
rule                        what it finds                                              --fix
==========================  ========================================================  ========
``invalid-page``            unparseable frontmatter / YAML, missing fields, id != path  no
``outside-prefix``          a wiki file not under ``wiki/u/<valid id>/`` or             no
                            ``wiki/shared/``; a page whose ``user_id`` is not its
                            folder's user
``broken-link``             markdown links and ``[[wikilinks]]`` to missing pages or    no
                            into another user's folder; ``supersedes`` /
                            ``superseded_by`` naming a claim the owner does not have
``unsourced-claim``         a source that names a raw entry that no longer exists        no
``injection``               instruction-override text in a claim, title or prose       no
``drift``                   prose that differs from the ledger-rendered body           yes
``impossible-validity``     valid_until < valid_from, closed_at < recorded_at, an      no
                            active claim with ``superseded_by``, confidence out of 0-1
``duplicate-active``        two active claims for one subject+predicate of one owner   yes
                            (multi-valued predicates excepted)
``duplicate-claim-id``      one claim id twice within an owner's pages                  no
``invalid-raw-line``        a raw line that does not parse, lacks its fields or names   no
                            another user than its folder (path:line); every reader
                            skips it
``symlink``                 a symlink under ``raw/``, ``wiki/`` or ``.markmem/``        no
                            (never followed, written through or committed)
==========================  ========================================================  ========
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import unquote

from ..ids import SINGLE_RELATIONS
from ..model import Claim, Page
from ..store.pages import render_body
from .scan import SHARED, PageFile, RawIndex, owner_of, source_parts

RULES = (
    "invalid-page", "outside-prefix", "broken-link", "unsourced-claim", "injection", "drift",
    "impossible-validity", "duplicate-active", "duplicate-claim-id", "invalid-raw-line", "symlink",
)
FIXABLE = frozenset({"drift", "duplicate-active"})
_MD_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_WIKI_LINK = re.compile(r"\[\[([^\]\n|#]*)(?:#[^\]\n|]*)?(?:\|[^\]\n]*)?\]\]")
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_CLAIM_ID = re.compile(r"c-[0-9a-f]{6,}")
Detector = Callable[[str], "str | None"]


@dataclass(frozen=True)
class LintIssue:
    rule: str
    path: str
    message: str
    claim: str | None = None
    fixable: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Corpus:
    """What the per-page checks look things up in: every wiki file, every claim id's owners, raw ids."""

    files: frozenset[str]
    claim_owners: dict[str, set[str]]
    raw: RawIndex
    detect: Detector | None


def issue(rule: str, path: str, message: str, claim: str | None = None) -> LintIssue:
    return LintIssue(rule, path, message, claim, rule in FIXABLE)


def is_multi(page: Page, claim: Claim) -> bool:
    """Multi-valued: the resolver gives each value its own page (``--v<hash>`` slug); notes add up."""
    slug = page.id.rsplit("/", 1)[-1]
    if page.type == "entity":
        return claim.predicate not in SINGLE_RELATIONS
    return "--v" in slug or page.type == "note" or claim.predicate == "note" or page.extra.get("multi") is True


# -- file- and page-level rules -------------------------------------------------------------
def check_location(rel: str) -> list[LintIssue]:
    if owner_of(rel) is None:
        return [issue("outside-prefix", rel, "file is not under wiki/u/<valid user id>/ or wiki/shared/")]
    return []


def check_page(pf: PageFile, corpus: Corpus) -> list[LintIssue]:
    if pf.error is not None:
        return [issue("invalid-page", pf.rel, pf.error)]
    assert pf.page is not None
    page = pf.page
    found = check_owner(pf)
    found += check_links(pf, corpus)
    found += check_claim_refs(pf, corpus)
    found += check_sources(pf, corpus.raw)
    found += check_validity(pf.rel, page.claims)
    found += check_drift(pf.rel, page)
    if corpus.detect is not None:
        found += check_injection(pf.rel, page, corpus.detect)
    return found


def check_owner(pf: PageFile) -> list[LintIssue]:
    page = pf.page
    if page is None or pf.owner is None:
        return []
    expected = None if pf.owner == SHARED else pf.user
    if page.user_id != expected:
        return [issue("outside-prefix", pf.rel, f"user_id {page.user_id!r} does not own the folder {pf.owner}/")]
    return []


def check_links(pf: PageFile, corpus: Corpus) -> list[LintIssue]:
    assert pf.page is not None
    out: list[LintIssue] = []
    for lineno, line in enumerate(pf.page.body.splitlines(), 1):
        for target in _MD_LINK.findall(line):
            problem = _md_problem(pf, target, corpus.files)
            if problem:
                out.append(issue("broken-link", pf.rel, f"prose line {lineno}: markdown link {problem}"))
        for target in _WIKI_LINK.findall(line):
            problem = _wiki_problem(pf, target.strip(), corpus)
            if problem:
                out.append(issue("broken-link", pf.rel, f"prose line {lineno}: wikilink {problem}"))
    return out


def _md_problem(pf: PageFile, target: str, files: frozenset[str]) -> str | None:
    if target.startswith("#") or _SCHEME.match(target):
        return None
    path = unquote(target.split("#", 1)[0])
    joined = path.lstrip("/") if path.startswith("/") else posixpath.join(posixpath.dirname(pf.rel), path)
    rel = posixpath.normpath(joined)
    if rel.startswith("../") or rel == "..":
        return "points outside the memory repo"
    return _target_problem(pf, [rel, rel + ".md"], files)


def _wiki_problem(pf: PageFile, target: str, corpus: Corpus) -> str | None:
    if not target:
        return None
    if _CLAIM_ID.fullmatch(target):
        return _claim_problem(pf, target, corpus)
    base = posixpath.normpath(target.removesuffix(".md"))
    if base.startswith(".."):
        return "points outside the wiki"
    candidates = [f"wiki/{base}.md", posixpath.normpath(f"{posixpath.dirname(pf.rel)}/{base}.md")]
    if pf.owner is not None:
        candidates.insert(1, f"wiki/{pf.owner}/{base}.md")
    return _target_problem(pf, candidates, corpus.files)


def _target_problem(pf: PageFile, candidates: Sequence[str], files: frozenset[str]) -> str | None:
    hit = next((c for c in candidates if c in files), None)
    if hit is None:
        return "points to a page that does not exist"
    other = owner_of(hit)
    if other is not None and other.startswith("u/") and other != pf.owner:
        return "points into another user's folder"
    return None


def _claim_problem(pf: PageFile, cid: str, corpus: Corpus) -> str | None:
    owners = corpus.claim_owners.get(cid)
    if not owners:
        return f"names claim {cid}, which does not exist"
    if pf.owner not in owners:
        return f"names claim {cid}, which belongs to another owner"
    return None


def check_claim_refs(pf: PageFile, corpus: Corpus) -> list[LintIssue]:
    assert pf.page is not None
    out: list[LintIssue] = []
    for c in pf.page.claims:
        for field in ("supersedes", "superseded_by"):
            ref = getattr(c, field)
            problem = _claim_problem(pf, ref, corpus) if ref else None
            if problem:
                out.append(issue("broken-link", pf.rel, f"{field} {problem}", c.id))
    return out


def check_sources(pf: PageFile, index: RawIndex) -> list[LintIssue]:
    assert pf.page is not None
    out: list[LintIssue] = []
    for c in pf.page.claims:
        missing = foreign = 0
        for ref in c.sources:
            parts = source_parts(ref)
            if parts is not None and pf.owner is not None and pf.owner != f"u/{parts[0]}":
                foreign += 1
            elif not index.exists(ref):
                missing += 1
        if missing:
            out.append(issue("unsourced-claim", pf.rel, f"{missing} of {len(c.sources)} sources name a raw "
                             "entry that no longer exists", c.id))
        if foreign:
            out.append(issue("unsourced-claim", pf.rel,
                             f"{foreign} source(s) point into a raw log this page's owner does not own", c.id))
    return out


def check_validity(rel: str, claims: Sequence[Claim]) -> list[LintIssue]:
    out: list[LintIssue] = []
    for c in claims:
        for problem in _validity_problems(c):
            out.append(issue("impossible-validity", rel, problem, c.id))
    return out


def _validity_problems(c: Claim) -> Iterator[str]:
    if c.valid_from and c.valid_until and c.valid_until < c.valid_from:
        yield "valid_until is before valid_from"
    if c.recorded_at and c.closed_at and c.closed_at < c.recorded_at:
        yield "closed_at is before recorded_at"
    if c.active and c.superseded_by:
        yield f"active, yet superseded_by {c.superseded_by}"
    if not 0.0 <= c.confidence <= 1.0:
        yield "confidence is outside 0..1"


def prose_lines(text: str) -> list[str]:
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def check_drift(rel: str, page: Page) -> list[LintIssue]:
    actual, expected = prose_lines(page.body), prose_lines(render_body(page))
    if actual == expected:
        return []
    extra = len(set(actual) - set(expected))
    missing = len(set(expected) - set(actual))
    detail = f"{extra} prose line(s) not in the ledger, {missing} ledger line(s) missing from the prose"
    if not extra and not missing:
        detail = "prose lines are reordered or repeated"
    return [issue("drift", rel, f"prose differs from the claim ledger: {detail}")]


def check_injection(rel: str, page: Page, detect: Detector) -> list[LintIssue]:
    out: list[LintIssue] = []
    for c in page.claims:
        label = detect(c.text) or (detect(c.value) if c.value not in c.text else None)
        if label:
            out.append(issue("injection", rel, f"claim text looks like an injection ({label})", c.id))
    title = detect(page.title)
    if title:
        out.append(issue("injection", rel, f"page title looks like an injection ({title})"))
    expected = set(prose_lines(render_body(page)))
    for lineno, line in enumerate(prose_lines(page.body), 1):
        label = detect(line) if line not in expected and line.strip() else None
        if label:
            out.append(issue("injection", rel, f"prose line {lineno} looks like an injection ({label})"))
    return out


# -- owner-wide rules -----------------------------------------------------------------------
def claim_owners(pages: Sequence[PageFile]) -> dict[str, set[str]]:
    owners: dict[str, set[str]] = {}
    for pf in pages:
        if pf.page is not None and pf.owner is not None:
            for c in pf.page.claims:
                owners.setdefault(c.id, set()).add(pf.owner)
    return owners


def check_duplicate_ids(pages: Sequence[PageFile]) -> list[LintIssue]:
    seen: dict[tuple[str, str], str] = {}
    out: list[LintIssue] = []
    for pf in pages:
        if pf.page is None or pf.owner is None:
            continue
        for c in pf.page.claims:
            first = seen.setdefault((pf.owner, c.id), pf.rel)
            if first != pf.rel or sum(1 for x in pf.page.claims if x.id == c.id) > 1:
                out.append(issue("duplicate-claim-id", pf.rel, f"claim id also used in {first}", c.id))
    return list(dict.fromkeys(out))


def active_groups(pages: Sequence[PageFile]) -> dict[tuple[str, str, str], list[tuple[PageFile, Claim]]]:
    """Active single-valued claims grouped by (owner, subject, predicate); only groups of 2+."""
    groups: dict[tuple[str, str, str], list[tuple[PageFile, Claim]]] = {}
    for pf in pages:
        if pf.page is None or pf.owner is None or pf.error is not None or pf.page.archived:
            continue
        owner = pf.owner + "/entity" if pf.page.type == "entity" else pf.owner  # relations restate facts
        for c in pf.page.claims:
            if c.active and not is_multi(pf.page, c):
                groups.setdefault((owner, c.subject.casefold(), c.predicate), []).append((pf, c))
    return {k: v for k, v in groups.items() if len(v) > 1}


def check_duplicates(groups: dict[tuple[str, str, str], list[tuple[PageFile, Claim]]]) -> list[LintIssue]:
    out: list[LintIssue] = []
    for (_owner, _subject, predicate), members in sorted(groups.items()):
        others = len(members) - 1
        for pf, c in members:
            out.append(issue("duplicate-active", pf.rel,
                             f"{others} other active claim(s) for the same subject and {predicate}", c.id))
    return out
