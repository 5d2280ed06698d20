"""Console pagination (issue 15): the users list, a user's pages, page and user history, and the
review queue come a page at a time (``?page=N``, ``?size=N``), against a real ``markmem console``."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from _console import INJECTION, TOKEN, running_console  # noqa: E402

from markmem import Memory  # noqa: E402

FACTS = ["I live in Berlin", "I work as a baker", "I have a dog called Rex", "I prefer window seats",
         "I am allergic to peanuts", "My favourite colour is green", "I speak Portuguese"]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    repo = tmp_path_factory.mktemp("pages") / "mem"
    with Memory(repo, pii_engine="regex", vector_model=None, background=False, create=True) as mem:
        for i in range(55):
            mem.add("I like tea", user_id=f"u{i:02d}")
        for fact in FACTS:
            mem.add(fact, user_id="ana")
            mem.flush()  # one commit each: several history entries
        for i in range(5):
            mem.add(f"{INJECTION} ({i})", user_id="bob")
        mem.flush()
    with running_console(repo, "--token", TOKEN) as (url, _proc), httpx.Client(base_url=url, timeout=60) as client:
        client.get(f"/?token={TOKEN}")
        yield client


def get(client: httpx.Client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, response.text[:500]
    return response.text


def rows(html: str, attr: str) -> list[str]:
    return re.findall(rf'{attr}="([^"]+)"', html)


def test_users_list_pages_of_fifty(console: httpx.Client) -> None:
    first, second = get(console, "/"), get(console, "/?page=2")
    one, two = rows(first, "data-user"), rows(second, "data-user")
    assert len(one) == 50 and 1 <= len(two) <= 7 and not set(one) & set(two)
    assert "ana" in one + two and "u54" in one + two
    assert 'rel="next" href="?page=2"' in first and 'rel="prev" href="?page=1"' in second
    assert "users 1–50 · page 1" in first and "users 51–57 · page 2" in second


def test_search_keeps_its_query_across_pages(console: httpx.Client) -> None:
    html = get(console, "/?q=u&size=10&page=2")
    assert rows(html, "data-user") == [f"u{i:02d}" for i in range(10, 20)]
    assert 'href="?q=u&amp;size=10&amp;page=3"' in html


def test_a_users_pages_come_a_page_at_a_time(console: httpx.Client) -> None:
    everything = rows(get(console, "/users/ana?size=200"), "data-page")
    assert len(everything) >= 4
    seen = []
    for n in range(1, len(everything) + 2):
        seen += rows(get(console, f"/users/ana?size=2&page={n}"), "data-page")
    assert seen == everything  # in order, none twice, none missed; the page past the end is empty


def test_page_history_pages(console: httpx.Client) -> None:
    page = next(p for p in rows(get(console, "/users/ana?size=200"), "data-page"))
    full = re.findall(r'<article class="commit">\s*<header><code>(\w+)</code>', get(console, f"/history/{page}"))
    parts = [re.findall(r'<article class="commit">\s*<header><code>(\w+)</code>',
                        get(console, f"/history/{page}?size=1&page={n}")) for n in range(1, len(full) + 1)]
    assert [p[0] for p in parts] == full


def test_user_history_pages(console: httpx.Client) -> None:
    def shas(html: str) -> list[str]:
        return re.findall(r"<td>(?:<code>)?(\w{10})</code>", html)

    full = shas(get(console, "/users/ana/history"))
    assert len(full) >= len(FACTS)
    first, second = get(console, "/users/ana/history?size=3"), get(console, "/users/ana/history?size=3&page=2")
    assert shas(first) == full[:3] and shas(second) == full[3:6]
    assert "operations 4–6" in second


def test_review_queue_pages(console: httpx.Client) -> None:
    first = rows(get(console, "/review?size=2"), "data-item")
    third = rows(get(console, "/review?size=2&page=3"), "data-item")
    assert len(first) == 2 and len(third) == 1
    assert "items 5–5 of 5" in get(console, "/review?size=2&page=3")


@pytest.mark.parametrize("query", ["page=0", "page=x", "size=0", "size=5000"])
def test_bad_paging_is_a_clear_error(console: httpx.Client, query: str) -> None:
    response = console.get(f"/?{query}")
    assert response.status_code == 422 and "must be a whole number" in response.text


def test_lint_runs_in_the_background_with_counts(console: httpx.Client) -> None:
    started = console.get("/health?lint=true")
    assert started.status_code == 303 and started.headers["location"].startswith("/health?lint=j-")
    for _ in range(600):
        html = get(console, started.headers["location"])
        if 'id="lint-progress"' not in html:
            break
        assert re.search(r"(starting|pages|check) \d+/\d+", html) and 'http-equiv="refresh"' in html
        time.sleep(0.1)
    assert "pages checked" in html and 'http-equiv="refresh"' not in html
    assert console.get("/health?lint=j-000000000000").status_code == 404
