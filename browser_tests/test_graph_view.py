"""The interactive view of a backward graph (``to_html``) on the site's pages.

A page shows the view where a code cell ends with a ``GraphHtml``: sphinx-gallery
(or myst-nb) writes its ``_repr_html_``, an ``iframe`` whose ``srcdoc`` is the
whole page of the view. On each page of :data:`PAGES`, in both editions:

* the view renders inside its iframe: one box per top-level entry of its data;
* no request leaves the page (counted: the iframe's own requests, and every
  request to a host other than the test server), and the page has no error;
* axe-core, run inside the iframe as the suite runs it on pages
  (``webcheck.axe_problems``), finds nothing serious or critical;
* a click on a fold (or a module) opens it: more boxes; its *Close* button in
  the details panel closes it: the same boxes as before;
* searching for the kind of a node hidden in a fold finds every node of that
  kind (the list of results), marks the boxes that hold
  them, and a result opens the way to its node;
* on a phone (390 px) neither the page nor the view overflows sideways;
* the script decodes the page's data as ``autograd_notes.view_data.read_page``
  does (every item, node kind, owner and input), and its layout
  (``AN_LAYERS``) gives the rows ``autograd_notes.layout.layers`` gives, on the
  same graphs, cycles included.

Add a page to :data:`PAGES` to check its view too (the first view of the page
is the one checked).
"""

from __future__ import annotations

import random
from typing import Any

import harness
import pytest
import webcheck
from playwright.sync_api import BrowserContext, Frame, Page
from views import sized_context

from autograd_notes.layout import layers
from autograd_notes.view_data import read_page

# Pages (paths within an edition) that show an interactive graph view.
PAGES = [
    "tutorials/03_grad_fn_and_the_graph.html",
    "how-to/see-what-your-model-keeps-for-backward.html",
]

VIEW = "iframe[srcdoc*='an-data']"

# The view's data, and what it shows now.
DATA_JS = """() => {
  const v = window.anView;  // the page's data as view.js decoded it
  return {tops: v.tops, items: v.items, kinds: v.kinds, kind: Array.from(v.kind),
          owner: Array.from(v.owner), nodes: v.kind.length};
}"""
BOXES_JS = "() => document.querySelectorAll('#an-canvas g.an-box').length"
OVERFLOW_JS = """() => ({scroll: document.documentElement.scrollWidth,
                         client: document.documentElement.clientWidth})"""


def open_view(
    context: BrowserContext, url: str
) -> tuple[Page, Frame, harness.Visit, list[str]]:
    """The page at ``url``, its view's frame (drawn), what went wrong on the
    page (``visit.external_requests``: every request that would have left
    it, aborted) and the URLs that any iframe of the page requested."""
    framed: list[str] = []
    context.on(
        "request",
        lambda request: (
            framed.append(request.url)
            if request.frame.parent_frame is not None
            else None
        ),
    )
    page, visit = harness.open_page(context, url)
    assert not visit.problems(), visit.problems()
    view = page.locator(VIEW)
    assert view.count() >= 1, "no graph view on the page"
    view.first.scroll_into_view_if_needed()
    handle = view.first.element_handle()
    frame = handle.content_frame() if handle else None
    assert frame is not None, "the view's iframe has no document"
    frame.wait_for_selector("#an-canvas g.an-box")
    return page, frame, visit, framed


def no_requests(visit: harness.Visit, framed: list[str]) -> None:
    """Nothing left the page, and the view fetched nothing at all."""
    assert (visit.external_requests, framed) == ([], [])
    assert not visit.problems(), visit.problems()


def boxes(frame: Frame) -> int:
    count: int = frame.evaluate(BOXES_JS)
    return count


def labels(frame: Frame) -> list[str]:
    """The boxes' names (their text can be cut short; their names are not)."""
    found = frame.locator("#an-canvas g.an-box").evaluate_all(
        "gs => gs.map(g => g.getAttribute('aria-label'))"
    )
    return [name.removesuffix(" (press Enter to open)") for name in found]


@pytest.fixture
def url(base_url: str, edition: str, page_name: str) -> str:
    return webcheck.page_url(base_url, edition, page_name)


