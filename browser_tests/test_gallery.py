"""The tutorials gallery: thumbnails, outputs, downloads."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin

import webcheck
from playwright.sync_api import BrowserContext


def test_gallery_has_examples(site: Path):
    assert webcheck.gallery_indexes(site), "no gallery index (no thumbnails) found"
    assert webcheck.example_pages(site), "no sphinx-gallery example page found"


def test_gallery_index(
    context: BrowserContext, base_url: str, site: Path, gallery_index: str
):
    """Every example has a thumbnail that loaded; the zip downloads are valid."""
    page, visit = webcheck.open_page(context, urljoin(base_url, gallery_index))
    examples = webcheck.example_pages(site)
    assert webcheck.thumbnail_problems(page, examples, gallery_index) == []
    assert webcheck.download_problems(page, expected=(".zip",)) == []
    assert visit.problems() == []


def test_example_page(context: BrowserContext, base_url: str, example_path: str):
    """The example shows its outputs and offers a valid .py and .ipynb."""
    page, visit = webcheck.open_page(context, urljoin(base_url, example_path))
    outputs = page.locator(".sphx-glr-script-out")
    assert outputs.count() > 0, "no output block (.sphx-glr-script-out)"
    assert outputs.first.is_visible()
    assert outputs.first.inner_text().strip(), "the first output block is empty"
    assert webcheck.download_problems(page, expected=(".py", ".ipynb")) == []
    assert visit.problems() == []
