"""Every error markmem raises derives from :class:`MarkmemError`.

    MarkmemError
    ├── InvalidInput          bad arguments: empty/huge/binary text, bad user id, bad option
    │   └── InvalidUserId
    ├── NotFound              no page, claim, raw entry or review item with that id
    ├── PiiBlocked            the PII gate's policy is ``block`` and PII was found (nothing written)
    ├── EditQuarantined       an edit read as an instruction override: held for review, not applied
    ├── GateUnavailable       a required gate cannot run (e.g. block policy, no scanner at all)
    ├── RepoError             the memory repo is not usable (not a repo, git failed, bad schema)
    │   └── MalformedPage     a page's frontmatter cannot be parsed (hand-edited into bad YAML)
    ├── LockTimeout           the writer lock could not be taken in time
    ├── TooManyJobs           a server already runs its maximum of background jobs (REST 429)
    ├── ExtractionError       an LLM extractor failed for good (after retry and fallback)
    ├── EncryptionError       a key is missing, wrong, or the repo's encryption mode forbids this
    └── ErasureError          an erasure step failed; re-running ``forget`` resumes it

Shells map these once: click exits 1 with the message, REST maps them to 4xx, MCP to tool errors.
"""

from __future__ import annotations


class MarkmemError(Exception):
    """Root of every markmem error."""


class InvalidInput(MarkmemError, ValueError):
    """An argument was rejected; nothing was written."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class InvalidUserId(InvalidInput):
    """A user id failed validation (empty, path-like, control characters, too long...)."""

    def __init__(self, message: str, *, user_id: object = None) -> None:
        super().__init__(message, field="user_id")
        self.user_id = user_id


class NotFound(MarkmemError, KeyError):
    """No object with that id."""

    def __init__(self, what: str, ident: str) -> None:
        super().__init__(f"{what} not found: {ident}")
        self.what = what
        self.ident = ident

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class PiiBlocked(MarkmemError):
    """The PII policy blocks this input. ``entities`` names the types found (never the values)."""

    def __init__(self, entities: tuple[str, ...]) -> None:
        super().__init__("input blocked by the PII gate: found " + ", ".join(sorted(set(entities))))
        self.entities = entities


class EditQuarantined(MarkmemError):
    """``update()`` text tripped the injection guard: the edit was not applied. It is held as a
    quarantined raw entry (``raw_id``) whose review item ``item_id`` applies it when approved;
    both are None when the page has no owner to hold it for (a shared page: nothing written)."""

    def __init__(self, reason: str, raw_id: str | None, item_id: str | None) -> None:
        held = f"held for review as {item_id}" if item_id else "not recorded (a shared page has no review queue)"
        super().__init__(f"edit not applied: it reads as an instruction override ({reason}); {held}")
        self.reason = reason
        self.raw_id = raw_id
        self.item_id = item_id


class GateUnavailable(MarkmemError):
    """A gate that the configuration requires cannot run."""


class RepoError(MarkmemError):
    """The memory repo cannot be used as asked."""


class MalformedPage(RepoError):
    """A page file could not be parsed. ``path`` is repo-relative."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"malformed page {path}: {reason}")
        self.path = path
        self.reason = reason


class LockTimeout(MarkmemError):
    """The repo's writer lock was held by someone else for too long."""


class TooManyJobs(MarkmemError):
    """A server already runs ``limit`` background jobs; poll them, then try again."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} background job(s) already running: wait for one to finish, then retry")
        self.limit = limit


class ExtractionError(MarkmemError):
    """An extractor failed and no fallback could run."""


class EncryptionError(MarkmemError):
    """Encryption is misconfigured or a key is missing."""


class ErasureError(MarkmemError):
    """An erasure step failed. Re-running the same ``forget`` call finishes it."""
