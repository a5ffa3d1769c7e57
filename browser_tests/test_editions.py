"""The two editions belong together: each page says its language, links to the
same page in the other edition (a link that works with the keyboard, both
ways), and the Chinese pages read in Chinese: prose and interface alike.

The per-page checks come from one load of each page (``PageChecks`` in
webcheck.py). Interface strings that stay English because the theme has no
Chinese for them do not fail a test; they are listed at the end of the run and
in artifacts/untranslated-interface.zh_CN.txt.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import harness
import pytest
import tomllib
import webcheck
from playwright.sync_api import BrowserContext, Page


def test_editions_have_the_same_pages(site: Path):
    pages = {
        edition: set(harness.discover_pages(harness.edition_root(site, edition)))
        for edition in harness.EDITIONS
    }
    for edition, found in pages.items():
        assert sorted(pages["en"] - found) == [], f"missing from {edition}"
        assert sorted(found - pages["en"]) == [], f"only in {edition}"


def test_page_declares_its_language(
    page_checks: webcheck.PageChecks, edition_site: Path, edition: str, page_path: str
):
    """``<html lang="en">`` on English pages, ``lang="zh-CN"`` on Chinese ones
    (screen readers, fonts and line breaking go by it): in the file, and in
    the browser."""
    markup = (edition_site / page_path).read_text(encoding="utf-8")
    assert webcheck.declared_language(markup) == harness.LANGUAGES[edition]
    assert page_checks(edition, page_path)["language"] == []


def test_language_switcher_round_trip(
    page_checks: webcheck.PageChecks, edition: str, page_path: str
):
    """The page's switcher (in the article header: "中文" on English pages,
    "English" on Chinese ones, with hreflang) leads to the same page in the
    other edition, whose switcher leads back here. Both followed with the
    keyboard: Tab onto the link, press Enter."""
    problems = page_checks(edition, page_path)["switcher"]
    assert problems == [], "\n".join(problems)


@pytest.mark.editions("zh_CN")
def test_chinese_page_reads_in_chinese(
    page_checks: webcheck.PageChecks,
    edition: str,
    page_path: str,
    record_untranslated: Callable[[str, list[str]], None],
):
    """No paragraph (list item, heading, table cell, caption, admonition title,
    summary...) of the article is English prose, code, output, math and API
    names aside; no interface string (sidebar, header buttons, their tooltips
    and labels, footer, search field) is in English where the theme has it in
    Chinese. The API reference pages' docstrings are translated too (their
    doctests and signatures are code)."""
    report = page_checks(edition, page_path)
    # Not a failure (the theme has no Chinese for them), but not silent either.
    record_untranslated(
        f"{harness.EDITIONS[edition]}{page_path}", report["untranslated"]
    )
    problems = [f"English prose: {p}" for p in report["prose"]] + [
        f"English interface string: {p}" for p in report["interface"]
    ]
    assert problems == [], "\n".join(problems)


def test_each_edition_names_its_own_canonical_address(site: Path):
    """Search engines are told each page's own address: a Chinese page is not
    a copy of the English one."""
    root = Path(__file__).resolve().parents[1]
    urls = tomllib.loads((root / "pyproject.toml").read_text())["project"]["urls"]
    base = urls["Documentation"].rstrip("/") + "/"
    # Attributes in either order: sphinx-codeautolink re-serializes the pages it links.
    link = re.compile(r'<link (?=[^>]*rel="canonical")[^>]*href="([^"]*)"')
    for edition, folder in harness.EDITIONS.items():
        edition_site = harness.edition_root(site, edition)
        pages = harness.discover_pages(edition_site)
        assert pages
        for page in pages:
            found = link.findall((edition_site / page).read_text(encoding="utf-8"))
            assert found == [f"{base}{folder}{page}"], (edition, page)


def drawn_fonts(page: Page, selector: str) -> list[str]:
    """The families of the fonts that draw the text of ``selector``'s first match."""
    session = page.context.new_cdp_session(page)
    session.send("DOM.enable")
    session.send("CSS.enable")
    root = session.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = session.send("DOM.querySelector", {"nodeId": root, "selector": selector})
    fonts = session.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})
    session.detach()
    return [font["familyName"] for font in fonts["fonts"]]


@pytest.mark.parametrize("edition", ["en"])
@pytest.mark.parametrize("path", ["index.html", "about.html"])
def test_chinese_on_english_pages_says_so(
    context: BrowserContext, edition_url: str, edition: str, path: str
):
    """Chinese words on an English page (the edition switcher's 中文, the
    landing page's 简体中文) carry lang="zh-CN", so Chromium draws them in a
    Simplified Chinese font, not the Japanese fallback an English page gets."""
    page, visit = harness.open_page(context, edition_url + path)
    untagged = page.evaluate(
        """(hanClass) => {
          const isHan = new RegExp(hanClass, 'u');
          const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
          const found = [];
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const tagged = node.parentElement.closest('[lang]');
            if (isHan.test(node.data) && !tagged.lang.startsWith('zh'))
              found.push(node.data.trim());
          }
          return found;
        }""",
        webcheck.HAN_CLASS,
    )
    assert untagged == [], f"Chinese text without lang=zh-CN: {untagged}"
    chinese = page.locator("span[lang='zh-CN'], .edition-switcher span").all()
    assert chinese, "no Chinese on the page: the check is empty"
    for selector in [".edition-switcher span", "article span[lang='zh-CN']"]:
        if page.locator(selector).count():
            fonts = drawn_fonts(page, selector)
            assert fonts, selector
            assert all("CJK SC" in f for f in fonts), (selector, fonts)
    assert visit.problems() == []
