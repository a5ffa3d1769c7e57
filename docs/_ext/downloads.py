"""Every download, in one pass: scripts, notebooks and zips of both editions.

:func:`write_downloads` (``build-finished``) writes, in the edition being built:

* each tutorial's ``_downloads/**/NN_name.py``: its text translated (zh_CN),
  Sphinx markup made plain (links to the hosted pages, ``$math$``, indented
  math and code), rewrapped at 79 columns; its code without the hidden checks
  and ``sphinx_gallery_*`` comments, comments translated; an install cell
  after the docstring; a last cell saving the figures of a script that draws;
* each tutorial's ``.ipynb`` (and a copy in ``notebooks/tutorials/``, which
  ``docs/publish_notebooks.py`` publishes), from the same blocks through
  sphinx-gallery's ``jupyter_notebook``, with ``first_notebook_cell`` the
  ``%pip install`` of the site's wheel (``sitewheel``);
* ``notebooks/<docname>.ipynb`` for each MyST page that executes code: cells
  the page removes dropped, cells whose input it removes hidden and without
  their asserts, text translated, the same install cell first;
* every ``.zip`` of ``_downloads`` rebuilt from those files, fixed timestamps.

Markdown has no Sphinx markup left (:func:`to_markdown`; what is left fails
the build), bold spans close in CommonMark, solutions are collapsed.
Kept ours: sphinx-gallery copies the English script verbatim (hidden checks,
markup), translates nothing, and has one ``first_notebook_cell`` per build
(set here per notebook: the ``[plot]`` extra only where it draws);
``last_notebook_cell`` is unused: a notebook shows its figures inline.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalogs import messages
from codecomments import CommentError, translate_comments, width, wrap
from editions import EDITIONS
from exercises import collapse_in_notebook
from sitewheel import requirement
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

TEXT: dict[str, dict[str, str]] = {
    "en": {
        "install_title": "Install the helper package",
        "install": (
            "This script imports `autograd_notes`, a small helper package "
            "written for this site; it is not on PyPI. Before you run the "
            "script, install the exact version that produced the outputs on "
            "the site ({version}), from the site itself{plot}, once, in the "
            "environment you run it in (it needs only torch):"
        ),
        "install_cell": (
            "`autograd_notes` is not on PyPI: this installs the version that "
            "produced the site's outputs ({version}), from the site{plot}"
        ),
        "plot": ", with matplotlib and networkx for the figures",
        "figures_title": "Keep the figures",
        "figures": (
            "Run in a terminal, a script's figures vanish when it ends. This "
            "cell saves each one as a PNG file in the current folder, and "
            "also shows them when matplotlib can open a window."
        ),
        "no_matplotlib": "without matplotlib the script drew nothing",
    },
    "zh_CN": {
        "install_title": "安装辅助包",
        "install": (
            "本脚本导入`autograd_notes`，这是为本站编写的一个小型辅助包，"
            "不在 PyPI 上。运行脚本之前，请在运行它的环境中安装一次产生本站输出的"
            "版本（{version}），安装包由本站提供{plot}；它只依赖 torch："
        ),
        "install_cell": (
            "`autograd_notes`不在 PyPI 上：本单元格从本站安装产生本站输出的"
            "版本（{version}）{plot}"
        ),
        "plot": "，并附带绘图所需的 matplotlib 和 networkx",
        "figures_title": "保存图形",
        "figures": (
            "在终端中运行时，脚本画出的图形会随脚本结束而消失。这个单元格把"
            "每个图形保存为当前文件夹中的 PNG 文件；matplotlib 能打开窗口时，"
            "也会显示它们。"
        ),
        "no_matplotlib": "没有 matplotlib 时，脚本什么也没有画",
    },
}
DRAWS = re.compile(r"\bdraw_graph\(|\bmatplotlib\b|\bplt\.")
"""Code that makes a figure: it needs the ``plot`` extra."""

# -- Sphinx markup made Markdown ---------------------------------------------------

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
BADGE = re.compile(r"^\{bdg-[\w-]+\}`[^`]*`[ \t]*\n(?:[ \t]*\n)?", re.M)  # a badge paragraph
OPENING, CLOSING = "（《「『“‘", "，。、：；？！）》」』”’"
BOLD = re.compile(rf"\*\*([{OPENING}]*)([^*\n]+?)([{CLOSING}]*)\*\*")


@dataclass
class Resolver:
    """Turns a role into Markdown: links to the hosted pages of one edition."""

    docname: str  # the page the text comes from (relative :doc: targets)
    base: str  # the hosted edition's URL, ending in /
    labels: dict[str, tuple[str, str, str]]  # label -> docname, anchor, title
    terms: dict[tuple[str, str], tuple[str, str]]  # ("term", name) -> docname, anchor
    objects: dict[str, tuple[str, str]]  # Python name -> docname, anchor
    titles: dict[str, str]  # docname -> title
    substitutions: dict[str, Any] = field(default_factory=dict)
    suffix: str = ".html"

    @classmethod
    def from_app(cls, app: Sphinx, docname: str) -> Resolver:
        env, language = app.env, app.config.language
        std, py = env.domaindata["std"], env.domaindata["py"]
        folder = EDITIONS[language][1] if language in EDITIONS else f"{language}/"
        return cls(
            docname=docname,
            base=app.config.html_baseurl + folder,
            labels={k: tuple(v) for k, v in std["labels"].items()},
            terms={k: tuple(v[:2]) for k, v in std["objects"].items()},
            objects={
                name: (entry.docname, entry.node_id)
                for table in (py["modules"], py["objects"])
                for name, entry in table.items()
            },
            titles={
                name: env.titles[name].astext() if name in env.titles else name
                for name in env.found_docs
            },
            substitutions=dict(app.config.myst_substitutions),
            suffix=app.config.html_file_suffix or ".html",
        )

    def url(self, docname: str, anchor: str = "") -> str:
        return self.base + docname + self.suffix + (f"#{anchor}" if anchor else "")

    def role(self, name: str, content: str) -> str:
        content = " ".join(content.split())
        match = EXPLICIT.match(content)
        text, target = (match["text"], match["target"]) if match else (None, content)
        if name == "math":
            return f"${content}$"
        if name == "doc":
            folder = self.docname.rpartition("/")[0]
            docname = (
                target.lstrip("/")
                if target.startswith("/") or not folder
                else (f"{folder}/{target}")
            )
            docname = docname.removesuffix(".md").removesuffix(".rst")
            if docname not in self.titles:
                raise KeyError(f"no page {docname!r}")
            return f"[{text or self.titles[docname]}]({self.url(docname)})"
        if name == "ref":
            if target.lower() not in self.labels:
                raise KeyError(f"no label {target!r}")
            docname, anchor, title = self.labels[target.lower()]
            return f"[{text or title}]({self.url(docname, anchor)})"
        if name == "term":
            if ("term", target.lower()) not in self.terms:
                raise KeyError(f"no glossary term {target!r}")
            docname, anchor = self.terms[("term", target.lower())][:2]
            return f"[{text or target}]({self.url(docname, anchor)})"
        if name in PY_ROLES:
            name_ = target.lstrip("~.")
            if text is None:
                text = name_.rpartition(".")[2] if target.startswith("~") else name_
                text += "()" if name in {"func", "meth"} else ""
            found = self.objects.get(name_)  # not ours (torch...): plain code
            return f"[`{text}`]({self.url(*found)})" if found else f"`{text}`"
        return text or content  # abbreviations, anything else: its text

    def substitution(self, match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name not in self.substitutions:
            raise KeyError(f"no substitution {name!r}")
        return str(self.substitutions[name])


def _bold(match: re.Match[str]) -> str:
    """Full-width punctuation moved out of a bold span: ``**预测。**x`` does not
    close in CommonMark (punctuation before ``**``, a letter after it)."""
    opening, inner, closing = match.groups()
    return f"{opening}**{inner}**{closing}"


def to_markdown(text: str, resolver: Resolver) -> str:
    """reST or MyST text with its Sphinx markup made Markdown."""
    text = BADGE.sub("", text)  # the page's kind, shown as a badge: not text
    text = ROLE.sub(
        lambda m: resolver.role(m["rst"] or m["myst"], m["a"] or m["b"]), text
    )
    text = re.sub(r"`([^`<]+?)\s*<(https?://[^`>]+)>`_*", r"[\1](\2)", text)
    text = re.sub(r"\{\{\s*([^}]*?)\s*\}\}", resolver.substitution, text)
    text = re.sub(r"^\([\w.-]+\)=\s*\n?", "", text, flags=re.M)  # MyST targets
    # A definition list (MyST's deflist): the term in bold, then its text.
    text = re.sub(r"^(\S[^\n]*)\n: ", r"**\1**\n\n", text, flags=re.M)
    return BOLD.sub(_bold, text.replace("\\ ", ""))  # reST's separator


def markup_left(text: str) -> list[str]:
    """The Sphinx markup still in ``text``, as ``"kind: fragment"`` lines."""
    return [
        f"{kind}: {match.group(0)!r}"
        for kind, pattern in SPHINX_MARKUP.items()
        for match in pattern.finditer(text)
    ]


# -- Translating reST text (the tutorials) -----------------------------------------

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
    """reST with each paragraph, title and list item replaced by ``lookup`` of
    it (its lines joined by spaces, as the catalogs hold it), wrapped at
    ``columns`` (None: one line each); directives and indented blocks kept,
    but with ``comments``, the comments of Python code translated."""
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
                out[start:] = _code_block_comments(out[start:], comments)
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


def _code_block_comments(
    lines: list[str], comments: Callable[[str], str | None]
) -> list[str]:
    """A ``code-block`` directive with the comments of its code translated."""
    body = next((n for n, line in enumerate(lines) if not line.strip()), len(lines))
    code = lines[body:]
    indent = min((len(x) - len(x.lstrip()) for x in code if x.strip()), default=0)
    try:
        translated = translate_comments("\n".join(x[indent:] for x in code), comments)
    except CommentError:
        return lines
    return lines[:body] + [
        " " * indent + x if x.strip() else x for x in translated.split("\n")
    ]


# -- Translating MyST text (the executed pages) ------------------------------------

HEADING = re.compile(r"^(#{1,6} )(.*)$")
ITEM_START = re.compile(r"^(\s*)([-*+] |\d+\. |: )(.*)$")  # : a definition
FENCE = re.compile(r"^(`{3,}|:{3,})")
WORDS = re.compile(r"[A-Za-z]{2,}")


def translate_markdown(text: str, lookup: Callable[[str], str]) -> str:
    """A MyST Markdown cell, each message (paragraph, heading, list item,
    table cell) replaced by ``lookup(message)``; fenced blocks unchanged."""
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
        elif line.lstrip().startswith("|"):
            cells = line.strip().strip("|").split("|")
            if not all(re.fullmatch(r"\s*:?-+:?\s*", c) for c in cells):
                line = (
                    "| "
                    + " | ".join(
                        lookup(c.strip())
                        if WORDS.search(c) and not re.fullmatch(r"\s*`[^`]*`\s*", c)
                        else c.strip()
                        for c in cells
                    )
                    + " |"
                )
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


# -- The downloads ---------------------------------------------------------------


@dataclass
class Edition:
    """What every download of one edition is written with."""

    app: Sphinx
    catalog: dict[str, str] | None  # None: English
    missing: list[str] = field(default_factory=list)

    def lookup(self, message: str) -> str:
        if self.catalog is None:
            return message
        if message not in self.catalog:
            self.missing.append(message)
        return self.catalog.get(message, message)

    def comments(self, code: str) -> str:
        if self.catalog is None:
            return code
        with contextlib.suppress(CommentError):  # if not: kept, as on the page
            code = translate_comments(code, self.catalog.get)
        return code

    def words(self, key: str, draws: bool = False) -> str:
        words = TEXT.get(self.app.config.language, TEXT["en"])
        plot = words["plot"] if draws else ""
        return words[key].format(version=self.app.config.release, plot=plot)

    def install_cell(self, code: str) -> str:
        """The notebook's first cell: why, in one line, then ``%pip install``."""
        draws = bool(DRAWS.search(code))
        extras = "[plot]" if draws else ""
        why = self.words("install_cell", draws)
        return f'# {why}\n%pip install "{requirement(self.app, extras)}"'

    def warn(self, docname: str, problems: list[str], what: str) -> None:
        for problem in problems:
            logger.warning(f"{what} of %s: %s", docname, problem, type="downloads")


