"""The checks of the browser suite, as functions that return lists of problems.

The tests in this folder call them on the built site and assert ``== []``;
``test_negative.py`` calls the same functions on a copy of the site with a
deliberately broken page and asserts that the defect is reported. Nothing here
asserts, so a check that silently stopped finding anything would show up there.
The site, the server and the browser they run in are ``harness.py``'s.

* :func:`axe_problems` runs axe-core in the page (serious and critical only).
* :func:`check_links` crawls the served HTML for dead local links/anchors.
* :func:`search_results`, :func:`thumbnail_problems`,
  :func:`download_problems` and :func:`copied_text` drive specific features.
* :func:`switcher_problems`, :func:`english_prose` and
  :func:`interface_strings` check what is particular to a translated edition.
* :class:`PageChecks` runs every per-page check from one load of the page.
"""

from __future__ import annotations

import ast
import functools
import html
import io
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urljoin, urlsplit

from autograd_site.cjk import HAN, HAN_CHARACTER
from harness import (
    EDITIONS,
    LANGUAGES,
    LOCAL_HOST,
    NAMES,
    Visit,
    block_external,
    fetch,
    is_local,
    open_page,
)

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        Locator,
        Page,
    )


# -- math ------------------------------------------------------------------------------
def math_problems(page: Page, visit: Visit) -> list[str]:
    """What is wrong with a page's math: MathJax (from ``_static``, put there by
    sphinx-mathjax-offline) not loaded or loaded from another host, TeX left
    untypeset or typeset as an error, or a request failing once MathJax asked
    for its fonts. A page without math has none of these."""
    if not page.locator(".math").count():
        return []
    page.wait_for_function(
        "() => window.MathJax !== undefined && MathJax.startup !== undefined"
        " && MathJax.startup.promise !== undefined",
        timeout=15_000,
    )
    page.evaluate("() => MathJax.startup.promise")
    problems = [f"math left as TeX: {tex}" for tex in page.evaluate(UNRENDERED_JS)]
    loaded_before = visit.problems()
    # The fonts MathJax asked for, loaded or failed (a promise, not "network
    # idle", which a busy machine or a long page may not reach in time).
    page.evaluate("() => document.fonts.ready.then(() => true)")
    problems += [p for p in visit.problems() if p not in loaded_before]
    if not page.locator("mjx-container").count():
        problems.append("MathJax rendered nothing")
    problems += [
        f"TeX error: {e}" for e in page.locator("mjx-merror").all_inner_texts()
    ]
    mathjax_urls = page.evaluate(
        "() => performance.getEntriesByType('resource').map(e => e.name)"
        ".filter(u => /mathjax/i.test(u))"
    )
    if not mathjax_urls:
        problems.append("MathJax was not loaded")
    problems += [
        f"MathJax from another host: {u}" for u in mathjax_urls if not is_local(u)
    ]
    return problems


UNRENDERED_JS = """() => [...document.querySelectorAll('.math')]
  .filter(m => m.querySelector('mjx-container') === null
               && m.closest('mjx-container') === null)
  .map(m => m.textContent)"""


# -- accessibility -------------------------------------------------------------------


@functools.cache
def axe_source() -> str:
    """axe-core's browser bundle, as shipped by the axe-playwright-python wheel."""
    return (
        resources.files("axe_playwright_python")
        .joinpath("axe.min.js")
        .read_text(encoding="utf-8")
    )


# Each round lets the next frame run first (a script may start a transition
# from requestAnimationFrame), then waits for every animation running then:
# CSS transitions and animations, on pseudo-elements too (::before, ::after),
# which document.getAnimations() lists. Endless ones (a spinner) and paused
# ones never finish and are not waited for; nor is a frame in a hidden page,
# which draws none. Rounds go on (50 at most) while finishing one starts another.
SETTLE_JS = """async () => {
  const frame = () => new Promise(done => document.hidden
    ? done() : requestAnimationFrame(() => done()));
  for (let round = 0; round < 50; round++) {
    await frame();
    const running = document.getAnimations().filter(a =>
      a.playState === 'running' && a.effect
      && a.effect.getComputedTiming().iterations !== Infinity);
    if (running.length === 0) return;
    await Promise.all(running.map(a => a.finished.catch(() => null)));
  }
}"""


def settle(page: Page) -> None:
    """Wait until no CSS transition or animation is running (after a page
    loads, a colour-mode change, a scroll that moves a fade): read a value
    that animates only after this, never mid-way."""
    page.evaluate(SETTLE_JS)


