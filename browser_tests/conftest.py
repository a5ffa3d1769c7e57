"""The site as readers meet it: served on 127.0.0.1, driven in Debian's Chromium.

Run with ``nox -s browser`` (builds the site first), or against a built site::

    python -m pytest browser_tests [--site-dir PATH] [--artifacts-dir PATH]

The site defaults to ``docs/_build/html`` (or ``$AUTOGRAD_NOTES_SITE``); the
screenshots and the list of external links go to ``artifacts/``. One Chromium
runs for the whole session; every test gets its own browser context, in which
every request to a host other than 127.0.0.1 is aborted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import webcheck

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext

ROOT = Path(__file__).resolve().parents[1]
SITE_ENV = "AUTOGRAD_NOTES_SITE"
VIEWPORT = {"width": 1280, "height": 800}

site_key = pytest.StashKey[Path]()
artifacts_key = pytest.StashKey[Path]()
external_count_key = pytest.StashKey[int]()


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
    config.stash[site_key] = site
    config.stash[artifacts_key] = Path(config.getoption("--artifacts-dir")).resolve()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize over what the built site holds, found by walking it."""
    site = metafunc.config.stash[site_key]
    finders = {
        "page_path": webcheck.discover_pages,
        "example_path": webcheck.example_pages,
        "gallery_index": webcheck.gallery_indexes,
        "prompt_page": webcheck.prompt_pages,
    }
    for name, find in finders.items():
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, find(site))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if external_count_key in config.stash:
        where = config.stash[artifacts_key] / "external-links.txt"
        terminalreporter.write_line(
            f"external links: {config.stash[external_count_key]} distinct URLs "
            f"(listed, not fetched) in {where}"
        )


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def record_external_count(pytestconfig: pytest.Config) -> Callable[[int], None]:
    """Report the number of external links in the terminal summary."""

    def record(count: int) -> None:
        pytestconfig.stash[external_count_key] = count

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
    with webcheck.serve(site) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium (Debian's, not a Playwright download) per session."""
    try:
        executable = webcheck.find_chromium()
    except FileNotFoundError as error:
        pytest.fail(str(error), pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            browser = webcheck.launch_chromium(playwright)
        except Exception as error:
            pytest.fail(f"could not start {executable}: {error}", pytrace=False)
        yield browser
        browser.close()


@pytest.fixture
def new_context(browser: Browser) -> Iterator[webcheck.ContextFactory]:
    """Make browser contexts (closed after the test) that never leave 127.0.0.1."""
    contexts: list[BrowserContext] = []

    def make(**options: object) -> BrowserContext:
        options.setdefault("viewport", VIEWPORT)
        context = browser.new_context(**options)  # type: ignore[arg-type]
        webcheck.block_external(context)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def context(new_context: webcheck.ContextFactory) -> BrowserContext:
    """A fresh browser context (light colour scheme) for one test."""
    return new_context(color_scheme="light")
