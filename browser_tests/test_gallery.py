"""The tutorials gallery of each edition: thumbnails, outputs, downloads,
solutions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urljoin

import harness
import pytest
import tomllib
import webcheck
from autograd_site.sitewords import say
from playwright.sync_api import Browser, BrowserContext, Page
from views import sized_context


def test_gallery_has_examples(site: Path, edition_site: Path, edition: str):
    assert harness.gallery_indexes(edition_site), "no gallery index (no thumbnails)"
    examples = harness.example_pages(edition_site)
    assert examples, "no sphinx-gallery example page found"
    # Each edition has the same tutorials, at the same paths.
    english = harness.example_pages(harness.edition_root(site, "en"))
    assert examples == english


def test_gallery_index(
    context: BrowserContext,
    edition_url: str,
    edition_site: Path,
    edition: str,
    gallery_index: str,
):
    """Every example has a thumbnail that loaded; the zip downloads are valid."""
    page, visit = harness.open_page(context, urljoin(edition_url, gallery_index))
    examples = harness.example_pages(edition_site)
    assert webcheck.thumbnail_problems(page, examples, gallery_index) == []
    assert webcheck.download_problems(page, expected=(".zip",)) == []
    assert visit.problems() == []


def output_problems(page: Page) -> list[str]:
    """The example shows its outputs and offers a valid .py and .ipynb."""
    outputs = page.locator(".sphx-glr-script-out")
    problems = webcheck.download_problems(page, expected=(".py", ".ipynb"))
    if outputs.count() == 0:
        return ["no output block (.sphx-glr-script-out)", *problems]
    if not outputs.first.is_visible():
        problems.append("the first output block is not visible")
    if not outputs.first.inner_text().strip():
        problems.append("the first output block is empty")
    return problems


def solution_problems(page: Page, edition: str) -> list[str]:
    """Every tutorial has exercises; each solution starts closed, its summary
    in the edition's language, and opens on click and with Enter."""
    solutions = page.locator("details.solution")
    count = solutions.count()
    if not 2 <= count <= 4:
        return [f"{count} exercise solutions, expected 2 to 4"]
    problems = []
    for i in range(count):
        solution = solutions.nth(i)
        code = solution.locator("div.highlight-Python, div.highlight-python").first
        summary = solution.locator("summary").inner_text().strip()
        if summary != say(edition, "Solution"):
            problems.append(f"solution {i + 1} is {summary!r}")
        if solution.get_attribute("open") is not None:
            problems.append(f"solution {i + 1} starts open")
        if code.is_visible():
            problems.append(f"solution {i + 1}'s code shows while closed")
        solution.locator("summary").click()
        if solution.get_attribute("open") is None:
            problems.append(f"solution {i + 1} does not open on a click")
        if not code.is_visible():
            problems.append(f"solution {i + 1}'s code stays hidden after a click")
    # The keyboard opens them too: focus the summary, press Enter.
    first = solutions.first
    first.locator("summary").click()  # close it again
    if first.get_attribute("open") is not None:
        problems.append("solution 1 does not close on a click")
    first.locator("summary").focus()
    page.keyboard.press("Enter")
    if first.get_attribute("open") is None:
        problems.append("solution 1 does not open with Enter")
    return problems


@pytest.fixture(scope="session")
def example_checks(
    browser: Browser, base_url: str
) -> Callable[[str, str], dict[str, list[str]]]:
    """The checks of an example page (``outputs``, then ``solutions``, which
    clicks), from one load of it, kept for the session; what went wrong while
    it loaded and ran is added to both."""
    reports: dict[tuple[str, str], dict[str, list[str]]] = {}

    def check(edition: str, path: str) -> dict[str, list[str]]:
        if (edition, path) not in reports:
            context = sized_context(browser, "desktop")
            report = {"outputs": [], "solutions": []}
            try:
                page, visit = harness.open_page(
                    context, webcheck.page_url(base_url, edition, path)
                )
                for name, run in (
                    ("outputs", lambda: output_problems(page)),
                    ("solutions", lambda: solution_problems(page, edition)),
                ):
                    try:
                        report[name] = run()
                    except Exception as error:  # its own test says so
                        report[name] = [f"the check stopped: {error!r}"]
                for problems in report.values():
                    problems += visit.problems()
            except Exception as error:  # both tests say so
                report = {key: [f"the page did not load: {error!r}"] for key in report}
            finally:
                context.close()
            reports[edition, path] = report
        return reports[edition, path]

    return check


def test_example_page(
    example_checks: Callable[[str, str], dict[str, list[str]]],
    edition: str,
    example_path: str,
):
    """The example shows its outputs and offers a valid .py and .ipynb."""
    problems = example_checks(edition, example_path)["outputs"]
    assert problems == [], "\n".join(problems)


def test_example_ends_with_collapsed_solutions(
    example_checks: Callable[[str, str], dict[str, list[str]]],
    edition: str,
    example_path: str,
):
    """Every tutorial has exercises; each solution starts closed, its summary
    in the edition's language, and opens on click (and with Enter)."""
    problems = example_checks(edition, example_path)["solutions"]
    assert problems == [], "\n".join(problems)


def test_edit_and_source_links_name_files_in_the_repository(
    edition_site: Path, edition: str, repo_root: Path, page_path: str
):
    """ "Edit" and "view source" of every page lead to a file that exists."""
    markup = (edition_site / page_path).read_text(encoding="utf-8")
    with (repo_root / "pyproject.toml").open("rb") as f:
        repository = tomllib.load(f)["project"]["urls"]["Repository"]
    links = webcheck.repository_links(markup, repository)
    for path in links:
        assert (repo_root / path).is_file(), f"{page_path} links to missing {path}"
    if page_path.startswith("tutorials/") and page_path != "tutorials/index.html":
        script = f"gallery/{Path(page_path).stem}.py"
        assert script in links, f"{page_path} does not link to {script}: {links}"


def test_one_search_box_per_page(
    context: BrowserContext, edition_url: str, edition: str
):
    page, visit = harness.open_page(context, urljoin(edition_url, "index.html"))
    fields = page.locator(".search-button-field")
    visible = [i for i in range(fields.count()) if fields.nth(i).is_visible()]
    assert len(visible) == 1, f"{len(visible)} search boxes visible"
    assert visit.problems() == []
