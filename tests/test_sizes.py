"""The size rules, counted on code: docstrings, comments and blank lines are free.

Two rules of the project, enforced here:

- a module of the package (``src/autograd_notes``, its Python and its
  JavaScript) holds at most ``MODULE_LIMIT`` lines of code;
- the site machinery (every Python file under ``docs/``, the JavaScript in
  ``docs/_static/`` and the Python in ``.ci/``) holds at most
  ``SITE_CEILING`` lines of code, a ceiling set at its size on the day the
  rule came in: it may only go down.

Why code and not lines: a ceiling on lines was once met by cutting the
docstrings and comments that say why (the architecture review of 2026-12
counts docstrings -66 % on that day). Counted on code, explaining costs
nothing, and only simpler code makes room.

A line of code is a line that holds a token other than a comment, in
Python also other than a docstring (a string that opens a module, a class
or a function). A statement over three lines is three lines of code.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "autograd_notes"
MODULE_LIMIT = 600
# The site machinery's code lines on 2026-12-02 (3,020), and what 2026-12-03
# added: docs/_ext/quietbuild.py's imports and setup (5), which took conf.py's
# one side effect at import, and docs/_ext/siteconfig.py (15), the one reader
# of pyproject.toml's table of editions that five copies of it became, and
# code that takes the editions from that table instead of naming them
# (docs/build.py's loop over them, conf.py's edit links: 9). Then the site
# machinery became one package (22): its __init__.py (FEATURES and the setup
# that loads them: 11 lines more than conf.py's list of them was) and
# settings.py, which took from conf.py what depends on torch, the package or
# the edition (11 more: its imports, and handlers in place of code that ran
# at import). Then words written per language in code went to the catalogs
# (8): docs/pdf.py reads its title and contents pages' words from site.po
# (its text(), 10 more) where it held a table per language, and the new
# issue's text and the verified versions' "and" are site.po's (2 fewer).
# Then the words written per language in code went to site.po (29):
# sitewords.py (16), the one reader of site.po where no build runs (the PDF,
# which lost its own reader: 3 fewer; a drawing's alt text; the tests), in
# place of figures.py's Chinese patterns (its sentences, now site.po's, are
# matched and said in any edition's language, "1 arrow" as well: 6 more),
# and exercises.py's
# table of "Solution" per language (2 more); the source language read from
# the editions' table (SOURCE, an import in five modules) where "en" was
# written; the Read the Docs address of any translated edition (5 more).
# Then the text transformations left the Sphinx adapters (17: the imports
# and headers of two modules): comments.py (finding and translating comments
# in code, from codecomments.py) and markdown.py (a download's text made
# Markdown and translated, from downloads.py), pure functions with their own
# tests (test_comments.py, test_markdown.py).
SITE_CEILING = 3_125

_NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}
_OPENS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def python_code_lines(source: str) -> int:
    """Lines of ``source`` with a token that is neither a comment nor a docstring."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, _OPENS) or not node.body:
            continue
        first = node.body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            end = first.end_lineno or first.lineno
            docstrings.update(range(first.lineno, end + 1))
    code: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            lines = range(token.start[0], token.end[0] + 1)
            code.update(line for line in lines if line not in docstrings)
    return len(code)


# After one of these (or at the start), a "/" opens a regular expression
# literal, not a division: enough for the project's scripts, which divide
# only after a name, a number or a closing bracket (and never write
# ``return /re/``, which this would read as two divisions).
_BEFORE_REGEX = set("(,=:[!&|?{};+-*%<>~^") | {""}
_QUOTES = "'\"`"


