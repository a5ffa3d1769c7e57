"""The search page finds the pages that are about a term."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import webcheck
from playwright.sync_api import BrowserContext

TERMS = ["retain_graph", "leaf", "detach"]


def search_index(site: Path) -> dict[str, list[str]]:
    """The docnames and titles of Sphinx's search index."""
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    data = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    return {"docnames": data["docnames"], "titles": data["titles"]}


def _words(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower())


def expected_pages(site: Path, term: str) -> list[str]:
    """Indexed pages whose title or file name carries the term: a reader who
    searches for it must be offered them (e.g. leaf -> 01_leaf_tensors.html)."""
    index = search_index(site)
    wanted = f" {_words(term).strip()} "
    pages = []
    for docname, title in zip(index["docnames"], index["titles"], strict=True):
        name = docname.rpartition("/")[2]
        if wanted in f" {_words(title)} " or wanted in f" {_words(name)} ":
            pages.append(f"{docname}.html")
    return pages


@pytest.mark.parametrize("term", TERMS)
def test_search_finds(context: BrowserContext, base_url: str, site: Path, term: str):
    results = webcheck.search_results(context, base_url, term)
    assert results, f"searching {term!r} found nothing"
    missing = [p for p in results if not (site / p).is_file()]
    assert missing == [], f"search results that are not pages: {missing}"
    about = [
        p
        for p in results
        if term.lower()
        in webcheck.article_text((site / p).read_text(encoding="utf-8")).lower()
    ]
    assert about, f"no result of {term!r} has the term in its body: {results}"
    for page in expected_pages(site, term):
        assert page in results, f"searching {term!r} does not offer {page}: {results}"