@pytest.mark.parametrize("page_name", PAGES)
def test_the_view_renders_offline_and_passes_axe(
    context: BrowserContext, url: str
) -> None:
    _, frame, visit, framed = open_view(context, url)
    data = frame.evaluate(DATA_JS)
    assert boxes(frame) == data["tops"] > 0
    tops = [f"{row['label']} {row['title']}" for row in data["items"][: data["tops"]]]
    assert sorted(labels(frame)) == sorted(tops)
    assert frame.locator("#an-search").is_visible()
    # recorded without anomaly mode: the panel says what the view cannot tell
    assert "cannot tell" in frame.locator("#an-details").inner_text()
    frame.locator("#an-canvas g.an-box").first.click()  # the details panel
    frame.locator("#an-search").fill(data["kinds"][0])  # results and hits
    no_requests(visit, framed)
    problems = webcheck.axe_problems(frame)  # type: ignore[arg-type]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page_name", PAGES)
def test_a_click_opens_a_fold_and_close_closes_it(
    context: BrowserContext, url: str
) -> None:
    _, frame, visit, framed = open_view(context, url)
    before = boxes(frame)
    group = frame.locator("#an-canvas g.an-fold, #an-canvas g.an-group").first
    name = group.get_attribute("aria-label") or ""
    assert "press Enter to open" in name, name
    group.click()
    opened = boxes(frame)
    assert opened > before, (before, opened)
    close = frame.locator("#an-details button", has_text="Close this")
    close.click()
    assert boxes(frame) == before
    # The keyboard does the same: Enter on the focused box opens it.
    frame.locator("#an-canvas g.an-fold, #an-canvas g.an-group").first.press("Enter")
    assert boxes(frame) == opened
    frame.get_by_role("button", name="Close all").click()
    assert boxes(frame) == before
    no_requests(visit, framed)


@pytest.mark.parametrize("page_name", PAGES)
def test_search_finds_a_kind_hidden_in_a_fold(
    context: BrowserContext, url: str
) -> None:
    _, frame, visit, framed = open_view(context, url)
    data = frame.evaluate(DATA_JS)
    # a kind none of whose nodes shows as a box of its own at first: every
    # one is inside a closed module or fold, found only by searching
    items, owner = data["items"], data["owner"]
    shown = {
        data["kind"][n]
        for n in range(data["nodes"])
        if owner[n] >= 0
        and items[owner[n]]["kind"] == "node"
        and items[owner[n]]["parent"] < 0
    }
    hidden = [
        k
        for k, name in enumerate(data["kinds"])
        if k not in shown and name != "AccumulateGrad"
    ]
    assert hidden, data["kinds"]
    kind = data["kinds"][hidden[0]]
    count = data["kind"].count(hidden[0])
    before = boxes(frame)
    frame.locator("#an-search").fill(kind)
    results = frame.locator("#an-results button").all_inner_texts()
    assert len(results) == min(count, 50)
    status = frame.locator("[role=status]").inner_text()
    assert status.endswith(f"; {count} match"), status
    assert all(kind in text for text in results), results
    assert frame.locator("#an-canvas g.an-hit").count() >= 1
    assert boxes(frame) == before  # marking opens nothing
    frame.locator("#an-results button").first.click()
    selected = frame.locator("#an-canvas g.an-selected")
    assert selected.count() == 1
    label = selected.get_attribute("aria-label") or ""
    assert label.startswith(results[0].split(" in ")[0]), (label, results[0])
    assert boxes(frame) > before
    no_requests(visit, framed)


# Every node and item as the script decoded them, for read_page's answers.
DECODED_JS = """() => {
  const v = window.anView, inputs = [];
  for (let n = 0; n < v.kind.length; n++) {
    inputs.push(Array.from(v.inputs.slice(v.starts[n], v.starts[n + 1])));
  }
  return {lang: document.documentElement.lang, items: v.items,
          owner: Array.from(v.owner), kind: Array.from(v.kind, k => v.kinds[k]),
          inputs: inputs, module: Array.from(v.kind, (_, n) => v.module(n)),
          root: v.root};
}"""


@pytest.mark.parametrize("page_name", PAGES)
def test_the_script_decodes_the_page_as_read_page_does(
    context: BrowserContext, url: str
) -> None:
    page, frame, visit, framed = open_view(context, url)
    srcdoc = page.locator(VIEW).first.get_attribute("srcdoc")
    assert srcdoc is not None
    expected = read_page(srcdoc)
    decoded = frame.evaluate(DECODED_JS)
    assert decoded["lang"] == "en"  # read_page writes the script's English texts
    assert [tuple(item.values()) for item in decoded["items"]] == expected.items
    assert decoded["kind"] == expected.kind
    assert decoded["owner"] == expected.owner
    assert decoded["inputs"] == expected.inputs
    assert decoded["module"] == expected.module
    assert decoded["root"] == expected.data["root"]
    no_requests(visit, framed)


