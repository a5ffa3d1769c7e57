"""The reader-facing controls: the colour-mode switch and the copy buttons;
and the screenshots kept as build artifacts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urljoin

import pytest
import webcheck
from playwright.sync_api import BrowserContext, Page

CLIPBOARD = ["clipboard-read", "clipboard-write"]
BACKGROUND = "() => getComputedStyle(document.body).backgroundColor"


def choose_mode(page: Page, mode: str) -> None:
    """Pick a colour mode with the theme's switcher, as a reader does."""
    page.locator("button.theme-switch-button").first.click()
    page.locator(f"button.theme-change-button[data-mode={mode}]").first.click()


def test_dark_mode_switch(context: BrowserContext, base_url: str, site: Path):
    page, visit = webcheck.open_page(context, urljoin(base_url, "index.html"))
    assert page.get_attribute("html", "data-theme") == "light"
    light = page.evaluate(BACKGROUND)

    choose_mode(page, "dark")
    page.wait_for_selector("html[data-theme=dark]")
    assert page.evaluate(BACKGROUND) != light, "the page did not get darker"

    # The choice is remembered on the next page.
    other = next(p for p in webcheck.discover_pages(site) if p != "index.html")
    page.goto(urljoin(base_url, other), wait_until="networkidle")
    assert page.get_attribute("html", "data-theme") == "dark"

    choose_mode(page, "light")
    page.wait_for_selector("html[data-theme=light]")
    assert visit.problems() == []


def test_copy_button_drops_prompts_and_outputs(
    new_context: webcheck.ContextFactory, base_url: str, prompt_page: str
):
    """On every ``>>>`` block, the copy button copies the code only: no prompt,
    no output, no traceback."""
    context = new_context(permissions=CLIPBOARD)
    page, visit = webcheck.open_page(context, urljoin(base_url, prompt_page))
    blocks = page.locator("div.highlight:has(pre .gp)")
    assert blocks.count() > 0
    wrong = []
    for index in range(blocks.count()):
        block = blocks.nth(index)
        shown = block.locator("pre").inner_text()
        copied = webcheck.copied_text(page, block)
        code = [
            line[4:]
            for line in shown.splitlines()
            if line.startswith((">>> ", "... ")) and line[4:].strip()
        ]
        lines = [line for line in copied.splitlines() if line.strip()]
        if lines != code:
            wrong.append(f"block {index + 1}: copied {copied!r}\nexpected {code!r}")
    assert wrong == [], "\n".join(wrong)
    assert visit.problems() == []


def test_copy_button_on_gallery_code(
    new_context: webcheck.ContextFactory, base_url: str, site: Path
):
    """On a tutorial's code cell, the copy button copies the cell verbatim."""
    examples = webcheck.example_pages(site)
    assert examples, "no gallery example to test the copy button on"
    context = new_context(permissions=CLIPBOARD)
    page, visit = webcheck.open_page(context, urljoin(base_url, examples[0]))
    block = page.locator("div.highlight-Python").first
    shown = block.locator("pre").inner_text()
    copied = webcheck.copied_text(page, block)
    assert copied.strip() == shown.strip()
    assert ">>> " not in copied
    assert visit.problems() == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots(
    new_context: webcheck.ContextFactory,
    base_url: str,
    site: Path,
    artifacts: Path,
    repo_root: Path,
    scheme: str,
):
    """Landing page and first tutorial, light and dark, into artifacts/.

    With UPDATE_README_SCREENSHOT=1 the light landing page also replaces
    .github/screenshot.png, the picture in the README.
    """
    examples = webcheck.example_pages(site)
    assert examples, "no gallery example to take a screenshot of"
    context = new_context(color_scheme=scheme)
    folder = artifacts / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    for name, page_path in [("landing", "index.html"), ("example", examples[0])]:
        page, visit = webcheck.open_page(context, urljoin(base_url, page_path))
        page.evaluate("() => document.fonts.ready.then(() => true)")
        assert page.get_attribute("html", "data-theme") == scheme
        target = folder / f"{name}-{scheme}.png"
        page.screenshot(path=target, animations="disabled")
        assert target.stat().st_size > 10_000, f"{target} looks blank"
        assert visit.problems() == []
        page.close()
    if scheme == "light" and os.environ.get("UPDATE_README_SCREENSHOT") == "1":
        readme_picture = repo_root / ".github" / "screenshot.png"
        readme_picture.parent.mkdir(exist_ok=True)
        shutil.copyfile(folder / "landing-light.png", readme_picture)
