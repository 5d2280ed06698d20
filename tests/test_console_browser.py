"""The console in a real browser: Debian's headless Chromium, driven by Selenium through the
system chromedriver, against a real ``markmem console`` process on a loopback port.

Skipped (with the reason) only when no Chromium is installed and CI is not set; in CI they run
(``.ci/run`` installs chromium and chromium-driver first)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _console import CHROMEDRIVER, TOKEN, chromium, running_console, seed, server_log, start_browser

BINARY = chromium()
if (BINARY is None or not Path(CHROMEDRIVER).exists()) and not os.environ.get("CI"):
    pytest.skip("no chromium / chromedriver installed (apt-get install chromium chromium-driver); "
                "CI runs these tests", allow_module_level=True)
pytest.importorskip("jinja2")
if not os.environ.get("CI"):
    pytest.importorskip("selenium", reason="selenium is in the dev extra; CI runs these tests")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CONTENT = ("window seats", "aisle seats", "Berlin", "Lisbon", "Oslo", "glassblower", "hazelnuts", "Murano")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    repo = tmp_path_factory.mktemp("console") / "mem"
    seed(repo)
    assert BINARY is not None, "CI is set but no chromium binary was found"
    with running_console(repo, "--token", TOKEN) as (url, proc):
        driver = start_browser(BINARY)
        try:
            driver.get(f"{url}/?token={TOKEN}")
            info = {"url": url, "driver": driver, "proc": proc, "urls": []}
            yield info
        finally:
            driver.quit()
    log = server_log(proc)
    for text in CONTENT:  # no claim text reached the server's log
        assert text not in log
    for seen in info["urls"]:  # nor any URL the browser visited
        assert not any(text in seen for text in CONTENT), seen


def visit(site: dict[str, Any], path: str) -> Any:
    driver = site["driver"]
    driver.get(site["url"] + path)
    return driver


def settle(site: dict[str, Any], status: int = 200) -> None:
    """The page loaded, and the browser console shows no error (JS or a failed resource) but the
    expected status of the page itself."""
    driver = site["driver"]
    site["urls"].append(driver.current_url)
    assert driver.find_element(By.TAG_NAME, "h1")
    expected = f"status of {status} "
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and expected not in e["message"]]
    assert errors == []


def page_card(driver: Any, title: str) -> Any:
    return next(a for a in driver.find_elements(By.CSS_SELECTOR, "article.page")
                if a.find_element(By.CSS_SELECTOR, "h3").text.startswith(title))


def test_a_superseded_fact_shows_two_bars_and_an_arrow(site: dict[str, Any]) -> None:
    driver = visit(site, "/users/alice")
    settle(site)
    card = page_card(driver, "seat preference")
    bars = card.find_elements(By.CSS_SELECTOR, "svg.timeline g.claim")
    assert len(bars) == 2
    closed = [b for b in bars if "closed" in b.get_attribute("class")]
    current = [b for b in bars if "open" in b.get_attribute("class").split()]
    assert len(closed) == 1 and len(current) == 1
    arrows = card.find_elements(By.CSS_SELECTOR, "svg.timeline path.supersession")
    assert len(arrows) == 1
    assert arrows[0].get_attribute("data-from") == closed[0].get_attribute("data-claim")
    assert arrows[0].get_attribute("data-to") == current[0].get_attribute("data-claim")
    ActionChains(driver).move_to_element(closed[0].find_element(By.CSS_SELECTOR, "rect")).perform()
    tip = driver.find_element(By.ID, "tip")
    assert tip.is_displayed() and "I prefer window seats" in tip.text and "user_stated" in tip.text


def test_moving_the_as_of_date_changes_what_the_page_shows(site: dict[str, Any]) -> None:
    def held_on(day: str) -> str:
        driver = visit(site, "/users/alice")
        field = driver.find_element(By.NAME, "as_of")
        driver.execute_script("arguments[0].value = arguments[1]", field, day)
        driver.find_element(By.CSS_SELECTOR, "form.when button").click()
        WebDriverWait(driver, 30).until(lambda d: f"as_of={day}" in d.current_url)  # the click navigates later
        settle(site)
        return str(page_card(driver, "seat preference").find_element(By.CSS_SELECTOR, "ul.held").text)

    assert "window seats" in held_on("2026-02-01") and "aisle" not in held_on("2026-02-01")
    assert "aisle seats" in held_on("2026-06-01") and "window" not in held_on("2026-06-01")
    card = page_card(site["driver"], "seat preference")
    assert len(card.find_elements(By.CSS_SELECTOR, "g.claim.valid")) == 1
    assert len(card.find_elements(By.CSS_SELECTOR, "g.claim.not-valid")) == 1
    assert len(card.find_elements(By.CSS_SELECTOR, "line.mark-as_of")) == 1


def search(site: dict[str, Any], user: str, query: str) -> tuple[str, str]:
    driver = visit(site, f"/users/{user}/search")
    driver.find_element(By.NAME, "q").send_keys(query)
    driver.find_element(By.CSS_SELECTOR, "form.search button").click()
    settle(site)
    return driver.find_element(By.CSS_SELECTOR, "ol.hits").text, driver.find_element(By.ID, "pack").text


def test_approving_a_review_item_makes_it_searchable(site: dict[str, Any]) -> None:
    hits, pack = search(site, "bob", "Oslo")
    assert "Oslo" not in hits and "Oslo" not in pack
    driver = visit(site, "/review?user=bob")
    settle(site)
    item = driver.find_element(By.CSS_SELECTOR, "article.review-item")
    assert "I live in Oslo" in item.find_element(By.CSS_SELECTOR, "blockquote.turn").text  # the raw turn
    item.find_element(By.CSS_SELECTOR, "button[value=approve]").click()
    settle(site)
    assert "Recorded: approve" in driver.find_element(By.CSS_SELECTOR, ".flash").text
    assert driver.find_elements(By.CSS_SELECTOR, "article.review-item") == []
    hits, pack = search(site, "bob", "Oslo")
    assert "Oslo" in hits and "Oslo" in pack
    assert "lane ranks" in driver.find_element(By.CSS_SELECTOR, "table.explain").text


def test_forget_needs_the_typed_confirmation_then_verifies(site: dict[str, Any]) -> None:
    def confirm(typed: str, status: int) -> Any:
        driver = visit(site, "/users/carol/forget?mode=rewrite")
        settle(site)
        assert "Plan (dry run)" in driver.find_element(By.ID, "plan").text
        driver.find_element(By.NAME, "confirm").send_keys(typed)
        driver.find_element(By.CSS_SELECTOR, "#confirm-form button").click()
        settle(site, status)
        return driver

    driver = confirm("carol-not", 400)
    assert "did not match" in driver.find_element(By.ID, "error").text
    visit(site, "/")
    assert driver.find_elements(By.CSS_SELECTOR, "tr[data-user=carol]")
    driver = confirm("carol", 200)
    assert "Forgot carol" in driver.find_element(By.TAG_NAME, "h1").text
    verify = driver.find_element(By.ID, "verify")
    assert "ok" in verify.get_attribute("class").split() and verify.find_element(By.CSS_SELECTOR, ".hits").text == "0"
    visit(site, "/")
    settle(site)
    assert not driver.find_elements(By.CSS_SELECTOR, "tr[data-user=carol]")
    visit(site, "/erased")
    settle(site)
    rows = driver.find_elements(By.CSS_SELECTOR, "#tombstones tbody tr")
    assert len(rows) == 1 and "rewrite" in rows[0].text and "carol" not in driver.page_source
    assert "glassblower" not in driver.page_source


def test_every_main_page_renders_without_browser_errors(site: dict[str, Any]) -> None:
    for path in ("/", "/users/alice/history", "/review", "/health", "/health?lint=true", "/users/alice/forget",
                 "/erased"):
        visit(site, path)
        settle(site)
    driver = visit(site, "/users/alice")
    link = driver.find_element(By.CSS_SELECTOR, "article.page h3 a")
    link.click()
    settle(site)
    assert driver.find_elements(By.CSS_SELECTOR, "table.ledger tbody tr")
    driver.find_element(By.LINK_TEXT, "history").click()
    settle(site)
    assert driver.find_elements(By.CSS_SELECTOR, "article.commit")
