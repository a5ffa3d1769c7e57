"""Every page of both editions fits a phone (390 px) and a desktop (1280 px).

At each width, on every page (``views.layout``, from the one load of each page
and width that ``test_figures.py`` shares: see ``views.PageViews``):

* ``page``: the document never scrolls sideways (nothing is wider than the
  viewport), and the page does not hide such overflow by clipping ``html`` or
  ``body``;
* ``headings``: every heading of the article, and all of its text (long
  ``code`` too), lies within the viewport and within the heading's own box;
* ``tables``: every table of the article either fits its box, or scrolls
  inside a box of its own that stays within the viewport and shows the cue
  (the shadow and the caption that ``docs/_static/table-labels.js`` adds); a
  table stacked into rows labels every cell with its column's header; no
  column header breaks inside a word (the cheat sheet's "Le/ar/n");
* ``blocks``: code and output blocks keep their lines (``white-space: pre``:
  a ``format_graph`` tree, a tensor's rows), except that on a desktop what the
  computer printed (outputs, doctest sessions, shell lines) wraps a line
  longer than the column; at 1280 px no ``pre`` is wider than its box (the
  column holds 88 characters of code); on a phone a block or display equation
  wider than its box scrolls there with the shadow that says so.

``test_*_is_found`` prove that each check can fail: a copy of the site whose
pages carry the defect (a nowrap heading, a wide table without its box, a
header that breaks its words, a wide output without the cue, a wrapping
output, the stylesheet removed). ``test_screenshots_at_390`` keeps
pictures of a few pages on a phone in ``artifacts/layout/``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import harness
import pytest
import webcheck
from playwright.sync_api import Browser
from views import OUTPUTS, WIDTHS, PageViews, layout, sized_context

CHECKS = ("page", "headings", "tables", "blocks")


@pytest.fixture(params=list(WIDTHS))
def size(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("check", CHECKS)
def test_layout(
    page_views: PageViews, edition: str, page_path: str, size: str, check: str
):
    view = page_views(edition, page_path, size)
    assert view["load"] == [], "\n".join(view["load"])
    problems = view["layout"][check]
    assert problems == [], "\n".join(problems)


# -- the checks can fail ---------------------------------------------------------

# Pages the defects are added to: one with a heading that holds long code and
# wide outputs, one with tables.
CHEATSHEET = "reference/cheatsheet.html"
TUTORIAL = "tutorials/02_leaf_tensors.html"
WIDE_CODE = "torch.autograd.graph.Node.register_prehook_and_more"

DEFECTS: dict[str, tuple[str, str]] = {
    # name -> (page it is made from, what goes into the end of its article)
    "nowrap-heading.html": (
        TUTORIAL,
        f'<h2 style="white-space: nowrap">A heading with long code <code>{WIDE_CODE}'
        "</code></h2>",
    ),
    "unboxed-table.html": (
        CHEATSHEET,
        '<table style="width: 900px"><tr><td>one</td><td>two</td></tr></table>',
    ),
    # Stacked, but table-labels.js never labelled it (it leaves tables that
    # are already in a .table-scroll alone).
    "unlabelled-table.html": (
        CHEATSHEET,
        '<div class="table-scroll"><table class="stacked"><thead><tr><th>A</th>'
        "</tr></thead><tbody><tr><td>a cell without its label</td></tr></tbody>"
        "</table></div>",
    ),
    # Python code wider than a desktop's column.
    "long-code.html": (
        TUTORIAL,
        '<div class="highlight-Python"><div class="highlight"><pre>'
        + "x = ["
        + "1234, " * 30
        + "]</pre></div></div>",
    ),
    # Wider than a phone, and without the shadow that says it scrolls.
    "long-output.html": (
        TUTORIAL,
        '<div class="sphx-glr-script-out"><div class="highlight"><pre style="'
        'background: none">' + "tensor([" + "0.1234, " * 120 + "])</pre></div></div>",
    ),
    # A tree that wraps loses its shape.
    "wrapped-output.html": (
        TUTORIAL,
        '<div class="sphx-glr-script-out"><div class="highlight"><pre style="'
        'white-space: pre-wrap">└── [0] AccumulateGrad  a wrapped tree</pre>'
        "</div></div>",
    ),
    "broken-header.html": (
        CHEATSHEET,
        '<table><thead><tr><th style="overflow-wrap: anywhere; width: 1px">Learn'
        "</th><th>Use</th></tr></thead><tbody><tr><td>a</td><td>b</td></tr></tbody>"
        "</table>",
    ),
    # Not a defect: a wide table without a header row, in the theme's scroll
    # box, as Sphinx writes one. It cannot stack, so it scrolls, with the cue.
    "wide-table.html": (
        CHEATSHEET,
        '<div class="pst-scrollable-table-container"><table class="table"><tbody>'
        + "<tr>"
        + "".join(
            f'<td style="white-space: nowrap">column {i}: <code>{WIDE_CODE}</code></td>'
            for i in range(4)
        )
        + "</tr></tbody></table></div>",
    ),
}


def sibling(template: str, name: str) -> str:
    """The path of page ``name`` in the folder of ``template``."""
    return template.rpartition("/")[0] + "/" + name


def unstyled(template: str) -> str:
    return sibling(template, Path(template).name.replace(".html", "-unstyled.html"))


@pytest.fixture(scope="module")
def broken_layout(site: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built English edition, copied, with one page per defect, and a copy
    of each of those pages (and of their templates) without the project's
    stylesheet and table script: the site as it was before them."""
    copy = tmp_path_factory.mktemp("layout") / "html"
    shutil.copytree(site, copy, ignore=shutil.ignore_patterns(".doctrees", "zh_CN"))
    pages = {}
    for name, (template, defect) in DEFECTS.items():
        markup = (site / template).read_text(encoding="utf-8")
        assert "</article>" in markup
        pages[sibling(template, name)] = markup.replace(
            "</article>", defect + "</article>", 1
        )
    for template in (CHEATSHEET, TUTORIAL):
        pages[template] = (site / template).read_text(encoding="utf-8")
    for path, markup in list(pages.items()):
        bare, count = re.subn(
            r"<(link|script)\b[^>]*(custom\.css|table-labels\.js)[^>]*>(</script>)?",
            "",
            markup,
        )
        assert count == 2, f"{path}: custom.css and table-labels.js not found"
        pages[unstyled(path)] = bare
    for path, markup in pages.items():
        (copy / path).write_text(markup, encoding="utf-8")
    return copy