# The rules whose outcome depends on colours: all that changes between the
# light and the dark scheme of the same page.
COLOUR_RULES = ("color-contrast", "link-in-text-block")


def run_axe(page: Page, rules: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now (transitions finished):
    every rule axe enables by default, or only ``rules``."""
    settle(page)
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    options: dict[str, Any] = {"resultTypes": ["violations"]}
    if rules:
        options["runOnly"] = {"type": "rule", "values": list(rules)}
    result: list[dict[str, Any]] = page.evaluate(
        "async options => (await axe.run(document, options)).violations", options
    )
    return result


IMPACTS = ("serious", "critical")


def _axe_lines(violations: list[dict[str, Any]], impacts: tuple[str, ...]) -> list[str]:
    problems = []
    for violation in violations:
        if violation["impact"] not in impacts:
            continue
        targets = [" ".join(map(str, n["target"])) for n in violation["nodes"]]
        shown = ", ".join(targets[:3]) + (" ..." if len(targets) > 3 else "")
        problems.append(
            f"{violation['impact']} {violation['id']}: {violation['help']} "
            f"({len(targets)} element(s): {shown})"
        )
    return problems


def axe_problems(
    page: Page,
    impacts: tuple[str, ...] = IMPACTS,
    rules: tuple[str, ...] = (),
) -> list[str]:
    """One line per axe-core rule violated with one of ``impacts``."""
    return _axe_lines(run_axe(page, rules), impacts)


# -- links ---------------------------------------------------------------------------

LINK_ATTRIBUTES = {"href", "src", "poster"}
NOT_FETCHED = ("mailto:", "javascript:", "data:", "tel:", "blob:", "about:")


class _PageParser(HTMLParser):
    """Collects the references and the anchor targets of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.references: list[str] = []
        self.anchors: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (name == "name" and tag in ("a", "map")):
                self.anchors.add(value)
            elif (name in LINK_ATTRIBUTES and tag not in ("form", "meta")) or (
                name == "data" and tag == "object"
            ):
                self.references.append(value.strip())
            elif name == "srcset":
                for candidate in value.split(","):
                    if candidate.strip():
                        self.references.append(candidate.split()[0])


def _parse(markup: str) -> _PageParser:
    parser = _PageParser()
    parser.feed(markup)
    parser.close()
    return parser


@dataclass
class LinkReport:
    problems: list[str]
    external: dict[str, list[str]]  # URL -> pages linking to it


def check_links(base: str, pages: list[str]) -> LinkReport:
    """Crawl ``pages`` of the site served at ``base``: every local reference must
    be served (HTTP 200) and every ``#fragment`` must be an id/name in its target.
    References to other hosts are collected, never fetched."""
    status: dict[str, int] = {}
    parsed: dict[str, _PageParser | None] = {}  # None: not an HTML document
    problems: list[str] = []
    external: dict[str, list[str]] = {}

    def load(path_url: str) -> int:
        if path_url not in status:
            code, body, kind = fetch(path_url)
            status[path_url] = code
            is_html = code == 200 and (
                "html" in (kind or "") or path_url.endswith((".html", "/"))
            )
            parsed[path_url] = (
                _parse(body.decode("utf-8", "replace")) if is_html else None
            )
        return status[path_url]

    for page in pages:
        page_url = urljoin(base, quote(page))
        code = load(page_url)
        if code != 200 or parsed[page_url] is None:
            problems.append(f"{page}: page not served (HTTP {code})")
            continue
        for reference in parsed[page_url].references:  # type: ignore[union-attr]
            if not reference or reference.lower().startswith(NOT_FETCHED):
                continue
            target = urljoin(page_url, reference)
            parts = urlsplit(target)
            if parts.scheme in ("http", "https") and parts.hostname != LOCAL_HOST:
                external.setdefault(target, []).append(page)
                continue
            if parts.scheme not in ("http", "https"):
                problems.append(f"{page}: unexpected reference {reference!r}")
                continue
            document = parts._replace(query="", fragment="").geturl()
            code = load(document)
            if code != 200:
                problems.append(
                    f"{page}: dead link {reference!r} "
                    f"(/{unquote(parts.path.lstrip('/'))} is HTTP {code})"
                )
                continue
            fragment = unquote(parts.fragment)
            target_page = parsed[document]
            if (
                fragment
                and target_page is not None
                and fragment not in target_page.anchors
            ):
                problems.append(
                    f"{page}: missing anchor {reference!r} "
                    f"(no id or name {fragment!r} in "
                    f"/{unquote(parts.path.lstrip('/'))})"
                )
    return LinkReport(sorted(set(problems)), external)


def write_external_links(external: dict[str, list[str]], path: Path) -> None:
    """One line per external URL: the URL, a tab, the pages that link to it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"{url}\t{' '.join(sorted(set(pages)))}"
        for url, pages in sorted(external.items())
    ]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


# -- features ------------------------------------------------------------------------


def search_results(context: BrowserContext, base: str, term: str) -> list[str]:
    """The pages (relative to ``base``, the URL of an edition; no fragment) that
    the edition's search page lists, best first."""
    return search(context, base, term)[0]


def search(context: BrowserContext, base: str, term: str) -> tuple[list[str], str]:
    """What the search page of the edition at ``base`` shows for ``term``: the
    pages it lists (as :func:`search_results`) and its summary line."""
    page, visit = open_page(context, urljoin(base, "search.html?q=" + quote(term)))
    root = unquote(urlsplit(base).path)
    try:
        page.wait_for_function(
            "() => { const s = document.querySelector("
            "'#search-results .search-summary');"
            " return s !== null && s.textContent.trim() !== ''; }",
            timeout=20_000,
        )
    except Exception as error:  # playwright's TimeoutError
        raise AssertionError(
            f"the search page for {term!r} showed no result summary in 20 s: "
            f"{visit.problems()}"
        ) from error
    hrefs: list[str] = page.eval_on_selector_all(
        "#search-results ul.search li a", "links => links.map(a => a.href)"
    )
    summary = page.inner_text("#search-results .search-summary").strip()
    problems = visit.problems()
    page.close()
    if problems:
        raise AssertionError(f"the search page for {term!r} misbehaved: {problems}")
    results = []
    for href in hrefs:
        path = unquote(urlsplit(href).path)
        if not path.startswith(root):
            raise AssertionError(f"searching {term!r} offers {href}: not in {base}")
        path = path.removeprefix(root)
        if path == "" or path.endswith("/"):
            path += "index.html"
        if path not in results:
            results.append(path)
    return results, summary


THUMBNAILS_JS = """async () => {
  const problems = [];
  const links = [];
  for (const box of document.querySelectorAll('.sphx-glr-thumbcontainer')) {
    const link = box.querySelector('a');
    const name = link ? link.getAttribute('href') : box.textContent.trim();
    if (link) links.push(link.href);
    const img = box.querySelector('img');
    if (img === null) { problems.push(`${name}: no <img> in its thumbnail`); continue; }
    img.scrollIntoView();
    try { await img.decode(); } catch (e) { /* reported below */ }
    if (!(img.complete && img.naturalWidth > 0))
      problems.push(`${name}: thumbnail ${img.getAttribute('src')} did not load`);
  }
  return {problems, links};
}"""


def thumbnail_problems(page: Page, examples: list[str], index: str) -> list[str]:
    """Every thumbnail's image loaded, and every example of the gallery at
    ``index`` (the page open in ``page``) has a thumbnail. ``examples`` and
    ``index`` are relative to the edition's folder."""
    found = page.evaluate(THUMBNAILS_JS)
    problems: list[str] = list(found["problems"])
    # The edition's folder, as a URL path: the open page's path without index.
    root = unquote(urlsplit(page.url).path).removesuffix(index)
    linked = {
        unquote(urlsplit(u).path).removeprefix(root)
        for u in found["links"]
        if unquote(urlsplit(u).path).startswith(root)
    }
    folder = index.rpartition("/")[0]
    for example in examples:
        if example.rpartition("/")[0] == folder and example not in linked:
            problems.append(f"{example}: no thumbnail on {index}")
    if not found["links"]:
        problems.append(f"{index}: no thumbnails at all")
    return problems


def _content_problem(name: str, body: bytes) -> str | None:
    """Why ``body`` is not a valid file of the kind its name says, or None."""
    if not body:
        return "empty"
    try:
        if name.endswith(".py"):
            ast.parse(body.decode("utf-8"), filename=name)
        elif name.endswith(".ipynb"):
            notebook = json.loads(body)
            if not notebook.get("cells"):
                return "a notebook without cells"
        elif name.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(body)) as archive:
                if not archive.namelist():
                    return "an empty zip"
                if (bad := archive.testzip()) is not None:
                    return f"a corrupt member {bad}"
                for member in archive.namelist():
                    problem = _content_problem(member, archive.read(member))
                    if problem:
                        return f"{member} in it is {problem}"
        else:
            return "of an unexpected kind"
    except (SyntaxError, UnicodeDecodeError, ValueError, zipfile.BadZipFile) as error:
        return f"not a valid {name.rpartition('.')[2]} ({error})"
    return None


