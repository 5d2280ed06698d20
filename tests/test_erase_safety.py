"""Erasure under failure: kill -9 at every step then re-run; a concurrent writer loses nothing."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from markmem import Memory
from markmem.erase.api import ErasureReport
from markmem.store import raw
from tests.conftest import git
from tests.test_erase import alice_markers, all_objects, populate

ROOT = Path(__file__).resolve().parents[1]

# Runs forget() in a child process and SIGKILLs its whole process group (git-filter-repo and git
# included) when the erasure reports the given step as durable, optionally after a delay.
CHILD = textwrap.dedent("""
    import os, signal, sys, threading
    from markmem import Memory
    from markmem.erase import api
    repo, mode, step, delay = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    def die():
        os.killpg(os.getpgid(0), signal.SIGKILL)
    def hook(name):
        if name == step:
            threading.Timer(delay, die).start() if delay else die()
    api.fault_hook = hook
    mem = Memory(repo, pii_engine="regex", vector_model=None, background=False)
    mem.forget("alice", mode)
    print("finished")
""")


def open_mem(repo: Path, **kw: object) -> Memory:
    return Memory(repo, pii_engine="regex", vector_model=None, background=False, **kw)


def crash_during(repo: Path, mode: str, step: str, delay: float = 0.0) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(repo), mode, step, str(delay)], env=env,
                          capture_output=True, text=True, timeout=300, start_new_session=True)
    assert proc.returncode in (-9, 0), proc.stderr[-2000:]
    assert delay or proc.returncode == -9, "the step was never reached"
    return proc.returncode


def still_usable(repo: Path) -> None:
    """After a crash the repo opens, other users read and write, git is consistent."""
    mem = open_mem(repo)
    try:
        assert mem.get_all("bob")
        assert mem.search("Lisbon", user_id="bob")
        mem.add("I visited Porto after the crash", user_id="bob")
        assert mem.flush()
        git(repo, "fsck", "--no-progress")
    finally:
        mem.close()


@pytest.mark.parametrize(("mode", "step"), [
    ("scrub", "journal"), ("scrub", "purged"), ("scrub", "removed"), ("scrub", "tombstoned"),
    ("rewrite", "journal"), ("rewrite", "scrubbed"), ("rewrite", "pending"), ("rewrite", "rewritten"),
])
def test_kill_at_any_step_then_rerun_finishes(tmp_repo: Path, mode: str, step: str) -> None:
    mem = open_mem(tmp_repo)
    populate(mem, batches=2)
    mem.close()
    crash_during(tmp_repo, mode, step)
    still_usable(tmp_repo)
    mem = open_mem(tmp_repo)
    try:
        report = mem.forget("alice", mode)
        assert isinstance(report, ErasureReport) and report.ok
        assert not (tmp_repo / "wiki" / "u" / "alice").exists() and not (tmp_repo / "raw" / "u" / "alice").exists()
        assert mem.get_all("alice") == [] and mem.search("quokka", user_id="alice") == []
        assert not any((tmp_repo / ".markmem" / "erasure").glob("erased-*.json"))
        if mode == "rewrite":
            blob = all_objects(tmp_repo)
            assert not [m for m in alice_markers() if m.encode() in blob]
            assert mem.verify_erasure("alice").ok
        stones = [ln for p in (tmp_repo / ".markmem" / "ops").glob("*.jsonl") for ln in p.read_text().splitlines()
                  if '"op": "forget"' in ln]
        assert len(stones) == 1  # one erasure, one tombstone, however often it was resumed
    finally:
        mem.close()


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.05, 0.2, 0.5])
def test_kill_during_git_filter_repo_then_rerun_finishes(tmp_repo: Path, delay: float) -> None:
    mem = open_mem(tmp_repo)
    populate(mem, batches=3)
    mem.close()
    crash_during(tmp_repo, "rewrite", "pending", delay)  # the kill lands inside filter-repo or its gc
    still_usable(tmp_repo)
    mem = open_mem(tmp_repo)
    try:
        assert mem.forget("alice", "rewrite").ok
        blob = all_objects(tmp_repo)
        assert not [m for m in alice_markers() if m.encode() in blob]
    finally:
        mem.close()


def test_concurrent_add_during_forget_loses_nothing_for_other_users(mem: Memory) -> None:
    populate(mem, batches=2)
    accepted: list[str] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set() or i < 20:
            try:
                for user in ("bob", "carol"):
                    accepted.extend(mem.add(f"I went hiking on trail number {i}", user_id=user).ids)
            except BaseException as exc:  # noqa: B902 - reported below
                errors.append(exc)
                return
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    reports = [mem.forget("alice", "scrub"), mem.forget("alice", "rewrite")]
    stop.set()
    thread.join(timeout=120)
    assert not errors and not thread.is_alive()
    assert all(r.ok for r in reports)
    mem.flush()
    on_disk = {e.id for e in raw.iter_entries(mem.root, mem.context.codec)}
    assert set(accepted) <= on_disk  # every acknowledged add survived the rewrite
    cached = {r["id"] for r in mem.context.cache.rows("SELECT id FROM raw")}
    assert set(accepted) <= cached
    assert mem.context.queue.pending() == 0
    assert not (mem.root / "raw" / "u" / "alice").exists()
    assert git(mem.root, "status", "--porcelain") == ""
    assert mem.search("hiking trail", user_id="carol")


def test_forget_waits_for_a_writer_in_another_process(tmp_repo: Path) -> None:
    """The writer lock is inter-process: an erasure never interleaves with a compile elsewhere."""
    mem = open_mem(tmp_repo)
    populate(mem, batches=1)
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import fcntl, sys, time
        fd = open(sys.argv[1], "a+")
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("locked", flush=True)
        time.sleep(1.0)
    """), str(tmp_repo / ".markmem" / "write.lock")], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    try:
        report = mem.forget("alice", "scrub")
        assert holder.poll() is not None  # it could only run after the other writer let go
        assert report.ok
    finally:
        holder.wait()
        mem.close()


