"""The checks of the browser suite, as functions that return lists of problems.

The tests in this folder call them on the built site and assert ``== []``;
``test_negative.py`` calls the same functions on a copy of the site with a
deliberately broken page and asserts that the defect is reported. Nothing here
asserts, so a check that silently stopped finding anything would show up there.

* :func:`serve` serves a folder on 127.0.0.1 (an ephemeral port, a thread).
* :func:`launch_chromium` starts Debian's Chromium through Playwright, with the
  flags that keep it from calling home on a closed network.
* :func:`open_page` loads a page while recording console errors, uncaught
  exceptions, failed requests, responses >= 400 and every request to a host
  other than 127.0.0.1 (those are aborted: the tests never touch the network).
* :func:`axe_problems` runs axe-core in the page (serious and critical only).
* :func:`link_problems` crawls the served HTML for dead local links/anchors.
* :func:`search_results`, :func:`thumbnail_problems`,
  :func:`download_problems` and :func:`copied_text` drive specific features.
"""

from __future__ import annotations

import ast
import functools
import html
import io
import json
import os
import re
import shutil
import threading
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urljoin, urlsplit

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        Locator,
        Page,
        Playwright,
        Route,
    )

LOCAL_HOST = "127.0.0.1"

ContextFactory = Callable[..., "BrowserContext"]

# Folders of the built site that hold assets, not pages a reader navigates to
# (_static also holds the theme's Jinja macro files, which end in .html).
ASSET_DIRS = {"_static", "_sources", "_downloads", "_images"}

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A second wall behind the per-page routes: the browser resolves no host
    # but 127.0.0.1, so nothing it does on its own can leave the machine.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]

INSTALL_CHROMIUM = (
    "Chromium not found: the browser tests drive Debian's Chromium. Install it "
    "with `apt-get install -y chromium` (or point $CHROMIUM at a Chromium binary)."
)


# -- the site ----------------------------------------------------------------------


def discover_pages(site: Path) -> list[str]:
    """Every HTML page of the built site, as a path relative to it (posix)."""
    pages = []
    for path in site.rglob("*.html"):
        parts = path.relative_to(site).parts
        if parts[0] in ASSET_DIRS or any(p.startswith(".") for p in parts):
            continue
        pages.append(path.relative_to(site).as_posix())
    return sorted(pages)


def example_pages(site: Path) -> list[str]:
    """The pages sphinx-gallery generated from an example script."""
    return [
        page
        for page in discover_pages(site)
        if "sphx-glr-example-title" in (site / page).read_text(encoding="utf-8")
    ]


def gallery_indexes(site: Path) -> list[str]:
    """The index pages of the galleries: an index.html with thumbnails beside
    example pages (not the mini-galleries of "Examples using ..." sections)."""
    folders = {page.rpartition("/")[0] for page in example_pages(site)}
    return [
        page
        for page in discover_pages(site)
        if page.rpartition("/")[2] == "index.html"
        and page.rpartition("/")[0] in folders
        and 'class="sphx-glr-thumbcontainer' in (site / page).read_text("utf-8")
    ]


MATH = re.compile(r'class="math[ "]')


def math_pages(site: Path) -> list[str]:
    """Pages with LaTeX math (rendered by MathJax in the browser)."""
    return [
        page
        for page in discover_pages(site)
        if MATH.search((site / page).read_text(encoding="utf-8"))
    ]


def prompt_pages(site: Path) -> list[str]:
    """Pages with a ``>>>`` code block (Pygments marks the prompt ``gp``)."""
    marker = '<span class="gp">&gt;&gt;&gt;'
    return [
        page
        for page in discover_pages(site)
        if not page.startswith("_modules/")
        and marker in (site / page).read_text(encoding="utf-8")
    ]