def _text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def finish_notebook(notebook: dict[str, Any], ed: Edition, docname: str) -> str:
    """Solutions collapsed, markup checked; the notebook as JSON text."""
    collapse_in_notebook(notebook, ed.app.config.language)
    notebook.setdefault("metadata", {})["language_info"] = {"name": "python"}
    markdown = "\n".join(
        _text(c) for c in notebook["cells"] if c["cell_type"] == "markdown"
    )
    ed.warn(docname, markup_left(markdown), "Sphinx markup left in the notebook")
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def tutorial(ed: Edition, script: Path) -> dict[str, str]:
    """The ``.py`` and ``.ipynb`` downloads of a tutorial, by file name."""
    from sphinx_gallery.notebook import jupyter_notebook
    from sphinx_gallery.py_source_parser import (
        Block,
        remove_config_comments,
        remove_ignore_blocks,
        split_code_and_text_blocks,
    )

    docname = f"tutorials/{script.stem}"
    resolver = Resolver.from_app(ed.app, docname)
    _, blocks = split_code_and_text_blocks(script)
    code = [  # ignore blocks first: their markers are config comments too
        ed.comments(remove_config_comments(remove_ignore_blocks(b.content)).strip("\n"))
        for b in blocks
        if b.type == "code"
    ]
    texts = [
        translate_rst(
            b.content.strip("\n"), ed.lookup, None, ed.catalog and ed.catalog.get
        )
        for b in blocks
        if b.type == "text"
    ]
    ed.warn(
        docname,
        [repr(m[:100]) for m in ed.missing if WORDS.search(m)],
        "untranslated text in the downloads",
    )
    ed.missing.clear()
    try:
        texts = [to_markdown(t, resolver) for t in texts]
    except KeyError as error:
        ed.warn(
            docname, [f"a reference does not resolve: {error.args[0]}"], "downloads"
        )
        return {}
    kinds = iter(code), iter(texts)
    contents = [next(kinds[b.type == "text"]) for b in blocks]
    kept = [(b, c) for b, c in zip(blocks, contents, strict=True) if c.strip()]
    all_code = "\n".join(code)
    draws = bool(DRAWS.search(all_code))
    # The notebook: sphinx-gallery's, with the install cell first.
    conf = {
        **ed.app.config.sphinx_gallery_conf,
        "first_notebook_cell": ed.install_cell(all_code),
    }
    notebook = jupyter_notebook(
        [Block(b.type, c, b.lineno) for b, c in kept], conf, script.parent
    )
    # The script: the text as plain comments, the install and figures cells.
    parts, prose = [], []
    for n, (block, content) in enumerate(kept):
        if block.type == "code":
            parts.append(content)
            continue
        # Directives become their indented body: math and code read as they are.
        content = DIRECTIVE.sub("", content)
        prose.append(translate_rst(content, str, 79 if n == 0 else 77))
        if n:
            parts.append(_cell(None, prose[-1]))
            continue
        parts.append('"""\n' + prose[0].replace("\\", "\\\\") + '\n"""')
        pip = f'    pip install "{requirement(ed.app, "[plot]" if draws else "")}"'
        words = ed.words("install", draws)
        parts.append(_cell(ed.words("install_title"), words, (pip,)))
    if draws:
        parts.append(_cell(ed.words("figures_title"), ed.words("figures")))
        parts.append(figures_code(script.stem, ed.words("no_matplotlib")))
    py = "\n\n".join(parts) + "\n"
    ed.warn(docname, markup_left("\n".join(prose)), "Sphinx markup left in the script")
    return {
        f"{script.stem}.py": py,
        f"{script.stem}.ipynb": finish_notebook(notebook, ed, docname),
    }


