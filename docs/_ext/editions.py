"""Two editions, English and zh_CN: each page knows its address in both.

``nox -s docs`` builds the site twice from one source tree: English, then
``-D language=zh_CN`` into the ``zh_CN/`` folder (:data:`EDITIONS`). Jobs
(``html-page-context`` handlers):

* :func:`edition_links` gives every page ``other_editions``, the link to the
  same page in the other edition (``_templates/edition-switcher.html`` shows
  it), and a ``<link rel="alternate" hreflang=...>`` for each, on Read the
  Docs where each edition is a project of its own too;
* :func:`canonical_in_edition` makes a Chinese page's canonical address its
  own, under ``zh_CN/``.
"""

from __future__ import annotations

import os
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

EDITIONS = {"en": ("English", ""), "zh_CN": ("中文", "zh_CN/")}
"""Language code -> (name of the edition in its own language, folder in the site)."""


def edition_links(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: nodes.document | None,
) -> None:
    """``other_editions``: (name, lang, url) of this page in the other editions."""
    here = app.config.language
    to_root = "../" * pagename.count("/")  # from this page to its edition's root
    if os.environ.get("READTHEDOCS"):
        # Read the Docs serves each edition as its own project:
        # /<lang>/<version>/<page>.html.
        version = os.environ.get("READTHEDOCS_VERSION", "latest")
        up = f"{to_root}../../"
        target = {
            lang: f"{up}{lang.lower().replace('_', '-')}/{version}/"
            for lang in EDITIONS
        }
    else:
        site_root = to_root + "../" * EDITIONS[here][1].count("/")
        target = {lang: site_root + folder for lang, (_, folder) in EDITIONS.items()}
    suffix = app.builder.get_target_uri(pagename)
    context["other_editions"] = [
        (name, lang.replace("_", "-"), target[lang] + suffix)
        for lang, (name, _) in EDITIONS.items()
        if lang != here
    ]
    context["metatags"] = context.get("metatags", "") + "".join(
        f'\n<link rel="alternate" hreflang="{lang}" href="{url}" />'
        for _, lang, url in context["other_editions"]
    )


def canonical_in_edition(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    """A Chinese page's canonical address is its own, under ``zh_CN/``.

    Sphinx derives it from ``html_baseurl``, which both editions share (the
    downloads install the one wheel from there).
    """
    if app.config.language == "zh_CN" and context.get("pageurl"):
        page = app.builder.get_target_uri(pagename)
        context["pageurl"] = f"{app.config.html_baseurl}zh_CN/{page}"


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", edition_links)
    app.connect("html-page-context", canonical_in_edition)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
