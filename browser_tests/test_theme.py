"""The reader-facing controls of each edition: the colour-mode switch and the
copy buttons; and the screenshots kept as build artifacts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urljoin

import harness
import pytest
import webcheck
from playwright.sync_api import BrowserContext, Page

CLIPBOARD = ["clipboard-read", "clipboard-write"]
BACKGROUND = "() => getComputedStyle(document.body).backgroundColor"


def choose_mode(page: Page, mode: str) -> None:
    """Pick a colour mode with the theme's switcher, as a reader does."""
    page.locator("button.theme-switch-button").first.click()
    page.locator(f"button.theme-change-button[data-mode={mode}]").first.click()


def test_dark_mode_switch(
    context: BrowserContext, edition_url: str, edition_site: Path, edition: str
):
    page, visit = harness.open_page(context, urljoin(edition_url, "index.html"))
    assert page.get_attribute("html", "data-theme") == "light"
    light = page.evaluate(BACKGROUND)

    choose_mode(page, "dark")
    page.wait_for_selector("html[data-theme=dark]")
    webcheck.settle(page)  # a colour that transitions is read once it is over
    assert page.evaluate(BACKGROUND) != light, "the page did not get darker"

    # The choice is remembered on the next page.
    other = next(p for p in harness.discover_pages(edition_site) if p != "index.html")
    page.goto(urljoin(edition_url, other), wait_until="networkidle")
    assert page.get_attribute("html", "data-theme") == "dark"

    choose_mode(page, "light")
    page.wait_for_selector("html[data-theme=light]")
    assert visit.problems() == []


def test_copy_button_drops_prompts_and_outputs(
    new_context: harness.ContextFactory,
    edition_url: str,
    edition: str,
    prompt_page: str,
):
    """On every ``>>>`` block, the copy button copies the code only: no prompt,
    no output, no traceback."""
    context = new_context(permissions=CLIPBOARD)
    page, visit = harness.open_page(context, urljoin(edition_url, prompt_page))
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
    new_context: harness.ContextFactory,
    edition_url: str,
    edition_site: Path,
    edition: str,
):
    """On a tutorial's code cell, the copy button copies the cell verbatim."""
    examples = harness.example_pages(edition_site)
    assert examples, "no gallery example to test the copy button on"
    context = new_context(permissions=CLIPBOARD)
    page, visit = harness.open_page(context, urljoin(edition_url, examples[0]))
    block = page.locator("div.highlight-Python").first
    shown = block.locator("pre").inner_text()
    copied = webcheck.copied_text(page, block)
    assert copied.strip() == shown.strip()
    assert ">>> " not in copied
    assert visit.problems() == []


# Draws text into a canvas: the same pixels for a Chinese character as for a
# character no font has (U+10FFFD) mean Chinese renders as boxes (no CJK font).
CJK_GLYPHS_JS = """() => {
  const draw = text => {
    const canvas = document.createElement('canvas');
    canvas.width = 64; canvas.height = 64;
    const context = canvas.getContext('2d');
    context.font = '48px ' + getComputedStyle(document.body).fontFamily;
    context.fillText(text, 4, 52);
    return canvas.toDataURL();
  };
  return draw('叶') !== draw('\\u{10FFFD}') && draw('叶') !== draw('\\u{10FFFC}');
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots(
    new_context: harness.ContextFactory,
    edition_url: str,
    edition_site: Path,
    edition: str,
    artifacts: Path,
    repo_root: Path,
    scheme: str,
):
    """Landing page and first tutorial, light and dark, into artifacts/:
    landing-light.png, ... for English, landing-zh_CN-light.png, ... for Chinese.

    With UPDATE_README_SCREENSHOT=1 the light English landing page also
    replaces .github/screenshot.png, the picture in the README.
    """
    examples = harness.example_pages(edition_site)
    assert examples, "no gallery example to take a screenshot of"
    context = new_context(color_scheme=scheme)
    folder = artifacts / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    suffix = "" if edition == "en" else f"-{edition}"
    problems = {}  # asserted after the screenshots: they are kept either way
    for name, page_path in [("landing", "index.html"), ("example", examples[0])]:
        page, visit = harness.open_page(context, urljoin(edition_url, page_path))
        page.evaluate("() => document.fonts.ready.then(() => true)")
        assert page.get_attribute("html", "data-theme") == scheme
        if edition != "en":
            assert page.evaluate(CJK_GLYPHS_JS), (
                "Chinese characters render as boxes: no CJK font for Chromium "
                "(apt-get install fonts-noto-cjk)"
            )
        target = folder / f"{name}{suffix}-{scheme}.png"
        page.screenshot(path=target, animations="disabled")
        assert target.stat().st_size > 10_000, f"{target} looks blank"
        if visit.problems():
            problems[page_path] = visit.problems()
        page.close()
    update = os.environ.get("UPDATE_README_SCREENSHOT") == "1"
    if edition == "en" and scheme == "light" and update:
        readme_picture = repo_root / ".github" / "screenshot.png"
        readme_picture.parent.mkdir(exist_ok=True)
        shutil.copyfile(folder / "landing-light.png", readme_picture)
    assert problems == {}