def download_problems(page: Page, expected: tuple[str, ...]) -> list[str]:
    """The page's sphinx-gallery download links: one per suffix in ``expected``,
    each served (200) with a non-empty, parseable file of that kind."""
    hrefs: list[str] = page.eval_on_selector_all(
        ".sphx-glr-download a.download", "links => links.map(a => a.href)"
    )
    problems = []
    for suffix in expected:
        if not any(urlsplit(h).path.endswith(suffix) for h in hrefs):
            problems.append(f"no {suffix} download link")
    for href in hrefs:
        name = unquote(urlsplit(href).path.rpartition("/")[2])
        code, body, _ = fetch(href)
        if code != 200:
            problems.append(f"download {name}: HTTP {code}")
        elif problem := _content_problem(name, body):
            problems.append(f"download {name}: {problem}")
    return problems


def copied_text(page: Page, block: Locator) -> str:
    """Click the copy button of the code ``block`` (a ``div.highlight``) and
    return what landed on the clipboard (needs the clipboard permissions)."""
    block.scroll_into_view_if_needed()
    block.hover()
    page.evaluate("() => navigator.clipboard.writeText('(nothing copied)')")
    block.locator("button.copybtn").click()
    page.wait_for_function(
        "async () => (await navigator.clipboard.readText()) !== '(nothing copied)'",
        timeout=10_000,
    )
    text: str = page.evaluate("() => navigator.clipboard.readText()")
    return text


