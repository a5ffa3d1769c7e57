"""Notebooks that read well outside the site: every executed page has one.

Jobs (``build-finished`` handlers, in both editions):

* :func:`write_page_notebooks` (priority 500) writes a notebook for every
  MyST page that executes code (:func:`executed_pages`: a page whose front
  matter names a kernelspec) to ``<outdir>/notebooks/<docname>.ipynb``: its
  Markdown cells, in the zh_CN edition translated from the page's catalog;
  its code cells, with the comments translated as on the page
  (``codecomments``), without the cells the page removes (``remove-cell``:
  the page's hidden checks, as sphinx-gallery drops a tutorial's);
* :func:`clean_tutorial_notebooks` (priority 600, after ``zhdownloads`` has
  translated the zh notebooks) cleans the tutorials' notebooks that
  sphinx-gallery wrote under ``<outdir>/_downloads/``, inside the
  download-all ``.zip`` too, and copies each to
  ``<outdir>/notebooks/tutorials/<name>.ipynb`` (what
  ``docs/publish_notebooks.py`` publishes);
* cleaning, in every notebook: Sphinx markup becomes Markdown
  (:func:`to_markdown`): a cross-reference is a link to the hosted page
  (``html_baseurl``), an API name we do not document is plain code; labels,
  badges and substitutions become text; each exercise's solution is
  collapsed (``exercises``).

``SPHINX_MARKUP`` lists every shape of Sphinx markup a notebook must not hold;
``tests/site/test_launch.py`` checks the notebooks against it.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalogs import messages
from editions import EDITIONS
from exercises import collapse_in_notebook
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


# Every shape of Sphinx markup, as it would appear in a notebook's Markdown.
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
# What rst2md leaves of a :ref: (it drops ":ref:"): `label` or `text <label>`.
LABEL = re.compile(r"`(?:(?P<text>[^`<]*?)\s+<)?(?P<label>[\w.:-]+)>?`")


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
        env = app.env
        std = env.domaindata["std"]
        py = env.domaindata["py"]
        objects = {
            name: (entry.docname, entry.node_id)
            for table in (py["modules"], py["objects"])
            for name, entry in table.items()
        }
        language = app.config.language
        # Where the edition lives on the hosted site, under html_baseurl.
        folder = EDITIONS[language][1] if language in EDITIONS else f"{language}/"
        return cls(
            docname=docname,
            base=app.config.html_baseurl + folder,
            labels={k: tuple(v) for k, v in std["labels"].items()},
            terms={k: tuple(v[:2]) for k, v in std["objects"].items()},
            objects=objects,
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
            return self.doc(text, target)
        if name == "ref":
            return self.ref(text, target)
        if name == "term":
            return self.term(text, target)
        if name in PY_ROLES:
            return self.py(name, text, target)
        # Badges, abbreviations, anything else: its text.
        return text or content

    def doc(self, text: str | None, target: str) -> str:
        if target.startswith("/"):
            docname = target.lstrip("/")
        else:
            folder = self.docname.rpartition("/")[0]
            docname = f"{folder}/{target}" if folder else target
        docname = docname.removesuffix(".md").removesuffix(".rst")
        if docname not in self.titles:
            raise KeyError(f"no page {docname!r}")
        return f"[{text or self.titles[docname]}]({self.url(docname)})"

    def ref(self, text: str | None, label: str) -> str:
        label = label.lower()
        if label not in self.labels:
            raise KeyError(f"no label {label!r}")
        docname, anchor, title = self.labels[label]
        return f"[{text or title}]({self.url(docname, anchor)})"

    def leftover_ref(self, match: re.Match[str]) -> str:
        """A :ref: as rst2md leaves it, or inline code that only looks like one.

        A backquoted ``text <label>`` is a reference when the label exists; a
        lone backquoted ``label`` only when it is a tutorial's (``sphx_glr_``):
        other code in backquotes may well spell a label.
        """
        text, label = match["text"], match["label"]
        is_ref = label.lower() in self.labels and (
            text is not None or label.startswith("sphx_glr_")
        )
        if text is not None and not match.group(0).endswith(">`"):
            return match.group(0)
        if text is None and match.group(0).endswith(">`"):
            return match.group(0)
        return self.ref(text, label) if is_ref else match.group(0)

    def term(self, text: str | None, target: str) -> str:
        key = ("term", target.lower())
        if key not in self.terms:
            raise KeyError(f"no glossary term {target!r}")
        docname, anchor = self.terms[key][:2]
        return f"[{text or target}]({self.url(docname, anchor)})"

    def py(self, role: str, text: str | None, target: str) -> str:
        short = target.startswith("~")
        name = target.lstrip("~.")
        if text is None:
            text = name.rpartition(".")[2] if short else name
            if role in {"func", "meth"}:
                text += "()"
        found = self.objects.get(name)
        if found is None:
            return f"`{text}`"  # not ours (torch, the standard library): code
        return f"[`{text}`]({self.url(*found)})"

    def substitution(self, match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name not in self.substitutions:
            raise KeyError(f"no substitution {name!r}")
        return str(self.substitutions[name])


def to_markdown(text: str, resolver: Resolver) -> str:
    """A notebook Markdown cell's text, with Sphinx markup made Markdown."""

    def role(match: re.Match[str]) -> str:
        name = match["rst"] or match["myst"]
        return resolver.role(name, match["a"] or match["b"])

    text = ROLE.sub(role, text)
    # sphinx-gallery's rst2md turns :ref:`x` into `x`: a label in backquotes.
    text = LABEL.sub(resolver.leftover_ref, text)
    # `text <https://...>` left by rst2md (no trailing _ after a :ref:): links.
    text = re.sub(r"`([^`<]+?)\s*<(https?://[^`>]+)>`_*", r"[\1](\2)", text)
    text = re.sub(r"\{\{\s*([^}]*?)\s*\}\}", resolver.substitution, text)
    text = re.sub(r"^\([\w.-]+\)=\s*\n?", "", text, flags=re.M)  # MyST targets
    # A definition list (MyST's deflist): the term in bold, then its text.
    text = re.sub(r"^(\S[^\n]*)\n: ", r"**\1**\n\n", text, flags=re.M)
    return text.replace("\\ ", "")  # reST's separator next to Chinese text


