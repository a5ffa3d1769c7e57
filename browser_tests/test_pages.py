"""Every page of both editions loads cleanly, offline, and passes axe-core; math
renders offline. (The per-page checks come from one load of each page: see
``PageChecks`` in webcheck.py.)"""

from __future__ import annotations

import html
import re
from pathlib import Path

import harness
import pytest
import webcheck


def test_page_loads_cleanly(
    page_checks: webcheck.PageChecks, edition: str, page_path: str
):
    """No console error, uncaught exception, failed request, HTTP error, or
    request to another host while the page loads and settles."""
    problems = page_checks(edition, page_path)["load"]
    assert problems == [], "\n".join(problems)


def test_page_is_accessible(
    page_checks: webcheck.PageChecks, edition: str, page_path: str
):
    """axe-core finds no serious or critical violation: every rule in the light
    colour scheme, and the colour rules in the dark one (the theme follows the
    reader's system setting: default_mode "auto")."""
    problems = page_checks(edition, page_path)["axe"]
    assert problems == [], "\n".join(problems)


def test_math_renders_offline(
    page_checks: webcheck.PageChecks, edition_site: Path, edition: str
):
    """MathJax comes from _static (sphinx-mathjax-offline) and typesets the math
    of every page that has some (checked in the page's one load: ``math``)."""
    pages = harness.math_pages(edition_site)
    assert pages, f"no page of the {edition} edition has math: the check is empty"
    problems = [
        f"{page_path}: {problem}"
        for page_path in pages
        for problem in page_checks(edition, page_path)["math"]
    ]
    assert problems == [], "\n".join(problems)


def test_landing_page_title_names_the_site_once(edition_site: Path, edition: str):
    """The landing page's <title> is the site's name, not "autograd-notes —
    autograd-notes"; every other page is "its title — autograd-notes"."""
    site_name = "autograd-notes"
    titles = {
        path: html.unescape(
            re.search(r"<title>(.*?)</title>", (edition_site / path).read_text())[1]
        ).strip()
        for path in ("index.html", "tutorials/01_one_training_step.html")
    }
    assert titles["index.html"].count(site_name) == 1, titles
    assert " — " not in titles["index.html"], titles
    assert titles["tutorials/01_one_training_step.html"].endswith(f" — {site_name}")


@pytest.mark.parametrize("width", [390, 1280])
def test_tutorial_01_is_one_click_from_the_landing_page(
    new_context: harness.ContextFactory, edition_url: str, width: int
):
    """A link to tutorial 01, in the first screen of the landing page: a
    button, not a word in the prose."""
    context = new_context(viewport={"width": width, "height": 800})
    page, visit = harness.open_page(context, edition_url + "index.html")
    start = page.locator("article a.sd-btn[href$='01_one_training_step.html']")
    assert start.count() == 1
    box = start.bounding_box()
    assert box is not None
    assert box["y"] + box["height"] <= 800, box
    with page.expect_navigation():
        start.click()
    assert page.url.endswith("tutorials/01_one_training_step.html")
    assert visit.problems() == []