def _cell(title: str | None, text: str, code: tuple[str, ...] = ()) -> str:
    """A text cell of a sphinx-gallery script."""
    lines = [title, "-" * width(title)] if title else []
    lines += text.split("\n") if title is None else wrap(text, 77)
    lines += ["", *code] if code else []
    return "# %%\n" + "\n".join(f"# {x}".rstrip() for x in lines)


def figures_code(stem: str, no_matplotlib: str) -> str:
    return f"""\
try:
    import matplotlib.pyplot as plt
except ImportError:  # {no_matplotlib}
    numbers = []
else:
    numbers = plt.get_fignums()
for number in numbers:
    name = f"{stem}_figure_{{number}}.png"
    plt.figure(number).savefig(name, dpi=200)
    print(f"saved {{name}}")
windowless = {{"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}}
if numbers and plt.get_backend().lower() not in windowless:
    plt.show()"""


# -- The executed pages' notebooks ---------------------------------------------------

FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def executed_pages(app: Sphinx) -> list[str]:
    """The MyST pages that run code: their front matter names a kernelspec."""
    found = []
    for docname in sorted(app.env.found_docs):
        path = Path(app.env.doc2path(docname))
        front = (
            FRONT_MATTER.match(path.read_text("utf-8"))
            if path.suffix == ".md"
            else None
        )
        if front and re.search(r"^kernelspec:", front.group(1), re.M):
            found.append(docname)
    return found