def markup_left(text: str) -> list[str]:
    """The Sphinx markup still in ``text``, as ``"kind: fragment"`` lines."""
    found = []
    for kind, pattern in SPHINX_MARKUP.items():
        for match in pattern.finditer(text):
            found.append(f"{kind}: {match.group(0)!r}")
    return found


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def clean_notebook(notebook: dict[str, Any], resolver: Resolver, language: str) -> None:
    """Markdown without Sphinx markup; solutions collapsed. In place."""
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = to_markdown(_source(cell), resolver)
    collapse_in_notebook(notebook, language)
    notebook.setdefault("metadata", {})["language_info"] = {"name": "python"}


def _write(notebook: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", "utf-8")


def _clean_and_check(app: Sphinx, docname: str, notebook: dict[str, Any]) -> bool:
    """Clean ``notebook``; warn (fail the build) on what cannot be cleaned."""
    try:
        clean_notebook(notebook, Resolver.from_app(app, docname), app.config.language)
    except KeyError as error:
        logger.warning(
            "notebook of %s: a reference does not resolve: %s",
            docname,
            error.args[0],
            type="notebooks",
        )
        return False
    markdown = "\n".join(
        _source(c) for c in notebook["cells"] if c["cell_type"] == "markdown"
    )
    for left in markup_left(markdown):
        logger.warning(
            "Sphinx markup left in the notebook of %s: %s",
            docname,
            left,
            type="notebooks",
        )
    return True


# -- The tutorials' notebooks ---------------------------------------------------


def tutorial_notebooks(outdir: Path) -> Iterator[Path]:
    yield from sorted(Path(outdir, "_downloads").rglob("[0-9][0-9]_*.ipynb"))


def clean_tutorial_notebooks(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    cleaned: dict[str, bytes] = {}
    for path in tutorial_notebooks(outdir):
        docname = f"tutorials/{path.stem}"
        notebook = json.loads(path.read_text("utf-8"))
        if _clean_and_check(app, docname, notebook):
            _write(notebook, path)
        cleaned[path.name] = path.read_bytes()
        target = outdir / "notebooks" / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    for archive in sorted(Path(outdir, "_downloads").rglob("*.zip")):
        with zipfile.ZipFile(archive) as old:
            members = [(info, old.read(info)) for info in old.infolist()]
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as new:
            for info, data in members:
                new.writestr(info, cleaned.get(Path(info.filename).name, data))


# -- The executed pages' notebooks -----------------------------------------------

FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def executed_pages(app: Sphinx) -> list[str]:
    """The MyST pages that run code: their front matter names a kernelspec."""
    cached: list[str] | None = getattr(app, "_executed_pages", None)
    if cached is not None:
        return cached
    found = []
    for docname in sorted(app.env.found_docs):
        path = Path(app.env.doc2path(docname))
        if path.suffix != ".md":
            continue
        front = FRONT_MATTER.match(path.read_text("utf-8"))
        if front and re.search(r"^kernelspec:", front.group(1), re.M):
            found.append(docname)
    app._executed_pages = found  # type: ignore[attr-defined]
    return found


def _translator(app: Sphinx) -> tuple[Callable[[str], str], list[str]]:
    """Message -> its translation in this edition (English: itself)."""
    missing: list[str] = []
    if app.config.language == "en":
        return (lambda message: message), missing
    catalog = messages(app)

    def lookup(message: str) -> str:
        if message not in catalog:
            missing.append(message)
            return message
        return catalog[message]

    return lookup, missing


HEADING = re.compile(r"^(#{1,6} )(.*)$")
ITEM_START = re.compile(r"^(\s*)([-*+] |\d+\. |: )(.*)$")  # : a definition
FENCE = re.compile(r"^(`{3,}|:{3,})")
WORDS = re.compile(r"[A-Za-z]{2,}")


def translate_markdown(text: str, lookup: Callable[[str], str]) -> str:
    """A MyST Markdown cell, each message (paragraph, heading, list item,
    table cell) replaced by ``lookup(message)``; fenced blocks unchanged."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0

    def message(parts: list[str]) -> str:
        return " ".join(p.strip() for p in parts)

    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line.strip())
        if fence:
            out.append(line)
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence.group(1)):
                out.append(lines[i])
                i += 1
            if i < len(lines):
                out.append(lines[i])
                i += 1
            continue
        if not line.strip() or re.match(r"^\([\w.-]+\)=\s*$", line):
            out.append(line)
            i += 1
            continue
        heading = HEADING.match(line)
        if heading:
            out.append(heading.group(1) + lookup(heading.group(2).strip()))
            i += 1
            continue
        if line.lstrip().startswith("|"):
            out.append(_table_row(line, lookup))
            i += 1
            continue
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
        out.append(prefix + lookup(message(parts)))
    return "\n".join(out)


def _table_row(line: str, lookup: Callable[[str], str]) -> str:
    cells = line.strip().strip("|").split("|")
    if all(re.fullmatch(r"\s*:?-+:?\s*", c) for c in cells):
        return line
    translated = [
        lookup(c.strip()) if WORDS.search(c) and not _is_code(c) else c.strip()
        for c in cells
    ]
    return "| " + " | ".join(translated) + " |"


def _is_code(cell: str) -> bool:
    return bool(re.fullmatch(r"\s*`[^`]*`\s*", cell))


def page_notebook(app: Sphinx, docname: str) -> dict[str, Any]:
    """The notebook of a MyST page, in this edition's language."""
    from codecomments import CommentError, translate_comments
    from myst_nb.core.read import read_myst_markdown_notebook

    source = Path(app.env.doc2path(docname)).read_text("utf-8")
    notebook = read_myst_markdown_notebook(source)
    lookup, missing = _translator(app)
    catalog_get: Callable[[str], str | None] | None = None
    if app.config.language != "en":
        catalog_get = messages(app).get
    cells = []
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "code" and "remove-cell" in tags:
            continue
        text = cell.source
        if cell.cell_type == "markdown":
            text = translate_markdown(text, lookup)
        elif catalog_get is not None:
            with contextlib.suppress(CommentError):  # if not: kept, as on the page
                text = translate_comments(text, catalog_get)
        entry: dict[str, Any] = {
            "cell_type": cell.cell_type,
            "id": f"cell-{len(cells)}",  # nbformat 4.5: stable ids
            "metadata": {k: v for k, v in cell.metadata.items() if k == "tags"},
            "source": text,
        }
        if cell.cell_type == "code":
            entry |= {"execution_count": None, "outputs": []}
        cells.append(entry)
    for message in missing:
        if WORDS.search(message):
            logger.warning(
                "untranslated text in the notebook of %s: %r",
                docname,
                message[:100],
                type="translation",
            )
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3",
                "language": "python",
            },
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_page_notebooks(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for docname in executed_pages(app):
        notebook = page_notebook(app, docname)
        if _clean_and_check(app, docname, notebook):
            _write(notebook, Path(app.outdir, "notebooks", f"{docname}.ipynb"))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", write_page_notebooks, priority=500)
    app.connect("build-finished", clean_tutorial_notebooks, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