def repository_links(markup: str, repository: str) -> set[str]:
    """Paths in ``repository`` that a page's "edit"/"view source" buttons name."""
    base = re.escape(repository.rstrip("/"))
    link = re.compile(rf'href="{base}/(?:edit|blob)/[^/"]+/([^"?#]+)')
    return set(link.findall(markup))


# -- editions ------------------------------------------------------------------------

HTML_LANG = re.compile(r"<html\b[^>]*?\blang=\"([^\"]*)\"", re.I)


def declared_language(markup: str) -> str | None:
    """The ``lang`` of a page's ``<html>`` element, or None without one."""
    match = HTML_LANG.search(markup)
    return match.group(1) if match else None


def page_url(base: str, edition: str, page: str) -> str:
    """The URL of ``page`` (a path within the edition) of ``edition``; ``base``
    is the URL of the site's root."""
    return urljoin(base, EDITIONS[edition] + quote(page))


def located(base: str, url: str) -> tuple[str, str] | None:
    """(edition, path within it) of a URL of the site served at ``base``, or None
    if it is not a page there. A fragment is kept as ``path#fragment``."""
    parts = urlsplit(url)
    root = urlsplit(base)
    if parts.netloc != root.netloc or not parts.path.startswith(root.path):
        return None
    path = unquote(parts.path).removeprefix(unquote(root.path))
    edition = "en"
    for name, folder in EDITIONS.items():
        if folder and path.startswith(folder):
            edition, path = name, path.removeprefix(folder)
    if path == "" or path.endswith("/"):
        path += "index.html"
    if parts.fragment:
        path += "#" + unquote(parts.fragment)
    return edition, path


# The text of a switcher is what it says to everyone: icons hidden from
# assistive technology (aria-hidden) are not part of it.
SWITCHERS_JS = """() => [...document.querySelectorAll('a.edition-switcher')].map(a => {
  const copy = a.cloneNode(true);
  copy.querySelectorAll('[aria-hidden=true]').forEach(e => e.remove());
  return {
    href: a.getAttribute('href'),
    hreflang: a.getAttribute('hreflang'),
    text: copy.textContent.replace(/\\s+/g, ' ').trim(),
    inHeader: a.closest('.bd-header-article') !== null,
    visible: a.checkVisibility({visibilityProperty: true, opacityProperty: true}),
  };
})"""