def article_text(markup: str) -> str:
    """The visible text of a page's article (without navigation and footer)."""
    start = markup.find("<article")
    end = markup.rfind("</article>")
    if start != -1 and end != -1:
        markup = markup[start:end]
    markup = re.sub(r"<(script|style)\b.*?</\1>", " ", markup, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


# -- serving -------------------------------------------------------------------------


class _QuietHandler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a page loads ~30 files
    extensions_map = {  # noqa: RUF012 - the base class declares it this way
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".css": "text/css",
        ".svg": "image/svg+xml",
        ".woff": "font/woff",
        ".woff2": "font/woff2",
        ".ipynb": "application/x-ipynb+json",
    }

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A browser that navigates away drops connections mid-response.
        pass


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 and yield its base URL (ending in ``/``)."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = _Server((LOCAL_HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL_HOST}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def fetch(url: str) -> tuple[int, bytes, str]:
    """Status, body and content type of a local URL (never raises on 4xx/5xx)."""
    assert urlsplit(url).hostname == LOCAL_HOST, url
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read(), response.headers["Content-Type"]
    except urllib.error.HTTPError as error:
        with error:
            return error.code, b"", ""


# -- the browser -------------------------------------------------------------------


def find_chromium() -> str:
    """The Chromium binary: $CHROMIUM, ``chromium`` on PATH or /usr/bin/chromium."""
    candidates = [os.environ.get("CHROMIUM"), shutil.which("chromium")]
    candidates.append("/usr/bin/chromium")
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    raise FileNotFoundError(INSTALL_CHROMIUM)


def launch_chromium(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(
        executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS
    )


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme not in ("http", "https", "ws", "wss") or (
        parts.hostname == LOCAL_HOST
    )


def block_external(context: BrowserContext) -> None:
    """Abort, for a whole context, every request that would leave 127.0.0.1."""

    def handle(route: Route) -> None:
        if is_local(route.request.url):
            route.fallback()
        else:
            route.abort("blockedbyclient")

    context.route("**/*", handle)


@dataclass
class Visit:
    """What went wrong while a page loaded and ran."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    bad_responses: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return [
            *(f"console error: {m}" for m in self.console_errors),
            *(f"uncaught exception: {m}" for m in self.page_errors),
            *(f"failed request: {m}" for m in self.failed_requests),
            *(f"HTTP error: {m}" for m in self.bad_responses),
            *(
                f"request to another host (aborted): {u}"
                for u in self.external_requests
            ),
        ]


def open_page(
    context: BrowserContext, url: str, *, wait_until: str = "networkidle"
) -> tuple[Page, Visit]:
    """Open ``url`` in a new page of ``context``, recording what goes wrong."""
    page = context.new_page()
    visit = Visit(url)

    def on_console(message: Any) -> None:
        if message.type == "error":
            where = message.location.get("url", "")
            visit.console_errors.append(f"{message.text} [{where}]")

    def on_failed(request: Any) -> None:
        if is_local(request.url):  # external ones are reported on their own
            visit.failed_requests.append(f"{request.url} ({request.failure})")

    def on_response(response: Any) -> None:
        if response.status >= 400:
            visit.bad_responses.append(f"{response.status} {response.url}")

    def route(route: Route) -> None:
        if is_local(route.request.url):
            route.fallback()
        else:
            visit.external_requests.append(route.request.url)
            route.abort("blockedbyclient")

    page.on("console", on_console)
    page.on("pageerror", lambda error: visit.page_errors.append(str(error)))
    page.on("requestfailed", on_failed)
    page.on("response", on_response)
    page.route("**/*", route)
    page.goto(url, wait_until=wait_until)  # type: ignore[arg-type]
    return page, visit


# -- accessibility -------------------------------------------------------------------


@functools.cache
def axe_source() -> str:
    """axe-core's browser bundle, as shipped by the axe-playwright-python wheel."""
    return (
        resources.files("axe_playwright_python")
        .joinpath("axe.min.js")
        .read_text(encoding="utf-8")
    )


SETTLE_JS = """() => Promise.all(document.getAnimations()
  .filter(a => a.effect && a.effect.getComputedTiming().iterations !== Infinity)
  .map(a => a.finished.catch(() => null)))"""


def settle(page: Page) -> None:
    """Wait for running CSS transitions (e.g. after a colour-mode change)."""
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


def axe_problems(
    page: Page,
    impacts: tuple[str, ...] = ("serious", "critical"),
    rules: tuple[str, ...] = (),
) -> list[str]:
    """One line per axe-core rule violated with one of ``impacts``."""
    problems = []
    for violation in run_axe(page, rules):
        if violation["impact"] not in impacts:
            continue
        targets = [" ".join(map(str, n["target"])) for n in violation["nodes"]]
        shown = ", ".join(targets[:3]) + (" ..." if len(targets) > 3 else "")
        problems.append(
            f"{violation['impact']} {violation['id']}: {violation['help']} "
            f"({len(targets)} element(s): {shown})"
        )
    return problems


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
    """The pages (site-relative, no fragment) that the search page lists."""
    page, visit = open_page(context, urljoin(base, "search.html?q=" + quote(term)))
    page.wait_for_function(
        "() => { const s = document.querySelector('#search-results .search-summary');"
        " return s !== null && s.textContent.trim() !== ''; }",
        timeout=30_000,
    )
    hrefs: list[str] = page.eval_on_selector_all(
        "#search-results ul.search li a", "links => links.map(a => a.href)"
    )
    problems = visit.problems()
    page.close()
    if problems:
        raise AssertionError(f"the search page for {term!r} misbehaved: {problems}")
    results = []
    for href in hrefs:
        path = urlsplit(href).path.lstrip("/")
        path = unquote(path)
        if path == "" or path.endswith("/"):
            path += "index.html"
        if path not in results:
            results.append(path)
    return results


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
    ``index`` (site-relative paths) has a thumbnail."""
    found = page.evaluate(THUMBNAILS_JS)
    problems: list[str] = list(found["problems"])
    linked = {unquote(urlsplit(u).path.lstrip("/")) for u in found["links"]}
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