@pytest.fixture(scope="module")
def broken_url(broken_layout: Path) -> Iterator[str]:
    with harness.serve(broken_layout) as url:
        yield url


def broken_report(browser: Browser, base: str, path: str, size: str) -> dict[str, Any]:
    views = PageViews(browser, base)
    try:
        report: dict[str, Any] = views("en", path, size)["layout"]
        return report
    finally:
        views.close()


def test_nowrap_heading_is_found(browser: Browser, broken_url: str):
    report = broken_report(
        browser, broken_url, sibling(TUTORIAL, "nowrap-heading.html"), "phone"
    )
    assert any("A heading with long code" in p for p in report["headings"]), report
    assert any("scrolls sideways" in p for p in report["page"]), report


def test_unboxed_table_is_found(browser: Browser, broken_url: str):
    path = sibling(CHEATSHEET, "unboxed-table.html")
    report = broken_report(browser, broken_url, path, "desktop")
    assert any("in no box of its own" in p for p in report["tables"]), report


def test_unlabelled_stacked_table_is_found(browser: Browser, broken_url: str):
    path = sibling(CHEATSHEET, "unlabelled-table.html")
    report = broken_report(browser, broken_url, path, "phone")
    assert any("has no label" in p for p in report["tables"]), report


def test_long_code_line_is_found(browser: Browser, broken_url: str):
    """On a desktop, code wider than the column (it scrolls: no cue wanted)."""
    path = sibling(TUTORIAL, "long-code.html")
    report = broken_report(browser, broken_url, path, "desktop")
    assert any("x = [1234" in p and "a line is" in p for p in report["blocks"]), report
    assert broken_report(browser, broken_url, path, "phone")["blocks"] == []


def test_long_output_line_without_its_cue_is_found(browser: Browser, broken_url: str):
    """On a phone, an output that scrolls must show it; on a desktop it wraps."""
    path = sibling(TUTORIAL, "long-output.html")
    report = broken_report(browser, broken_url, path, "phone")
    found = [p for p in report["blocks"] if "tensor([0.1234" in p]
    assert any("no cue that it scrolls" in p for p in found), report
    assert broken_report(browser, broken_url, path, "desktop")["blocks"] == []


@pytest.mark.parametrize("size", list(WIDTHS))
def test_wrapped_output_is_found(browser: Browser, broken_url: str, size: str):
    path = sibling(TUTORIAL, "wrapped-output.html")
    report = broken_report(browser, broken_url, path, size)
    found = [p for p in report["blocks"] if "a wrapped tree" in p]
    # On a desktop, printed output may wrap a line longer than the column.
    assert bool(found) == (size == "phone"), report