# Focus what comes right before the switcher in the tab order, so that one Tab
# reaches the switcher as it would for a reader going through the header.
FOCUS_BEFORE_JS = """(selector) => {
  const target = document.querySelector(selector);
  const focusable = [...document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex]')]
    .filter(e => e.tabIndex >= 0 && !e.disabled && !e.closest('[inert]')
                 && e.checkVisibility({visibilityProperty: true}));
  const i = focusable.indexOf(target);
  if (i === -1) return 'the switcher is not in the tab order (tabindex < 0, '
                       + 'disabled or hidden)';
  if (i === 0) { document.activeElement && document.activeElement.blur(); return ''; }
  focusable[i - 1].focus();
  return document.activeElement === focusable[i - 1] ? '' :
    'could not focus the element before the switcher';
}"""

ACTIVE_JS = """() => { const e = document.activeElement;
  return e === null ? '(nothing)' : e.outerHTML.slice(0, 160); }"""


def switcher_problems(
    page: Page, base: str, edition: str, path: str, target: str
) -> list[str]:
    """Check the language switcher of the page open in ``page`` (``path`` of
    ``edition`` on the site served at ``base``), then follow it to ``target``
    with the keyboard, as a reader does: Tab onto it, press Enter. Afterwards
    ``page`` shows wherever the link led."""
    where = f"{EDITIONS[edition]}{path}"
    switchers = page.evaluate(SWITCHERS_JS)
    problems = []
    if len(switchers) != 1:
        return [f"{where}: {len(switchers)} language switchers (a.edition-switcher)"]
    switcher = switchers[0]
    expected = (NAMES[target], LANGUAGES[target])
    if (switcher["text"], switcher["hreflang"]) != expected:
        problems.append(
            f"{where}: the switcher says {switcher['text']!r} with hreflang="
            f"{switcher['hreflang']!r}, expected {expected[0]!r}, {expected[1]!r}"
        )
    if not switcher["inHeader"]:
        problems.append(f"{where}: the switcher is not in the article header")
    if not switcher["visible"]:
        problems.append(f"{where}: the switcher is not visible")
        return problems
    # The keyboard: Tab onto it, Enter follows it.
    if failed := page.evaluate(FOCUS_BEFORE_JS, "a.edition-switcher"):
        return [*problems, f"{where}: {failed}"]
    page.keyboard.press("Tab")
    focused = page.evaluate(
        "() => document.activeElement !== null"
        " && document.activeElement.matches('a.edition-switcher')"
    )
    if not focused:
        return [
            *problems,
            f"{where}: Tab does not reach the switcher; it focuses "
            f"{page.evaluate(ACTIVE_JS)}",
        ]
    before = page.url
    page.keyboard.press("Enter")
    try:
        page.wait_for_url(lambda url: url != before, wait_until="load", timeout=15_000)
    except Exception:  # playwright's TimeoutError
        return [*problems, f"{where}: Enter on the switcher did not navigate"]
    landed = located(base, page.url)
    if landed != (target, path):
        shown = "elsewhere" if landed is None else f"{EDITIONS[landed[0]]}{landed[1]}"
        problems.append(
            f"{where}: the switcher (href={switcher['href']!r}) leads to {shown} "
            f"({page.url}), not to {EDITIONS[target]}{path}"
        )
    return problems


# -- the prose of a translated edition ---------------------------------------------

# A Han character, as the build defines it (autograd_site/cjk.py), for a JS RegExp.
HAN_CLASS = f"[{HAN}]"
# Several words of Latin letters in a row: English prose, not a name or an API.
ENGLISH_WORDS = (
    r"(?<![\p{L}\p{N}_.\-/])\p{Script=Latin}+(?:['’]\p{Script=Latin}+)?"
    r"(?:\s+\p{Script=Latin}+(?:['’]\p{Script=Latin}+)?){2,}(?![\p{L}\p{N}_(/])"
)

PROSE = (
    "p, li, h1, h2, h3, h4, h5, h6, th, td, dt, dd, figcaption, caption, "
    "summary, .admonition-title, .sd-card-title, .sd-card-text, blockquote"
)
# What is not prose: code, program output, math, keys.
NOT_PROSE = (
    "code, pre, kbd, samp, var, .highlight, .notranslate, .sphx-glr-script-out, "
    ".cell_output, .output, .math, .MathJax, mjx-container, script, style, "
    ".headerlink"
)

