"""The site as readers meet it: served on 127.0.0.1, driven in Debian's Chromium.

Run with ``nox -s browser`` (builds the site first), or against a built site::

    python -m pytest browser_tests [--site-dir PATH] [--artifacts-dir PATH]

The site defaults to ``docs/_build/html`` (or ``$AUTOGRAD_NOTES_SITE``); the
screenshots and the lists of external links go to ``artifacts/``. One Chromium
runs for the whole session; every test gets its own browser context, in which
every request to a host other than 127.0.0.1 is aborted.

The site holds two editions (``harness.EDITIONS``): English at its root and
Chinese in ``zh_CN/``, with the same pages at the same paths. A test that takes
the ``edition`` fixture runs once per edition (``@pytest.mark.editions("zh_CN")``
narrows that); with ``page_path`` (or ``example_path``, ...) as well, it runs
for every page of every edition: ids like ``zh_CN-tutorials/index.html``. The
fixtures ``edition_site`` and ``edition_url`` are the edition's folder and URL.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
import views
import webcheck

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

ROOT = Path(__file__).resolve().parents[1]
SITE_ENV = "AUTOGRAD_NOTES_SITE"
# A desktop window: the size of the desktop view of views.py, so that the
# load of a page for its per-page checks gives that view too.
VIEWPORT = {"width": views.WIDTHS["desktop"], "height": views.HEIGHTS["desktop"]}

site_key = pytest.StashKey[Path]()
artifacts_key = pytest.StashKey[Path]()
untranslated_key = pytest.StashKey[dict[str, list[str]]]()
external_count_key = pytest.StashKey[dict[str, tuple[int, Path]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("browser", "the browser tests of the built site")
    group.addoption(
        "--site-dir",
        default=os.environ.get(SITE_ENV, str(ROOT / "docs" / "_build" / "html")),
        help=f"the built HTML site to serve (default: ${SITE_ENV} or docs/_build/html)",
    )
    group.addoption(
        "--artifacts-dir",
        default=str(ROOT / "artifacts"),
        help="where screenshots and external-links.txt go (default: artifacts/)",
    )


def pytest_configure(config: pytest.Config) -> None:
    site = Path(config.getoption("--site-dir")).resolve()
    if not (site / "index.html").is_file() or not (site / "search.html").is_file():
        raise pytest.UsageError(
            f"no built site at {site} (no index.html/search.html). Build it first "
            "with `nox -s docs` (or `sphinx-build -b html docs docs/_build/html`), "
            f"or point --site-dir / ${SITE_ENV} at a built site."
        )
    for edition in harness.EDITIONS:
        root = harness.edition_root(site, edition)
        if not (root / "index.html").is_file() or not (root / "search.html").is_file():
            raise pytest.UsageError(
                f"the site at {site} has no {edition} edition (no index.html/"
                f"search.html in {root}). Build both editions with `nox -s docs` "
                "(python docs/build.py)."
            )
    config.stash[site_key] = site
    config.stash[artifacts_key] = Path(config.getoption("--artifacts-dir")).resolve()
    config.addinivalue_line(
        "markers", "editions(*names): run the test for these editions only"
    )


FINDERS = {
    "page_path": harness.discover_pages,
    "example_path": harness.example_pages,
    "gallery_index": harness.gallery_indexes,
    "prompt_page": harness.prompt_pages,
}


def _parametrized(metafunc: pytest.Metafunc) -> set[str]:
    """The argument names that the test's own parametrize marks cover."""
    names: set[str] = set()
    for mark in metafunc.definition.iter_markers("parametrize"):
        argnames = mark.args[0]
        if isinstance(argnames, str):
            argnames = argnames.split(",")
        names.update(name.strip() for name in argnames)
    return names


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize over the editions, and over what each one holds, found by
    walking it."""
    site = metafunc.config.stash[site_key]
    found = [name for name in FINDERS if name in metafunc.fixturenames]
    if "edition" not in metafunc.fixturenames or "edition" in _parametrized(metafunc):
        for name in found:  # not per edition: the English edition's
            metafunc.parametrize(name, FINDERS[name](site))
        return
    marker = metafunc.definition.get_closest_marker("editions")
    editions = list(marker.args) if marker else list(harness.EDITIONS)
    if not found:
        metafunc.parametrize("edition", editions)
        return
    for name in found:
        cases = [
            (edition, path)
            for edition in editions
            for path in FINDERS[name](harness.edition_root(site, edition))
        ]
        metafunc.parametrize(("edition", name), cases)


SHARED = {"page_checks", "page_views"}  # the fixtures that Ahead fills


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that read the shared page checks run last: the threads of
    ``Ahead`` check the pages meanwhile, while the others load their own."""
    items.sort(key=lambda item: bool(SHARED & set(getattr(item, "fixturenames", ()))))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    untranslated = config.stash.get(untranslated_key, {})  # string -> pages
    if untranslated:
        where = config.stash[artifacts_key] / "untranslated-interface.zh_CN.txt"
        where.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            f"{string}\t{len(pages)} page(s): {' '.join(sorted(pages))}"
            for string, pages in sorted(untranslated.items())
        ]
        where.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        terminalreporter.write_sep("-", "interface strings left in English")
        terminalreporter.write_line(
            "Chinese pages show these theme strings in English: the theme has no "
            f"Chinese for them (listed with their pages in {where}):"
        )
        for string, pages in sorted(untranslated.items()):
            terminalreporter.write_line(f"  {string} [{len(pages)} page(s)]")
    for edition, (count, where) in config.stash.get(external_count_key, {}).items():
        terminalreporter.write_line(
            f"external links ({edition}): {count} distinct URLs "
            f"(listed, not fetched) in {where}"
        )


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def record_external_count(
    pytestconfig: pytest.Config,
) -> Callable[[str, int, Path], None]:
    """Report the number of external links of an edition (and the file that
    lists them) in the terminal summary."""

    def record(edition: str, count: int, where: Path) -> None:
        pytestconfig.stash.setdefault(external_count_key, {})[edition] = (count, where)

    return record


