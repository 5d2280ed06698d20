"""Writing for lint --fix and maintenance: pages, one commit, the cache. Callers hold the write lock."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from ..context import Context
from ..index.text import content_hash
from ..model import Page
from ..store.git import message
from ..store.pages import atomic_write, dump_page, user_of_path

WRITERS = 8


def users_of(paths: Iterable[str]) -> str:
    """Comma-separated user ids whose folders the paths are in (the ``Markmem-Users`` trailer)."""
    users = {user_of_path(p) for p in paths if p.startswith(("wiki/u/", "raw/u/"))}
    return ",".join(sorted(u for u in users if u))


def commit_pending_edits(ctx: Context, paths: Sequence[str]) -> str | None:
    """Commit uncommitted human edits to ``paths`` before we rewrite them, so none is lost unrecorded."""
    wanted = set(paths)
    dirty = [p for p in ctx.git.dirty_paths(["wiki"]) if p in wanted]
    if not dirty:
        return None
    trailers = {"Markmem-Op": "human-edit", "Markmem-Users": users_of(dirty)}
    return ctx.git.commit(dirty, message(f"markmem: record {len(dirty)} uncommitted page edit(s)", trailers))


def write_pages(ctx: Context, pages: Sequence[Page]) -> list[str]:
    """Render and seal here (the codec is used from one thread), then write atomically a few files at
    a time: on ext4 each replacing rename waits for the old file's data, so writers overlap."""
    jobs = [(ctx.root / p.path, _sealed(ctx, p)) for p in pages]
    if len(jobs) < 64:
        for path, text in jobs:
            atomic_write(path, text, sync=False)
    else:
        with ThreadPoolExecutor(max_workers=WRITERS) as pool:
            list(pool.map(lambda job: atomic_write(job[0], job[1], sync=False), jobs))
    return [p.path for p in pages]


def _sealed(ctx: Context, page: Page) -> str:
    text = dump_page(page)
    return text if page.user_id is None else ctx.codec.seal_text(page.user_id, text)


def commit(ctx: Context, paths: Sequence[str], subject: str, trailers: Mapping[str, str]) -> str | None:
    """Stage exactly ``paths`` and commit. ``update-index`` stages a long list in linear time, where
    ``git add --pathspec-from-file`` matches every pathspec against every index entry."""
    spec = "\0".join(sorted(set(paths)))
    if spec:
        ctx.git.run("update-index", "--add", "--remove", "-z", "--stdin", input=spec.encode("utf-8"))
    return ctx.git.commit([], message(subject, {**trailers, "Markmem-Users": users_of(paths)}))


def refresh_cache(ctx: Context, pages: Iterable[Page], sha: str | None,
                  dropped_raw: Sequence[tuple[str, str]] = ()) -> None:
    """Bring the cache in line after a lifecycle commit; ``dropped_raw``: (user id, raw id) pairs."""
    with ctx.cache.tx():
        for page in pages:
            ctx.cache.upsert_page(page, content_hash(page.body))
        if dropped_raw:
            ctx.cache.delete_raw(dropped_raw)
        if sha:
            ctx.cache.set_meta("head", sha)
