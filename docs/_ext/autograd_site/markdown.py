"""A download's text made Markdown, and translated: pure functions, no Sphinx.

A download is read without Sphinx, so its text loses Sphinx's markup:
:func:`to_markdown` makes each role a Markdown link to the hosted page of
the same edition (:class:`Resolver`: which targets exist, and where), a
name we do not document plain code, a substitution its value, a MyST
definition list bold terms; :func:`markup_left` names what is left.
:func:`translate_rst` (a tutorial's text) and :func:`translate_markdown`
(an executed page's Markdown cell) translate each paragraph, title, list
item and table cell by a lookup, and wrap it (``cjk.width`` columns) where
asked; comments in code blocks by ``comments``. ``downloads`` writes the
files with them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cjk import CLOSING, OPENING, width
from .comments import CommentError, translate_comments, wrap

# Every shape of Sphinx markup, as it would appear in a download's text.
SPHINX_MARKUP: dict[str, re.Pattern[str]] = {
    "reST role": re.compile(r":(?:[a-z]+:)?[a-z][a-z-]*:`"),
    "MyST role": re.compile(r"\{[a-z][\w:-]*\}`"),
    "gallery label": re.compile(r"`sphx_glr_[\w.]+`|\bsphx_glr_\w+"),
    "reST reference with target": re.compile(r"`[^`]*\s<[\w.:/-]+>`_*"),
    "reST directive": re.compile(r"^\s*\.\. [\w:-]+::", re.M),
    "reST target": re.compile(r"^\s*\.\. _[^:]+:", re.M),
    "MyST directive": re.compile(r"^\s*(?:`{3,}|:{3,})\s*\{[\w:-]+\}", re.M),
    "MyST target": re.compile(r"^\([\w.-]+\)=\s*$", re.M),
    "MyST substitution": re.compile(r"\{\{[^}]*\}\}"),
    "reST escaped space": re.compile(r"\\ "),
    "MyST definition": re.compile(r"^: ", re.M),
}
PY_ROLES = {"func", "meth", "class", "mod", "attr", "obj", "data", "exc"}
ROLE = re.compile(
    r":(?:py:)?(?P<rst>[a-z][a-z-]*):`(?P<a>[^`]+)`"  # :func:`x`
    r"|\{(?:py:)?(?P<myst>[a-z][\w-]*)\}`(?P<b>[^`]+)`"  # {func}`x`
)
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
BADGE = re.compile(r"^\{bdg-[\w-]+\}`[^`]*`[ \t]*\n(?:[ \t]*\n)?", re.M)
BOLD = re.compile(rf"\*\*([{OPENING}]*)([^*\n]+?)([{CLOSING}]*)\*\*")


@dataclass
class Resolver:
    """Turns a role into Markdown: links to the hosted pages of one edition."""

    docname: str  # the page the text comes from (relative :doc: targets)
    base: str  # the hosted edition's URL, ending in /
    # (role, name) -> (docname, anchor, title); role: doc, ref, term or py
    targets: dict[tuple[str, str], tuple[str, str, str]]
    substitutions: dict[str, Any] = field(default_factory=dict)

    def role(self, name: str, content: str) -> str:
        content = " ".join(content.split())
        match = EXPLICIT.match(content)
        text, target = (match["text"], match["target"]) if match else (None, content)
        if name == "math":
            return f"${content}$"
        if name in PY_ROLES:
            key = ("py", target.lstrip("~."))
            if text is None:
                text = key[1].rpartition(".")[2] if target[0] == "~" else key[1]
                text += "()" if name in {"func", "meth"} else ""
            text = f"`{text}`"  # a name not ours (torch...): code, no link
        elif name == "doc":
            folder = self.docname.rpartition("/")[0] if target[0] != "/" else ""
            key = ("doc", f"{folder}/{target}".strip("/").removesuffix(".md"))
        elif name in ("ref", "term"):
            key = (name, target.lower())
        else:
            return text or content  # badges, abbreviations: their text
        if key not in self.targets:
            if name in PY_ROLES:
                return text
            raise KeyError(f"no {name} {target!r}")
        docname, anchor, title = self.targets[key]
        anchor = f"#{anchor}" if anchor else ""
        return f"[{text or title}]({self.base}{docname}.html{anchor})"


def to_markdown(text: str, resolver: Resolver) -> str:
    """reST or MyST text with its Sphinx markup made Markdown."""
    text = BADGE.sub("", text)  # the page's kind, shown as a badge: not text
    text = ROLE.sub(
        lambda m: resolver.role(m["rst"] or m["myst"], m["a"] or m["b"]), text
    )
    text = re.sub(r"`([^`<]+?)\s*<(https?://[^`>]+)>`_*", r"[\1](\2)", text)
    subst = resolver.substitutions
    text = re.sub(r"\{\{\s*([^}]*?)\s*\}\}", lambda m: str(subst[m[1]]), text)
    text = re.sub(r"^\([\w.-]+\)=\s*\n?", "", text, flags=re.M)  # MyST targets
    # A definition list (MyST's deflist): the term in bold, then its text.
    text = re.sub(r"^(\S[^\n]*)\n: ", r"**\1**\n\n", text, flags=re.M)
    # Without reST's separator, ``**预测。**x`` does not close in CommonMark
    # (punctuation before ``**``, a letter after it): the punctuation moves out.
    return BOLD.sub(r"\1**\2**\3", text.replace("\\ ", ""))


def markup_left(text: str) -> list[str]:
    """The Sphinx markup still in ``text``, as ``"kind: fragment"`` lines."""
    return [
        f"{kind}: {match.group(0)!r}"
        for kind, pattern in SPHINX_MARKUP.items()
        for match in pattern.finditer(text)
    ]


UNDERLINE = re.compile(r"([=\-~^\"'`#*+])\1+")
ITEM = re.compile(r"(\* |- |\d+\. )")
DIRECTIVE = re.compile(r"^\.\. (?:math|code-block|code|sourcecode)::.*\n\n?", re.M)
PYTHON_BLOCK = re.compile(r"\.\. (code-block|code|sourcecode):: (python|py|python3)")


def translate_rst(
    text: str,
    lookup: Callable[[str], str],
    columns: int | None = None,
    comments: Callable[[str], str | None] | None = None,
) -> str:
    """reST, each paragraph, title and list item ``lookup``-ed and wrapped at
    ``columns`` (None: one line); with ``comments``, code comments translated."""
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
        if first.startswith((" ", "\t", "..")):
            start = len(out)
            out += block
            while i < len(lines) and (not lines[i].strip() or lines[i][:1] == " "):
                out.append(lines[i])
                i += 1
            if comments is not None and PYTHON_BLOCK.fullmatch(first.strip()):
                with contextlib.suppress(CommentError):  # if not: kept
                    code = translate_comments("\n".join(out[start + 1 :]), comments)
                    out[start + 1 :] = code.split("\n")
        elif len(block) >= 2 and UNDERLINE.fullmatch(block[1].strip()):
            title = lookup(first.strip())
            out += [title, block[1][0] * width(title)]
            if block[2:]:  # the text right under the title: a block of its own
                out += translate_rst(
                    "\n".join(block[2:]), lookup, columns, comments
                ).split("\n")
        elif ITEM.match(first):
            items: list[list[str]] = []
            for line in block:
                (items.append([line]) if ITEM.match(line) else items[-1].append(line))
            for item in items:
                marker = ITEM.match(item[0]).group(1)  # type: ignore[union-attr]
                words = lookup(" ".join(x.strip() for x in item)[len(marker) :])
                wrapped = wrap(words, columns - len(marker)) if columns else [words]
                out += [
                    marker + wrapped[0],
                    *(" " * len(marker) + x for x in wrapped[1:]),
                ]
        else:
            words = lookup(" ".join(x.strip() for x in block))
            out += wrap(words, columns) if columns else [words]
    return "\n".join(out)


HEADING = re.compile(r"^(#{1,6} )(.*)$")
ITEM_START = re.compile(r"^(\s*)([-*+] |\d+\. |: )(.*)$")  # : a definition
FENCE = re.compile(r"^(`{3,}|:{3,})")
WORDS = re.compile(r"[A-Za-z]{2,}")


def translate_markdown(text: str, lookup: Callable[[str], str]) -> str:
    """A MyST cell, each paragraph, heading, list item and table cell ``lookup``-ed."""
    out: list[str] = []
    lines, i = text.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line.strip())
        if fence:
            out.append(line)
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence.group(1)):
                out.append(lines[i])
                i += 1
            out += lines[i : i + 1]
            i += 1
        elif not line.strip() or re.match(r"^\([\w.-]+\)=\s*$", line):
            out.append(line)
            i += 1
        elif heading := HEADING.match(line):
            out.append(heading.group(1) + lookup(heading.group(2).strip()))
            i += 1
        elif line.lstrip().startswith("|"):  # a table row (not the rule): each cell
            cells = line.strip().strip("|").split("|")
            if not all(re.fullmatch(r"\s*:?-+:?\s*", c) for c in cells):
                line = "| " + " | ".join(_table_cell(c, lookup) for c in cells) + " |"
            out.append(line)
            i += 1
        else:
            item = ITEM_START.match(line)
            parts = [item.group(3) if item else line]
            i += 1
            while (
                i < len(lines)
                and lines[i].strip()
                and not ITEM_START.match(lines[i])
                and not HEADING.match(lines[i])
                and not FENCE.match(lines[i].strip())
            ):
                parts.append(lines[i])
                i += 1
            prefix = item.group(1) + item.group(2) if item else ""
            out.append(prefix + lookup(" ".join(p.strip() for p in parts)))
    return "\n".join(out)


def _table_cell(cell: str, lookup: Callable[[str], str]) -> str:
    words = WORDS.search(cell) and not re.fullmatch(r"\s*`[^`]*`\s*", cell)
    return lookup(cell.strip()) if words else cell.strip()
