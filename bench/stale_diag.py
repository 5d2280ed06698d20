"""Why a stale value is shown, or the current one is not first: one line per failing check of a tune set.

Re-opens a repo that ``bench/facts.py --set tuneN --work DIR`` left behind (no ingest) and, for each
check failing stale-shown@5 or current@1, names the cause (see ``classify``). Tune sets only.

    PYTHONPATH=. python bench/stale_diag.py --set tune2 --repo DIR/facts-repo [--verbose]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import facts  # noqa: E402
import facts_score as fs  # noqa: E402

from markmem import Memory  # noqa: E402
from markmem.ids import now, parse_time  # noqa: E402
from markmem.read.facts import low_content  # noqa: E402

_ASK = ("?", "should i", "what if", "if i ", "maybe", "thinking about", "thinking of", "considering", "might ")


def _item_kind(hit: dict[str, Any], roles: dict[str, str], cites: dict[str, list[Any]], t: str) -> str:
    """What an offending (or first) item is."""
    text = str(hit.get("text") or "")
    if fs.hit_marked(hit, t) and (hit.get("valid_until") or hit.get("superseded_by") or hit.get("starts")):
        return f"MARKED {hit['kind']} ({hit.get('role') or roles.get(hit['id'], '')})"
    if hit["kind"] == "claim":
        return "claim"
    role = hit.get("role") or roles.get(hit["id"], "?")
    if role != "user":
        return "assistant turn"
    if low_content(text):
        return "chit-chat"
    cl = cites.get(hit["id"], [])
    act = [c for c in cl if fs.active_at(c, t, True)]
    if act:
        return "user turn cited by a current claim"
    if cl:
        return "user turn cited only by closed claims"
    low = text.lower()
    if any(a in low for a in _ASK):
        return "user question/plan/hypothetical (no claim)"
    return "user turn no claim cites"


def classify(res: dict[str, Any], hits: list[dict[str, Any]], lines: list[str], check: dict[str, Any],
             roles: dict[str, str], cites: dict[str, list[Any]], t: str) -> tuple[str | None, str | None]:
    stale_cause = cur_cause = None
    led = "ledger right" if res["ledger"] else "LEDGER WRONG"
    if res["stale5"]:
        bad = next((h for h in hits if fs.stale_unmarked(h["text"], check["stale"], fs.hit_marked(h, t))), None)
        if bad is not None:
            kind = _item_kind(bad, roles, cites, t)
            both = fs.mentions(bad["text"], check["expect"])
            stale_cause = f"{led}: json {kind}" + (" naming old AND new" if both else "")
        else:
            stale_cause = f"{led}: pack line only"
    if res["current1"] is False:
        first = hits[0] if hits else None
        if first is None:
            cur_cause = f"{led}: no hit"
        else:
            kind = _item_kind(first, roles, cites, t)
            has = fs.mentions(first["text"], check["expect"])
            cur_cause = f"{led}: first is {kind}" + (" (has value; stale unmarked)" if has else " without the value")
            if res["json1"] and not res["pack1"]:
                cur_cause = f"{led}: json ok, pack line 1 wrong"
    return stale_cause, cur_cause


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", required=True)
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if args.set in facts.BLIND:
        ap.error("tune sets only")
    scs = facts.load(facts.SETS[args.set])
    mem = Memory(args.repo)
    base = facts.LatestMention([tr for sc in scs for tr in sc["turns"]])
    stale_c: Counter[str] = Counter()
    cur_c: Counter[str] = Counter()
    n = {"stale": 0, "cur": 0}
    try:
        for sc in scs:
            users = sorted({tr["user_id"] for tr in sc["turns"]} | {c["user_id"] for c in sc["checks"]})
            pairs = {u: facts.claims_of(mem, u) for u in users}
            for check in sc["checks"]:
                at = check.get("at")
                t = parse_time(at) if at else now()
                res = facts.evaluate(mem, check, pairs[check["user_id"]], base)
                n["stale"] += res["stale5"] is not None
                n["cur"] += 1
                if not res["stale5"] and res["current1"]:
                    continue
                u = check["user_id"]
                hits = [h.to_json() for h in mem.search(check["query"], user_id=u, top_k=5, as_of=at)]
                pack = str(mem.search(check["query"], user_id=u, top_k=5, as_of=at, format="context"))
                roles = {h["id"]: h.get("role") or "" for h in hits if h["kind"] == "turn"}
                cites: dict[str, list[Any]] = {}
                for _p, c in pairs[u]:
                    for ref in c.sources or ():
                        cites.setdefault(ref.rsplit("#", 1)[-1], []).append(c)
                s, cu = classify(res, hits, fs.content_lines(pack)[:5], check, roles, cites, t)
                if s:
                    stale_c[s] += 1
                if cu:
                    cur_c[cu] += 1
                if args.verbose:
                    print(f"[{sc['id']}] {check['query']} expect={check['expect']} stale={check['stale']} at={at}")
                    print(f"   STALE: {s}\n   CUR: {cu}")
                    for h in hits:
                        role = str(h.get('role') or '')[:4]
                        print(f"   {h['kind'][:1]} {role:4} vu={str(h.get('valid_until'))[:10]} "
                              f"sb={bool(h.get('superseded_by'))} {h['text'][:110]}")
                    for ln in fs.content_lines(pack)[:5]:
                        print(f"   P {ln[:140]}")
                    for _p, c in pairs[u]:
                        print(f"   L subj={c.subject} pred={c.predicate} val={c.value!r} vf={str(c.valid_from)[:10]} "
                              f"vu={str(c.valid_until)[:10]} sb={bool(c.superseded_by)} :: {c.text[:80]}")
    finally:
        mem.close()
    print(f"== {args.set}: stale-shown@5 {sum(stale_c.values())}/{n['stale']}")
    for k, v in stale_c.most_common():
        print(f"  {v:3d}  {k}")
    print(f"== {args.set}: current@1 failures {sum(cur_c.values())}/{n['cur']}")
    for k, v in cur_c.most_common():
        print(f"  {v:3d}  {k}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