def test_resume_pending_finishes_an_interrupted_erasure(tmp_repo: Path) -> None:
    from markmem.erase import api, journal

    mem = open_mem(tmp_repo)
    populate(mem, batches=1)
    mem.close()
    crash_during(tmp_repo, "scrub", "removed")
    mem = open_mem(tmp_repo)
    try:
        assert [j.mode for j in journal.pending(tmp_repo)] == ["scrub"]
        reports = api.resume_pending(mem.context)
        assert [r.mode for r in reports] == ["scrub"] and reports[0].resumed
        assert journal.pending(tmp_repo) == [] and mem.get_all("alice") == []
    finally:
        mem.close()


@pytest.mark.parametrize("half", ["update-index", "fast-import"])
def test_a_forget_commit_half_done_is_reconciled_on_open(tmp_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                         half: str) -> None:
    """The forget commit stages the removal and writes the commit at once; if only one of the
    two happens (the other fails, or the process dies), opening the repo again reconciles them:
    the user's files come back neither in HEAD nor in the index, and the erasure finishes."""
    from markmem.store import git as gitmod

    mem = open_mem(tmp_repo)
    populate(mem, batches=1)
    if half == "update-index":  # the index half fails: HEAD moves, the index still lists alice
        real_run = gitmod.Git.run

        def run(self: gitmod.Git, *args: str, **kw: object) -> str:
            if args[0] == "update-index" and "--index-info" in args and "--refresh" not in args:
                raise RuntimeError("killed")
            return real_run(self, *args, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(gitmod.Git, "run", run)
    else:  # the commit half fails: the index has lost alice, HEAD still has her
        monkeypatch.setattr(gitmod.Git, "_fast_import", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("killed")))
    with pytest.raises(RuntimeError, match="killed"):
        mem.forget("alice", "scrub")
    mem.close()
    monkeypatch.undo()
    in_index = git(tmp_repo, "ls-files", "wiki/u/alice") != ""
    in_head = git(tmp_repo, "ls-tree", "-r", "--name-only", "HEAD", "wiki/u/alice") != ""
    assert (in_index, in_head) == ((True, False) if half == "update-index" else (False, True))
    with open_mem(tmp_repo) as again:
        from markmem.erase import api

        api.resume_pending(again.context)
        assert git(tmp_repo, "ls-files", "wiki/u/alice", "raw/u/alice") == ""
        assert git(tmp_repo, "ls-tree", "-r", "--name-only", "HEAD", "wiki/u/alice", "raw/u/alice") == ""
        assert "alice" not in git(tmp_repo, "status", "--porcelain")
        assert again.get_all("alice") == [] and again.get_all("bob")
    git(tmp_repo, "fsck", "--strict")


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# What a kill inside git-filter-repo's ``git gc`` leaves: gc's own lock (taken, or taken and
# written), the packed-refs lock of its pack-refs step, the commit-graph lock of its last step,
# a ref lock of its reflog expiry. Each alone made the rerun's gc, so the rerun, fail.
STALE_GC = {
    "gc.pid.lock": lambda pid: f"{pid} {socket.gethostname()}",
    "gc.pid": lambda pid: f"{pid} {socket.gethostname()}",
    "packed-refs.lock": lambda pid: "",
    "objects/info/commit-graph.lock": lambda pid: "",
    "refs/heads/main.lock": lambda pid: "",
}