def without_asserts(code: str) -> str:
    """``code`` without its ``assert`` statements (a block keeps one statement)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    drop: set[int] = set()
    for node in ast.walk(tree):
        for body in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")):
            if not isinstance(body, list):
                continue
            asserts = [s for s in body if isinstance(s, ast.Assert)]
            if asserts and (len(asserts) < len(body) or isinstance(node, ast.Module)):
                for s in asserts:
                    drop.update(range(s.lineno - 1, s.end_lineno or s.lineno))
    return "\n".join(x for n, x in enumerate(code.split("\n")) if n not in drop)


def page_notebook(ed: Edition, docname: str) -> str:
    """The notebook of a MyST page, in this edition's language."""
    from myst_nb.core.read import read_myst_markdown_notebook

    source = Path(ed.app.env.doc2path(docname)).read_text("utf-8")
    resolver = Resolver.from_app(ed.app, docname)
    cells: list[dict[str, Any]] = []
    for cell in read_myst_markdown_notebook(source).cells:
        tags = cell.metadata.get("tags", [])
        text, metadata = cell.source, {"tags": tags} if tags else {}
        if cell.cell_type == "markdown":
            try:
                if ed.catalog is not None:
                    text = translate_markdown(text, ed.lookup)
                text = to_markdown(text, resolver)
            except KeyError as error:
                ed.warn(
                    docname,
                    [f"a reference does not resolve: {error.args[0]}"],
                    "notebook",
                )
        elif "remove-cell" in tags:
            continue  # the page's hidden checks, as sphinx-gallery drops a tutorial's
        elif "remove-input" in tags:  # shown as on the page: output only
            text = without_asserts(text)
            metadata |= {
                "jupyter": {"source_hidden": True},
                "colab": {"cellView": "form"},
            }
        if not text.strip():
            continue
        text = ed.comments(text) if cell.cell_type == "code" else text
        entry = {"cell_type": cell.cell_type, "metadata": metadata, "source": text}
        if cell.cell_type == "code":
            entry |= {"execution_count": None, "outputs": []}
        cells.append(entry)
    ed.warn(
        docname,
        [repr(m[:100]) for m in ed.missing if WORDS.search(m)],
        "untranslated text in the notebook",
    )
    ed.missing.clear()
    code = "\n".join(c["source"] for c in cells if c["cell_type"] == "code")
    install = {
        "cell_type": "code",
        "metadata": {},
        "execution_count": None,
        "outputs": [],
    }
    cells.insert(0, install | {"source": ed.install_cell(code)})
    for n, cell in enumerate(cells):
        cell["id"] = f"cell-{n}"  # nbformat 4.5: stable ids
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = {
        "cells": cells,
        "metadata": {"kernelspec": kernel},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return finish_notebook(notebook, ed, docname)


# -- The pass ----------------------------------------------------------------------


def write_downloads(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    ed = Edition(app, None if app.config.language == "en" else messages(app))
    outdir = Path(app.outdir)
    files: dict[str, str] = {}
    for examples in app.config.sphinx_gallery_conf["examples_dirs"]:
        for script in sorted(Path(app.srcdir, examples).glob("[0-9][0-9]_*.py")):
            files |= tutorial(ed, script)
    for docname in executed_pages(app):
        _write(outdir / "notebooks" / f"{docname}.ipynb", page_notebook(ed, docname))
    for name, text in files.items():
        if name.endswith(".ipynb"):
            _write(outdir / "notebooks" / "tutorials" / name, text)
    for path in sorted(Path(outdir, "_downloads").rglob("*")):
        if path.name in files:
            path.write_text(files[path.name], "utf-8")
        elif path.suffix == ".zip":
            rezip(path, {k: v.encode("utf-8") for k, v in files.items()})


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def rezip(archive: Path, files: dict[str, bytes]) -> None:
    """``archive`` with each member named in ``files`` replaced; fixed stamps."""
    with zipfile.ZipFile(archive) as old:
        members = [(info.filename, old.read(info)) for info in old.infolist()]
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as new:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            new.writestr(info, files.get(Path(name).name, data))


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sitewheel")
    app.connect("build-finished", write_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
