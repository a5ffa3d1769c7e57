"""The Chinese edition: same sources, translated prose, nothing stale.

``nox -s docs`` builds the site twice from one source tree: English, then
``-D language=zh_CN``, whose prose comes from the gettext catalogs in
``docs/locale/zh_CN/LC_MESSAGES/`` (``nox -s translations`` updates them
after the English text changes). This extension:

* keeps the API reference's docstrings English: they are never extracted into
  the catalogs, and the zh edition's reference index says so;
* fails the zh build, naming the message and its page, for every message
  without a current translation (missing, empty or fuzzy);
* translates the tutorial thumbnails, which sphinx-gallery writes as raw HTML;
* writes the zh downloads (``.py``, ``.ipynb``): translated text cells, and
  code whose comments are translated as on the page (``codecomments``);
* gives every page a link to the same page in the other edition.
"""

from __future__ import annotations

import ast
import contextlib
import gettext
import html
import io
import logging as stdlib_logging
import os
import re
import tempfile
import unicodedata
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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
from sphinx.util.nodes import NodeMatcher, extract_messages, is_translatable

logger = logging.getLogger(__name__)

EDITIONS = {"en": ("English", ""), "zh_CN": ("中文", "zh_CN/")}
"""Language code -> (name of the edition in its own language, folder in the site)."""


def _is_docstring(node: nodes.Node) -> bool:
    """Text of the API reference: a docstring, or inside an object description."""
    if not isinstance(node, nodes.TextElement):
        return False
    return "docstring of " in (node.source or "") or _inside(node, addnodes.desc)