ENGLISH_PROSE_JS = """([prose, notProse, han, english]) => {
  const isHan = new RegExp(han, 'u');
  const isEnglish = new RegExp(english, 'u');
  const fileOrUrl = /^(\\w+:\\/\\/|www\\.)\\S+$|^[\\w.\\/-]+\\.[A-Za-z0-9]{1,5}$/;
  // The article; the search page has its search form and results instead.
  const article = document.querySelector('article.bd-article, .bd-search-container');
  if (article === null) return [{where: 'page', text: 'no article.bd-article'}];
  const found = [];
  for (const element of article.querySelectorAll(prose)) {
    if (!element.checkVisibility({visibilityProperty: true})
        && element.closest('details:not([open])') === null) continue;
    if (element.closest(notProse) !== null) continue;
    const copy = element.cloneNode(true);
    // Prose inside prose (a paragraph in a list item) is checked on its own.
    copy.querySelectorAll(prose).forEach(e => e.remove());
    copy.querySelectorAll(notProse).forEach(e => e.remove());
    copy.querySelectorAll('a').forEach(a => {
      const text = a.textContent.trim();
      if (fileOrUrl.test(text) || text === a.getAttribute('href')) a.remove();
    });
    const text = copy.textContent.replace(/\\s+/g, ' ').trim();
    if (text && !isHan.test(text) && isEnglish.test(text)) {
      const id = element.closest('[id]');
      found.push({where: element.tagName.toLowerCase()
                    + (id ? ' in #' + id.id : ''), text});
    }
  }
  return found;
}"""


def english_prose(page: Page) -> list[str]:
    """The prose elements of the page's article that read as English: several
    Latin words in a row and not one Chinese character, once code, output,
    math, keys and file names or URLs as link text are taken out. (A summary
    of a closed ``<details>`` counts as visible: readers see it.)"""
    found = page.evaluate(
        ENGLISH_PROSE_JS, [PROSE, NOT_PROSE, HAN_CLASS, ENGLISH_WORDS]
    )
    return [f"{f['where']}: {f['text'][:200]!r}" for f in found]


INTERFACE_JS = """([han]) => {
  const isHan = new RegExp(han, 'u');
  const article = document.querySelector('article.bd-article');
  // Page titles in the navigation and the table of contents are content, as
  // are code and keys; language names are in their own language on purpose.
  const content = '.bd-docs-nav a, .bd-toc-nav a, .prev-next-title, code, pre, kbd,'
    + ' script, style, noscript, template, [hidden]';
  // Bootstrap moves a tooltip's title into data-bs-original-title.
  const attributes = ['title', 'aria-label', 'placeholder', 'alt', 'data-bs-title',
                      'data-bs-original-title', 'data-tooltip', 'aria-description'];
  // Shown on demand: dropdown menus, the search dialog, tooltips.
  const onDemand = '.dropdown-menu, .search-button__wrapper, dialog, .copybtn';
  const found = new Map();
  const describe = e => {
    let name = e.tagName.toLowerCase();
    if (e.id) name += '#' + e.id;
    else if (e.classList.length) name += '.' + [...e.classList].slice(0, 2).join('.');
    const owner = e.parentElement
      && e.parentElement.closest('[id], header, nav, footer');
    return owner ? name + ' in ' + (owner.id ? '#' + owner.id
                                            : owner.tagName.toLowerCase()) : name;
  };
  const note = (text, how, e) => {
    text = text.replace(/\\s+/g, ' ').trim();
    if (!text || isHan.test(text) || !/[A-Za-z]{2}/.test(text)) return;
    const lang = e.closest('[lang]');
    if (lang && !lang.lang.toLowerCase().startsWith('zh')) return;
    const key = text + '\\u0000' + how;
    if (!found.has(key)) found.set(key, {text, how, where: describe(e)});
  };
  const shown = e => e.checkVisibility({visibilityProperty: true})
                     || e.closest(onDemand) !== null;
  for (const e of document.querySelectorAll('body *')) {
    if (e.closest(content) !== null) continue;
    const inArticle = article !== null && article.contains(e);
    if (inArticle && e.closest('.copybtn') === null) continue;
    if (!shown(e)) continue;
    for (const name of attributes) {
      const value = e.getAttribute(name);
      if (value) note(value, name, e);
    }
    if (inArticle) continue;
    for (const child of e.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) note(child.textContent, 'text', e);
    }
  }
  return [...found.values()];
}"""


FILE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,6}")
"""A file type (``.pdf``), as a download menu names it: not an English word."""


