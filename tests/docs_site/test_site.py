"""The documentation site as a reader opens it from disk (site/index.html,
file://, as the README says), in a real headless Chromium (Debian's
`chromium`): every page in the navigation opens as a page, not a directory
listing, search finds pages, and the Commands page's synopsis fits 1280
pixels. `make docs` builds the site, installs Chromium where it is missing,
then runs this test on its site/ (BRIDGE_SITE_DIR); elsewhere the site is
built here with mkdocs (strict) into a temporary directory. Without mkdocs or
Chromium the test is skipped saying which (make test runs before make docs
has installed them), except under make docs, where that is a failure."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from tests.conftest import ROOT, STARTING_ENV

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _missing(what: str) -> None:
    if STARTING_ENV.get("BRIDGE_SITE_DIR"):
        pytest.fail(f"make docs must test the site, but {what}")
    pytest.skip(what)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    built_by_make = STARTING_ENV.get("BRIDGE_SITE_DIR")
    if built_by_make:
        return (ROOT / built_by_make).resolve()
    mkdocs = Path(sys.executable).with_name("mkdocs")
    if not mkdocs.exists():
        _missing("mkdocs is not installed (make docs installs the docs extra)")
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [mkdocs, "build", "--strict", "-q", "-d", out],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    return out


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        _missing("chromium is not installed (make docs installs Debian's chromium)")
    return found


def _browse(chromium: str, url: str, profile: Path, *extra: str) -> str:
    """The DOM of `url` once its scripts ran (a virtual time budget)."""
    done = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _dom(chromium: str, url: str, profile: Path) -> str:
    return _browse(chromium, url, profile, "--virtual-time-budget=5000", "--dump-dom")


class _Links(HTMLParser):
    """The hrefs of the primary navigation's links."""

    def __init__(self) -> None:
        super().__init__()
        self.in_nav = 0
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if (
            tag == "nav"
            and "md-nav--primary" in (a.get("class") or "")
            or tag == "nav"
            and self.in_nav
        ):
            self.in_nav += 1
        if tag == "a" and self.in_nav and "md-nav__link" in (a.get("class") or ""):
            self.hrefs.append(a.get("href") or "")

    def handle_endtag(self, tag):
        if tag == "nav" and self.in_nav:
            self.in_nav -= 1


def test_every_navigation_link_opens_a_page_from_disk(site, chromium, tmp_path):
    home = (site / "index.html").as_uri()
    dom = _dom(chromium, home, tmp_path / "profile")
    parser = _Links()
    parser.feed(dom)
    targets = sorted({urljoin(home, h).split("#")[0] for h in parser.hrefs if h})
    # Every page of mkdocs.yml's nav.
    nav = re.findall(r"^\s*- [^:]+: (\S+)\.md$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert len(nav) >= 25
    assert targets == sorted((site / f"{page}.html").as_uri() for page in nav)
    for url in targets:
        path = Path(unquote(urlparse(url).path))
        # A file, not a directory (which a browser shows as "Index of ...").
        assert path.suffix == ".html" and path.is_file(), url
        page = _dom(chromium, url, tmp_path / "profile")
        assert "Index of" not in page[:2000], url
        assert re.search(r'<article class="md-content__inner', page), url


def test_search_finds_pages_from_disk(site, chromium, tmp_path):
    # ?q= opens the search with the query, as a reader typing it would.
    dom = _dom(chromium, (site / "index.html").as_uri() + "?q=ia32cap", tmp_path / "profile")
    meta = re.search(r'md-search-result__meta">([^<]*)<', dom)
    assert meta is not None, "no search results box"
    assert re.match(r"\d+ matching document", meta.group(1)), meta.group(1)
    assert "reference/masks.html" in dom
    # Nothing is fetched from the network: the shim search needs is the site's own.
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "unpkg.com" not in html and "fonts.googleapis" not in html


def test_the_commands_page_fits_1280_pixels(site, chromium, tmp_path):
    """At 1280 px the content column shows 71 characters of a code block (a
    screenshot, 2026-12-03): no block on the Commands page is wider, so none
    is cut off; the synopsis is a table per command, which wraps."""
    page = (site / "guide" / "commands.html").read_text(encoding="utf-8")
    assert page.count("<table>") >= 2
    for block in re.findall(r"<pre[^>]*>(.*?)</pre>", page, re.S):
        text = re.sub(r"<[^>]+>", "", block)
        for line in text.splitlines():
            assert len(_unescape(line)) <= 71, line
    shot = tmp_path / "commands.png"
    url = (site / "guide" / "commands.html").as_uri()
    _browse(chromium, url, tmp_path / "profile", "--window-size=1280,1000", f"--screenshot={shot}")
    assert shot.stat().st_size > 10_000


def _unescape(text: str) -> str:
    import html

    return html.unescape(text)
