"""Each edition's 404 page (sphinx-notfound-page) works wherever the server shows it:
served for a missing address at any depth, it loads its styles and scripts and
every link on it leads to a page of the site."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import harness
import pytest
from playwright.sync_api import BrowserContext, Route

MISSING = ["missing.html", "tutorials/missing.html", "a/b/c/missing/"]
TITLES = {"en": "Page not found", "zh_CN": "页面不存在"}


@pytest.mark.parametrize("missing", MISSING)
def test_the_404_page_works_at_any_depth(
    context: BrowserContext,
    base_url: str,
    site: Path,
    edition: str,
    edition_url: str,
    edition_site: Path,
    missing: str,
):
    body = (edition_site / "404.html").read_text(encoding="utf-8")
    url = edition_url + missing

    def not_found(route: Route) -> None:
        route.fulfill(status=404, body=body, content_type="text/html; charset=utf-8")

    context.route(url, not_found)  # as GitHub Pages and Read the Docs serve it
    page, visit = harness.open_page(context, url)
    # Only the page itself is a 404 (and the console says so); nothing it loads.
    own = (f" {url}", f"[{url}]")
    assert [p for p in visit.problems() if not p.endswith(own)] == []
    assert page.locator("article h1").first.inner_text().strip() == TITLES[edition]
    # The theme's styles apply (a stylesheet that failed would leave it unstyled).
    assert (
        page.evaluate(
            "getComputedStyle(document.querySelector('.bd-sidebar-primary')).display"
        )
        != "none"
    )
    hrefs = page.eval_on_selector_all(
        "a[href]:not([href^='#'])", "els => els.map(e => e.href)"
    )
    page.close()
    local = [h for h in hrefs if h.startswith(base_url)]
    assert len(local) > 20  # the sidebar's pages, the home page, search
    dead = []
    for href in local:
        path = unquote(urlsplit(href).path).lstrip("/")
        target = site / (
            path + "index.html" if path.endswith("/") or not path else path
        )
        if not target.is_file():
            dead.append(href)
    assert dead == [], f"links on the 404 page at {missing} lead nowhere: {dead[:5]}"
