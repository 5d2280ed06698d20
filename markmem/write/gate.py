"""Gates that run before any byte reaches disk: PII (tag | mask | block) and the injection guard."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import PiiBlocked
from ..ports import PiiFinding, PiiPolicy, PiiScanner


@dataclass(frozen=True)
class Gated:
    text: str
    entities: tuple[str, ...]  # entity types found (tagged or masked)
    quarantined: str | None  # injection reason, if held for review


def mask(text: str, findings: Sequence[PiiFinding], policy: PiiPolicy) -> str:
    out = text
    for f in sorted(findings, key=lambda f: f.start, reverse=True):
        if policy.action(f.entity) == "mask":
            out = out[: f.start] + f"<{f.entity}>" + out[f.end :]
    return out


def run_gates(
    texts: Sequence[str],
    scanner: PiiScanner,
    policy: PiiPolicy,
    detect_injection: Callable[[str], str | None] | None = None,
) -> list[Gated]:
    """Scan all texts first; if any finding is blocked, raise before anything is written."""
    all_findings = scanner.analyze_batch(list(texts))
    blocked = [f.entity for fs in all_findings for f in fs if policy.action(f.entity) == "block"]
    if blocked:
        raise PiiBlocked(tuple(sorted(set(blocked))))
    out = []
    for text, findings in zip(texts, all_findings, strict=True):
        reason = detect_injection(text) if detect_injection else None
        entities = tuple(sorted({f.entity for f in findings}))
        out.append(Gated(mask(text, findings, policy), entities, reason))
    return out
