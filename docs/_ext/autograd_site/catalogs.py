"""The zh_CN edition's i18n jobs that Sphinx's gettext support and sphinx-intl lack.

Sphinx translates a page from its catalog and quietly shows English where a
message has no current translation; sphinx-intl only updates the catalogs.
Here, for every edition but English:

* :func:`messages`, :func:`plain`, :func:`unmarked` (and :func:`catalog_files`,
  :func:`read`): the current translations (not fuzzy, not empty), for what
  Sphinx does not translate: the raw HTML of ``tutorialcards`` and the
  downloads;
* :class:`SphinxLabels`: the API docstrings are messages of the reference
  pages, but an entry's field names and rubrics ("Parameters", "Examples")
  are Sphinx's and napoleon's labels, already in the page's language: they
  are kept out of the catalogs, where the zh build named them untranslated;
* :func:`theme_strings` (``config-inited``): our ``booktheme.po`` before the
  theme's own (read this early, as the theme makes its header buttons), and
  ``site.po``, the words of our own code (``get_translation("site")``);
* :class:`RequireTranslation` (after ``Locale``) warns on every message left
  in English and every translated markup that did not render (its spacing
  to Chinese), :func:`no_fuzzy` (``builder-inited``) on every fuzzy entry:
  with ``-W`` each fails the build;
* :func:`configure_search` (``config-inited``) teaches jieba the site's terms
  (``terms.csv``), so a term is one search word; :class:`ChineseSearch` uses
  the English stemmer, as Sphinx 9.0's ``ChineseStemmer`` is undefined.
"""

from __future__ import annotations

import gettext
import io
import logging as stdlib_logging
import re
from collections.abc import Iterator
from itertools import product
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.search.zh import SearchChinese
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import NodeMatcher, extract_messages

from .siteconfig import SOURCE

logger = logging.getLogger(__name__)
ROLE = re.compile(r":\w+:`([^`<]*?)\s*(?:<[^>]*>)?`")


def catalog_files(app: Sphinx) -> Iterator[Path]:
    """The ``.po`` files of the language being built."""
    for folder in app.config.locale_dirs:
        base = Path(app.srcdir, folder, app.config.language, "LC_MESSAGES")
        yield from sorted(base.rglob("*.po"))


def read(po: Path) -> Catalog:
    with po.open("rb") as f:
        return read_po(f)


def messages(app: Sphinx) -> dict[str, str]:
    """Every current translation of the site, English message -> translation."""
    return {
        str(m.id): str(m.string)
        for po in catalog_files(app)
        for m in read(po)
        if m.id and m.string and not m.fuzzy
    }


def plain(text: str) -> str:
    """Letters and digits only: how a message compares with a tooltip."""
    return "".join(ch for ch in ROLE.sub(r"\1", text).lower() if ch.isalnum())


def unmarked(text: str) -> str:
    """A translation as plain text: inline markup and escaped spaces removed."""
    text = ROLE.sub(r"\1", text).replace("\\ ", "")
    return text.replace("``", "").replace("**", "").replace("*", "")


def _inside(node: nodes.Node, kind: type) -> bool:
    while (node := node.parent) is not None:
        if isinstance(node, kind):
            return True
    return False


class SphinxLabels(SphinxTransform):
    """An API entry's field names and rubrics ("Parameters", "Examples") are
    Sphinx's and napoleon's labels, already in the page's language."""

    default_priority = 10  # before sphinx.transforms.i18n.Locale (20)

    def apply(self, **kwargs: Any) -> None:
        for node in self.document.findall(NodeMatcher(nodes.field_name, nodes.rubric)):
            if _inside(node, addnodes.desc_content):
                node["translatable"] = False


def theme_strings(app: Sphinx, config: Config) -> None:
    """Our ``booktheme.po`` over the theme's (read early, for its header buttons),
    and ``site.po``, our code's words (``sphinx.locale.get_translation("site")``)."""
    if config.language == SOURCE:
        return
    from sphinx import locale

    for folder, domain in product(config.locale_dirs, ("booktheme", "site")):
        po = Path(app.srcdir, folder, config.language, "LC_MESSAGES", f"{domain}.po")
        if not po.exists():
            continue
        compiled = io.BytesIO()
        write_mo(compiled, read(po))
        compiled.seek(0)
        ours = gettext.GNUTranslations(compiled)
        theirs = locale.translators.get(("general", domain))
        if theirs is not None and theirs.__class__ is not gettext.NullTranslations:
            ours.add_fallback(theirs)
        locale.translators["general", domain] = ours


