"""A real browser for tests: Debian's `chromium`, driven through `chromium-driver` with Selenium.

Headless, with a new empty profile, and with everything that would reach for the network switched off
(the test machines have no outside network). Missing Chromium, its driver or Selenium: skipped locally,
a failure in CI (tests/support/env.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.env import require

CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1500,1000",
)


@contextmanager
def chromium(profile: Path) -> Iterator[Any]:
    """A Selenium WebDriver on a fresh headless Chromium whose profile lives in `profile` (a new folder)."""
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    require(binary is not None and driver is not None, "Chromium and its driver (Debian: chromium, chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        require(False, "selenium (the test extra)")
    profile.mkdir(parents=True, exist_ok=False)
    options = webdriver.ChromeOptions()
    options.binary_location = str(binary)
    for argument in (*CHROMIUM_ARGS, f"--user-data-dir={profile}"):
        options.add_argument(argument)
    # The driver's path is given, so Selenium Manager never runs (it would try to download one).
    browser = webdriver.Chrome(service=Service(executable_path=str(driver)), options=options)
    try:
        yield browser
    finally:
        browser.quit()


def log_in(browser: Any, airflow_url: str, user: str, password: str) -> None:
    """Through Airflow's own login form (the simple auth manager's), as a person would."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(airflow_url + "/")
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.NAME, "username"))
    browser.find_element(By.NAME, "username").send_keys(user)
    browser.find_element(By.NAME, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 60).until(lambda b: b.get_cookie("_token"))


def view_frame(browser: Any, path: str) -> Any:
    """The iframe in which Airflow's UI shows the external view at `path` (its `src`, resolved, ends so)."""
    from selenium.webdriver.common.by import By

    frames = browser.find_elements(By.TAG_NAME, "iframe")
    return next((f for f in frames if (f.get_attribute("src") or "").endswith(f"{path}/")), None)
