"""Comments in the pages' code, translated like the prose around them.

A code block shows the same code in both editions, but its comments explain,
and the zh_CN edition explains in Chinese. Sphinx's and pybabel's extractors
read prose, never the comments inside a code block, so:

* :class:`ExtractCodeComments` (a transform before ``Locale``) finds the
  comments of every Python block (the tutorials' and the executed pages'
  code cells, ``python`` blocks, ``>>>`` sessions) and every shell block,
  but not the examples of an API entry, with :mod:`tokenize` for Python (a
  ``#`` in a string is no comment). One
  message per comment, a run of full-line comments one message; pragmas
  (``# noqa``, ``# %%``, ...) and wordless comments are skipped. Each
  becomes an invisible :class:`code_comment` after its block, so the
  gettext builder puts it into the page's catalog with the block's location;
* ``Locale`` translates each node like any message, and the node writes the
  translation into the code, a run rewrapped no wider than the block (a
  Chinese character takes two columns); ``catalogs.RequireTranslation`` then
  names a comment left in English as it names any message, and
  :class:`DropCodeComments` removes the nodes;
* :func:`translate_comments` and :func:`wrap` (columns counted by
  ``cjk.width``) also write the zh ``.py`` and ``.ipynb`` downloads
  (``downloads``): code unchanged, only comments translated.

The English edition shows the code as written: nothing is extracted there
(the gettext build aside).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

from .cjk import BREAKABLE, CLOSING, OPENING, width
from .siteconfig import SOURCE

logger = logging.getLogger(__name__)

PYTHON = {"python", "python3", "py", "py3", "ipython", "ipython3", "pycon"}
SHELL = {"bash", "sh", "shell", "zsh"}

# Comments that talk to a tool, not to the reader: never translated.
PRAGMAS = re.compile(
    r"#\s*(noqa\b|type:|sphinx_gallery_|%%|pragma\b|fmt:|mypy:|ruff:|pylint:|!)"
)
# Something to translate: a word of two letters or more ("(A)" has none).
WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True)
class Comment:
    """One comment, or one run of full-line comments, of a piece of code."""

    message: str  # as the catalogs hold it: no ``#``, lines joined by a space
    start: int  # its first line's index in the code
    end: int  # its last line's index (``start`` for a trailing comment)
    column: int  # its ``#``'s column
    trailing: bool  # whether it follows code on its line (``x = 1  # note``)


class CommentError(ValueError):
    """The code cannot be tokenized, so its comments cannot be found."""


def _python_comments(code: str) -> Iterator[tuple[int, int, str, bool]]:
    """(line index, column, text, trailing) of each comment; ``>>>`` sessions too.

    A session is tokenized with its prompts blanked out and its output lines
    empty, so the columns stay those of the original.
    """
    lines = code.split("\n")
    first = next((line for line in lines if line.strip()), "")
    if first.startswith(">>>"):
        lines = [
            " " * 4 + line[4:] if line.startswith((">>> ", "... ")) else ""
            for line in lines
        ]
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline):
            if token.type == tokenize.COMMENT:
                row, column = token.start
                trailing = bool(token.line[:column].strip())
                yield row - 1, column, token.string, trailing
    except (tokenize.TokenError, SyntaxError) as error:
        raise CommentError(f"not Python that tokenizes: {error}") from error


def _shell_comments(code: str) -> Iterator[tuple[int, int, str, bool]]:
    """The same for a shell script: a ``#`` starting a word, outside quotes."""
    quote = ""
    for row, line in enumerate(code.split("\n")):
        i = 0
        while i < len(line):
            char = line[i]
            if char == "\\" and quote != "'":
                i += 2
                continue
            if quote:
                quote = "" if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char == "#" and (i == 0 or line[i - 1].isspace()):
                yield row, i, line[i:], bool(line[:i].strip())
                break
            i += 1


