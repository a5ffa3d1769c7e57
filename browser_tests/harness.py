"""The browser suite's harness: the built site, a server for it, and Chromium.

What every browser test stands on, and no check of its own (the checks are
``webcheck.py``'s):

* :data:`EDITIONS` and the page lists: the site holds one edition per
  language, English at the root and the others in a folder each, with the
  same pages below it (:func:`discover_pages`, :func:`example_pages`, ...);
* :func:`serve` serves a folder on 127.0.0.1 (an ephemeral port, a thread);
* :func:`launch_chromium` starts Debian's Chromium through Playwright, with
  the flags that keep it from calling home on a closed network;
* :func:`open_page` loads a page while recording console errors, uncaught
  exceptions, failed requests, responses >= 400 and every request to a host
  other than 127.0.0.1 (those are aborted: the tests never touch the
  network), as a :class:`Visit`.
"""

from __future__ import annotations

import functools
import html
import os
import re
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from autograd_site import siteconfig

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
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

# pyproject.toml's table of editions, as the build reads it (autograd_site.siteconfig).
EDITIONS = {lang: edition.folder for lang, edition in siteconfig.EDITIONS.items()}
"""Edition -> the folder of the site it is served from ("": the root). Each
edition has the same pages at the same paths below its folder."""
LANGUAGES = {lang: edition.tag for lang, edition in siteconfig.EDITIONS.items()}
"""Edition -> its language tag (``<html lang>``, ``hreflang``)."""
NAMES = {lang: edition.name for lang, edition in siteconfig.EDITIONS.items()}
"""Edition -> its name in its own language, as the language switcher shows it."""
EDITION_FOLDERS = {folder.strip("/") for folder in EDITIONS.values() if folder}


def edition_root(site: Path, edition: str) -> Path:
    """The folder of the built site that holds ``edition``."""
    return site / EDITIONS[edition]


def discover_pages(site: Path) -> list[str]:
    """Every HTML page of the built site (or of one edition: pass its folder),
    as a path relative to it (posix); the other editions' folders are left out."""
    pages = []
    for path in site.rglob("*.html"):
        parts = path.relative_to(site).parts
        if parts[0] in ASSET_DIRS or any(p.startswith(".") for p in parts):
            continue
        if len(parts) > 1 and parts[0] in EDITION_FOLDERS:
            continue  # another edition, checked as such
        if REDIRECT_MARKER in path.read_text(encoding="utf-8")[:1000]:
            continue  # an old address, checked by test_redirects.py
        pages.append(path.relative_to(site).as_posix())
    return sorted(pages)


# docs/_templates/redirect.html (rediraffe) puts this in every page at an old address.
REDIRECT_MARKER = '<meta name="autograd-notes-redirect" content="1">'


def redirect_pages(site: Path) -> list[str]:
    """The redirect pages of one edition's folder, relative to it (posix)."""
    return sorted(
        path.relative_to(site).as_posix()
        for path in site.glob("tutorials/*.html")
        if REDIRECT_MARKER in path.read_text(encoding="utf-8")[:1000]
    )


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
