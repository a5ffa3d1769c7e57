"""Every page loads cleanly, offline, and passes axe-core; math renders offline."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin

import pytest
import webcheck
from playwright.sync_api import BrowserContext


def test_page_loads_cleanly(context: BrowserContext, base_url: str, page_path: str):
    """No console error, uncaught exception, failed request, HTTP error, or
    request to another host while the page loads and settles."""
    page, visit = webcheck.open_page(context, urljoin(base_url, page_path))
    page.wait_for_timeout(200)  # late errors from deferred scripts
    problems = visit.problems()
    assert problems == [], "\n".join(problems)


def test_page_is_accessible(context: BrowserContext, base_url: str, page_path: str):
    """axe-core finds no serious or critical violation: every rule in the light
    colour scheme, then the colour rules again in the dark one (the theme
    follows the reader's system setting: default_mode "auto")."""
    url = urljoin(base_url, page_path)
    page, _ = webcheck.open_page(context, url, wait_until="load")
    problems = {}
    for scheme, rules in (("light", ()), ("dark", webcheck.COLOUR_RULES)):
        page.emulate_media(color_scheme=scheme)
        page.wait_for_selector(f"html[data-theme={scheme}]", state="attached")
        problems[scheme] = webcheck.axe_problems(page, rules=rules)
    report = [f"{scheme}: {p}" for scheme, found in problems.items() for p in found]
    assert report == [], "\n".join(report)


def test_math_renders_offline(context: BrowserContext, base_url: str, site: Path):
    """MathJax comes from _static (sphinx-mathjax-offline) and typesets the math."""
    pages = webcheck.math_pages(site)
    if not pages:
        pytest.skip("no page of the site has math")
    for page_path in pages:
        page, visit = webcheck.open_page(context, urljoin(base_url, page_path))
        page.wait_for_function(
            "() => window.MathJax !== undefined && MathJax.startup !== undefined"
            " && MathJax.startup.promise !== undefined",
            timeout=15_000,
        )
        page.evaluate("() => MathJax.startup.promise")
        unrendered = page.evaluate(
            "() => [...document.querySelectorAll('.math')]"
            ".filter(m => m.querySelector('mjx-container') === null"
            " && m.closest('mjx-container') === null).map(m => m.textContent)"
        )
        page.wait_for_load_state("networkidle")  # the fonts MathJax asked for
        rendered = page.locator("mjx-container").count()
        errors = page.locator("mjx-merror").all_inner_texts()
        mathjax_urls = page.evaluate(
            "() => performance.getEntriesByType('resource').map(e => e.name)"
            ".filter(u => /mathjax/i.test(u))"
        )
        assert visit.problems() == [], page_path
        assert rendered > 0, f"{page_path}: MathJax rendered nothing"
        assert unrendered == [], f"{page_path}: math left as TeX"
        assert errors == [], f"{page_path}: TeX errors"
        assert mathjax_urls, f"{page_path}: MathJax was not loaded"
        assert all(webcheck.is_local(u) for u in mathjax_urls), mathjax_urls
        page.close()