def interface_strings(page: Page) -> list[dict[str, str]]:
    """The strings of the page's interface (everything but the article's
    content: header, sidebars, footer, buttons and their tooltips and labels,
    the search field, the copy buttons) that hold Latin words and no Chinese
    character. Each: ``text``, ``how`` (``text`` or the attribute) and
    ``where`` (the element)."""
    found: list[dict[str, str]] = page.evaluate(INTERFACE_JS, [HAN_CLASS])
    return found


@functools.cache
def theme_translations(language: str) -> dict[str, str]:
    """English message -> translation, from the site's own interface catalogs
    (``docs/locale/<language>/LC_MESSAGES/{sphinx,booktheme}.po``, which come
    first) and the catalogs that Sphinx and the theme (pydata-sphinx-theme,
    sphinx-book-theme) ship for ``language`` (``zh_CN``, falling back to
    ``zh`` as gettext does). Only messages with a translation, one with
    Chinese in it (some catalogs "translate" a message into itself)."""
    from importlib.util import find_spec

    from babel.messages.pofile import read_po

    wanted = {language, language.partition("_")[0]}
    ours = Path(__file__).resolve().parents[1] / "docs" / "locale" / language
    catalogs = [ours / "LC_MESSAGES" / f"{name}.po" for name in ("sphinx", "booktheme")]
    for package in ("sphinx", "pydata_sphinx_theme", "sphinx_book_theme"):
        spec = find_spec(package)
        if spec is not None and spec.origin is not None:
            catalogs += sorted(Path(spec.origin).parent.rglob("LC_MESSAGES/*.po"))
    found: dict[str, str] = {}
    for po in catalogs:
        if po.parent.parent.name in wanted and po.exists():
            with po.open("rb") as f:
                for message in read_po(f):
                    msgid, msgstr = message.id, message.string
                    if not isinstance(msgid, str) or not isinstance(msgstr, str):
                        continue  # plural forms: not interface labels
                    if msgid and HAN_CHARACTER.search(msgstr) and not message.fuzzy:
                        found.setdefault(html.unescape(msgid), msgstr)
    return found


PLACEHOLDER = re.compile(r"%\((\w+)\)s|%s")


@functools.cache
def _templates(language: str) -> list[tuple[re.Pattern[str], str]]:
    """The messages with placeholders (``Copyright %(copyright)s``), as patterns."""
    templates = []
    for msgid, msgstr in theme_translations(language).items():
        if PLACEHOLDER.search(msgid):
            parts = PLACEHOLDER.split(msgid)[::2]  # the text between placeholders
            if not re.search(r"[A-Za-z]{3}", "".join(parts)):
                continue  # "%s", "%s: %s": would match anything
            pattern = "(.+?)".join(re.escape(part) for part in parts)
            templates.append((re.compile(pattern), msgstr))
    return templates


def theme_translation(text: str, language: str) -> str | None:
    """The theme's (or Sphinx's) Chinese for an interface string, or None. A
    trailing ellipsis or colon is not part of the message."""
    catalog = theme_translations(language)
    for candidate in (text, text.rstrip(" .…:：")):
        if candidate in catalog:
            return catalog[candidate]
    for pattern, translation in _templates(language):
        if pattern.fullmatch(text):
            return translation
    return None


def interface_problems(
    strings: list[dict[str, str]], language: str
) -> tuple[list[str], list[str]]:
    """Sort what :func:`interface_strings` found into (problems, untranslated):
    English strings that the theme (or Sphinx) has a translation for into
    ``language``, and English strings it has none for (to be reported)."""
    problems, untranslated = [], []
    for found in strings:
        text = found["text"]
        if FILE_SUFFIX.fullmatch(text):
            continue  # ".rst", ".pdf": the download menu's file types
        line = f"{found['how']} {text!r} ({found['where']})"
        translation = theme_translation(text, language)
        if translation is not None:
            problems.append(f"{line}: the theme translates it {translation!r}")
        else:
            untranslated.append(line)
    return problems, untranslated


# -- every per-page check, from one load of the page -------------------------------

CHECKS = (
    "load",
    "language",
    "math",
    "axe",
    "switcher",
    "prose",
    "interface",
    "untranslated",
)
"""The keys of :func:`check_page`'s report; ``prose`` and ``interface`` are
checked on translated editions only, ``untranslated`` is not a failure."""


