"""The checks catch what they are for: a copy of the built site with one
deliberately broken page per defect, served and checked with the same functions
as the real site."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import pytest
import webcheck
from playwright.sync_api import BrowserContext

# name of the injected page -> what goes into its article
BROKEN = {
    "broken-link.html": '<p><a href="no-such-page.html">a dead link</a> and '
    '<a href="index.html#no-such-anchor">a dead anchor</a></p>',
    "missing-image.html": '<img src="_images/no-such-image.png" alt="gone">',
    "third-party.html": '<script src="https://cdn.example.com/tracker.js"></script>'
    '<img src="https://images.example.org/logo.png" alt="a logo">',
    "script-error.html": "<script>notDefinedAnywhere();</script>",
    "inaccessible.html": '<button type="button"></button>',
}


@pytest.fixture(scope="module")
def broken_site(site: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site, copied, plus one broken page per defect (each one the
    landing page with the defect added to its article)."""
    copy = tmp_path_factory.mktemp("broken") / "html"
    shutil.copytree(site, copy, ignore=shutil.ignore_patterns(".doctrees"))
    landing = (site / "index.html").read_text(encoding="utf-8")
    assert "</article>" in landing
    for name, defect in BROKEN.items():
        page = landing.replace("</article>", defect + "</article>", 1)
        (copy / name).write_text(page, encoding="utf-8")
    # A thumbnail whose image is gone.
    index = webcheck.gallery_indexes(site)[0]
    markup = (copy / index).read_text(encoding="utf-8")
    markup, count = re.subn(
        r'(class="sphx-glr-thumbcontainer"[^>]*>\s*<img [^>]*src=")[^"]+',
        r"\1../_images/no-such-thumb.png",
        markup,
        count=1,
    )
    assert count == 1, "could not find a thumbnail to break"
    (copy / index).write_text(markup, encoding="utf-8")
    return copy


@pytest.fixture(scope="module")
def broken_url(broken_site: Path) -> Iterator[str]:
    with webcheck.serve(broken_site) as url:
        yield url


def visit_problems(context: BrowserContext, base: str, page: str) -> list[str]:
    _, visit = webcheck.open_page(context, urljoin(base, page))
    return visit.problems()


def test_the_copy_is_clean_apart_from_the_defects(
    context: BrowserContext, broken_url: str
):
    """The template of the broken pages passes: each defect is the only one."""
    assert visit_problems(context, broken_url, "index.html") == []


def test_dead_link_and_anchor_are_found(broken_url: str, broken_site: Path):
    report = webcheck.check_links(broken_url, ["broken-link.html"])
    assert [p for p in report.problems if "no-such" in p] == [
        "broken-link.html: dead link 'no-such-page.html' (/no-such-page.html is "
        "HTTP 404)",
        "broken-link.html: missing anchor 'index.html#no-such-anchor' (no id or "
        "name 'no-such-anchor' in /index.html)",
    ]
    assert webcheck.discover_pages(broken_site).count("broken-link.html") == 1


def test_missing_image_is_found(context: BrowserContext, broken_url: str):
    problems = visit_problems(context, broken_url, "missing-image.html")
    assert any(
        p.startswith("HTTP error: 404") and "no-such-image.png" in p for p in problems
    ), problems
    report = webcheck.check_links(broken_url, ["missing-image.html"])
    assert [p for p in report.problems if "no-such" in p] == [
        "missing-image.html: dead link '_images/no-such-image.png' "
        "(/_images/no-such-image.png is HTTP 404)"
    ]


def test_third_party_request_is_found_and_blocked(
    context: BrowserContext, broken_url: str
):
    page, visit = webcheck.open_page(context, urljoin(broken_url, "third-party.html"))
    assert sorted(visit.external_requests) == [
        "https://cdn.example.com/tracker.js",
        "https://images.example.org/logo.png",
    ]
    assert any("request to another host" in p for p in visit.problems())
    # Aborted: the image never arrived.
    width = page.evaluate(
        "() => document.querySelector('img[src*=\"example.org\"]').naturalWidth"
    )
    assert width == 0
    report = webcheck.check_links(broken_url, ["third-party.html"])
    assert "https://cdn.example.com/tracker.js" in report.external
    assert not [p for p in report.problems if "example." in p]  # listed, not fetched


def test_script_error_is_found(context: BrowserContext, broken_url: str):
    problems = visit_problems(context, broken_url, "script-error.html")
    assert any(
        p.startswith("uncaught exception") and "notDefinedAnywhere" in p
        for p in problems
    ), problems


def test_accessibility_violation_is_found(context: BrowserContext, broken_url: str):
    page, _ = webcheck.open_page(context, urljoin(broken_url, "inaccessible.html"))
    problems = webcheck.axe_problems(page)
    assert any(p.startswith("critical button-name") for p in problems), problems


def test_missing_thumbnail_is_found(
    context: BrowserContext, broken_url: str, site: Path
):
    index = webcheck.gallery_indexes(site)[0]
    page, _ = webcheck.open_page(context, urljoin(broken_url, index))
    problems = webcheck.thumbnail_problems(page, webcheck.example_pages(site), index)
    assert len(problems) == 1
    assert "no-such-thumb.png did not load" in problems[0]


def test_broken_downloads_are_found(
    context: BrowserContext, broken_url: str, broken_site: Path, site: Path
):
    example = webcheck.example_pages(site)[0]
    page, _ = webcheck.open_page(context, urljoin(broken_url, example))
    hrefs = page.eval_on_selector_all(
        ".sphx-glr-download a.download",
        "links => links.map(a => a.getAttribute('href'))",
    )
    folder = (broken_site / example).parent
    py = next(h for h in hrefs if h.endswith(".py"))
    (folder / py).write_text("def broken(:\n", encoding="utf-8")
    notebook = next(h for h in hrefs if h.endswith(".ipynb"))
    (folder / notebook).unlink()
    problems = webcheck.download_problems(page, expected=(".py", ".ipynb"))
    assert any(p.endswith("HTTP 404") and ".ipynb" in p for p in problems), problems
    assert any(".py: not a valid py" in p for p in problems), problems
