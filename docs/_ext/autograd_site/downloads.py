"""Every download of both editions, in one pass: :func:`write_downloads`.

A reader who downloads a tutorial or a page runs it outside this repository,
perhaps in Colab, and reads it without Sphinx. sphinx-gallery's downloads
are the English script as it is (hidden checks and Sphinx markup included)
and a notebook of it; myst-nb offers no notebook of an executed page. So one
``build-finished`` handler, in each edition, writes:

* each tutorial's ``.py``: the text translated, Sphinx markup made
  Markdown, no hidden checks (``sphinx_gallery_start_ignore`` blocks) or config
  comments, comments translated (``codecomments``), an install cell after
  the docstring and, when it draws, a last cell that saves each figure (in
  a terminal they vanish when the script ends);
* its ``.ipynb``: sphinx-gallery's ``jupyter_notebook`` of the same blocks,
  with an install cell first (``first_notebook_cell``, with ``[plot]`` only
  where it draws); figures show inline, so no last cell;
* each executed page's notebook, ``notebooks/<docname>.ipynb``: the page's
  hidden cells dropped (``remove-cell``), or kept hidden without their
  asserts (``remove-input``, as the page shows only their output);
* ``notebooks/tutorials/``: every tutorial notebook in one folder, which
  ``.github/workflows/docs.yml`` publishes for Colab (``launchbar``);
* every ``.zip`` rebuilt with those files, with fixed timestamps, so the
  archives match the single downloads and two builds give the same bytes.

In every download, Sphinx markup becomes Markdown (``markdown``, with
:func:`resolver`: a reference is a link to the hosted page of the same
edition, ``html_baseurl``; a name we do not document is plain code). In a notebook
each exercise's solution is collapsed (``exercises``). pip installs the wheel
``sitewheel`` publishes. What cannot be done (markup left, a message without
a translation, a reference that does not resolve) is a warning, so ``-W``
fails the build.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util import logging

from .catalogs import messages
from .cjk import width
from .comments import CommentError, translate_comments, wrap
from .exercises import HIDDEN, collapse_in_notebook, marker_word
from .markdown import (
    DIRECTIVE,
    WORDS,
    Resolver,
    markup_left,
    to_markdown,
    translate_markdown,
    translate_rst,
)
from .parallelread import executes
from .siteconfig import EDITIONS, SOURCE
from .sitewheel import requirement

logger = logging.getLogger(__name__)

TEXT = {  # in Chinese: docs/locale/zh_CN/LC_MESSAGES/site.po
    "install_title": "Install the helper package",
    "install": (
        "`autograd_notes` is not on PyPI: install the version that produced "
        "the site's outputs ({version}) from the site{plot}; it needs only torch:"
    ),
    "plot": ", with matplotlib and networkx for the figures",
    "figures_title": "Keep the figures",
    "figures": (
        "Run in a terminal, a script's figures vanish when it ends. This "
        "cell saves each one as a PNG file in the current folder, and "
        "also shows them when matplotlib can open a window."
    ),
    "no_matplotlib": "without matplotlib the script drew nothing",
}
DRAWS = re.compile(r"\bdraw_graph\(|\bmatplotlib\b|\bplt\.")  # needs [plot]


def resolver(app: Sphinx, docname: str) -> Resolver:
    """What the links of ``docname``'s download point to, in this edition."""
    env, language = app.env, app.config.language
    std, py = env.domaindata["std"], env.domaindata["py"]
    targets = {("ref", k): tuple(v) for k, v in std["labels"].items()}
    targets |= {(k, n): (*v[:2], n) for (k, n), v in std["objects"].items()}
    for table in (py["modules"], py["objects"]):
        targets |= {("py", k): (v.docname, v.node_id, k) for k, v in table.items()}
    for name in env.found_docs:
        title = env.titles[name].astext() if name in env.titles else name
        targets[("doc", name)] = (name, "", title)
    folder = EDITIONS[language].folder if language in EDITIONS else f"{language}/"
    base = app.config.html_baseurl + folder
    return Resolver(docname, base, targets, dict(app.config.myst_substitutions))


