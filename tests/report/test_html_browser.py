"""The HTML report in a real browser (Debian's chromium, driven headless through its chromedriver by selenium):
no console errors, every figure drawn with a size, every internal link and anchor resolves, and a screenshot
that is not blank.

Needs the ``browser`` extra (selenium) and the system packages ``chromium`` and ``chromium-driver``; the driver's
path is given explicitly so that selenium never downloads a browser or a driver of its own. Skipped, with the
reason, on a machine without them, except under CI (CI=true), where .ci/run installs them and a skip would hide
a missing browser: there it fails.
"""
from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}, and CI must run the browser test (.ci/run installs chromium and chromium-driver)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def driver():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed (pip install -e '.[browser]')")
    if CHROMIUM is None or not CHROMEDRIVER.exists():
        _unavailable("chromium and /usr/bin/chromedriver are not installed "
                     "(apt-get install -y chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,1600"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    yield browser
    browser.quit()


def _load(driver, page: Path) -> None:
    driver.get(page.as_uri())
    assert driver.execute_script("return document.readyState") == "complete"


def test_pages_load_without_console_errors_and_every_figure_has_a_size(driver, ledger_site) -> None:
    out, _ = ledger_site
    pages = sorted(out.glob("*.html"))
    assert len(pages) >= 6
    for page in pages:
        _load(driver, page)
        severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not severe, (page.name, severe)
        sizes = driver.execute_script(
            "return Array.from(document.querySelectorAll('svg')).map(s => {"
            " const r = s.getBoundingClientRect(); return [r.width, r.height]; })")
        assert len(sizes) == page.read_text().count("<svg"), page.name
        assert all(w > 0 and h > 0 for w, h in sizes), (page.name, sizes)
    _load(driver, out / "fedred.html")
    assert driver.execute_script("return document.querySelectorAll('section.claim svg').length") >= 2


def test_every_internal_link_and_anchor_resolves(driver, ledger_site) -> None:
    out, _ = ledger_site
    ids: dict[Path, set[str]] = {}
    links: dict[Path, list[str]] = {}
    for page in sorted(out.glob("*.html")):
        _load(driver, page)
        ids[page.resolve()] = set(driver.execute_script(
            "return Array.from(document.querySelectorAll('[id]')).map(e => e.id)"))
        links[page] = driver.execute_script(  # the attribute as written (SVG links included), not resolved
            "return Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))")
    checked = 0
    for page, hrefs in links.items():
        for href in hrefs:
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc, (page.name, href)  # nothing outside the folder
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
            assert target.exists(), (page.name, href)
            if parts.fragment:
                assert target in ids, (page.name, href)  # an anchor into a page of the site
                assert unquote(parts.fragment) in ids[target], (page.name, href)
            checked += 1
    assert checked > 50


def test_a_screenshot_is_not_blank(driver, ledger_site, tmp_path: Path) -> None:
    import matplotlib.image

    out, _ = ledger_site
    _load(driver, out / "efl.html")
    png = driver.get_screenshot_as_png()
    (tmp_path / "efl.png").write_bytes(png)
    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3]
    assert pixels.shape[0] > 500 and pixels.shape[1] > 800
    ink = (pixels.mean(axis=2) < 0.6).mean()  # dark pixels: text, figure strokes, borders
    assert pixels.std() > 0.05 and 0.005 < ink < 0.5, (pixels.std(), ink)
