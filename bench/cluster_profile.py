"""Where a compile worker's time goes at a steady rate (issue 14's lag target): cProfile of
``Worker.run_once`` in this process, fed like ``bench/cluster.py``'s lag run.

    python bench/cluster_profile.py --rounds 30 --per-round 60   # 60 adds per pass ~ 300 msg/s at 0.2 s a pass

Each round adds ``--per-round`` messages to random users of ``--users`` over ``--shards`` shards,
then one worker pass drains them. Prints CPU per entry (this process + git's subprocesses, and
PostgreSQL's) and the top functions by cumulative time. Machine caveat: 2 shared cores; read CPU.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent))
from bench.cluster import FAST, PGDATA, fresh_db, own_cpu, pg_cpu, server  # noqa: E402
from bench.core import message  # noqa: E402
from markmem import Memory  # noqa: E402
from markmem.cluster.worker import Worker  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--per-round", type=int, default=60)
    ap.add_argument("--users", type=int, default=500)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--out", default=None, help="write the pstats file here")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mm-prof-"))
    srv, admin = server(tmp / "pg")
    PGDATA.append(tmp / "pg" / "data")
    url = fresh_db(admin, "prof")
    mem = Memory(tmp / "c", database_url=url, shards=a.shards, **FAST)  # type: ignore[arg-type]
    work = Worker(mem._cluster.shards, url)
    rng = random.Random(3)
    for i in range(a.users):  # every user has a page or two before the timed rounds
        mem.add(message(rng, i), user_id=f"u{i}")
    while work.run_once():
        pass
    prof = cProfile.Profile()
    busy = cpu = pg = 0.0
    n = 0
    for r in range(a.rounds):
        for i in range(a.per_round):
            mem.add(message(rng, r * a.per_round + i), user_id=f"u{rng.randrange(a.users)}")
        t, c, p = time.perf_counter(), own_cpu(), pg_cpu()
        prof.enable()
        while work.run_once():
            pass
        prof.disable()
        busy += time.perf_counter() - t
        cpu += own_cpu() - c
        pg += pg_cpu() - p
        n += a.per_round
    print(f"{n} entries in {a.rounds} passes of {a.per_round} ({a.shards} shards, {a.users} users): "
          f"wall {busy * 1000 / n:.2f} ms/entry, CPU worker+git {cpu * 1000 / n:.2f} ms/entry, "
          f"PostgreSQL {pg * 1000 / n:.2f} ms/entry; a pass {busy * 1000 / a.rounds:.0f} ms")
    stats = pstats.Stats(prof)
    if a.out:
        stats.dump_stats(a.out)
    stats.sort_stats("cumulative").print_stats(a.top)
    work.close()
    mem.close()
    srv.cleanup()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