def _inside(node: nodes.Node, kind: type[nodes.Element]) -> bool:
    """Whether an ancestor of ``node`` is a ``kind``."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, kind):
            return True
        parent = parent.parent
    return False


class KeepDocstringsEnglish(SphinxTransform):
    """API docstrings are not translated: keep them out of the catalogs.

    Only the nodes that are messages (what the gettext builder extracts and
    ``Locale`` translates: paragraphs, field names, ...) are marked. Marking
    any other node would do harm: ``RemoveTranslatableInline`` unwraps every
    ``inline`` that has a ``translatable`` attribute, whatever its value, and
    appends its children to the end of its parent. The pieces of a signature
    (name, ``=``, default) are such inlines, so a signature came out as
    ``=namesNone``. An inline is a message only when it already says so, and
    then marking it changes nothing about that unwrapping.
    """

    default_priority = 10  # before sphinx.transforms.i18n.Locale (20)

    def apply(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(_is_docstring_message)):
            node["translatable"] = False


def _is_docstring_message(node: nodes.Node) -> bool:
    """A message (as the catalogs hold them) of the API reference."""
    return is_translatable(node) and _is_docstring(node)


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
            if _inside(node, nodes.docinfo):
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


def catalog_files(app: Sphinx) -> Iterator[Path]:
    for folder in app.config.locale_dirs:
        base = Path(app.srcdir, folder, app.config.language, "LC_MESSAGES")
        yield from sorted(base.rglob("*.po"))


def theme_strings(app: Sphinx, config: Config) -> None:
    """Our translations of sphinx-book-theme's strings come first.

    The theme reads them from its ``booktheme`` catalog only, and computes some
    (the header buttons) as soon as the builder starts, before Sphinx compiles
    our ``.po`` files. So ours (``locale/<lang>/LC_MESSAGES/booktheme.po``) is
    read here, from the ``.po``, and becomes that catalog; the theme's own,
    loaded later, joins it as the fallback. Ours adds what the theme's lacks
    and corrects what it has in another usage (its zh_CN is Taiwan's).
    """
    if config.language == "en":
        return
    from sphinx import locale

    for folder in config.locale_dirs:
        po = Path(app.srcdir, folder, config.language, "LC_MESSAGES", "booktheme.po")
        if not po.exists():
            continue
        with po.open("rb") as f:
            catalog = read_po(f)
        compiled = io.BytesIO()
        write_mo(compiled, catalog)
        compiled.seek(0)
        ours = gettext.GNUTranslations(compiled)
        theirs = locale.translators.get(("general", "booktheme"))
        if theirs is not None and theirs.__class__ is not gettext.NullTranslations:
            ours.add_fallback(theirs)
        locale.translators["general", "booktheme"] = ours


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


def messages(app: Sphinx) -> dict[str, str]:
    """Every current translation of the site, English message -> translation."""
    found: dict[str, str] = {}
    for po in catalog_files(app):
        with po.open("rb") as f:
            for message in read_po(f):
                if message.id and message.string and not message.fuzzy:
                    found[str(message.id)] = str(message.string)
    return found


def _plain(text: str) -> str:
    """Letters and digits only: how a message compares with a tooltip."""
    text = re.sub(r":\w+:`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _unmarked(text: str) -> str:
    """A translation as plain text: inline markup and escaped spaces removed."""
    text = re.sub(r":\w+:`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    text = text.replace("\\ ", "")  # reST's separator next to Chinese text
    return text.replace("``", "").replace("**", "").replace("*", "")


class TranslateThumbnails(SphinxTransform):
    """The gallery index's thumbnails are raw HTML: translate their text."""

    default_priority = 27

    def apply(self, **kwargs: Any) -> None:
        if self.config.language == "en" or self.app.builder.name == "gettext":
            return
        raws = [
            n
            for n in self.document.findall(nodes.raw)
            if "sphx-glr-thumb" in n.astext()
        ]
        if not raws:
            return
        by_plain = {_plain(k): v for k, v in messages(self.app).items()}

        def translate(match: re.Match[str]) -> str:
            before, english, after = match.groups()
            chinese = by_plain.get(_plain(html.unescape(english)))
            if chinese is None:
                logger.warning(
                    "untranslated thumbnail text on page %s: %r",
                    self.env.current_document.docname,
                    english[:100],
                    location=raws[0],
                    type="translation",
                )
                return match.group(0)
            return before + html.escape(_unmarked(chinese)) + after

        for raw in raws:
            text = raw.astext()
            for pattern in THUMBNAIL_TEXT:
                text = pattern.sub(translate, text)
            raw.replace_self(nodes.raw(text, text, format="html"))


THUMBNAIL_TEXT = [
    re.compile(r'(tooltip=")([^"]*)(")'),
    re.compile(r'(<div class="sphx-glr-thumbnail-title">)(.*?)(</div>)'),
]


# -- Downloads: the zh edition's .py and .ipynb carry Chinese text cells ---------

UNDERLINE = re.compile(r"([=\-~^\"'`#*+])\1+")
ITEM = re.compile(r"(\* |- |\d+\. )")


def _width(text: str) -> int:
    """Columns a reST title takes: wide (CJK) characters count twice."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def translate_rst(
    text: str,
    lookup: Callable[[str], str],
    width: int | None = None,
    comments: Callable[[str], str | None] | None = None,
) -> str:
    """Translate a reST text cell paragraph by paragraph; keep code and math.

    ``lookup`` maps a message (a paragraph's lines joined by spaces, as the
    catalogs hold it) to its translation. Paragraphs are wrapped at ``width``
    columns, or kept on one line each when ``width`` is None. With
    ``comments`` (a comment -> its translation, or None), the comments of a
    ``code-block:: python`` are translated too.
    """
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if not lines[i].strip():
            out.append(lines[i])
            i += 1
            continue
        block = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i])
            i += 1
        first = block[0]
        if first.startswith((" ", "..")) or first.startswith("\t"):
            # A directive (math, code), a literal or indented block: unchanged
            # (but the comments of Python code, with ``comments``).
            start = len(out)
            out += block
            while i < len(lines) and (not lines[i].strip() or lines[i][:1] == " "):
                out.append(lines[i])
                i += 1
            if comments is not None and PYTHON_BLOCK.fullmatch(first.strip()):
                out[start:] = _code_block_comments(out[start:], comments)
        elif len(block) >= 2 and UNDERLINE.fullmatch(block[1].strip()):
            title = lookup(first.strip())
            out += [title, block[1][0] * _width(title)]
            if block[2:]:  # the text right under the title: a block of its own
                rest = translate_rst("\n".join(block[2:]), lookup, width, comments)
                out += rest.split("\n")
        elif ITEM.match(first):
            items: list[list[str]] = []
            for line in block:
                if ITEM.match(line):
                    items.append([line])
                else:
                    items[-1].append(line)
            for item in items:
                marker = ITEM.match(item[0]).group(1)  # type: ignore[union-attr]
                words = " ".join(x.strip() for x in item)[len(marker) :]
                wrapped = _wrap(lookup(words), len(marker), width)
                out += [marker + wrapped[0], *wrapped[1:]]
        else:
            out += _wrap(lookup(" ".join(x.strip() for x in block)), 0, width)
    return "\n".join(out)


PYTHON_BLOCK = re.compile(r"\.\. (code-block|code|sourcecode):: (python|py|python3)")


def _code_block_comments(
    lines: list[str], comments: Callable[[str], str | None]
) -> list[str]:
    """A ``code-block`` directive with the comments of its code translated."""
    from codecomments import CommentError, translate_comments

    # The code starts after the first blank line (the options come before).
    body = next((n for n, line in enumerate(lines) if not line.strip()), len(lines))
    code = lines[body:]
    indent = min(
        (len(line) - len(line.lstrip()) for line in code if line.strip()), default=0
    )
    try:
        translated = translate_comments("\n".join(x[indent:] for x in code), comments)
    except CommentError:
        return lines
    return lines[:body] + [
        " " * indent + line if line.strip() else line for line in translated.split("\n")
    ]


# Unbreakable pieces of a paragraph: inline markup, a run of spaces, one wide
# (CJK) character, or a run of other characters (a Latin word).
_PIECE = re.compile(
    r"``.+?``|(?::[\w:-]+:)?`[^`]+`_{0,2}|\*\*[^*]+\*\*|\s+"
    r"|[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]|[^\s\u3000-\u303f\u4e00-\u9fff\uff00-\uffef`]+|`"
)
_NO_LINE_START = set("，。、：；？！）》」』”’")


def _wrap(text: str, indent: int, width: int | None) -> list[str]:
    """Wrap at spaces or between Chinese characters, never inside markup.

    A line break between two Chinese characters adds no space in reST, and
    breaking at a space drops that space, so the text reads as before.
    """
    if width is None:
        return [text]
    lines, line, space = [], "", False
    for piece in _PIECE.findall(text):
        if piece.isspace():
            space = bool(line)
            continue
        joined = line + (" " if space else "") + piece
        if line and _width(joined) > width - indent and piece[0] not in _NO_LINE_START:
            lines.append(line)
            joined = piece
        line, space = joined, False
    lines.append(line)
    return [lines[0], *(" " * indent + x for x in lines[1:])]


def translate_script(
    source: str,
    lookup: Callable[[str], str],
    width: int | None = 79,
    comments: Callable[[str], str | None] | None = None,
) -> str:
    """A sphinx-gallery script with its text cells translated, code unchanged.

    Text is wrapped at ``width`` columns (None: one line per paragraph). With
    ``comments`` (a comment -> its translation, or None to keep it), the
    code's comments are translated as on the page; the code itself is not.
    """
    from codecomments import CommentError, translate_comments

    lines = source.split("\n")
    if lines[0] != '"""':
        raise ValueError("a tutorial starts with its docstring on its own line")
    end = lines.index('"""', 1)
    # The docstring as Python reads it (``\\top`` in the file is ``\top``), and
    # written back with its backslashes escaped again.
    docstring = ast.literal_eval("\n".join(lines[: end + 1])).strip("\n")
    translated = translate_rst(docstring, lookup, width).replace("\\", "\\\\")
    out = ['"""', *translated.split("\n"), lines[end]]
    comment_width = None if width is None else width - 2  # after "# "
    code: list[str] = []  # the lines of the code cell being read

    def end_code() -> None:
        if code and comments is not None:
            with contextlib.suppress(CommentError):  # if not: left as it is
                code[:] = translate_comments("\n".join(code), comments).split("\n")
        out.extend(code)
        code.clear()

    i = end + 1
    while i < len(lines):
        i += 1
        if not lines[i - 1].startswith("# %%"):
            code.append(lines[i - 1])
            continue
        end_code()
        out.append(lines[i - 1])
        cell = []
        while i < len(lines) and lines[i].startswith("#"):
            cell.append(lines[i][2:] if lines[i].startswith("# ") else lines[i][1:])
            i += 1
        if cell:
            translated = translate_rst("\n".join(cell), lookup, comment_width, comments)
            out += [f"# {x}" if x else "#" for x in translated.split("\n")]
    end_code()
    return "\n".join(out)


def translate_downloads(app: Sphinx, exception: Exception | None) -> None:
    """Replace the tutorials' .py, .ipynb and .zip downloads with translated ones."""
    if exception is not None or app.config.language == "en":
        return
    if app.builder.format != "html":
        return
    from sphinx_gallery import py_source_parser
    from sphinx_gallery.gen_rst import _clean_script_blocks
    from sphinx_gallery.notebook import jupyter_notebook, save_notebook
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    catalog = messages(app)
    missing: list[str] = []

    def lookup(message: str) -> str:
        if message not in catalog:
            missing.append(message)
            return message
        return catalog[message]

    def markdown(message: str) -> str:
        # Markdown needs no separator between markup and Chinese text, and
        # would show reST's escaped space as a backslash.
        return lookup(message).replace("\\ ", "")

    translated: dict[str, bytes] = {}  # file name -> translated bytes
    gallery_conf = app.config.sphinx_gallery_conf
    for examples in gallery_conf["examples_dirs"]:
        for script in sorted(Path(app.srcdir, examples).glob("[0-9][0-9]_*.py")):
            missing.clear()
            source = script.read_text(encoding="utf-8")
            text = translate_script(source, lookup, comments=catalog.get)
            for message in missing:
                logger.warning(
                    "untranslated text in the zh download of %s: %r",
                    script.name,
                    message[:100],
                    type="translation",
                )
            translated[script.name] = text.encode("utf-8")
            with tempfile.TemporaryDirectory() as tmp:
                # The notebook's Markdown: one line per paragraph, no wrapping.
                copy = Path(tmp, script.name)
                text = translate_script(source, markdown, None, catalog.get)
                copy.write_text(text, "utf-8")
                _, blocks = split_code_and_text_blocks(copy)
                # As for the English notebook: without the hidden checks and
                # the sphinx_gallery_* configuration comments.
                blocks, _ = _clean_script_blocks(
                    gallery_conf, py_source_parser, blocks, [""] * len(blocks)
                )
                notebook = jupyter_notebook(blocks, gallery_conf, tmp)
                save_notebook(notebook, copy.with_suffix(".ipynb"))
                translated[copy.with_suffix(".ipynb").name] = copy.with_suffix(
                    ".ipynb"
                ).read_bytes()
    downloads = Path(app.outdir, "_downloads")
    for dest in sorted(downloads.rglob("*")):
        if dest.name in translated:
            dest.write_bytes(translated[dest.name])
        elif dest.suffix == ".zip":
            _rezip(dest, translated)


def _rezip(archive: Path, translated: dict[str, bytes]) -> None:
    with zipfile.ZipFile(archive) as old:
        members = [(info, old.read(info)) for info in old.infolist()]
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as new:
        for info, data in members:
            new.writestr(info, translated.get(Path(info.filename).name, data))


# -- Search: Sphinx's Chinese search splits words with jieba --------------------


def configure_search(app: Sphinx, config: Config) -> None:
    """Teach jieba the site's terms, so 计算图 or 反向传播 is one search word."""
    if not config.language.startswith("zh"):
        return
    import jieba

    jieba.setLogLevel(stdlib_logging.WARNING)
    terms = Path(app.srcdir, "locale", config.language, "terms.csv")
    words = {
        row.split(",")[1]
        for row in terms.read_text(encoding="utf-8").splitlines()[1:]
        if row.strip()
    }
    words |= {f"{w}张量" for w in ("叶子", "非叶子")} | {"叶子节点", "计算图"}
    build = Path(config.nb_execution_cache_path).parent
    build.mkdir(parents=True, exist_ok=True)
    userdict = build / f"jieba-{config.language}.txt"
    userdict.write_text("".join(f"{w} 100000\n" for w in sorted(words)), "utf-8")
    config.html_search_options = {**config.html_search_options, "dict": str(userdict)}


class SearchChineseWithEnglishStemmer(SearchChinese):
    """Sphinx's Chinese search, with a stemmer its page script can find.

    Sphinx 9.0's ``language_data.js`` for Chinese sets ``window.Stemmer =
    ChineseStemmer``, a name no script defines (sphinx-doc/sphinx#14229), so
    search breaks on every page. The Chinese splitter stems Latin words with
    the English stemmer, and that is the one it ships: name it.
    """

    language_name = "English"


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_search_language(SearchChineseWithEnglishStemmer)
    app.add_transform(KeepDocstringsEnglish)
    app.add_transform(RequireTranslation)
    app.add_transform(TranslateThumbnails)
    app.connect("builder-inited", check_catalogs)
    app.connect("config-inited", theme_strings)
    app.connect("html-page-context", edition_links)
    app.connect("build-finished", translate_downloads)
    app.connect("config-inited", configure_search)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