# Inline markup docutils left as text (outside code, math and raw HTML).
LEFTOVER = re.compile(r"``|\*\*|`|:\w+:`|\{\w+\}`")
UNMARKED = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.raw)


class RequireTranslation(SphinxTransform):
    """Warn on every message left in English, and translated markup not rendered."""

    default_priority = 345  # after Locale (20) and DocInfo (340)

    def apply(self, **kwargs: Any) -> None:
        if self.config.language == SOURCE or self.app.builder.name == "gettext":
            return
        docname, lang = self.env.current_document.docname, self.config.language
        domain = docname_to_domain(docname, self.config.gettext_compact)
        if not any(
            Path(self.env.srcdir, d, lang, "LC_MESSAGES", f"{domain}.po").exists()
            for d in self.config.locale_dirs
        ):  # no catalog: Locale marked nothing, so mark every message
            for node, _ in extract_messages(self.document):
                node.setdefault("translated", False)
        for node in NodeMatcher(nodes.Element, translated=False).findall(self.document):
            if not _inside(node, nodes.docinfo):  # front matter is never shown
                logger.warning(
                    "untranslated message on page %s: %r (run nox -s translations, "
                    "then translate it in locale/%s/LC_MESSAGES/%s.po)",
                    docname,
                    " ".join(node.astext().split())[:100],
                    lang,
                    docname,
                    location=node,
                    type="translation",
                )
        for node in NodeMatcher(nodes.Element, translated=True).findall(self.document):
            for text in node.findall(nodes.Text):
                if isinstance(text.parent, UNMARKED) or not LEFTOVER.search(text):
                    continue
                logger.warning(
                    "markup of a translation on page %s did not render: %r (its "
                    "spacing to Chinese text: run docs/locale/check_catalogs.py "
                    "--fix-spacing)",
                    docname,
                    str(text)[:100],
                    location=node,
                    type="translation",
                )


def no_fuzzy(app: Sphinx) -> None:
    """Fuzzy entries are outdated translations: name each one.

    Sphinx skips them, so the page shows English and ``RequireTranslation``
    names the message; this names the catalog entry to update.
    """
    if app.config.language == SOURCE or app.builder.name == "gettext":
        return
    for po in catalog_files(app):
        for message in read(po):
            if message.id and message.fuzzy:
                logger.warning(
                    "fuzzy (outdated) translation in %s: %r",
                    po.relative_to(app.srcdir),
                    str(message.id)[:100],
                    type="translation",
                )


def configure_search(app: Sphinx, config: Config) -> None:
    """Teach jieba the site's terms, so 计算图 or 反向传播 is one search word."""
    if not config.language.startswith("zh"):
        return
    import jieba

    jieba.setLogLevel(stdlib_logging.WARNING)
    terms = Path(app.srcdir, "locale", config.language, "terms.csv")
    rows = terms.read_text(encoding="utf-8").splitlines()[1:]
    words = {row.split(",")[1] for row in rows if row.strip()}
    words |= {"叶子张量", "非叶子张量", "叶子节点", "计算图"}
    build = Path(config.nb_execution_cache_path).parent
    userdict = build / f"jieba-{config.language}.txt"
    userdict.parent.mkdir(parents=True, exist_ok=True)
    userdict.write_text("".join(f"{w} 100000\n" for w in sorted(words)), "utf-8")
    config.html_search_options = {**config.html_search_options, "dict": str(userdict)}


class ChineseSearch(SearchChinese):
    """The English stemmer: Sphinx 9.0's ``ChineseStemmer`` is undefined (#14229)."""

    language_name = "English"


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(SphinxLabels)
    app.add_transform(RequireTranslation)
    app.add_search_language(ChineseSearch)
    app.connect("config-inited", theme_strings)
    app.connect("config-inited", configure_search)
    app.connect("builder-inited", no_fuzzy)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