@pytest.fixture(scope="session")
def site(pytestconfig: pytest.Config) -> Path:
    return pytestconfig.stash[site_key]


@pytest.fixture(scope="session")
def artifacts(pytestconfig: pytest.Config) -> Path:
    path = pytestconfig.stash[artifacts_key]
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def base_url(site: Path) -> Iterator[str]:
    """The site, served by http.server in a thread on an ephemeral port."""
    with harness.serve(site) as url:
        yield url


@pytest.fixture(scope="session")
def record_untranslated(
    pytestconfig: pytest.Config,
) -> Callable[[str, list[str]], None]:
    """Note interface strings that a page shows in English for want of a
    translation in the theme: listed in the terminal summary."""

    def record(page: str, strings: list[str]) -> None:
        found = pytestconfig.stash.setdefault(untranslated_key, {})
        for string in strings:
            found.setdefault(string, []).append(page)

    return record


@pytest.fixture
def edition_site(site: Path, edition: str) -> Path:
    """The folder of the built site that holds the edition under test."""
    return harness.edition_root(site, edition)


@pytest.fixture
def edition_url(base_url: str, edition: str) -> str:
    """The URL of the edition under test (ends in ``/``)."""
    return base_url + harness.EDITIONS[edition]


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium (Debian's, not a Playwright download) per session."""
    try:
        executable = harness.find_chromium()
    except FileNotFoundError as error:
        pytest.fail(str(error), pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            browser = harness.launch_chromium(playwright)
        except Exception as error:
            pytest.fail(f"could not start {executable}: {error}", pytrace=False)
        yield browser
        browser.close()


def make_checks(
    browser: Browser, base: str, page_views: views.PageViews, **options: Any
) -> webcheck.PageChecks:
    """The per-page checks, whose load of a page (a light 1280 x 800 window)
    is also its desktop view in ``page_views``."""

    def desktop_view(edition: str, path: str, page: Page, visit: harness.Visit) -> None:
        page_views.keep(edition, path, "desktop", page, visit)

    return webcheck.PageChecks(browser, base, VIEWPORT, on_load=desktop_view, **options)


# Threads that check pages ahead of the tests, each with its own Chromium.
AHEAD = 2


class Ahead:
    """The session's ``PageChecks`` and ``PageViews``, filled ahead of the
    tests: ``AHEAD`` threads, with a Chromium each (Playwright's sync API
    wants one instance per thread), run the per-page checks and both views of
    every page that the selected tests read, so a page's loads and axe runs
    use both cores, not one. A test waits for its page; a page whose run here
    failed is checked by its test. (pytest-xdist falls short: its
    ``loadgroup`` cannot keep a page's tests on one worker under pytest 9.2,
    so each worker would load and check every page again.)"""

    def __init__(self, browser: Browser, base: str, pages: list[tuple[str, str]]):
        self.views = views.PageViews(browser, base, wait=self.wait)
        self.checks = make_checks(browser, base, self.views, wait=self.wait)
        self.ready = {key: threading.Event() for key in pages}
        self.todo: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
        for key in self.ready:
            self.todo.put(key)
        self.threads = [
            threading.Thread(target=self.work, args=(base,)) for _ in range(AHEAD)
        ]
        for thread in self.threads:
            thread.start()

    def next(self) -> tuple[str, str] | None:
        try:
            return self.todo.get_nowait()
        except queue.Empty:
            return None

    def work(self, base: str) -> None:
        from playwright.sync_api import sync_playwright

        try:
            with sync_playwright() as playwright:
                browser = harness.launch_chromium(playwright)
                found = views.PageViews(browser, base)
                checks = make_checks(browser, base, found)
                while (key := self.next()) is not None:
                    try:
                        self.checks.reports[key] = checks(*key)
                        for size in views.WIDTHS:
                            self.views.views[(*key, size)] = found(*key, size)
                    except Exception:  # its test loads the page anew
                        pass
                    finally:
                        self.ready[key].set()
                found.close()
                browser.close()
        except Exception:  # no Chromium: the `browser` fixture says so
            pass
        finally:  # the pages left are checked by their tests
            self.stop(join=False)

    def wait(self, edition: str, path: str) -> None:
        if (event := self.ready.get((edition, path))) is not None:
            event.wait()

    def stop(self, *, join: bool = True) -> None:
        while (key := self.next()) is not None:
            self.ready[key].set()
        for thread in self.threads if join else ():
            thread.join()
        if join:
            self.views.close()


@pytest.fixture(scope="session", autouse=True)
def ahead(request: pytest.FixtureRequest) -> Iterator[Ahead | None]:
    """The pages that the selected tests check, checked from the session's
    start, ahead of them (None: no selected test reads the checks or the views)."""
    pages: dict[tuple[str, str], None] = {}
    shared = False  # whether a selected test reads the checks or the views at all
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        uses = SHARED & set(getattr(item, "fixturenames", ()))
        shared = shared or bool(uses)
        if callspec and uses and "page_path" in callspec.params:
            params = callspec.params
            pages[params.get("edition", "en"), params["page_path"]] = None
    if not shared:
        yield None
        return
    browser, base = (request.getfixturevalue(f) for f in ("browser", "base_url"))
    started = Ahead(browser, base, list(pages))
    yield started
    started.stop()


@pytest.fixture(scope="session")
def page_checks(ahead: Ahead) -> webcheck.PageChecks:
    """Every per-page check, from one load of each page (see PageChecks). That
    load, in a light 1280 x 800 window, is also the page's desktop view."""
    return ahead.checks


@pytest.fixture(scope="session")
def page_views(ahead: Ahead) -> views.PageViews:
    """Every page at a phone's and a desktop's width, one load each, for the
    layout and the picture checks (see PageViews)."""
    return ahead.views


@pytest.fixture
def new_context(browser: Browser) -> Iterator[harness.ContextFactory]:
    """Make browser contexts (closed after the test) that never leave 127.0.0.1."""
    contexts: list[BrowserContext] = []

    def make(**options: object) -> BrowserContext:
        options.setdefault("viewport", VIEWPORT)
        context = browser.new_context(**options)  # type: ignore[arg-type]
        harness.block_external(context)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def context(new_context: harness.ContextFactory) -> BrowserContext:
    """A fresh browser context (light colour scheme) for one test."""
    return new_context(color_scheme="light")