def check_page(
    context: BrowserContext,
    base: str,
    edition: str,
    path: str,
    *,
    api_pages: frozenset[str] = frozenset(),
    on_load: Callable[[Page, Visit], None] | None = None,
) -> dict[str, list[str]]:
    """Every per-page check of page ``path`` of ``edition`` (``base``: the URL
    of the site's root), from one load of the page in ``context`` (a light
    colour scheme); one list of problems per key of :data:`CHECKS`.
    ``on_load`` is called with the page as loaded, before any check touches
    it (to take other measurements from the same load).

    What went wrong while the page loaded and settled (``load``);
    ``<html lang>`` (``language``); the math typeset by MathJax, offline
    (``math``, :func:`math_problems`); on a translated edition, the English prose
    of the article (``prose``, not on ``api_pages``) and the interface strings
    in English (``interface`` where the theme has a translation,
    ``untranslated`` where it has none); axe-core, every rule in the light
    scheme, then the colour rules in the dark one (``axe``); and last, as it
    leaves the page, the language switcher followed with the keyboard to the
    other edition and back (``switcher``).
    """
    report: dict[str, list[str]] = {key: [] for key in CHECKS}
    page, visit = open_page(context, page_url(base, edition, path))
    page.wait_for_timeout(200)  # late errors from deferred scripts
    report["load"] = visit.problems()
    if on_load is not None:
        on_load(page, visit)

    declared = page.evaluate("() => document.documentElement.getAttribute('lang')")
    if declared != LANGUAGES[edition]:
        report["language"].append(
            f'<html lang="{declared}">, expected lang="{LANGUAGES[edition]}"'
        )
    report["math"] = math_problems(page, visit)
    if edition != "en":
        if path not in api_pages:
            report["prose"] = english_prose(page)
        found = interface_strings(page)
        report["interface"], report["untranslated"] = interface_problems(found, edition)

    # axe: every rule in the light scheme, the colour rules in the dark one
    # (the theme follows the reader's system setting: default_mode "auto").
    for scheme, rules in (("light", ()), ("dark", COLOUR_RULES)):
        page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
        page.wait_for_selector(f"html[data-theme={scheme}]", state="attached")
        report["axe"] += [f"{scheme}: {p}" for p in axe_problems(page, rules=rules)]

    (target,) = (e for e in EDITIONS if e != edition)
    report["switcher"] = switcher_problems(page, base, edition, path, target)
    if located(base, page.url) == (target, path):  # there: now back
        report["switcher"] += switcher_problems(page, base, target, path, edition)
    page.close()
    return report


class PageChecks:
    """Every per-page check (:func:`check_page`), run once per page of each
    edition, on the first request, and kept for the session: the tests of one
    page (loads cleanly, accessible, language, switcher, Chinese prose) all
    read one report, so each page loads once for all of them. ``on_load``
    (``(edition, page_path, page, visit)``) is given each page as loaded, for
    other measurements from the same load (``views.PageViews.keep``)."""

    def __init__(
        self,
        browser: Browser,
        base: str,
        viewport: dict[str, int],
        *,
        api_pages: frozenset[str] = frozenset(),
        on_load: Callable[[str, str, Page, Visit], None] | None = None,
        wait: Callable[[str, str], None] | None = None,
    ) -> None:
        self.wait = wait  # (edition, page_path): waits for a report made elsewhere
        self.browser = browser
        self.base = base
        self.viewport = viewport
        self.api_pages = api_pages
        self.on_load = on_load  # (edition, page_path, page, visit), as loaded
        self.reports: dict[tuple[str, str], dict[str, list[str]]] = {}

    def _context(self, scheme: str) -> BrowserContext:
        context = self.browser.new_context(
            viewport=self.viewport,  # type: ignore[arg-type]
            color_scheme=scheme,  # type: ignore[arg-type]
        )
        block_external(context)
        return context

    def __call__(self, edition: str, page_path: str) -> dict[str, list[str]]:
        key = (edition, page_path)
        if self.wait is not None:
            self.wait(edition, page_path)
        if key not in self.reports:
            context = self._context("light")
            hook = self.on_load and functools.partial(self.on_load, edition, page_path)
            try:
                self.reports[key] = check_page(
                    context,
                    self.base,
                    edition,
                    page_path,
                    api_pages=self.api_pages,
                    on_load=hook,
                )
            except Exception as error:  # every test of the page says so, once
                stopped = f"the checks of the page stopped: {error!r}"
                self.reports[key] = {check: [stopped] for check in CHECKS}
                self.reports[key]["untranslated"] = []
            finally:
                context.close()
        return self.reports[key]