def test_header_that_breaks_its_words_is_found(browser: Browser, broken_url: str):
    path = sibling(CHEATSHEET, "broken-header.html")
    report = broken_report(browser, broken_url, path, "desktop")
    assert any('the header "Learn" breaks' in p for p in report["tables"]), report


@pytest.mark.parametrize("size", list(WIDTHS))
def test_wide_table_scrolls_in_its_box_with_the_cue(
    browser: Browser, broken_url: str, size: str
):
    """A table that can neither shrink nor stack scrolls in its box, with the
    caption and the fade; without the stylesheet and script the check fails."""
    path = sibling(CHEATSHEET, "wide-table.html")
    assert broken_report(browser, broken_url, path, size)["tables"] == []
    bare = broken_report(browser, broken_url, unstyled(path), size)["tables"]
    assert any("without a visible caption" in p for p in bare), bare
    assert any("without the fade" in p for p in bare), bare

    # The fade follows the scroll: on the right until the end, then on the left.
    context = sized_context(browser, size)
    try:
        page, visit = harness.open_page(
            context, webcheck.page_url(broken_url, "en", path)
        )
        wrapper = page.locator(".table-scroll:has(code)").last
        # The fade's opacity has a CSS transition: read it once it is over
        # (read mid-way on a loaded machine, it was 0.705616).
        webcheck.settle(page)
        opacity = "(el, side) => getComputedStyle(el, side).opacity"
        assert wrapper.evaluate(opacity, "::after") == "1"
        assert wrapper.evaluate(opacity, "::before") == "0"
        cue = wrapper.locator(".table-scroll-cue")
        assert cue.is_visible()
        assert cue.inner_text() == "Scroll sideways to see every column →"
        box = wrapper.locator(".pst-scrollable-table-container")
        box.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
        page.wait_for_function(
            "el => el.classList.contains('at-end')", arg=wrapper.element_handle()
        )
        webcheck.settle(page)
        assert wrapper.evaluate(opacity, "::after") == "0"
        assert wrapper.evaluate(opacity, "::before") == "1"
        assert visit.problems() == []
    finally:
        context.close()


@pytest.mark.parametrize(
    ("template", "kinds"),
    [(CHEATSHEET, ("tables",)), (TUTORIAL, ("page", "headings", "blocks"))],
)
def test_the_site_without_its_layout_css_fails(
    browser: Browser, broken_url: str, template: str, kinds: tuple[str, ...]
):
    """Without custom.css and table-labels.js a page fails on a phone, as the
    site did before them; with them the same page passes."""
    report = broken_report(browser, broken_url, unstyled(template), "phone")
    assert all(report[kind] for kind in kinds), report
    styled = broken_report(browser, broken_url, template, "phone")
    assert all(styled[kind] == [] for kind in CHECKS), styled


# -- screenshots -------------------------------------------------------------------

SCREENSHOTS = {
    # page -> the elements to show, besides the top of the page
    "tutorials/01_one_training_step.html": (OUTPUTS,),
    TUTORIAL: ("h2:has-text('Variable')",),
    "reference/graph.html": ("dt.sig",),
    "reference/masks.html": ("dt.sig",),
    "reference/freezing.html": ("dt.sig",),
    CHEATSHEET: ("table",),
    "tutorials/03_grad_fn_and_the_graph.html": (
        ".sphx-glr-script-out pre:has-text('UserWarning')",
    ),
}


@pytest.mark.parametrize("path", list(SCREENSHOTS))
def test_screenshots_at_390(
    browser: Browser, base_url: str, edition: str, path: str, artifacts: Path
):
    """The top of the page, and the first of each kind of element, on a phone."""
    folder = artifacts / "layout"
    folder.mkdir(parents=True, exist_ok=True)
    context = sized_context(browser, "phone")
    try:
        page, visit = harness.open_page(
            context, webcheck.page_url(base_url, edition, path)
        )
        stem = f"{edition}-{path.replace('/', '-').removesuffix('.html')}"
        page.screenshot(path=folder / f"{stem}-top.png", animations="disabled")
        for index, selector in enumerate(SCREENSHOTS[path]):
            element = page.locator(selector).first
            element.scroll_into_view_if_needed()
            page.evaluate("() => window.scrollBy(0, -60)")
            page.screenshot(
                path=folder / f"{stem}-{index + 1}.png", animations="disabled"
            )
        assert visit.problems() == []
        assert layout(page, WIDTHS["phone"])["page"] == []
    finally:
        context.close()
