"""The checks catch what they are for: a copy of the built site with one
deliberately broken page per defect, served and checked with the same functions
as the real site."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import harness
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
# The same for the Chinese edition: name -> what goes into zh_CN/index.html's
# article. Only the first paragraph is a defect: the others are Chinese, code,
# a URL as a link's text, or output.
ZH_BROKEN = {
    "english-prose.html": "<p>This paragraph was never translated.</p>"
    "<p>调用 <code>loss.backward(retain_graph=True)</code> 即可，不用 "
    "<code>torch.autograd.grad</code>。</p>"
    '<p><a href="https://example.org/docs/graph.py">https://example.org/docs/graph.py'
    "</a></p>"
    '<div class="highlight"><pre>print("this is not prose at all")</pre></div>'
    '<div class="sphx-glr-script-out"><pre>the output of a cell</pre></div>',
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
    zh_landing = (site / "zh_CN" / "index.html").read_text(encoding="utf-8")
    for name, defect in ZH_BROKEN.items():
        page = zh_landing.replace("</article>", defect + "</article>", 1)
        (copy / "zh_CN" / name).write_text(page, encoding="utf-8")
    # An English tooltip that the theme has a translation for, outside the article.
    (copy / "zh_CN" / "english-interface.html").write_text(
        zh_landing.replace(
            "</body>", '<button type="button" title="Back to top">↑</button></body>', 1
        ),
        encoding="utf-8",
    )
    # A page whose switcher leads elsewhere (to about.html, which this copy of
    # it is not), and one whose switcher the keyboard cannot reach.
    about = (site / "zh_CN" / "about.html").read_text(encoding="utf-8")
    (copy / "zh_CN" / "wrong-switcher.html").write_text(about, encoding="utf-8")
    untabbable, count = re.subn(
        r'(<a class="[^"]*edition-switcher")', r'\1 tabindex="-1"', about
    )
    assert count == 1, "could not find the language switcher"
    (copy / "zh_CN" / "untabbable-switcher.html").write_text(untabbable, "utf-8")
    # A thumbnail whose image is gone.
    index = harness.gallery_indexes(site)[0]
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
    with harness.serve(broken_site) as url:
        yield url


def visit_problems(context: BrowserContext, base: str, page: str) -> list[str]:
    _, visit = harness.open_page(context, urljoin(base, page))
    return visit.problems()


@pytest.mark.parametrize("template", ["index.html", "zh_CN/index.html"])
def test_the_copy_is_clean_apart_from_the_defects(
    context: BrowserContext, broken_url: str, template: str
):
    """The templates of the broken pages pass: each defect is the only one."""
    assert visit_problems(context, broken_url, template) == []


def test_dead_link_and_anchor_are_found(broken_url: str, broken_site: Path):
    report = webcheck.check_links(broken_url, ["broken-link.html"])
    assert [p for p in report.problems if "no-such" in p] == [
        "broken-link.html: dead link 'no-such-page.html' (/no-such-page.html is "
        "HTTP 404)",
        "broken-link.html: missing anchor 'index.html#no-such-anchor' (no id or "
        "name 'no-such-anchor' in /index.html)",
    ]
    assert harness.discover_pages(broken_site).count("broken-link.html") == 1


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
    page, visit = harness.open_page(context, urljoin(broken_url, "third-party.html"))
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
    page, _ = harness.open_page(context, urljoin(broken_url, "inaccessible.html"))
    problems = webcheck.axe_problems(page)
    assert any(p.startswith("critical button-name") for p in problems), problems


def test_missing_thumbnail_is_found(
    context: BrowserContext, broken_url: str, site: Path
):
    index = harness.gallery_indexes(site)[0]
    page, _ = harness.open_page(context, urljoin(broken_url, index))
    problems = webcheck.thumbnail_problems(page, harness.example_pages(site), index)
    assert len(problems) == 1
    assert "no-such-thumb.png did not load" in problems[0]


def test_broken_downloads_are_found(
    context: BrowserContext, broken_url: str, broken_site: Path, site: Path
):
    example = harness.example_pages(site)[0]
    page, _ = harness.open_page(context, urljoin(broken_url, example))
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


def test_english_prose_on_a_chinese_page_is_found(
    context: BrowserContext, broken_url: str
):
    page, _ = harness.open_page(
        context, urljoin(broken_url, "zh_CN/english-prose.html"), wait_until="load"
    )
    found = webcheck.english_prose(page)
    assert len(found) == 1, found
    assert "This paragraph was never translated." in found[0]
    # The landing page it was made from has none.
    page, _ = harness.open_page(
        context, urljoin(broken_url, "zh_CN/index.html"), wait_until="load"
    )
    assert webcheck.english_prose(page) == []


def test_english_interface_string_is_found(context: BrowserContext, broken_url: str):
    page, _ = harness.open_page(
        context, urljoin(broken_url, "zh_CN/english-interface.html"), wait_until="load"
    )
    problems, _ = webcheck.interface_problems(webcheck.interface_strings(page), "zh_CN")
    assert [p for p in problems if "Back to top" in p] == [
        "title 'Back to top' (button): the theme translates it '回到顶部'"
    ], problems


def test_wrong_language_is_found(site: Path):
    markup = (site / "zh_CN" / "index.html").read_text(encoding="utf-8")
    assert webcheck.declared_language(markup) == "zh-CN"
    wrong = markup.replace('lang="zh-CN"', 'lang="en"', 1)
    assert webcheck.declared_language(wrong) == "en"


def test_switcher_to_the_wrong_page_is_found(context: BrowserContext, broken_url: str):
    path = "wrong-switcher.html"
    page, _ = harness.open_page(
        context, webcheck.page_url(broken_url, "zh_CN", path), wait_until="load"
    )
    problems = webcheck.switcher_problems(page, broken_url, "zh_CN", path, "en")
    assert len(problems) == 1, problems
    assert "leads to about.html" in problems[0], problems


def test_switcher_out_of_the_tab_order_is_found(
    context: BrowserContext, broken_url: str
):
    path = "untabbable-switcher.html"
    page, _ = harness.open_page(
        context, webcheck.page_url(broken_url, "zh_CN", path), wait_until="load"
    )
    problems = webcheck.switcher_problems(page, broken_url, "zh_CN", path, "en")
    assert any("not in the tab order" in p for p in problems), problems
