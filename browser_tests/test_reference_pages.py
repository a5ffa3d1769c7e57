"""The API reference pages as a reader sees them, in both editions (1280 x 800).

* The Contents panel (the secondary sidebar) lists the article's section
  headings, in the article's order, and nothing that is neither a heading nor
  a documented object; "Tutorials that use it" is a heading once per page, the
  page's last section, with no object nested under it.
* The sidebar shows each reference page's title whole: no link is wider than
  its box (a title in code, ``autograd_notes.masked_linear``, was cut off).
* ``MaskedLinearFunction`` reads as it is called: ``apply(input, weight, mask,
  bias, mode)``, not ``(*args, **kwargs)``.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

import harness
import pytest
from playwright.sync_api import BrowserContext

ROOT = Path(__file__).resolve().parents[1]
# The pages that document a module of the package (a new one counts too).
API_PAGES = sorted(
    f"reference/{source.stem}.html"
    for source in (ROOT / "docs" / "reference").glob("*.*")
    if source.suffix in (".md", ".rst")
    and ".. automodule:: autograd_notes." in source.read_text(encoding="utf-8")
)
assert len(API_PAGES) >= 6, API_PAGES
TUTORIALS = {"en": "Tutorials that use it", "zh_CN": "用到它的教程"}

# What the article and the Contents panel hold: the section headings (h2, h3),
# the documented objects (their signature's id), and the panel's entries
# (text, target id, nesting depth, whether it has entries under it).
READ = """() => {
  const text = (e) => e.textContent.replace(/[#¶]/g, '').replace(/\\s+/g, ' ').trim();
  const article = document.querySelector('article.bd-article');
  const headings = [...article.querySelectorAll('section > h2, section > h3')]
    .map((h) => ({text: text(h), id: h.parentElement.id}));
  const objects = [...article.querySelectorAll('dl.py > dt[id]')].map((d) => d.id);
  const nav = document.querySelector('.bd-sidebar-secondary nav.page-toc');
  const entries = nav ? [...nav.querySelectorAll('li')].map((li) => {
    const a = li.querySelector(':scope > a');
    let depth = 0;
    for (let p = li.parentElement; p && p !== nav; p = p.parentElement) {
      if (p.tagName === 'UL') depth += 1;
    }
    return {text: a ? text(a) : '', target: a ? decodeURIComponent(
      (a.getAttribute('href') || '').replace(/^#/, '')) : '',
      depth, nested: !!li.querySelector(':scope > ul')};
  }) : [];
  return {headings, objects, entries};
}"""


@pytest.mark.parametrize("page_name", API_PAGES)
def test_contents_panel_matches_the_headings(
    context: BrowserContext, edition_url: str, edition: str, page_name: str
):
    page, _ = harness.open_page(context, urljoin(edition_url, page_name))
    found = page.evaluate(READ)
    page.close()
    headings, objects, entries = found["headings"], found["objects"], found["entries"]
    assert entries, f"{page_name}: no Contents panel"
    section_ids = {h["id"] for h in headings}
    listed = [e for e in entries if e["target"] in section_ids]
    # Every heading is listed, in order, by its own text.
    assert [(e["text"], e["target"]) for e in listed] == [
        (h["text"], h["id"]) for h in headings
    ], f"{page_name}: the Contents panel does not list the headings"
    # Nothing else: every other entry is a documented object.
    known = section_ids | set(objects)
    stray = [e["text"] for e in entries if e["target"] not in known]
    assert not stray, f"{page_name}: entries that are no heading or object: {stray}"
    # "Tutorials that use it": once, the last section, nothing under it.
    tutorials = TUTORIALS[edition]
    named = [h for h in headings if h["text"] == tutorials]
    assert len(named) == 1, f"{page_name}: {len(named)} '{tutorials}' headings"
    assert headings[-1]["text"] == tutorials, f"{page_name}: not the last section"
    (entry,) = [e for e in entries if e["text"] == tutorials]
    assert not entry["nested"], f"{page_name}: objects nested under '{tutorials}'"
    top = min(e["depth"] for e in entries)
    assert entry["depth"] == top, f"{page_name}: '{tutorials}' is nested"


def test_sidebar_shows_whole_titles(
    context: BrowserContext, edition_url: str, edition: str
):
    page, _ = harness.open_page(context, urljoin(edition_url, API_PAGES[0]))
    cut = page.evaluate(
        """() => [...document.querySelectorAll('.bd-sidebar-primary nav a')]
        .filter((a) => a.offsetParent !== null)
        .filter((a) => {
          const box = a.getBoundingClientRect();
          const side = a.closest('.bd-sidebar-primary').getBoundingClientRect();
          const range = document.createRange();
          range.selectNodeContents(a);
          const text = range.getBoundingClientRect();
          return a.scrollWidth > a.clientWidth + 1 || text.right > side.right + 0.5
            || text.right > box.right + 0.5;
        })
        .map((a) => a.textContent.trim())"""
    )
    links = page.locator(".bd-sidebar-primary nav a").count()
    page.close()
    assert links >= len(API_PAGES), "the sidebar lists too few pages"
    assert cut == [], f"sidebar links cut off at 1280 px: {cut}"


def test_a_custom_function_reads_as_it_is_called(
    context: BrowserContext, edition_url: str
):
    page, _ = harness.open_page(
        context, urljoin(edition_url, "reference/masked_linear.html")
    )
    lines = page.evaluate(
        """() => Object.fromEntries(
          [...document.querySelectorAll('dl.py > dt[id^="autograd_notes.Masked"]')]
            .map((dt) => {
              const copy = dt.cloneNode(true);
              copy.querySelectorAll('a.headerlink, .viewcode-link')
                .forEach((e) => e.remove());
              return [dt.id, copy.textContent.replace(/\\s+/g, ' ').trim()];
            }))"""
    )
    page.close()
    cls = lines["autograd_notes.MaskedLinearFunction"]
    assert "*args" not in cls, cls
    assert "**kwargs" not in cls, cls
    assert re.fullmatch(r"class autograd_notes\.MaskedLinearFunction(\[.*\])?", cls)
    apply = lines["autograd_notes.MaskedLinearFunction.apply"]
    assert apply == "classmethod apply(input, weight, mask, bias, mode)", apply