def _random_graphs(count: int) -> list[tuple[list[list[int]], int]]:
    """Seeded graphs of 1 to 14 boxes, with and without cycles, and a root each."""
    rng = random.Random(0)
    graphs = []
    for g in range(count):
        boxes = rng.randint(1, 14)
        out = [
            rng.sample(range(boxes), rng.randint(0, min(3, boxes)))
            for _ in range(boxes)
        ]
        if g % 2:  # every other graph: links only down the walk order, no cycle
            out = [[t for t in targets if t > b] for b, targets in enumerate(out)]
        graphs.append((out, rng.randrange(boxes)))
    return graphs


def _has_cycle(out: list[list[int]]) -> bool:
    incoming = [0] * len(out)
    for targets in out:
        for t in targets:
            incoming[t] += 1
    ready = [b for b, k in enumerate(incoming) if k == 0]
    done = 0
    while ready:
        b = ready.pop()
        done += 1
        for t in out[b]:
            incoming[t] -= 1
            if incoming[t] == 0:
                ready.append(t)
    return done < len(out)


@pytest.mark.parametrize("page_name", PAGES[:1])
def test_the_scripts_layout_is_the_packages(context: BrowserContext, url: str) -> None:
    _, frame, visit, framed = open_view(context, url)
    cases = _random_graphs(300)
    cycles = sum(_has_cycle(out) for out, _ in cases)
    assert 100 < cycles <= 150, cycles  # both kinds, many of each
    rows = frame.evaluate(
        "cases => cases.map(c => Array.from(AN_LAYERS(c[0], c[1])))", cases
    )
    assert rows == [layers(out, root) for out, root in cases]
    no_requests(visit, framed)


@pytest.mark.parametrize("page_name", PAGES)
def test_the_view_fits_a_phone(browser: Any, url: str) -> None:
    context = sized_context(browser, "phone")
    try:
        page, frame, visit, framed = open_view(context, url)
        width = page.viewport_size["width"] if page.viewport_size else 0
        assert width == 390
        outer = page.evaluate(OVERFLOW_JS)
        assert outer["scroll"] <= outer["client"], outer
        inner = frame.evaluate(OVERFLOW_JS)
        assert inner["scroll"] <= inner["client"], inner
        box = page.locator(VIEW).first.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= width, box
        assert boxes(frame) > 0
        no_requests(visit, framed)
    finally:
        context.close()


# The interface words of the view's English table that its Chinese table does
# not hold too (code such as create_graph=True, units, keys) and that no label
# of this graph holds (node kinds, module paths, names); then every one of
# them that the page shows as interface text: any text but the boxes' own
# (``#an-canvas text``), every aria-label, title and placeholder.
ENGLISH_JS = r"""() => {
  const v = window.anView;
  const words = s => (String(s).match(/[A-Za-z][A-Za-z0-9_]+/g) || [])
    .map(w => w.toLowerCase());
  const zh = new Set(Object.values(v.ui.zh).flatMap(words));
  const names = [...v.kinds, ...Object.values(v.names)];
  v.items.forEach(r => names.push(r.label, r.path || ""));
  for (let n = 0; n < v.kind.length; n++) names.push(v.module(n) || "");
  const label = new Set(names.flatMap(words));
  const english = new Set(Object.values(v.ui.en).flatMap(words)
    .filter(w => !zh.has(w) && !label.has(w)));
  const texts = [];
  const walk = document.createTreeWalker(document.documentElement, 4);  // text
  for (let t; (t = walk.nextNode());) {
    const skip = t.parentElement.closest("script, style, noscript, #an-canvas text");
    if (!skip) texts.push(t.data);
  }
  for (const e of document.querySelectorAll("[aria-label], [title], [placeholder]")) {
    for (const a of ["aria-label", "title", "placeholder"]) {
      if (e.hasAttribute(a)) texts.push(e.getAttribute(a));
    }
  }
  const found = texts.flatMap(
    t => words(t).filter(w => english.has(w)).map(w => `${w}: ${t}`));
  return {lang: document.documentElement.lang, words: english.size, found: found};
}"""
UI_JS = "() => window.anView.ui"