@pytest.mark.parametrize("left", [["gc.pid.lock"], ["gc.pid.lock", "gc.pid"], ["packed-refs.lock"],
                                  ["objects/info/commit-graph.lock", "refs/heads/main.lock"]])
def test_a_rerun_clears_what_a_gc_killed_inside_filter_repo_left(tmp_repo: Path, left: list[str]) -> None:
    mem = open_mem(tmp_repo)
    populate(mem, batches=2)
    mem.close()
    crash_during(tmp_repo, "rewrite", "pending")  # killed before filter-repo: its gc is planted instead
    pid = dead_pid()
    for name in left:
        path = tmp_repo / ".git" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(STALE_GC[name](pid))
    mem = open_mem(tmp_repo)
    try:
        report = mem.forget("alice", "rewrite")
        assert report.ok and report.resumed
        assert not [m for m in alice_markers() if m.encode() in all_objects(tmp_repo)]
        assert mem.verify_erasure("alice").ok
        assert not [n for n in left if (tmp_repo / ".git" / n).exists()]
        git(tmp_repo, "fsck", "--no-progress")
    finally:
        mem.close()


def test_a_live_gc_is_waited_for_and_its_lock_never_removed(tmp_repo: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from markmem.erase import api, rewrite
    from markmem.errors import ErasureError

    mem = open_mem(tmp_repo)
    populate(mem, batches=1)
    gc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    lock = tmp_repo / ".git" / "gc.pid.lock"  # a gc (this stand-in) taking its lock: written, alive
    lock.write_text(f"{gc.pid} {socket.gethostname()}")
    reached = threading.Event()
    heads: list[str] = []

    def hook(step: str) -> None:
        if step == "pending":  # history as it is before the rewrite
            heads.append(git(tmp_repo, "rev-parse", "HEAD"))
            reached.set()

    monkeypatch.setattr(api, "fault_hook", hook)
    done: list[bool] = []
    thread = threading.Thread(target=lambda: done.append(mem.forget("alice", "rewrite").ok))
    try:
        with pytest.raises(ErasureError, match="running for too long"):
            rewrite.wait_for_gc(tmp_repo, timeout=0.3)
        assert lock.exists()
        thread.start()
        assert reached.wait(300)  # the erasure is about to rewrite history...
        thread.join(2.0)  # (room for a rewrite that did not wait to start)
        assert thread.is_alive() and lock.exists()  # ...and waits for the gc
        assert not (tmp_repo / ".git" / "filter-repo").exists() and [git(tmp_repo, "rev-parse", "HEAD")] == heads
        gc.communicate(b"")  # the gc ends; the lock it leaves names a dead process
        thread.join(300)
        assert done == [True] and not lock.exists()
        assert not [m for m in alice_markers() if m.encode() in all_objects(tmp_repo)]
    finally:
        if gc.poll() is None:
            gc.kill()
        gc.wait()
        thread.join(300)
        mem.close()


def test_a_pid_reused_since_the_gc_died_does_not_count_as_the_gc(tmp_repo: Path) -> None:
    from markmem.erase import rewrite

    open_mem(tmp_repo).close()
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        pid_file = tmp_repo / ".git" / "gc.pid"
        pid_file.write_text(f"{other.pid} {socket.gethostname()}")
        hour_ago = pid_file.stat().st_mtime - 3600
        os.utime(pid_file, (hour_ago, hour_ago))  # written an hour before this process started
        rewrite.wait_for_gc(tmp_repo, timeout=60)
        assert not pid_file.exists()
        assert other.poll() is None  # the process still runs: its pid was just not the gc's
    finally:
        other.communicate(b"")


def test_a_filter_repo_child_a_killed_forget_left_running_is_waited_for(tmp_repo: Path) -> None:
    """The rewrite child holds ``.markmem/rewrite.lock`` while it runs, even when its parent was
    killed; the next run waits for it before touching any of git's lock files."""
    import fcntl

    from markmem.erase import rewrite
    from markmem.errors import ErasureError

    open_mem(tmp_repo).close()
    stale = tmp_repo / ".git" / "packed-refs.lock"
    stale.write_text("")
    fd = os.open(tmp_repo / ".markmem" / "rewrite.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the orphaned child (this process stands in for it)
        with pytest.raises(ErasureError, match="still going"):
            rewrite.run(tmp_repo, "alice", "t-0", timeout=0.3)
        assert stale.exists()  # nothing of git's was touched while it may be in use
    finally:
        os.close(fd)
    os.close(rewrite._rewrite_guard(tmp_repo, 60))  # free again once the child is gone
