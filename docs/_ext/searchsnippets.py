"""Search result snippets quote the page's article, not the theme's chrome.

One job: :func:`add_to_search_page` (``html-page-context``) adds
``_static/search-snippets.js`` to ``search.html`` (only), which
makes Sphinx's search page quote the text of each result's
``article.bd-article`` instead of its ``[role="main"]`` element, where
sphinx-book-theme also puts the colour-mode switch and the header buttons
(tested by ``browser_tests/test_search.py``).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def add_to_search_page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    if pagename == "search":
        app.add_js_file("search-snippets.js")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", add_to_search_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
