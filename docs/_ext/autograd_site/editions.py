"""Two editions, English and zh_CN: each page knows its address in both, and its source.

``docs/build.py`` builds the site twice from one source tree: English, then
``-D language=zh_CN`` into the ``zh_CN/`` folder. ``siteconfig.EDITIONS``
(pyproject.toml's table) gives each language's name, folder and tag. Our own
code: Read the Docs' flyout switches languages there only, not on GitHub
Pages or locally, and nothing in Sphinx links a page to itself in another
language. Three ``html-page-context``
handlers:

* :func:`page_links` gives every page ``other_editions``, the link to the same
  page in the other edition (``_templates/edition-switcher.html`` shows it),
  and an hreflang ``<link rel="alternate">`` for each; on Read the Docs each
  edition is a project of its own, at ``/<lang>/<version>/``. A zh page's
  canonical address is its own, under ``zh_CN/`` (Sphinx derives it from
  ``html_baseurl``, which both editions share: the downloads install the one
  wheel from there). The 404 page is served at any depth, so its links are
  absolute;
* :func:`issue_body` (after the theme's handler, which makes the button):
  the issue the button opens starts with the page's title and address;
* :func:`spaced_titles`: a Chinese title shown as plain text keeps a space
  where code met Chinese.

:func:`source_in_repository` is the file a tutorial page comes from
(``launchbar``'s *View source*).
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sphinx.application import Sphinx
from sphinx.locale import get_translation

from .cjk import HAN
from .siteconfig import EDITIONS

GALLERY = Path(__file__).resolve().parents[3] / "gallery"
# The new issue's text, in the edition's language (site.po).
ISSUE_BODY = "Page: {}\n\nWhat is wrong or unclear:\n"


def source_in_repository(pagename: str) -> str | None:
    """The repository path a generated tutorial page comes from, if any."""
    name = pagename.removeprefix("tutorials/")
    if name == pagename:
        return None
    if name == "index":
        return "gallery/GALLERY_HEADER.rst"
    return f"gallery/{name}.py" if (GALLERY / f"{name}.py").is_file() else None


def page_links(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    here = app.config.language
    to_root = "../" * pagename.count("/")  # from this page to its edition's root
    if os.environ.get("READTHEDOCS"):  # each edition a project: /<lang>/<version>/
        version = os.environ.get("READTHEDOCS_VERSION", "latest")
        target = {
            lang: f"{to_root}../../{lang.lower().replace('_', '-')}/{version}/"
            for lang in EDITIONS
        }
    else:
        site_root = to_root + "../" * EDITIONS[here].folder.count("/")
        target = {lang: site_root + e.folder for lang, e in EDITIONS.items()}
    suffix = app.builder.get_target_uri(pagename)
    if pagename == app.config.notfound_pagename:  # served at any depth
        prefix = app.config.notfound_urls_prefix
        target = {
            k: posixpath.normpath(prefix + v).rstrip("/") + "/"
            for k, v in target.items()
        }
    context["other_editions"] = [
        (edition.name, edition.tag, target[lang] + suffix)
        for lang, edition in EDITIONS.items()
        if lang != here
    ]
    context["metatags"] = context.get("metatags", "") + "".join(
        f'\n<link rel="alternate" hreflang="{lang}" href="{url}" />'
        for _, lang, url in context["other_editions"]
    )
    folder = EDITIONS[here].folder
    if folder and context.get("pageurl"):  # html_baseurl is shared
        context["pageurl"] = f"{app.config.html_baseurl}{folder}{suffix}"


def issue_body(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    title = re.sub(r"<[^>]+>", "", context.get("title") or "")
    words = get_translation("site")
    body = quote(
        str(words(ISSUE_BODY)).format(f"{title} ({context.get('pageurl') or pagename})")
    )
    for button in context.get("header_buttons", []):
        for item in [button, *button.get("buttons", [])]:
            if item.get("label") == "source-issues-button":
                item["url"] = re.sub(r"body=[^&]*", f"body={body}", item["url"])


CODE_EDGE = re.compile(f"(?<=[{HAN}])(?=<code)|(?<=</code>)(?=[{HAN}])")


def spaced_titles(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """In the article, code's box sets it off the Chinese around it (no space:
    check_catalogs.py); the window's title and the previous/next links show a
    title as text, where a space does, as the prose spaces a Latin word."""
    for item in (context, context.get("prev") or {}, context.get("next") or {}):
        if item.get("title"):  # a title with no Han character: unchanged
            item["title"] = CODE_EDGE.sub(" ", item["title"])


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", page_links)
    app.connect("html-page-context", spaced_titles)
    app.connect("html-page-context", issue_body, priority=502)  # after the theme's
    return {"parallel_read_safe": True, "parallel_write_safe": True}
