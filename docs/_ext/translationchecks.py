"""The zh_CN edition fails to build rather than publish stale or broken prose.

Its prose comes from the gettext catalogs in ``docs/locale/zh_CN/LC_MESSAGES/``
(``nox -s translations`` updates them after the English text changes). Jobs,
in every edition but English (each a warning, which ``-W`` makes an error):

* :class:`RequireTranslation` (a transform after ``Locale``) names, with its
  page, every message without a current translation (missing, empty or
  fuzzy), a code comment of ``codecomments`` too;
* the same transform names every translated text whose inline markup did not
  render (its delimiters touched a Chinese character);
* :func:`check_catalogs` (``builder-inited``) names every fuzzy (outdated)
  entry of the catalogs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po
from catalogs import catalog_files
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import NodeMatcher, extract_messages

logger = logging.getLogger(__name__)


def _in_docinfo(node: nodes.Node) -> bool:
    """Whether ``node`` is front matter (inside a ``docinfo``)."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.docinfo):
            return True
        parent = parent.parent
    return False


class RequireTranslation(SphinxTransform):
    """Warn (and so, with ``-W``, fail) on every message left in English."""

    # After Locale (20), and after DocInfo (340) has moved front matter aside.
    default_priority = 345

    def apply(self, **kwargs: Any) -> None:
        if self.config.language == "en" or self.app.builder.name == "gettext":
            return
        docname = self.env.current_document.docname
        domain = docname_to_domain(docname, self.config.gettext_compact)
        if not any(
            Path(
                self.env.srcdir, d, self.config.language, "LC_MESSAGES", f"{domain}.po"
            ).exists()
            for d in self.config.locale_dirs
        ):
            # No catalog at all: Locale marked nothing, so mark every message.
            for node, _ in extract_messages(self.document):
                node.setdefault("translated", False)
        for node in NodeMatcher(nodes.Element, translated=False).findall(self.document):
            if _in_docinfo(node):
                continue  # front matter: page metadata, never shown
            text = " ".join(node.astext().split())
            logger.warning(
                "untranslated message on page %s: %r (run nox -s translations, "
                "then translate it in locale/%s/LC_MESSAGES/%s.po)",
                docname,
                text[:100],
                self.config.language,
                docname,
                location=node,
                type="translation",
            )
        for node in NodeMatcher(nodes.Element, translated=True).findall(self.document):
            for text in node.findall(nodes.Text):
                if isinstance(text.parent, UNMARKED) or not LEFTOVER.search(text):
                    continue
                logger.warning(
                    "markup of a translation on page %s did not render: %r "
                    "(no space between inline markup and Chinese text: in a "
                    "tutorial's reST write an escaped space '\\ ' where the "
                    "markup touches a Chinese character or bracket, in a MyST "
                    "page keep punctuation outside the emphasis; "
                    "docs/locale/check_catalogs.py --fix-spacing does both)",
                    docname,
                    str(text)[:100],
                    location=node,
                    type="translation",
                )


# Inline markup that docutils left as plain text: its delimiters touched a
# Chinese character (reST wants a space or punctuation there).
LEFTOVER = re.compile(r"``|\*\*|`|:\w+:`|\{\w+\}`")
UNMARKED = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.raw)


def check_catalogs(app: Sphinx) -> None:
    """Fuzzy entries are outdated translations: name each one."""
    if app.config.language == "en" or app.builder.name == "gettext":
        return
    for po in catalog_files(app):
        with po.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            if message.id and message.fuzzy:
                logger.warning(
                    "fuzzy (outdated) translation in %s: %r",
                    po.relative_to(app.srcdir),
                    str(message.id)[:100],
                    type="translation",
                )


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(RequireTranslation)
    app.connect("builder-inited", check_catalogs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
