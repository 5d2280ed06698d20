"""``lint``: check every wiki file against the rules in :mod:`.rules`; ``fix=True`` repairs what is safe.

Safe fixes, all in ONE commit (``Markmem-Op: lint-fix``) plus a counts-only ops-log record:

* ``drift``: the prose is regenerated from the ledger (the old prose stays in git history; an
  uncommitted human edit is first committed on its own, ``Markmem-Op: human-edit``);
* ``duplicate-active``: the older claims are closed, oldest first, each superseded by the next
  (``valid_until`` = the next one's ``valid_from``), so exactly one stays active.

Pages that do not parse, sit outside a user prefix or have a foreign ``user_id`` are never written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..context import Context
from ..ids import now
from ..model import Claim, Page
from ..store import raw
from ..store.links import find_links
from ..store.pages import render_body
from ..store.repo import append_op
from ..write import review
from . import apply, rules
from .rules import Corpus, LintIssue
from .scan import TICK, PageFile, Progress, RawIndex, load_pages, wiki_files


@dataclass(frozen=True)
class LintReport:
    """What lint found. ``issues`` are the ones left (after fixing, when ``fix=True``)."""

    issues: tuple[LintIssue, ...]
    files: int
    pages: int
    fixed: tuple[LintIssue, ...] = ()
    commit: str | None = None
    skipped: tuple[str, ...] = ()  # rules that could not run, with why

    @property
    def ok(self) -> bool:
        return not self.issues

    def exit_code(self) -> int:
        """For CI: 0 when clean, 1 when any issue is left."""
        return 0 if self.ok else 1

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(i.rule for i in self.issues).items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "files": self.files, "pages": self.pages, "counts": self.counts(),
            "issues": [i.to_json() for i in self.issues], "fixed": [i.to_json() for i in self.fixed],
            "commit": self.commit, "skipped": list(self.skipped),
        }

    def summary(self) -> str:
        lines = [f"{i.path}: {i.rule}{f' [{i.claim}]' if i.claim else ''}: {i.message}"
                 + (" (fixable)" if i.fixable else "") for i in self.issues]
        lines += [f"skipped: {s}" for s in self.skipped]
        tail = f"{len(self.issues)} issue(s) in {self.pages} page(s)"
        if self.fixed:
            tail += f"; fixed {len(self.fixed)} in commit {(self.commit or '')[:12]}"
        return "\n".join([*lines, tail])


def lint(ctx: Context, fix: bool = False, progress: Progress | None = None) -> LintReport:
    """Check every wiki file; ``progress`` gets ``("pages", read, total)`` then ``("check", done, total)``
    (again for the re-check after a fix)."""
    if not fix:
        return _check(ctx, progress)[0]
    with ctx.write_lock.held():
        before, pages = _check(ctx, progress)
        if not any(i.fixable for i in before.issues):
            return before
        sha, changed = _fix(ctx, before, pages)
        after, _ = _check(ctx, progress)
        left = set(after.issues)
        fixed = tuple(i for i in before.issues if i.fixable and i not in left)
        return replace(after, fixed=fixed, commit=sha if changed else None)


def _detector(ctx: Context) -> tuple[rules.Detector | None, tuple[str, ...]]:
    if ctx.detect_injection is not None:
        return ctx.detect_injection, ()
    try:
        from ..write.injection import detect_injection
    except ImportError:
        return None, ("injection: the injection guard (markmem.write.injection) is unavailable",)
    return detect_injection, ()


def _check(ctx: Context, progress: Progress | None = None) -> tuple[LintReport, list[PageFile]]:
    files = wiki_files(ctx.root)
    pages = load_pages(ctx.root, ctx.codec, files, progress)
    detect, skipped = _detector(ctx)
    corpus = Corpus(frozenset(files), rules.claim_owners(pages), RawIndex(ctx.root), detect)
    found: list[LintIssue] = []
    for rel in files:
        found += rules.check_location(rel)
    for i, pf in enumerate(pages, 1):
        found += rules.check_page(pf, corpus)
        if progress and (i % TICK == 0 or i == len(pages)):
            progress("check", i, len(pages))
    found += rules.check_duplicate_ids(pages)
    found += rules.check_duplicates(rules.active_groups(pages))
    found += [rules.issue("invalid-raw-line", b.where, b.reason) for b in raw.bad_lines(ctx.root, ctx.codec)]
    bad_items: list[tuple[str, str]] = []
    review.list_items(ctx.root, ctx.codec, None, bad_items)
    found += [rules.issue("invalid-page", rel, reason) for rel, reason in bad_items]
    found += [rules.issue("symlink", rel, "a symlink: never followed, written through or committed")
              for rel in find_links(ctx.root)]
    found.sort(key=lambda i: (i.path, rules.RULES.index(i.rule), i.claim or "", i.message))
    return LintReport(tuple(found), len(files), len(pages), skipped=skipped), pages


def _writable(pages: Sequence[PageFile], issues: Sequence[LintIssue]) -> dict[str, Page]:
    """Pages a fix may rewrite: parsed, inside a prefix, owned by their folder's user."""
    blocked = {i.path for i in issues if i.rule in ("invalid-page", "outside-prefix")}
    return {pf.rel: pf.page for pf in pages
            if pf.page is not None and pf.owner and pf.error is None and pf.rel not in blocked}