@dataclass
class Edition:
    """What every download of one edition is written with; warnings fail the build."""

    app: Sphinx
    catalog: dict[str, str] | None  # None: English
    missing: list[str] = field(default_factory=list)

    def lookup(self, message: str) -> str:
        if self.catalog is not None and message not in self.catalog:
            self.missing.append(message)
        return (self.catalog or {}).get(message, message)

    def comments(self, code: str) -> str:
        with contextlib.suppress(CommentError):  # if not: kept, as on the page
            code = translate_comments(code, (self.catalog or {}).get)
        return code

    def markdown(self, text: str, docname: str) -> str:
        try:
            return to_markdown(text, resolver(self.app, docname))
        except KeyError as error:
            self.warn(docname, f"a reference does not resolve: {error.args[0]}")
            return text

    def words(self, key: str, draws: bool = False) -> str:
        """``TEXT[key]`` in this edition (site.po: reST escapes, dropped here)."""
        plot = self.words("plot") if draws else ""
        text = str(get_translation("site")(TEXT[key])).replace("\\ ", "")
        return text.format(version=self.app.config.release, plot=plot)

    def pip(self, draws: bool) -> str:
        return f'pip install "{requirement(self.app, "[plot]" if draws else "")}"'

    def install_cell(self, code: str) -> str:
        """A notebook's first cell: why, in one line, then ``%pip install``."""
        draws = bool(DRAWS.search(code))
        return f"# {self.words('install', draws)}\n%{self.pip(draws)}"

    def warn(self, docname: str, *problems: str) -> None:
        problems += tuple(
            f"untranslated: {m[:100]!r}" for m in self.missing if WORDS.search(m)
        )
        self.missing.clear()
        for problem in problems:
            logger.warning("downloads of %s: %s", docname, problem, type="downloads")

    def notebook(self, notebook: dict[str, Any], docname: str) -> str:
        """Solutions collapsed, markup checked: the notebook's JSON text."""
        collapse_in_notebook(notebook, marker_word())
        notebook.setdefault("metadata", {})["language_info"] = {"name": "python"}
        text = "\n".join(
            "".join(c["source"])
            for c in notebook["cells"]
            if c["cell_type"] == "markdown"
        )
        self.warn(docname, *markup_left(text))
        return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def tutorial(ed: Edition, script: Path) -> dict[str, str]:
    """The ``.py`` and ``.ipynb`` downloads of a tutorial, by file name."""
    from sphinx_gallery import py_source_parser as sg
    from sphinx_gallery.notebook import jupyter_notebook

    docname, comments = f"tutorials/{script.stem}", ed.catalog and ed.catalog.get
    blocks = []
    for b in sg.split_code_and_text_blocks(script)[1]:
        if b.type == "code":  # ignore blocks first: their markers are config comments
            text = ed.comments(
                sg.remove_config_comments(sg.remove_ignore_blocks(b.content))
            )
        else:
            text = translate_rst(b.content.strip("\n"), ed.lookup, None, comments)
            text = ed.markdown(text, docname)
        if text.strip():
            blocks.append(sg.Block(b.type, text.strip("\n"), b.lineno))
    code = "\n".join(b.content for b in blocks if b.type == "code")
    draws = bool(DRAWS.search(code))
    # The notebook: sphinx-gallery's, the install cell first.
    conf = ed.app.config.sphinx_gallery_conf | {
        "first_notebook_cell": ed.install_cell(code)
    }
    notebook = ed.notebook(jupyter_notebook(blocks, conf, script.parent), docname)
    # The script: text as plain comments, directives as their indented body.
    parts, prose = [], []
    for n, block in enumerate(blocks):
        if block.type == "code":
            parts.append(block.content)
            continue
        text = translate_rst(DIRECTIVE.sub("", block.content), str, 79 - 2 * bool(n))
        prose.append(text)
        parts.append(
            _cell(None, text) if n else '"""\n' + text.replace("\\", "\\\\") + '\n"""'
        )
        if not n:
            words, pip = ed.words("install", draws), "    " + ed.pip(draws)
            parts.append(_cell(ed.words("install_title"), words, pip))
    if draws:
        parts.append(_cell(ed.words("figures_title"), ed.words("figures")))
        parts.append(FIGURES.format(stem=script.stem, no=ed.words("no_matplotlib")))
    ed.warn(docname, *markup_left("\n".join(prose)))
    py = "\n\n".join(parts) + "\n"
    return {f"{script.stem}.py": py, f"{script.stem}.ipynb": notebook}


