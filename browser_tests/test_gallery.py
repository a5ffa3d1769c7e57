"""The tutorials gallery of each edition: thumbnails, outputs, downloads,
solutions."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin

import tomllib
import webcheck
from playwright.sync_api import BrowserContext

# The summary line of a collapsed solution, per edition.
SOLUTION = {"en": "Solution", "zh_CN": "答案"}


def test_gallery_has_examples(site: Path, edition_site: Path, edition: str):
    assert webcheck.gallery_indexes(edition_site), "no gallery index (no thumbnails)"
    examples = webcheck.example_pages(edition_site)
    assert examples, "no sphinx-gallery example page found"
    # Each edition has the same tutorials, at the same paths.
    english = webcheck.example_pages(webcheck.edition_root(site, "en"))
    assert examples == english


def test_gallery_index(
    context: BrowserContext,
    edition_url: str,
    edition_site: Path,
    edition: str,
    gallery_index: str,
):
    """Every example has a thumbnail that loaded; the zip downloads are valid."""
    page, visit = webcheck.open_page(context, urljoin(edition_url, gallery_index))
    examples = webcheck.example_pages(edition_site)
    assert webcheck.thumbnail_problems(page, examples, gallery_index) == []
    assert webcheck.download_problems(page, expected=(".zip",)) == []
    assert visit.problems() == []


def test_example_page(
    context: BrowserContext, edition_url: str, edition: str, example_path: str
):
    """The example shows its outputs and offers a valid .py and .ipynb."""
    page, visit = webcheck.open_page(context, urljoin(edition_url, example_path))
    outputs = page.locator(".sphx-glr-script-out")
    assert outputs.count() > 0, "no output block (.sphx-glr-script-out)"
    assert outputs.first.is_visible()
    assert outputs.first.inner_text().strip(), "the first output block is empty"
    assert webcheck.download_problems(page, expected=(".py", ".ipynb")) == []
    assert visit.problems() == []


def test_example_ends_with_collapsed_solutions(
    context: BrowserContext, edition_url: str, edition: str, example_path: str
):
    """Every tutorial has exercises; each solution starts closed, its summary
    in the edition's language, and opens on click."""
    page, visit = webcheck.open_page(context, urljoin(edition_url, example_path))
    solutions = page.locator("details.solution")
    count = solutions.count()
    assert 2 <= count <= 4, f"{count} exercise solutions, expected 2 to 4"
    for i in range(count):
        solution = solutions.nth(i)
        code = solution.locator("div.highlight-Python, div.highlight-python").first
        summary = solution.locator("summary").inner_text().strip()
        assert summary == SOLUTION[edition], f"solution {i + 1} is {summary!r}"
        assert solution.get_attribute("open") is None, f"solution {i + 1} starts open"
        assert not code.is_visible(), f"solution {i + 1}'s code shows while closed"
        solution.locator("summary").click()
        assert solution.get_attribute("open") is not None
        assert code.is_visible(), f"solution {i + 1}'s code stays hidden after a click"
    # The keyboard opens them too: focus the summary, press Enter.
    first = solutions.first
    first.locator("summary").click()  # close it again
    assert first.get_attribute("open") is None
    first.locator("summary").focus()
    page.keyboard.press("Enter")
    assert first.get_attribute("open") is not None
    assert visit.problems() == []


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
    page, visit = webcheck.open_page(context, urljoin(edition_url, "index.html"))
    fields = page.locator(".search-button-field")
    visible = [i for i in range(fields.count()) if fields.nth(i).is_visible()]
    assert len(visible) == 1, f"{len(visible)} search boxes visible"
    assert visit.problems() == []
