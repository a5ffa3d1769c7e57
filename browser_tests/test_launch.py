"""The launch bar (docs/_ext/autograd_site/launchbar.py) as a reader meets it.

On every page of both editions that has one: the bar sits right under the
title, in the first screenful, at desktop width and at 390 px (where it wraps
inside the page); each link has a name; the links into the site (notebook,
script) are served and hold a notebook or a script; the links out of it
(Colab, the repository) are real links to those hosts, never loaded here.
tests/site/test_launchbar.py checks that the right pages have a bar and the exact
shape of every link.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import harness
import pytest
from playwright.sync_api import BrowserContext

EXTERNAL_HOSTS = {"colab.research.google.com", "github.com"}


def bar_pages(site: Path) -> list[str]:
    """``edition/page`` for each page that has a launch bar."""
    return [
        f"{edition}/{page}"
        for edition in harness.EDITIONS
        for page in harness.discover_pages(harness.edition_root(site, edition))
        if 'class="launch-bar"'
        in (harness.edition_root(site, edition) / page).read_text("utf-8")
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "bar_page" in metafunc.fixturenames:
        site = Path(metafunc.config.getoption("--site-dir")).resolve()
        pages = bar_pages(site)
        metafunc.parametrize("bar_page", pages)


def test_every_tutorial_has_a_bar(site: Path):
    for edition in harness.EDITIONS:
        root = harness.edition_root(site, edition)
        pages = set(bar_pages(site))
        for example in harness.example_pages(root):
            assert f"{edition}/{example}" in pages


def test_launch_bar(context: BrowserContext, base_url: str, bar_page: str):
    edition, _, path = bar_page.partition("/")
    url = urljoin(base_url + harness.EDITIONS[edition], path)
    page, visit = harness.open_page(context, url)
    bar = page.locator("nav.launch-bar")
    assert bar.count() == 1
    assert bar.get_attribute("aria-label")
    # Right under the title, nothing in between, in the first screenful.
    assert bar.evaluate("b => b.previousElementSibling.tagName") == "H1"
    box = bar.bounding_box()
    assert box is not None
    assert 0 < box["y"] < page.viewport_size["height"] / 2  # type: ignore[index]
    links = bar.locator("a")
    assert links.count() >= 3
    for i in range(links.count()):
        link = links.nth(i)
        name = link.inner_text().strip()
        assert name, f"link {i} has no text"
        href = link.evaluate("a => a.href")
        host = urlsplit(href).hostname
        if harness.is_local(href):
            code, body, _ = harness.fetch(href)
            assert code == 200, (name, href)
            if href.endswith(".ipynb"):
                assert json.loads(body)["cells"], href
            else:
                assert href.endswith(".py")
                assert body.strip(), href
        else:
            assert host in EXTERNAL_HOSTS, href
            assert href.startswith("https://"), href
    # A phone: the bar wraps inside the page, no link is cut off.
    page.set_viewport_size({"width": 390, "height": 800})
    assert bar.evaluate("b => b.scrollWidth <= b.clientWidth + 1")
    right = bar.evaluate(
        "b => Math.max(...[...b.querySelectorAll('a')].map("
        "a => a.getBoundingClientRect().right))"
    )
    assert right <= 390
    assert visit.problems() == []