def find_comments(code: str, syntax: str = "python") -> list[Comment]:
    """The comments of ``code`` to translate: no pragma, no wordless one; a run
    of full-line comments in one column is one. :class:`CommentError` if untokenizable.

    >>> [c.message for c in find_comments('s = "#1"  # not a hash\\n# one\\n# two')]
    ['not a hash', 'one two']
    """
    found = _shell_comments(code) if syntax == "shell" else _python_comments(code)
    comments: list[Comment] = []
    run: list[tuple[int, int, str]] = []

    def close() -> None:
        if run:
            message = " ".join(text[1:].strip() for _, _, text in run)
            comments.append(Comment(message, run[0][0], run[-1][0], run[0][1], False))
            run.clear()

    for row, column, text, trailing in found:
        if PRAGMAS.match(text) or not WORD.search(text):
            close()  # a pragma or a bare "#" ends a run too
            continue
        if trailing:
            close()
            comments.append(Comment(text[1:].strip(), row, row, column, True))
            continue
        if run and (row != run[-1][0] + 1 or column != run[-1][1]):
            close()
        run.append((row, column, text))
    close()
    return sorted(comments, key=lambda c: c.start)


def without_comments(code: str, syntax: str = "python") -> str:
    """``code`` without its comments: what translating them leaves unchanged.

    >>> without_comments("x = 1  # one\\n# two\\n# three\\ny = '#'")
    "x = 1\\ny = '#'"
    """
    lines = code.split("\n")
    found = _shell_comments(code) if syntax == "shell" else _python_comments(code)
    alone = set()
    for row, column, _, trailing in found:
        if trailing:
            lines[row] = lines[row][:column].rstrip()
        else:
            alone.add(row)
    return "\n".join(line for row, line in enumerate(lines) if row not in alone)


# Unbreakable pieces of a comment: inline code, a run of spaces, one wide
# (CJK) character, or a run of other characters (a word, ``x.grad``).
PIECE = re.compile(rf"``.+?``|`[^`]+`|\s+|[{BREAKABLE}]|[^\s{BREAKABLE}`]+|`")
MIN_ROOM = 20  # columns a comment always gets, however narrow the code


def wrap(text: str, room: int) -> list[str]:
    """Lines of at most ``room`` columns, broken at spaces or next to a CJK
    character; closing punctuation never starts a line, opening never ends one."""
    lines: list[list[tuple[str, bool]]] = [[]]  # (piece, space before it)
    space = False
    for piece in PIECE.findall(text):
        if piece.isspace():
            space = bool(lines[-1])
            continue
        line = lines[-1]
        if line and width(_joined([*line, (piece, space)])) > room:
            stuck = piece[0] in CLOSING or line[-1][0][-1] in OPENING
            lines.append([line.pop()] if stuck and len(line) > 1 else [])
        lines[-1].append((piece, space))
        space = False
    return [_joined(line) for line in lines]


def _joined(line: list[tuple[str, bool]]) -> str:
    """The pieces of a line, with the spaces between them (none at its start)."""
    return "".join(
        (" " if space and i else "") + p for i, (p, space) in enumerate(line)
    )


def translate_comments(
    code: str, lookup: Callable[[str], str | None], syntax: str = "python"
) -> str:
    """``code`` with each comment replaced by ``lookup(message)``, if not None; a
    run of full-line comments rewrapped no wider than ``code`` (``MIN_ROOM`` at least).

    >>> translate_comments("x = 1  # one\\n# a b\\ny = 2", {"one": "一"}.get)
    'x = 1  # 一\\n# a b\\ny = 2'
    """
    lines = code.split("\n")
    limit = max(width(line) for line in lines)
    for comment in reversed(find_comments(code, syntax)):
        translated = lookup(comment.message)
        if not translated or translated == comment.message:
            continue
        text = " ".join(translated.split())
        prefixes = [
            lines[row][: comment.column]
            for row in range(comment.start, comment.end + 1)
        ]
        if comment.trailing:
            lines[comment.start] = f"{prefixes[0]}# {text}"
            continue
        room = max(limit - width(prefixes[0]) - 2, MIN_ROOM)
        lines[comment.start : comment.end + 1] = [
            f"{prefixes[min(i, len(prefixes) - 1)]}# {line}"
            for i, line in enumerate(wrap(text, room))
        ]
    return "\n".join(lines)