def javascript_code_lines(source: str) -> int:
    """Lines of ``source`` with anything but ``//`` and ``/* */`` comments.

    Strings, template literals and regular expression literals are read as
    such, so a ``//`` inside one is code.
    """
    code: set[int] = set()
    line, i, n = 1, 0, len(source)
    previous = ""  # the last character of code, blanks aside
    while i < n:
        char = source[i]
        if char == "\n":
            line += 1
            i += 1
            continue
        if char.isspace():
            i += 1
            continue
        if source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        if source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += source.count("\n", i, end)
            i = end
            continue
        code.add(line)
        if char in _QUOTES or (char == "/" and previous in _BEFORE_REGEX):
            i, line = _skip_literal(source, i, line, code)
            previous = char
            continue
        previous = char
        i += 1
    return len(code)


def _skip_literal(
    source: str, start: int, line: int, code: set[int]
) -> tuple[int, int]:
    """Past the string or regular expression that opens at ``start``.

    Returns the index after its closing character and the line there; every
    line it spans is code.
    """
    close, i, in_class = source[start], start + 1, False
    while i < len(source):
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if char == "\n":
            line += 1
            code.add(line)
        if close == "/" and char == "[":
            in_class = True
        elif close == "/" and char == "]":
            in_class = False
        elif char == close and not in_class:
            return i + 1, line
        i += 1
    return i, line


def code_lines(path: Path) -> int:
    """The lines of code in a ``.py`` or ``.js`` file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".js":
        return javascript_code_lines(text)
    return python_code_lines(text)


def package_modules() -> list[Path]:
    return sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.js")])


def site_machinery() -> list[Path]:
    docs = ROOT / "docs"
    generated = {"_build", "tutorials", "jupyter_execute"}  # built, not written
    python = [
        path
        for path in docs.rglob("*.py")
        if generated.isdisjoint(path.relative_to(docs).parts)
    ]
    scripts = [*(docs / "_static").glob("*.js"), *(ROOT / ".ci").glob("*.py")]
    return sorted([*python, *scripts])


def test_python_lines_of_code_leave_out_docstrings_comments_and_blanks() -> None:
    source = '''"""A module docstring,
over two lines."""

import os  # a comment after code is code


class Thing:
    """A class docstring."""

    # a comment alone

    def method(self) -> str:
        """A function docstring."""
        text = """a string that is
not a docstring"""
        return (
            text
        )
'''
    # import, class, def, the two lines of ``text``, the three of ``return``
    assert python_code_lines(source) == 8


def test_javascript_lines_of_code_leave_out_comments_but_not_literals() -> None:
    source = """// a comment
/* a block
   comment */
var url = "http://example.org"; // after code
var re = /\\/\\/ not a comment [/*]/g;
var quote = `a template
over two lines // still a string`;

var half = width / 2; /* a division, then a comment */
"""
    assert javascript_code_lines(source) == 5


def test_every_package_module_holds_at_most_600_lines_of_code() -> None:
    sizes = {path.relative_to(ROOT): code_lines(path) for path in package_modules()}
    assert len(sizes) > 20  # the package's modules were found
    over = {str(path): lines for path, lines in sizes.items() if lines > MODULE_LIMIT}
    assert not over, f"over {MODULE_LIMIT} lines of code (split by idea): {over}"


def test_the_site_machinery_stays_under_its_ceiling() -> None:
    sizes = {path.relative_to(ROOT): code_lines(path) for path in site_machinery()}
    assert Path("docs/conf.py") in sizes
    assert Path("docs/_static/table-labels.js") in sizes
    assert Path(".ci/compat.py") in sizes
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    shown = ", ".join(f"{path} {lines}" for path, lines in largest)
    assert total <= SITE_CEILING, (
        f"the site machinery holds {total:,} lines of code, over its ceiling of "
        f"{SITE_CEILING:,}: simplify before adding (largest: {shown})"
    )


def test_the_ceiling_is_not_far_above_the_code() -> None:
    """A ceiling far above the code would let it grow again unnoticed: when
    code goes, lower ``SITE_CEILING`` to what is left."""
    total = sum(map(code_lines, site_machinery()))
    assert SITE_CEILING - total <= 50, (
        f"the site machinery is down to {total:,} lines of code: lower "
        f"SITE_CEILING ({SITE_CEILING:,}) to {total:,}"
    )
