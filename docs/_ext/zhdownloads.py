"""The zh_CN edition's downloads: Chinese text cells, the same code.

sphinx-gallery writes each tutorial's ``.py`` and ``.ipynb`` download (and
the download-all ``.zip``) from the English script. One job:
:func:`translate_downloads` (``build-finished``, priority 500, before
``notebooks`` cleans the notebooks and ``standalone`` adds the install cell)
replaces them, in every edition but English, with translated ones:

* the text cells translated paragraph by paragraph from the catalogs
  (:func:`translate_script`, :func:`translate_rst`), rewrapped at 79 columns
  in the ``.py`` (a Chinese character takes two), one line per paragraph in
  the notebook's Markdown; each message without a translation is a warning;
* the code unchanged, but its comments translated as on the page
  (``codecomments``);
* the ``.zip`` archives rebuilt with the translated files.
"""

from __future__ import annotations

import ast
import contextlib
import re
import tempfile
import unicodedata
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from catalogs import messages
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

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
    from sphinx_gallery.notebook import jupyter_notebook, save_notebook
    from sphinx_gallery.py_source_parser import (
        Block,
        remove_config_comments,
        remove_ignore_blocks,
        split_code_and_text_blocks,
    )

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
                # the sphinx_gallery_* configuration comments (ignore blocks
                # first: their markers are configuration comments too).
                blocks = [
                    Block(
                        b.type,
                        remove_config_comments(remove_ignore_blocks(b.content)),
                        b.lineno,
                    )
                    for b in blocks
                ]
                if blocks[-1].content.isspace():
                    blocks.pop()
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


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", translate_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
