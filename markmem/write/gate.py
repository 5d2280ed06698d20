"""The one gate every write passes before any byte reaches disk: PII (tag | mask | block) and
the injection guard, over every stored text field of a record.

    Fields(text, speaker, agent_id, run_id, metadata)  ->  gate(ctx, records)  ->  Gated

A record's side fields (speaker, agent/run ids, metadata keys and values, string or integer, at
any depth) are laid out as one ``key: value`` text, so a value keeps its key as context ("ssn:
123456789"); it follows the record's ``text`` after a paragraph break in ONE scanner document
(spaCy's cost is per document), and findings are cut back to the field they fall in. If any
finding's action is ``block``, :class:`PiiBlocked` is raised before anything is written. The
injection guard reads the text and the side text; a hit is reported as ``quarantined`` (the
caller holds the record for review).

Callers: ``pipeline.accept`` (add), ``edit.update``, ``decide`` (review edits), and every
importer (``portability.memos``, ``portability.restore``). Nothing else writes user text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import PiiBlocked
from ..ports import PiiFinding, PiiPolicy, PiiScanner

if TYPE_CHECKING:
    from ..context import Context

Detector = Callable[..., "str | None"]  # (text, *, model=True) -> reason or None
_SEP = "\n\n"


@dataclass(frozen=True)
class Fields:
    """The stored text fields of one record (a turn, an edit, an imported memory or claim)."""

    text: str
    speaker: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # JSON values (see messages.clean_metadata)
    role: str | None = None  # not stored: an assistant turn is read by the guard's rules only


@dataclass(frozen=True)
class Gated:
    fields: Fields  # after masking
    entities: tuple[str, ...]  # entity types found in any field (tagged or masked)
    masked: tuple[str, ...]  # the subset whose spans were replaced by <ENTITY>
    quarantined: str | None  # injection reason, if the record is held for review

    @property
    def text(self) -> str:
        return self.fields.text


def gate(ctx: Context, records: Sequence[Fields | str], *, guard: bool = True) -> list[Gated]:
    """THE door: gate ``records`` with the repo's scanner, policy and (if ``guard``) injection guard."""
    detect = ctx.detect_injection if guard else None
    return screen(records, ctx.scanner, ctx.settings.pii_policy, detect)


def screen(
    records: Sequence[Fields | str],
    scanner: PiiScanner,
    policy: PiiPolicy,
    detect_injection: Detector | None = None,
) -> list[Gated]:
    """Scan every field of every record in one batch; raise PiiBlocked before anything is returned."""
    recs = [Fields(r) if isinstance(r, str) else r for r in records]
    layouts = [_Side.of(r) for r in recs]
    # one scanner document per record (NER's cost is per document): text, a paragraph break, side text
    texts = [r.text + _SEP + s.text if s.text else r.text for r, s in zip(recs, layouts, strict=True)]
    found = scanner.analyze_batch(texts) if texts else []
    mains = [_clip(fs, 0, len(r.text)) if fs else fs for r, fs in zip(recs, found, strict=True)]
    sides = [_clip(fs, len(r.text) + len(_SEP), len(t)) if fs and s.text else []
             for r, s, t, fs in zip(recs, layouts, texts, found, strict=True)]
    blocked = {f.entity for fs in (*mains, *sides) for f in fs if policy.action(f.entity) == "block"}
    if blocked:
        raise PiiBlocked(tuple(sorted(blocked)))
    out = []
    for rec, side, main_f, side_f in zip(recs, layouts, mains, sides, strict=True):
        reason = None
        if detect_injection is not None:
            reason = _guard(detect_injection, rec, side.text)
        if not main_f and not side_f:  # nothing found (most turns): the record as given
            out.append(Gated(rec, (), (), reason))
            continue
        entities = {f.entity for f in (*main_f, *side_f)}
        masked = {e for e in entities if policy.action(e) == "mask"}
        base, text = side.rebuild(rec, side_f, policy), mask(rec.text, main_f, policy)
        gated = base if text is base.text else replace(base, text=text)  # nothing masked: no copy
        out.append(Gated(gated, tuple(sorted(entities)), tuple(sorted(masked)), reason))
    return out


