"""`irbgen review` in a real headless Chromium: judge with the keyboard, reload, escaping, a screenshot.

CI sets IRBGEN_REQUIRE_BROWSER=1, so a missing chromium or chromedriver fails there instead of skipping.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from review_helpers import JS_LINK, ONERROR, SCRIPT_TAG, ReviewServer, hostile_benchmark

from irbgen.cli import main

if os.environ.get("IRBGEN_REQUIRE_BROWSER"):
    import selenium  # noqa: F401 - CI: a missing package or browser fails instead of skipping
else:
    pytest.importorskip("selenium")
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("needs Debian's chromium and chromium-driver", allow_module_level=True)

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

WAIT_SECONDS = 15


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1440,900"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "chromium"
    driver = webdriver.Chrome(
        service=Service(shutil.which("chromedriver") or "chromedriver"), options=options
    )
    yield driver
    driver.quit()


@pytest.fixture
def phantom_bench(tmp_path) -> Path:
    out = tmp_path / "bench"
    assert CliRunner().invoke(main, ["phantom", "--n", "30", "--quiet", "--out", str(out)]).exit_code == 0
    return out


def wait_for(driver, condition, what: str):
    return WebDriverWait(driver, WAIT_SECONDS).until(lambda d: condition(d), message=what)


def status(driver) -> str:
    return driver.find_element(By.ID, "status").text


def pressed(driver) -> dict[str, str | None]:
    """criterion -> "yes", "no" or None, as the page's buttons show it."""
    found: dict[str, str | None] = {"well_formed": None, "answer_correct": None, "supported": None}
    for button in driver.find_elements(By.CSS_SELECTOR, "button[data-criterion]"):
        if button.get_attribute("aria-pressed") == "true":
            found[button.get_attribute("data-criterion")] = button.get_attribute("data-value")
    return found


def press(driver, keys: str) -> None:
    driver.find_element(By.TAG_NAME, "body").send_keys(keys)


def current_sample(driver) -> str:
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-sample")


def judge(driver, keys: str, expected_status: str) -> None:
    press(driver, keys)
    wait_for(driver, lambda d: status(d) == expected_status, f"status {expected_status!r}")


def go(driver, key: str, previous: str) -> str:
    press(driver, key)
    wait_for(driver, lambda d: current_sample(d) != previous, f"leave {previous} with {key!r}")
    return current_sample(driver)


def test_judging_three_samples_with_the_keyboard_survives_a_reload(browser, phantom_bench, tmp_path):
    server = ReviewServer(phantom_bench, "--reviewer", "alice")
    try:
        browser.get(server.url)
        first = current_sample(browser)
        judge(browser, "y", "saved · valid")
        second = go(browser, "j", first)
        judge(browser, "q", "saved · 1 of 3 judged")
        judge(browser, "s", "saved · 2 of 3 judged")
        judge(browser, "e", "saved · not valid")
        press(browser, "n")
        browser.switch_to.active_element.send_keys("two people fit")
        judge(browser, "\ue00c", "saved · not valid")  # Escape leaves the note, which saves it
        third = go(browser, "j", second)
        judge(browser, "adw", "saved · not valid")
        assert browser.find_element(By.ID, "judged").text == "3"

        browser.refresh()
        assert current_sample(browser) == third
        assert pressed(browser) == {"well_formed": "no", "answer_correct": "yes", "supported": "no"}
        assert browser.find_element(By.ID, "judged").text == "3"
        assert go(browser, "k", third) == second
        assert pressed(browser) == {"well_formed": "yes", "answer_correct": "no", "supported": "yes"}
        assert browser.find_element(By.ID, "note").get_attribute("value") == "two people fit"
        assert go(browser, "k", second) == first
        assert pressed(browser) == {"well_formed": "yes", "answer_correct": "yes", "supported": "yes"}
        press(browser, "o")  # only unjudged: next skips the two judged samples
        fourth = go(browser, "j", first)
        assert fourth not in (second, third)
        browser.get(server.url)  # the start page opens the first unjudged sample
        assert current_sample(browser) == fourth
        assert browser.save_screenshot(str(tmp_path / "review.png"))
        assert (tmp_path / "review.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        code, out, err = server.stop()
    assert code == 0, err
    assert out.strip() == "stopped; 3 of 500 samples judged by alice"
    lines = [
        json.loads(line) for line in (phantom_bench / "reviews" / "alice.jsonl").read_text().splitlines()
    ]
    latest = {line["sample"]: line for line in lines}
    assert set(latest) == {first, second, third}
    assert latest[second]["note"] == "two people fit" and latest[second]["answer_correct"] is False


def test_a_hostile_page_renders_as_text(browser, tmp_path):
    server = ReviewServer(hostile_benchmark(tmp_path / "hostile"), "--reviewer", "alice")
    try:
        browser.get(server.url)
        wait_for(browser, lambda d: d.find_elements(By.ID, "question"), "the sample page")
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert.text  # noqa: B018 - raises when no dialog is open
        assert browser.execute_script("return window.pwned === undefined")
        assert browser.execute_script("return document.images.length") == 0
        scripts = browser.execute_script("return document.scripts.length")
        assert scripts == 1  # the page's own
        links = browser.execute_script(
            "return [...document.links].map((a) => [a.protocol, a.rel, a.target, a.textContent])"
        )
        assert all(protocol in ("http:", "https:") for protocol, _, _, _ in links)
        outbound = [link for link in links if link[2] == "_blank"]
        assert outbound and all(rel == "noopener noreferrer" for _, rel, _, _ in outbound)
        page_text = browser.find_element(By.TAG_NAME, "body").text
        assert "<script>window.pwned" in page_text and "onerror=" in page_text
        assert "javascript:window.pwned='url'" in page_text  # the URL is shown, not linked
        evidence = " ".join(e.text for e in browser.find_elements(By.CSS_SELECTOR, ".passage"))
        assert all(markup in evidence for markup in (SCRIPT_TAG, ONERROR, JS_LINK))
        browser.find_element(By.CSS_SELECTOR, "button[data-criterion=well_formed][data-value=no]").click()
        wait_for(browser, lambda d: status(d) == "saved · 1 of 3 judged", "a click saves too")
        assert browser.execute_script("return window.pwned === undefined")
        assert browser.save_screenshot(str(tmp_path / "hostile.png"))
    finally:
        code, _, err = server.stop()
    assert code == 0, err