def _fix(ctx: Context, report: LintReport, pages: list[PageFile]) -> tuple[str | None, list[Page]]:
    writable = _writable(pages, report.issues)
    stamp = now()
    touched = {i.path for i in report.issues if i.rule == "drift" and i.path in writable}
    for members in rules.active_groups(pages).values():
        if all(pf.rel in writable for pf, _c in members):
            touched |= _close_older(writable, [(pf.rel, c) for pf, c in members], stamp)
    changed = [_rerendered(writable[rel], stamp) for rel in sorted(touched)]
    if not changed:
        return None, []
    apply.commit_pending_edits(ctx, [p.path for p in changed])
    paths = apply.write_pages(ctx, changed)
    fixed = Counter(i.rule for i in report.issues if i.fixable and i.path in touched)
    paths.append(append_op(ctx.root, {"op": "lint-fix", "at": stamp, "pages": len(changed), "fixed": dict(fixed)}))
    trailers = {"Markmem-Op": "lint-fix", "Markmem-Fixed": ",".join(f"{k}={v}" for k, v in sorted(fixed.items()))}
    sha = apply.commit(ctx, paths, f"markmem: lint --fix ({sum(fixed.values())} issue(s) on {len(changed)} page(s))",
                       trailers)
    apply.refresh_cache(ctx, changed, sha)
    return sha, changed


def _rerendered(page: Page, stamp: str) -> Page:
    page = replace(page, updated=stamp)
    return replace(page, body=render_body(page))


def _close_older(writable: dict[str, Page], members: list[tuple[str, Claim]], stamp: str) -> set[str]:
    """Chain the active duplicates oldest -> newest: each is closed and superseded by the next."""
    ordered = sorted(members, key=lambda m: (m[1].valid_from or "", m[1].recorded_at or "", m[1].id))
    for (rel, old), (next_rel, new) in zip(ordered, ordered[1:], strict=False):
        until = max(new.valid_from or stamp, old.valid_from or "")
        closed = replace(_get(writable, rel, old.id), valid_until=until, closed_at=stamp, superseded_by=new.id)
        _put(writable, rel, closed)
        if new.supersedes is None:
            _put(writable, next_rel, replace(_get(writable, next_rel, new.id), supersedes=old.id))
    return {rel for rel, _c in members}


def _get(writable: dict[str, Page], rel: str, cid: str) -> Claim:
    return next(c for c in writable[rel].claims if c.id == cid)


def _put(writable: dict[str, Page], rel: str, claim: Claim) -> None:
    page = writable[rel]
    writable[rel] = replace(page, claims=tuple(claim if c.id == claim.id else c for c in page.claims))
