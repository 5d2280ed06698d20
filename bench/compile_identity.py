"""What compile writes, dumped stably, to show a speed change to the write path keeps its output bit for bit.

Ingests, on the markmem tree first on ``PYTHONPATH``:

* every ``bench/data/facts_*.jsonl`` set (one repo per set, one flush per scenario);
* every case of ``bench/supersession.py`` in both its modes (``each``: a flush per turn, ``end``: one flush);
* 20 users x 300 of ``bench/core.py``'s messages in 3 batches of 1,000, and that repo's git log.

Regex PII gate, no vectors, no background thread, so every batch is deterministic. For each it writes every
page (id, type, title, pinned, archived), every claim (subject, slot, value, text, provenance, confidence,
valid_from/until, supersedes/superseded_by as page#index, number of sources, metadata) and every page body,
with random ids and timestamps masked, one file per set in OUT. Nothing is scored and no failure is read:
the files are compared whole (``--compare``), and for the held-out sets (``blind*``, ``check*``) only
"same"/"differs" and a line count are ever printed.

    PYTHONPATH=/path/to/base python bench/compile_identity.py /tmp/ci/base
    PYTHONPATH=. python bench/compile_identity.py /tmp/ci/new [--only tune5 supersession core]
    python bench/compile_identity.py --compare /tmp/ci/base /tmp/ci/new
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

_ID = re.compile(r"\br-[0-9a-f]{12}\b|\bc-[0-9a-f]{10}\b|\b(?:c|r|b)_[0-9A-Za-z]{6,}\b|\b[0-9A-HJKMNP-TV-Z]{26}\b"
                 r"|\b[0-9a-f]{40}\b")
_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")


def _mask(text: str) -> str:
    return _ID.sub("<id>", text)


def dump_repo(mem: object, users: list[str], out: list[str], tag: str) -> None:
    for u in sorted(set(users)):
        pages = sorted(mem.get_all(u, include_archived=True), key=lambda p: p.id)  # type: ignore[attr-defined]
        ids = {c.id: f"{p.id}#{i}" for p in pages for i, c in enumerate(p.claims)}
        for p in pages:
            out.append(_mask(f"{tag}\tPAGE\t{p.id}\t{p.type}\t{p.title}\t{p.pinned}\t{p.archived}"))
            for i, c in enumerate(p.claims):
                out.append(_mask("\t".join(map(str, [
                    tag, "CLAIM", f"{p.id}#{i}", c.subject, c.predicate, c.value, c.text, c.provenance,
                    c.confidence, c.valid_from, c.valid_until, ids.get(c.supersedes, c.supersedes),
                    ids.get(c.superseded_by, c.superseded_by), len(c.sources),
                    sorted((k, str(v)) for k, v in (c.metadata or {}).items())]))))
            out.append(_mask(f"{tag}\tBODY\t{p.id}\t{_TS.sub('<ts>', p.body)!r}"))


def _open(path: Path, **kw: object) -> object:
    from markmem import Memory
    return Memory(path, pii_engine="regex", pii_policy="tag", vector_model=None, background=False, **kw)


def run_facts(name: str, out: list[str]) -> None:
    import facts as F
    scen = F.load(BENCH / "data" / f"facts_{name}.jsonl")
    with tempfile.TemporaryDirectory(prefix="compile-id-") as tmp, _open(Path(tmp) / "r") as mem:
        users = []
        for sc in scen:
            for user, when, msgs in F._runs(sc["turns"]):
                mem.add(msgs, user_id=user, occurred_at=when)
                users.append(user)
            mem.flush()
        dump_repo(mem, users, out, f"facts_{name}")


def run_supersession(out: list[str]) -> None:
    import supersession as S
    cases = S.load_cases()
    with tempfile.TemporaryDirectory(prefix="compile-id-") as tmp:
        for mode in ("each", "end"):
            for i, case in enumerate(cases):
                with _open(Path(tmp) / f"{mode}-{i:03d}") as mem:
                    S.ingest(mem, case, mode)
                    dump_repo(mem, [t["u"] for t in case["turns"]], out, f"sup-{mode}-{case['id']}")


def run_core(out: list[str]) -> None:
    import core as C
    rng = random.Random(11)
    ids = [f"user{i:03d}" for i in range(20)]
    with tempfile.TemporaryDirectory(prefix="compile-id-") as tmp:
        repo = Path(tmp) / "r"
        with _open(repo, batch_size=1000) as mem:
            for chunk in range(3):
                for i in range(100):
                    for u in ids:
                        mem.add(C.message(rng, chunk * 100 + i), user_id=u,
                                occurred_at=f"2026-01-{1 + chunk:02d}T{i // 60:02d}:{i % 60:02d}:00Z")
                mem.flush()
            dump_repo(mem, ids, out, "core")
        log = subprocess.run(["git", "-C", str(repo), "log", "--format=%s%n%b"], capture_output=True,
                             text=True, check=True).stdout
        out += [_mask("core\tGIT\t" + line) for line in log.splitlines() if not line.startswith("Markmem-Batch")]


def compare(a: Path, b: Path) -> int:
    bad = 0
    for fa in sorted(a.glob("*.tsv")):
        fb = b / fa.name
        if not fb.exists():
            print(f"MISSING {fa.name}")
            bad += 1
            continue
        la, lb = fa.read_text("utf-8").splitlines(), fb.read_text("utf-8").splitlines()
        if la == lb:
            print(f"same    {fa.name} ({len(la)} lines)")
        else:
            bad += 1
            differ = sum(1 for x, y in zip(la, lb, strict=False) if x != y) + abs(len(la) - len(lb))
            print(f"DIFFERS {fa.name} ({differ} of {len(la)}/{len(lb)} lines)")  # no content: sets may be held out
    print("IDENTICAL" if not bad else f"{bad} file(s) differ")
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--compare"]:
        return compare(Path(argv[1]), Path(argv[2]))
    dest = Path(argv[0])
    only = argv[2:] if argv[1:2] == ["--only"] else []
    names = sorted(p.name[len("facts_"):-len(".jsonl")] for p in (BENCH / "data").glob("facts_*.jsonl"))
    dest.mkdir(parents=True, exist_ok=True)
    for name in only or names + ["supersession", "core"]:
        out: list[str] = []
        if name == "supersession":
            run_supersession(out)
        elif name == "core":
            run_core(out)
        else:
            run_facts(name, out)
        (dest / f"{name}.tsv").write_text("\n".join(out) + "\n", encoding="utf-8")
        print(name, len(out), "lines", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
