"""One load of each page per width, shared by the layout and picture checks.

``test_layout.py`` and ``test_figures.py`` both look at every page of both
editions on a phone (390 px) and on a desktop (1280 px). :class:`PageViews`
loads each (edition, page, width) once, in one browser context per width kept
for the session, and takes every measurement both files need from that load:

* ``load``: what went wrong while the page loaded (:meth:`harness.Visit.problems`);
* ``layout``: :func:`layout`, what overflows the viewport or its box (read
  by ``test_layout.py``);
* ``pictures``: :func:`pictures`, every ``<img>`` as the page shows it
  (read by ``test_figures.py``).

Nothing here asserts: the tests judge the measurements.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import harness
import webcheck
from playwright.sync_api import Browser, BrowserContext, Page

WIDTHS = {"phone": 390, "desktop": 1280}
HEIGHTS = {"phone": 844, "desktop": 800}

# The article's output blocks: what a page's code printed.
OUTPUTS = ".sphx-glr-script-out pre, .cell_output pre"
# What the computer printed, which may wrap on a desktop: outputs, doctest
# sessions, shell lines (custom.css). Python code never wraps.
PRINTED = OUTPUTS + ", .doctest pre, .highlight-bash pre"
# From this width the column holds ruff's 88 characters of code (custom.css).
DESKTOP = 1200

LAYOUT_JS = r"""
({width, printed, desktop}) => {
  const found = {page: [], headings: [], tables: [], blocks: []};
  const doc = document.documentElement;
  const article = document.querySelector('.bd-article') || document.body;
  const slack = 1;  // sub-pixel rounding
  const shown = el => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0
      && getComputedStyle(el).visibility !== 'hidden';
  };
  const name = el => {
    const id = el.id ? '#' + el.id : '';
    const cls = typeof el.className === 'string' && el.className.trim()
      ? '.' + el.className.trim().split(/\s+/).slice(0, 2).join('.') : '';
    const text = (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 50);
    return `<${el.tagName.toLowerCase()}${id}${cls}> "${text}"`;
  };
  // The nearest ancestor that scrolls sideways (or clips), below <body>.
  const scroller = el => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(a).overflowX))
        return a;
    }
    return null;
  };
  const right = el => el.getBoundingClientRect().right + window.scrollX;
  const left = el => el.getBoundingClientRect().left + window.scrollX;

  // -- the page
  const pageWidth = Math.max(doc.scrollWidth, document.body.scrollWidth);
  found.pageWidth = pageWidth;
  if (pageWidth > width + slack) {
    const culprits = [...document.body.querySelectorAll('*')]
      .filter(el => shown(el) && right(el) > width + slack && !scroller(el)
        && !(left(el) <= 0 && right(el) >= pageWidth - slack))  // the page's own width
      .filter((el, _, all) => !all.includes(el.parentElement))
      .sort((a, b) => right(b) - right(a))
      .slice(0, 3)
      .map(el => `${name(el)} reaches ${Math.round(right(el))} px`);
    found.page.push(
      `scrolls sideways: ${pageWidth} px wide at ${width} px (${culprits.join('; ')})`);
  }
  for (const el of [doc, document.body]) {
    const overflow = getComputedStyle(el).overflowX;
    if (overflow === 'hidden' || overflow === 'clip')
      found.page.push(`<${el.tagName.toLowerCase()}> clips what overflows`
        + ` (overflow-x: ${overflow})`);
  }

  // -- headings: the box and every line of its text within the viewport
  for (const h of article.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
    if (!shown(h)) continue;
    const range = document.createRange();
    range.selectNodeContents(h);
    const text = range.getBoundingClientRect();
    const box = h.getBoundingClientRect();
    const lo = Math.min(box.left, text.left) + window.scrollX;
    const hi = Math.max(box.right, text.right) + window.scrollX;
    if (lo < -slack || hi > width + slack)
      found.headings.push(`${name(h)} spans ${Math.round(lo)}..${Math.round(hi)} px`
        + ` of a ${width} px viewport`);
    else if (h.scrollWidth > h.clientWidth + slack || text.right > box.right + slack)
      found.headings.push(`${name(h)} overflows its box`
        + ` (${Math.round(text.right - box.left)} px of text`
        + ` in ${Math.round(box.width)} px)`);
  }

  // -- tables: fit, or scroll in a box of their own with the cue
  for (const table of article.querySelectorAll('table')) {
    if (!shown(table) || table.closest('.sphx-glr-script-out, .cell_output')) continue;
    const box = scroller(table);
    const room = box ? box.clientWidth : article.clientWidth;
    const stacked = table.classList.contains('stacked');
    if (stacked) {
      for (const cell of table.querySelectorAll('tbody td')) {
        if (!cell.textContent.trim()) continue;
        const label = getComputedStyle(cell, '::before').content;
        if (!cell.dataset.label || ['none', 'normal', '""'].includes(label))
          found.tables.push(`${name(table)}: stacked cell ${name(cell)} has no label`);
      }
    }
    // a column's header breaks no word ("Le/ar/n"): one line box per word
    for (const th of stacked ? [] : table.querySelectorAll('th')) {
      const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const word of node.data.matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index + word[0].length);
          const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
          if (tops.size > 1)
            found.tables.push(`${name(table)}: the header "${word[0]}" breaks inside`
              + ` the word, over ${tops.size} lines`);
        }
      }
    }
    if (table.getBoundingClientRect().width <= room + slack
        && right(table) <= width + slack) continue;  // it fits
    if (!box || !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) {
      const wide = Math.round(table.getBoundingClientRect().width);
      found.tables.push(`${name(table)} is ${wide} px wide,`
        + ` in no box of its own that scrolls`);
      continue;
    }
    if (right(box) > width + slack || left(box) < -slack)
      found.tables.push(`${name(table)}: its scroll box is not within the viewport`);
    const wrapper = box.closest('.table-scroll');
    const cue = wrapper && wrapper.querySelector('.table-scroll-cue');
    if (!wrapper || !wrapper.classList.contains('overflowing') || !cue || !shown(cue)
        || !cue.textContent.trim())
      found.tables.push(`${name(table)} scrolls in its box without a visible caption`);
    const edge = box.scrollLeft > 0 ? '::before' : '::after';
    const fade = wrapper && getComputedStyle(wrapper, edge);
    if (!fade || fade.backgroundImage === 'none' || Number(fade.opacity) === 0)
      found.tables.push(`${name(table)} scrolls in its box without the fade`);
  }

  // -- code, outputs, display math. A block keeps its lines (white-space: pre),
  // except what the computer printed, on a desktop. On a desktop every <pre>
  // fits the column; narrower, a block wider than its box scrolls there and
  // shows it: the shadow at the edge (a background attached 'local').
  for (const el of article.querySelectorAll('pre, mjx-container[display="true"]')) {
    if (!shown(el)) continue;
    const style = getComputedStyle(el);
    const pre = el.tagName === 'PRE';
    const wraps = style.whiteSpace !== 'pre';
    if (pre && wraps && !(width >= desktop && el.matches(printed)))
      found.blocks.push(`${name(el)} wraps its lines (${style.whiteSpace})`);
    if (el.scrollWidth <= el.clientWidth + slack && right(el) <= width + slack)
      continue;
    if (pre && width >= desktop)
      found.blocks.push(`${name(el)}: a line is ${el.scrollWidth} px wide in a`
        + ` ${el.clientWidth} px block`);
    else if (!['auto', 'scroll'].includes(style.overflowX)
        || !style.backgroundImage.includes('radial-gradient')
        || !style.backgroundAttachment.includes('local'))
      found.blocks.push(`${name(el)}: ${el.scrollWidth} px in a ${el.clientWidth} px`
        + ` box, with no cue that it scrolls`);
  }
  return found;
}
"""


def layout(page: Page, width: int) -> dict[str, Any]:
    """The layout report of the loaded ``page`` (``width``: its viewport's),
    once its transitions have finished (the table fade's opacity is read)."""
    webcheck.settle(page)
    result: dict[str, Any] = page.evaluate(
        LAYOUT_JS, {"width": width, "printed": PRINTED, "desktop": DESKTOP}
    )
    return result


IMAGES_JS = """() => [...document.querySelectorAll('img')].map((img) => {
  const box = img.getBoundingClientRect();
  const link = img.closest('a[href]');
  const card = img.closest('.sphx-glr-thumbcontainer');
  const figure = img.closest('.graph-figure') || img.closest('a') || img;
  const legend = figure.nextElementSibling;
  return {
    src: img.src,
    srcset: img.getAttribute('srcset') || '',
    alt: img.getAttribute('alt'),
    hidden: img.getAttribute('aria-hidden') === 'true'
      || img.getAttribute('role') === 'presentation',
    width: box.width,
    right: box.right,
    visible: box.width > 0 && box.height > 0
      && getComputedStyle(img).visibility !== 'hidden',
    link: link ? link.href : null,
    card: card ? {
      href: card.querySelector('a') ? card.querySelector('a').href : '',
      number: (card.querySelector('.card-number') || {}).textContent || '',
      title: (card.querySelector('.sphx-glr-thumbnail-title') || {}).textContent || '',
    } : null,
    legend: legend && legend.matches('p.graph-legend') ? legend.innerText : null,
  };
})"""


def pictures(page: Page) -> list[dict[str, Any]]:
    """Every ``<img>`` of the loaded ``page``: its sources, alt text, box,
    link, card and legend (see :data:`IMAGES_JS`)."""
    found: list[dict[str, Any]] = page.evaluate(IMAGES_JS)
    return found


def sized_context(browser: Browser, size: str) -> BrowserContext:
    """A context like a reader's at ``size``: a phone (touch, the page's
    ``<meta name="viewport">`` honoured) or a desktop window."""
    phone = size == "phone"
    context = browser.new_context(
        viewport={"width": WIDTHS[size], "height": HEIGHTS[size]},
        is_mobile=phone,
        has_touch=phone,
        device_scale_factor=2 if phone else 1,
        color_scheme="light",
    )
    harness.block_external(context)
    return context


class PageViews:
    """Each page of the site at each width (``"phone"``, ``"desktop"``), loaded
    once on the first request and kept for the session: the four layout tests
    and the picture test of one page and width read one view.

    A page already loaded elsewhere in a context like :func:`sized_context`'s
    can hand its view over with :meth:`keep` (``PageChecks`` does, for the
    desktop: its context is a 1280 x 800 window in the light scheme too), so
    that the page is not loaded again for it.
    """

    def __init__(
        self,
        browser: Browser,
        base: str,
        *,
        wait: Callable[[str, str], None] | None = None,
    ) -> None:
        self.browser = browser
        self.base = base
        self.wait = wait  # (edition, path): waits for a view measured elsewhere
        self.contexts: dict[str, BrowserContext] = {}
        self.views: dict[tuple[str, str, str], dict[str, Any]] = {}

    def context(self, size: str) -> BrowserContext:
        if size not in self.contexts:
            self.contexts[size] = sized_context(self.browser, size)
        return self.contexts[size]

    @staticmethod
    def measure(page: Page, visit: harness.Visit, size: str) -> dict[str, Any]:
        """The view of the loaded ``page`` at ``size``."""
        return {
            "layout": layout(page, WIDTHS[size]),
            "pictures": pictures(page),
            "load": visit.problems(),
        }

    def __call__(self, edition: str, path: str, size: str) -> dict[str, Any]:
        """``{"load": [...], "layout": {...}, "pictures": [...]}`` of page
        ``path`` of ``edition`` at ``size``."""
        key = (edition, path, size)
        if self.wait is not None:
            self.wait(edition, path)
        if key not in self.views:
            url = webcheck.page_url(self.base, edition, path)
            page, visit = harness.open_page(self.context(size), url)
            try:
                self.views[key] = self.measure(page, visit, size)
            finally:
                page.close()
        return self.views[key]

    def keep(
        self, edition: str, path: str, size: str, page: Page, visit: harness.Visit
    ) -> None:
        """Measure and keep the view of a page loaded elsewhere, in a context
        like ``sized_context(browser, size)``'s. If measuring it fails, nothing
        is kept: the first request loads the page anew, and its test reports
        the failure."""
        key = (edition, path, size)
        if key not in self.views:
            with contextlib.suppress(Exception):  # reported by its own load
                self.views[key] = self.measure(page, visit, size)

    def close(self) -> None:
        for context in self.contexts.values():
            context.close()