def _guard(detect: Detector, rec: Fields, side_text: str) -> str | None:
    """The injection verdict on a record's text and side fields. An assistant turn is read by the
    rules only: the embedding classifier flagged 18% of the ~15k assistant turns of LongMemEval's
    dev slice (long helpful answers full of "you", "recommend", "AI") against 0.8% of its user
    turns, and the assistant's own words are not where an injected order enters a memory."""
    if rec.role == "assistant":
        return detect(rec.text, model=False) or (detect(side_text, model=False) if side_text else None)
    return detect(rec.text) or (detect(side_text) if side_text else None)


def mask(text: str, findings: Sequence[PiiFinding], policy: PiiPolicy) -> str:
    out = text
    for f in sorted(findings, key=lambda f: f.start, reverse=True):
        if policy.action(f.entity) == "mask":
            out = out[: f.start] + f"<{f.entity}>" + out[f.end :]
    return out


# -- side fields laid out as one text, and put back ------------------------------------------
@dataclass
class _Side:
    text: str
    spans: list[tuple[int, int]]  # one per leaf, in walk order

    @classmethod
    def of(cls, rec: Fields) -> _Side:
        if rec.speaker is None and rec.agent_id is None and rec.run_id is None and not rec.metadata:
            return _NO_SIDE  # most turns: nothing beside the text (never changed: rebuild returns rec)
        parts: list[str] = []
        spans: list[tuple[int, int]] = []
        pos = 0
        for leaf, sep in _leaves(rec):
            start = pos + len(sep) if parts else pos
            parts.append((sep if parts else "") + leaf)
            spans.append((start, start + len(leaf)))
            pos = start + len(leaf)
        return cls("".join(parts), spans)

    def rebuild(self, rec: Fields, findings: Sequence[PiiFinding], policy: PiiPolicy) -> Fields:
        if not findings:
            return rec
        new = iter([mask(self.text[s:e], _clip(findings, s, e), policy) for s, e in self.spans])
        speaker, agent_id, run_id = (None if v is None else next(new) for v in (rec.speaker, rec.agent_id, rec.run_id))
        return Fields(rec.text, speaker, agent_id, run_id, _rebuild_map(rec.metadata, new))


_NO_SIDE = _Side("", [])


def _leaves(rec: Fields) -> Iterator[tuple[str, str]]:
    """Every side string with the separator before it: ids and speaker, then metadata depth first."""
    for value in (rec.speaker, rec.agent_id, rec.run_id):
        if value is not None:
            yield value, "\n"
    yield from _walk(rec.metadata, "\n")


def _walk(value: Any, sep: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k), "\n"
            yield from _walk(v, ": ")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, ", " if i else sep)
    elif isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        yield str(value), sep


def _rebuild_map(value: dict[str, Any], new: Iterator[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for v in value.values():
        key = next(new)
        while key in out:  # two keys masked to the same placeholder: keep both
            key += "'"
        out[key] = _rebuild(v, new)
    return out


def _rebuild(value: Any, new: Iterator[str]) -> Any:
    if isinstance(value, dict):
        return _rebuild_map(value, new)
    if isinstance(value, list):
        return [_rebuild(v, new) for v in value]
    if isinstance(value, str):
        return next(new)
    if isinstance(value, int) and not isinstance(value, bool):
        text = next(new)
        return value if text == str(value) else text  # a masked number becomes its placeholder
    return value


def _clip(findings: Sequence[PiiFinding], start: int, end: int) -> list[PiiFinding]:
    """The findings overlapping [start, end), cut to it and made relative to ``start``."""
    out = []
    for f in findings:
        s, e = max(f.start, start), min(f.end, end)
        if s < e:
            out.append(PiiFinding(f.entity, s - start, e - start, f.score))
    return out