def reloaded(page: Page, frame: Frame) -> Frame:
    """``frame`` (the view) loaded again. Chromium runs a sandboxed iframe in a
    process of its own, and Playwright's locale reaches that process only after
    the frame's first scripts ran (they saw English); a reader's browser has
    one language list throughout, which a reload of the frame gives here."""
    frame.evaluate("() => location.reload()")
    handle = page.locator(VIEW).first.element_handle()
    again = handle.content_frame() if handle else None
    assert again is not None, "the view's iframe has no document"
    changed = "() => document.documentElement.lang !== 'en'"
    again.wait_for_function(changed, timeout=10_000)
    again.wait_for_selector("#an-canvas g.an-box")
    return again


def english_left(frame: Frame) -> list[str]:
    """The English interface words the view shows (``word: text``); its lang."""
    result = frame.evaluate(ENGLISH_JS)
    assert result["lang"] == "zh-CN", result["lang"]
    assert result["words"] > 40, result  # the table's words, not a few
    found: list[str] = result["found"]
    return found


@pytest.mark.editions("zh_CN")
@pytest.mark.parametrize("page_name", PAGES[:1])
def test_the_view_speaks_chinese_to_a_chinese_browser(
    new_context: harness.ContextFactory, url: str
) -> None:
    context = new_context(color_scheme="light", locale="zh-CN")
    page, frame, visit, framed = open_view(context, url)
    frame = reloaded(page, frame)
    ui = frame.evaluate(UI_JS)
    assert ui["en"].keys() == ui["zh"].keys()
    left = english_left(frame)
    assert "cannot tell" not in frame.locator("#an-details").inner_text()
    assert ui["zh"]["heading"] in frame.locator("#an-details").inner_text()
    problems = webcheck.axe_problems(frame)  # type: ignore[arg-type]
    # a fold opens (its notes, its calls), and its Close button closes it
    before = boxes(frame)
    frame.locator("#an-canvas g.an-fold").first.click()
    opened = boxes(frame)
    assert opened > before, (before, opened)
    left += english_left(frame)
    close = ui["zh"]["closeThis"].replace("{0}", ui["zh"]["fold"])
    frame.locator("#an-details button", has_text=close).click()
    assert boxes(frame) == before
    frame.locator("#an-canvas g.an-fold").first.press("Enter")
    assert boxes(frame) == opened
    node = "#an-canvas g.an-box:not(.an-fold):not(.an-group)"
    frame.locator(node).last.press("Enter")
    left += english_left(frame)  # a node's details: saved tensors, path
    # the search finds every node of a kind, in Chinese
    data = frame.evaluate(DATA_JS)
    kind = data["kinds"][-1]
    count = data["kind"].count(len(data["kinds"]) - 1)
    frame.locator("#an-search").fill(kind)
    results = frame.locator("#an-results button").all_inner_texts()
    assert len(results) == min(count, 50) > 0
    assert all(kind in text for text in results), results
    status = frame.locator("[role=status]").inner_text()
    assert status.endswith(ui["zh"]["match"].replace("{0}", str(count))), status
    frame.locator("#an-results button").first.click()
    assert frame.locator("#an-canvas g.an-selected").count() == 1
    left += english_left(frame)
    problems += webcheck.axe_problems(frame)  # type: ignore[arg-type]
    assert not left, "\n".join(dict.fromkeys(left))
    assert not problems, "\n".join(problems)
    frame.get_by_role("button", name=ui["zh"]["closeAll"]).click()
    assert boxes(frame) == before
    no_requests(visit, framed)


@pytest.mark.editions("zh_CN")
@pytest.mark.parametrize("page_name", PAGES[:1])
def test_the_view_speaks_english_to_an_english_browser(
    new_context: harness.ContextFactory, url: str
) -> None:
    context = new_context(color_scheme="light", locale="en-US")
    _, frame, visit, framed = open_view(context, url)
    result = frame.evaluate(ENGLISH_JS)
    assert result["lang"] == "en"
    assert "cannot tell" in frame.locator("#an-details").inner_text()
    assert frame.get_by_role("button", name="Close all").is_visible()
    assert len(result["found"]) > 20, result  # the same check sees English
    no_requests(visit, framed)