def _cell(title: str | None, text: str, code: str = "") -> str:
    """A text cell of a sphinx-gallery script."""
    lines = [title, "-" * width(title), *wrap(text, 77)] if title else text.split("\n")
    lines += ["", code] if code else []
    return "# %%\n" + "\n".join(f"# {x}".rstrip() for x in lines)


FIGURES = """\
try:
    import matplotlib.pyplot as plt
except ImportError:  # {no}
    numbers = []
else:
    numbers = plt.get_fignums()
for number in numbers:
    name = f"{stem}_figure_{{number}}.png"
    plt.figure(number).savefig(name, dpi=200)
    print(f"saved {{name}}")
windowless = {{"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}}
if numbers and plt.get_backend().lower() not in windowless:
    plt.show()"""  # a script's last cell: save each figure, show it if a window can


def executed_pages(app: Sphinx) -> list[str]:
    """The MyST pages that run code."""
    return [d for d in sorted(app.env.found_docs) if executes(app.env.doc2path(d))]


def without_asserts(code: str) -> str:
    """``code`` without its ``assert`` statements (a block keeps one statement)."""
    drop: set[int] = set()
    for node in ast.walk(ast.parse(code)):
        for body in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")):
            asserts = [s for s in body or () if isinstance(s, ast.Assert)]
            if asserts and (len(asserts) < len(body) or isinstance(node, ast.Module)):
                for s in asserts:
                    drop.update(range(s.lineno - 1, s.end_lineno or s.lineno))
    return "\n".join(x for n, x in enumerate(code.split("\n")) if n not in drop)


def page_notebook(ed: Edition, docname: str) -> str:
    """The notebook of a MyST page, in this edition's language."""
    from myst_nb.core.read import read_myst_markdown_notebook

    source = Path(ed.app.env.doc2path(docname)).read_text("utf-8")
    cells: list[dict[str, Any]] = [{"source": ""}]  # the install cell, below
    for cell in read_myst_markdown_notebook(source).cells:
        tags = cell.metadata.get("tags", [])
        text, metadata = cell.source, {"tags": tags} if tags else {}
        if cell.cell_type == "markdown":
            text = translate_markdown(text, ed.lookup) if ed.catalog else text
            cells.append({"source": ed.markdown(text, docname)})
            continue
        if "remove-cell" in tags:  # the page's hidden checks, as in a tutorial
            continue
        if "remove-input" in tags:  # as on the page: output only, no checks
            text = without_asserts(text)
            metadata |= HIDDEN
        if text.strip():
            cells.append(
                {"source": ed.comments(text), "outputs": [], "metadata": metadata}
            )
    code = "\n".join(c["source"] for c in cells if "outputs" in c)
    cells[0] = {"source": ed.install_cell(code), "outputs": []}
    for n, cell in enumerate(cells):
        cell["id"] = f"cell-{n}"  # nbformat 4.5: stable ids
        cell.setdefault("metadata", {})
        if "outputs" in cell:
            cell |= {"cell_type": "code", "execution_count": None}
        else:
            cell["cell_type"] = "markdown"
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = {"cells": cells, "metadata": {"kernelspec": kernel}}
    return ed.notebook(notebook | {"nbformat": 4, "nbformat_minor": 5}, docname)


def write_downloads(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    ed = Edition(app, None if app.config.language == SOURCE else messages(app))
    out, files = Path(app.outdir), {}
    for examples in app.config.sphinx_gallery_conf["examples_dirs"]:
        for script in sorted(Path(app.srcdir, examples).glob("[0-9][0-9]_*.py")):
            files |= tutorial(ed, script)
    for docname in executed_pages(app):
        _write(out / "notebooks" / f"{docname}.ipynb", page_notebook(ed, docname))
    for name, text in files.items():
        if name.endswith(".ipynb"):  # all notebooks in one folder, for Colab
            _write(out / "notebooks" / "tutorials" / name, text)
    for path in sorted(Path(out, "_downloads").rglob("*")):
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
    app.setup_extension("autograd_site.sitewheel")
    app.connect("build-finished", write_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