class code_comment(nodes.literal_block, addnodes.translatable):
    """A comment of the code block before it, as a message; never shown. A
    ``literal_block``, so ``Locale`` takes its translation as literal text:
    any other message is parsed as reST or MyST first, where a comment's
    ``*args`` would be a markup error."""

    def preserve_original_messages(self) -> None:  # an attribute, never overwritten
        pass

    def extract_original_messages(self) -> list[str]:
        return [self["message"]]

    def apply_translated_message(self, original: str, translated: str) -> None:
        block = self.block()
        if block is not None:
            code = translate_comments(
                block.astext(), {original: translated}.get, self["syntax"]
            )
            block.rawsource = code
            block[:] = [nodes.Text(code)]
        self["translated"] = True  # Locale marks only what it translates itself

    def astext(self) -> str:
        """The comment: what ``catalogs`` names when it is untranslated."""
        return str(self["message"])

    def block(self) -> nodes.literal_block | None:
        """The code block this comment belongs to."""
        assert self.parent is not None
        before = self.parent.children[: self.parent.index(self)]
        for sibling in reversed(before):
            if not isinstance(sibling, code_comment):
                return sibling if isinstance(sibling, nodes.literal_block) else None
        return None


def skip(self: Any, node: code_comment) -> None:
    raise nodes.SkipNode


def code_syntax(block: nodes.literal_block) -> str | None:
    """``python`` or ``shell``; None if the block's comments are not translated."""
    if isinstance(block, code_comment) or block.get("translatable") is False:
        return None  # marked not to be translated: its comments neither
    if len(block.children) != 1 or not isinstance(block[0], nodes.Text):
        return None  # parsed-literal: markup, not code
    language = str(block.get("language", "")).lower()
    if language in SHELL:
        return "shell"
    parent = block.parent
    if language in PYTHON or (
        # An executed page's code cell: Python, whatever the lexer's name
        # ("ipython3", or "none" when the page was not executed).
        isinstance(parent, nodes.container)
        and parent.get("nb_element") == "cell_code_source"
    ):
        return "python"
    return None


class ExtractCodeComments(SphinxTransform):
    """After each code block, one :class:`code_comment` per comment."""

    default_priority = 15  # before sphinx.transforms.i18n.Locale (20)

    def apply(self, **kwargs: Any) -> None:
        if self.config.language == SOURCE and self.app.builder.name != "gettext":
            return  # the English edition shows the code as written
        api: set[int] = set()  # the API's examples stay English
        for desc in self.document.findall(addnodes.desc):
            api.update(map(id, desc.findall(nodes.literal_block)))
        for block in list(self.document.findall(nodes.literal_block)):
            syntax = code_syntax(block)
            if syntax is None or id(block) in api:
                continue
            try:
                comments = find_comments(block.astext(), syntax)
            except CommentError as error:
                logger.warning(
                    "the comments of this code block cannot be translated: %s",
                    error,
                    location=block,
                    type="codecomments",
                )
                continue
            parent = block.parent
            assert parent is not None
            index = parent.index(block)
            for offset, comment in enumerate(comments, start=1):
                node = code_comment(message=comment.message, syntax=syntax)
                node.source, node.line = block.source, block.line
                parent.insert(index + offset, node)


class DropCodeComments(SphinxTransform):
    """Translated (or reported by ``catalogs``), they have done their job."""

    default_priority = 350  # after catalogs.RequireTranslation (345) read them

    def apply(self, **kwargs: Any) -> None:
        if self.app.builder.name == "gettext":
            return  # the gettext builder extracts them after the transforms
        for node in list(self.document.findall(code_comment)):
            assert node.parent is not None
            node.parent.remove(node)


def setup(app: Sphinx) -> dict[str, Any]:
    formats = ("html", "latex", "text", "man", "texinfo")
    app.add_node(code_comment, **dict.fromkeys(formats, (skip, None)))
    app.add_transform(ExtractCodeComments)
    app.add_transform(DropCodeComments)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
