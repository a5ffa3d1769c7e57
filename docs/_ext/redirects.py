"""Keep old tutorial URLs working after the tutorials were renumbered.

The site's ``redirects`` setting (a config value this extension adds) maps an
old page name to its new one (``"tutorials/01_leaf_tensors":
"tutorials/02_leaf_tensors"``). After an HTML build :func:`write_redirects`
(``build-finished``) writes, at each old address, a small page that sends
the browser on to the new one at once (``<meta http-equiv="refresh">``),
names it as canonical, and links it for anyone whose browser does not
follow. Both editions get their own, so a link into the Chinese edition stays
in it. A target that is not a page of the build fails it (a warning, which
``-W`` makes an error).
"""

from __future__ import annotations

import html
import posixpath
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

MARKER = '<meta name="autograd-notes-redirect" content="1">'
"""In every redirect page, so the site's checks can tell them from pages."""

MOVED = {"en": "This page has moved to", "zh_CN": "本页已移至"}


def page(target: str, title: str, language: str) -> str:
    """The redirect page, sending the browser to ``target`` (a relative URL)."""
    url = html.escape(target, quote=True)
    moved = MOVED.get(language, MOVED["en"])
    lang = language.replace("_", "-")
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        f"{MARKER}\n"
        f'<meta http-equiv="refresh" content="0; url={url}">\n'
        f'<link rel="canonical" href="{url}">\n'
        f"<title>{html.escape(title)}</title>\n</head>\n"
        f'<body><main><p>{moved} <a href="{url}">{html.escape(title)}</a>.</p>'
        "</main></body>\n</html>\n"
    )


def write_redirects(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for old, new in app.config.redirects.items():
        if new not in app.env.found_docs:
            logger.warning("redirect %r points at %r, not a page", old, new)
            continue
        if old in app.env.found_docs:
            logger.warning("redirect from %r would replace a page", old)
            continue
        target = posixpath.relpath(new, posixpath.dirname(old)) + ".html"
        title = app.env.titles[new].astext()
        dest = Path(app.outdir, old + ".html")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(page(target, title, app.config.language), encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("redirects", {}, "html", types=[dict])
    app.connect("build-finished", write_redirects)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
