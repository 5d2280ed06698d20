"""A page's claim timeline as SVG geometry (pure: claims and times in, shapes out).

One lane per slot (subject + predicate). Each claim is a bar over its valid time
(``valid_from`` to ``valid_until``, or to now when still open), a marker where memory recorded
it, and an arrow from a superseded claim to the claim that replaced it. Bars of one lane that
would touch go to separate rows, so a supersession reads as a step down with an arrow.
With ``as_of`` / ``known_at``, bars are classed by whether the claim was valid / believed then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from ..model import Claim

LEFT, RIGHT, TOP, ROW, GAP, LANE_PAD = 160, 24, 26, 20, 6, 10
DENSE = 12  # more claims than this in one slot: drawn end to end in one row, without arrows
_DAY = 86400.0
Scale = Callable[[datetime], float]


@dataclass(frozen=True)
class Bar:
    claim: Claim
    x: float
    w: float
    y: float
    open_end: bool
    recorded_x: float | None
    closed_x: float | None
    classes: str
    label: str
    tip: str


@dataclass(frozen=True)
class Lane:
    label: str
    y: float
    height: float


@dataclass(frozen=True)
class Timeline:
    width: int
    height: float
    lanes: tuple[Lane, ...]
    bars: tuple[Bar, ...]
    arrows: tuple[tuple[str, str, str], ...]  # (svg path, from claim id, to claim id)
    ticks: tuple[tuple[float, str], ...]
    marks: dict[str, float] = field(default_factory=dict)  # as_of / known_at / now -> x


def parse(when: str | None) -> datetime | None:
    if not when:
        return None
    t = datetime.fromisoformat(when.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def layout(claims: Sequence[Claim], owner: str | None, now: datetime, as_of: datetime | None = None,
           known_at: datetime | None = None, width: int = 1080) -> Timeline:
    """Lay out ``claims`` (one page's ledger) on a time axis from the first claim to now."""
    t0, t1 = _domain(claims, now, as_of, known_at)
    span = (t1 - t0).total_seconds()

    def x(t: datetime) -> float:
        return LEFT + (width - LEFT - RIGHT) * (t - t0).total_seconds() / span

    lanes, bars, y = [], [], float(TOP)
    quiet: set[str] = set()
    for label, group in _slots(claims, owner):
        rows: list[float] = []
        placed = []
        dense = len(group) > DENSE  # a long chain: one row, no arrows (the ledger lists them)
        if dense:
            quiet.update(c.id for c in group)
        for c in group:
            x0 = x(_start(c))
            x1 = max(x(parse(c.valid_until) or now), x0 + 2)
            row = next((i for i, end in enumerate(rows) if end + (0.5 if dense else GAP) <= x0 + (1 if dense else 0)),
                       len(rows))
            rows[row:row + 1] = [x1]
            placed.append((c, x0, x1, row))
        height = len(rows) * ROW + LANE_PAD
        lanes.append(Lane(label, y, height))
        bars += [_bar(c, x0, x1, y + LANE_PAD / 2 + row * ROW, x, as_of, known_at) for c, x0, x1, row in placed]
        y += height
    marks = {k: x(v) for k, v in (("now", now), ("as_of", as_of), ("known_at", known_at)) if v is not None}
    arrows = _arrows([b for b in bars if b.claim.id not in quiet])
    return Timeline(width, y + 6, tuple(lanes), tuple(bars), arrows, _ticks(t0, t1, x), marks)


def _domain(claims: Sequence[Claim], now: datetime, *extra: datetime | None) -> tuple[datetime, datetime]:
    times = [t for c in claims for t in (_start(c), parse(c.valid_until), parse(c.recorded_at)) if t]
    times += [now] + [t for t in extra if t is not None]
    t0, t1 = min(times), max(times)
    if (t1 - t0).total_seconds() < 60:
        t0, t1 = t0 - timedelta(minutes=1), t1 + timedelta(minutes=1)
    pad = (t1 - t0) * 0.03
    return t0 - pad, t1 + pad


def _start(c: Claim) -> datetime:
    return parse(c.valid_from) or parse(c.recorded_at) or datetime(1970, 1, 1, tzinfo=timezone.utc)


def _slots(claims: Sequence[Claim], owner: str | None) -> list[tuple[str, list[Claim]]]:
    groups: dict[tuple[str, str], list[Claim]] = {}
    for c in sorted(claims, key=lambda c: (_start(c), c.recorded_at or "", c.id)):
        groups.setdefault((c.subject, c.predicate), []).append(c)
    out = []
    for (subject, predicate), group in groups.items():
        slot = predicate.replace("_", " ")
        out.append((slot if subject == owner else f"{subject} · {slot}", group))
    return out


def _bar(c: Claim, x0: float, x1: float, y: float, x: Scale, as_of: datetime | None,
         known_at: datetime | None) -> Bar:
    classes = ["claim", "open" if c.active else "closed", f"prov-{c.provenance}"]
    if as_of is not None:
        classes.append("valid" if c.valid_at(iso(as_of)) else "not-valid")
    if known_at is not None:
        classes.append("known" if c.known_at(iso(known_at)) else "unknown")
    rec, closed = parse(c.recorded_at), parse(c.closed_at)
    label = c.value if (x1 - x0) > 6.5 * len(c.value) + 8 else c.value[: max(0, int((x1 - x0 - 8) / 6.5) - 1)] + "…"
    return Bar(c, x0, x1 - x0, y, c.active, x(rec) if rec else None, x(closed) if closed else None,
               " ".join(classes), label if len(label) > 1 else "", _tip(c))


def _tip(c: Claim) -> str:
    lines = [c.text, f"{c.id} · {c.provenance} · confidence {c.confidence:.2f}",
             f"valid {_day(c.valid_from)} → {_day(c.valid_until) if c.valid_until else 'now'}",
             f"recorded {_day(c.recorded_at)}" + (f" · closed {_day(c.closed_at)}" if c.closed_at else "")]
    if c.supersedes:
        lines.append(f"supersedes {c.supersedes}")
    if c.superseded_by:
        lines.append(f"superseded by {c.superseded_by}")
    lines += [f"source {s}" for s in c.sources[:3]]
    return "\n".join(lines)


def _day(when: str | None) -> str:
    return (when or "?")[:16].replace("T", " ")


def _arrows(bars: list[Bar]) -> tuple[tuple[str, str, str], ...]:
    by_id = {b.claim.id: b for b in bars}
    out = []
    for old in bars:
        new = by_id.get(old.claim.superseded_by or "")
        if new is None:
            continue
        x1, y1 = old.x + old.w, old.y + 7
        x2, y2 = new.x, new.y + 7
        if x2 - x1 > 30:  # a gap between the two: a curve across it
            bend = (x2 - x1) / 3
            d = f"M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
        else:  # the new one starts where the old one ends: step down into its left edge
            mid = min(y1, y2) + 10
            d = f"M{x1:.1f},{y1:.1f} h5 V{mid:.1f} H{x2 - 9:.1f} V{y2:.1f} H{x2:.1f}"
        out.append((d, old.claim.id, new.claim.id))
    return tuple(out)


def _ticks(t0: datetime, t1: datetime, scale: Scale) -> tuple[tuple[float, str], ...]:
    span = (t1 - t0).total_seconds()
    if span > 60 * _DAY:
        months = next(m for m in (1, 2, 3, 6, 12, 24, 60) if span / (m * 30 * _DAY) <= 7)
        t = datetime(t0.year, t0.month, 1, tzinfo=timezone.utc)
        out = []
        while t <= t1:
            if t >= t0:
                out.append((scale(t), t.strftime("%Y-%m" if months < 12 else "%Y")))
            month = t.month - 1 + months
            t = t.replace(year=t.year + month // 12, month=month % 12 + 1)
        return tuple(out)
    step = next(s for s in (60, 300, 900, 3600, 6 * 3600, _DAY, 7 * _DAY, 14 * _DAY) if span / s <= 7)
    fmt = "%Y-%m-%d" if step >= _DAY else "%m-%d %H:%M"
    first = datetime.fromtimestamp((t0.timestamp() // step + 1) * step, tz=timezone.utc)
    n = int((t1 - first).total_seconds() // step) + 1
    times = [first + timedelta(seconds=i * step) for i in range(n)]
    return tuple((scale(t), t.strftime(fmt)) for t in times)
