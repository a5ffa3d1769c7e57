"""Comments in code, found and translated: pure functions, no Sphinx.

:func:`find_comments` finds the comments of Python (with :mod:`tokenize`: a
``#`` in a string is no comment) or shell code, one :class:`Comment` per
comment and per run of full-line comments; pragmas (``# noqa``, ``# %%``,
...) and wordless comments are left out. :func:`without_comments` drops
them; :func:`translate_comments` replaces each by its translation, a run
rewrapped by :func:`wrap` no wider than the code (columns counted by
``cjk.width``: a Chinese character takes two); code that does not tokenize
raises :class:`CommentError`. ``codecomments`` uses them
on the pages, ``downloads`` in the ``.py`` and ``.ipynb`` downloads.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .cjk import BREAKABLE, CLOSING, OPENING, width

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
