"""The launch bar, the notebooks of every executed page, and their publishing.

The pieces on their own (markup caught and made Markdown, a MyST cell
translated) are ``test_markdown.py``'s. The slow tests read the site
``docs/build.py`` builds (they run it: it does nothing when the site is
current) and check, in both editions:

* every tutorial and every page whose front matter names a kernelspec has the
  bar right under its title, and no other page has one; each link has the
  shape the issue asks for (computed here from pyproject.toml, the package
  version and the page), its label in the edition's language (the English
  label, or its translation in ``sphinx.po``), and a target that exists: the
  download the end of a tutorial offers, the page's notebook, the file in the
  repository;
* each Colab link's notebook is what ``.github/workflows/docs.yml`` publishes
  (each edition's ``notebooks/``), byte for byte the page's download;
* no notebook (page, tutorial, inside the zip) holds Sphinx markup, and each
  of their links to the hosted site names a page and anchor that the build
  wrote;
* each tutorial's solutions, as many as its script has, are collapsed;
* every bold span of every notebook renders bold (CommonMark); a page
  notebook has no badge word under its title, and no cell the page hides
  shows its checks;
* one page notebook and one tutorial notebook (zh_CN) run top to bottom.
  (``test_downloads.py`` runs every notebook in a fresh environment.)
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
import tomllib
from babel.messages.pofile import read_po
from bs4 import BeautifulSoup

import autograd_notes

ROOT = Path(__file__).resolve().parents[2]
from autograd_site import siteconfig  # noqa: E402
from autograd_site.markdown import markup_left  # noqa: E402
from autograd_site.sitewords import say  # noqa: E402
from test_markdown import rendered_text  # noqa: E402  (CommonMark's text)

SITE = ROOT / "docs" / "_build" / "html"
EDITIONS = {
    lang: SITE / edition.folder for lang, edition in siteconfig.EDITIONS.items()
}
with (ROOT / "pyproject.toml").open("rb") as f:
    URLS = tomllib.load(f)["project"]["urls"]
HOSTED = URLS["Documentation"].rstrip("/") + "/"
LABELS = ("Open in Colab", "Download notebook", "Download script", "View source")


# -- The built site ---------------------------------------------------------------


def executed_docnames() -> list[str]:
    """What should have a bar: each tutorial, and each page with a kernelspec."""
    found = [f"tutorials/{p.stem}" for p in sorted((ROOT / "gallery").glob("*.py"))]
    found = [d for d in found if re.match(r"tutorials/\d\d_", d)]
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if "_build" in page.parts:
            continue
        front = re.match(r"\A---\n(.*?)\n---\n", page.read_text("utf-8"), re.S)
        if front and re.search(r"^kernelspec:", front.group(1), re.M):
            found.append(page.relative_to(ROOT / "docs").with_suffix("").as_posix())
    return found


def labels(edition: str) -> dict[str, str]:
    """The bar's labels as the edition shows them (sphinx.po for zh_CN)."""
    if edition == "en":
        return {label: label for label in LABELS}
    po = ROOT / "docs" / "locale" / edition / "LC_MESSAGES" / "sphinx.po"
    with po.open("rb") as f:
        catalog = {str(m.id): str(m.string) for m in read_po(f) if m.id}
    return {label: catalog[label] for label in LABELS}


def bar_links(page: Path) -> dict[str, str] | None:
    """Label -> href of the bar right under the page's title, if any."""
    soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
    bars = soup.select("nav.launch-bar")
    if not bars:
        return None
    assert len(bars) == 1, f"{page}: more than one launch bar"
    title = soup.select_one("article h1")
    assert title is not None
    assert title.find_next_sibling() is bars[0], f"{page}: the bar is not under h1"
    assert bars[0].get("aria-label"), f"{page}: the bar has no name"
    return {a.get_text(" ", strip=True): a["href"] for a in bars[0].find_all("a")}


def colab_link(edition: str, docname: str) -> str:
    repo = URLS["Repository"].removeprefix("https://github.com/").strip("/")
    version = autograd_notes.__version__
    return (
        f"https://colab.research.google.com/github/{repo}/blob/notebooks/"
        f"{version}/{edition}/{docname}.ipynb"
    )


def footer_download(page: Path, suffix: str) -> str:
    soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
    links = [
        a["href"]
        for a in soup.select(".sphx-glr-download a.download")
        if a["href"].endswith(suffix)
    ]
    assert len(links) == 1, f"{page}: {links}"
    return links[0]


@pytest.mark.slow
@pytest.mark.parametrize("edition", list(EDITIONS))
def test_launch_bar_on_every_executed_page(built_site: Path, edition: str):
    root = EDITIONS[edition]
    expected = executed_docnames()
    assert len(expected) >= 15 + 8
    names = labels(edition)
    with_bar = set()
    for page in sorted(root.rglob("*.html")):
        relative = page.relative_to(root)
        if relative.parts[0] in {"zh_CN", "_static", "_sources", "_modules"}:
            continue
        docname = relative.with_suffix("").as_posix()
        links = bar_links(page)
        assert "Go to the end" not in page.read_text("utf-8"), docname
        if links is None:
            assert docname not in expected, f"{edition} {docname}: no launch bar"
            continue
        with_bar.add(docname)
        assert docname in expected, (
            f"{edition} {docname}: a bar on a page that runs no code"
        )
        tutorial = docname.startswith("tutorials/")
        wanted = [k for k in LABELS if tutorial or k != "Download script"]
        assert list(links) == [names[k] for k in wanted], (docname, links)
        assert links[names["Open in Colab"]] == colab_link(edition, docname)
        notebook = links[names["Download notebook"]]
        if tutorial:
            assert notebook == footer_download(page, ".ipynb")
            assert links[names["Download script"]] == footer_download(page, ".py")
            source = f"gallery/{docname.removeprefix('tutorials/')}.py"
        else:
            expected_href = "../" * docname.count("/") + f"notebooks/{docname}.ipynb"
            assert notebook == expected_href
            source = f"docs/{docname}.md"
        assert (page.parent / notebook).resolve().is_file(), notebook
        if tutorial:
            script = links[names["Download script"]]
            assert (page.parent / script).resolve().is_file(), script
        assert links[names["View source"]] == f"{URLS['Repository']}/blob/main/{source}"
        assert (ROOT / source).is_file()
    assert with_bar == set(expected)


def colab_targets(site: Path) -> dict[str, tuple[Path, str]]:
    """Path under the notebooks branch -> (page, its download link)."""
    found = {}
    for edition, root in EDITIONS.items():
        for docname in executed_docnames():
            page = root / f"{docname}.html"
            links = bar_links(page)
            assert links is not None
            names = labels(edition)
            colab = links[names["Open in Colab"]]
            path = colab.partition("/blob/notebooks/")[2]
            found[path] = (page, links[names["Download notebook"]])
    return found


@pytest.mark.slow
def test_colab_targets_are_published(built_site: Path):
    """The workflow copies each edition's notebooks/ to <version>/<edition>/:
    exactly the Colab links' notebooks, each the page's own download."""
    workflow = (ROOT / ".github" / "workflows" / "docs.yml").read_text("utf-8")
    for edition, root in EDITIONS.items():
        folder = root.relative_to(ROOT).as_posix() + "/notebooks"
        assert f'cp -r {folder} "docs/_build/notebooks/$version/{edition}"' in workflow
    published = {
        f"{autograd_notes.__version__}/{edition}/{p.relative_to(root / 'notebooks')}"
        for edition, root in EDITIONS.items()
        for p in (root / "notebooks").rglob("*.ipynb")
    }
    targets = colab_targets(built_site)
    assert len(targets) == 2 * len(executed_docnames())
    assert published == set(targets)
    for path, (page, download) in targets.items():
        _, edition, docname = path.split("/", 2)
        notebook = EDITIONS[edition] / "notebooks" / docname
        assert notebook.read_bytes() == (page.parent / download).resolve().read_bytes()


def all_notebooks(site: Path) -> dict[str, dict[str, Any]]:
    """Every notebook the site offers, by a readable name."""
    found = {}
    for edition, root in EDITIONS.items():
        folders = [root / "_downloads", root / "notebooks"]
        for path in sorted(p for f in folders for p in f.rglob("*.ipynb")):
            name = f"{edition}:{path.relative_to(root)}"
            found[name] = json.loads(path.read_text("utf-8"))
        for archive in sorted((root / "_downloads").rglob("*.zip")):
            with zipfile.ZipFile(archive) as z:
                for member in z.namelist():
                    if member.endswith(".ipynb"):
                        found[f"{edition}:{archive.name}:{member}"] = json.loads(
                            z.read(member)
                        )
    return found


def markdown_of(notebook: dict[str, Any]) -> list[str]:
    return [
        "".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"
    ]


@pytest.mark.slow
def test_notebooks_have_no_sphinx_markup(built_site: Path):
    found = all_notebooks(built_site)
    expected = 2 * (len(executed_docnames()) + 15)  # + each tutorial's _downloads
    assert len([n for n in found if ".zip:" not in n]) >= expected
    problems = []
    hosted = re.compile(rf"\]\({re.escape(HOSTED)}([^)#\s]*)(?:#([^)\s]*))?\)")
    for name, notebook in found.items():
        for text in markdown_of(notebook):
            problems += [f"{name}: {left}" for left in markup_left(text)]
            for path, anchor in hosted.findall(text):
                page = SITE / path
                if not page.is_file():
                    problems.append(f"{name}: link to a page not built: {path}")
                elif anchor and f'id="{anchor}"' not in page.read_text("utf-8"):
                    problems.append(f"{name}: no #{anchor} on {path}")
        if name.startswith("zh_CN:") and any(
            f"]({HOSTED}" in t and f"]({HOSTED}zh_CN/" not in t
            for t in markdown_of(notebook)
        ):
            problems.append(f"{name}: links to the English edition")
    assert problems == []


@pytest.mark.slow
def test_solutions_are_collapsed(built_site: Path):
    for edition, root in EDITIONS.items():
        marker = f"**{say(edition, 'Solution')}**"
        for script in sorted((ROOT / "gallery").glob("[0-9][0-9]_*.py")):
            exercises = script.read_text("utf-8").count("# **Solution**")
            path = root / "notebooks" / "tutorials" / f"{script.stem}.ipynb"
            cells = json.loads(path.read_text("utf-8"))["cells"]
            hidden = [
                cells[i + 1]
                for i, c in enumerate(cells[:-1])
                if c["cell_type"] == "markdown"
                and "".join(c["source"]).strip().endswith(marker)
            ]
            assert exercises >= 2, script.name
            assert len(hidden) == exercises, (edition, script.name)
            for cell in hidden:
                assert cell["cell_type"] == "code"
                assert cell["metadata"]["jupyter"]["source_hidden"] is True
                assert cell["metadata"]["colab"]["cellView"] == "form"


@pytest.mark.slow
@pytest.mark.parametrize(
    "notebook",
    ["en/how-to/per-loss-gradients", "zh_CN/tutorials/02_leaf_tensors"],
)
def test_notebook_runs_top_to_bottom(built_site: Path, notebook: str, tmp_path: Path):
    import nbformat
    from nbclient import NotebookClient

    edition, _, docname = notebook.partition("/")
    path = EDITIONS[edition] / "notebooks" / f"{docname}.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=300, resources={"metadata": {"path": tmp_path}}
    ).execute()
    errors = [
        o for c in nb.cells for o in c.get("outputs", []) if o["output_type"] == "error"
    ]
    assert errors == []
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code")


@pytest.mark.slow
def test_zh_page_notebooks_are_translated(built_site: Path):
    """Each zh_CN page notebook: the English one's cells, text in Chinese, the
    same code apart from its (translated) comments."""
    from autograd_site.cjk import han
    from autograd_site.comments import without_comments

    pages = [d for d in executed_docnames() if not d.startswith("tutorials/")]
    assert pages
    for docname in pages:
        cells = {
            edition: json.loads(
                (root / "notebooks" / f"{docname}.ipynb").read_text("utf-8")
            )["cells"]
            for edition, root in EDITIONS.items()
        }
        en, zh = cells["en"], cells["zh_CN"]
        assert [c["cell_type"] for c in zh] == [c["cell_type"] for c in en]
        for english, chinese in zip(en, zh, strict=True):
            if chinese["cell_type"] == "markdown":
                assert han("".join(chinese["source"])), (docname, chinese)
            else:
                assert without_comments("".join(chinese["source"])) == (
                    without_comments("".join(english["source"]))
                ), docname


@pytest.mark.slow
def test_every_bold_span_renders_bold(built_site: Path):
    """No literal ``**`` in what a notebook's Markdown renders to."""
    literal = [
        f"{name}: {text[:60]!r}"
        for name, notebook in all_notebooks(built_site).items()
        for markdown in markdown_of(notebook)
        for text in rendered_text(markdown)
        if "**" in text
    ]
    assert literal == []


def page_cells(docname: str) -> list[tuple[list[str], str]]:
    """(tags, source) of each code cell of an executed page, as myst-nb reads it."""
    from myst_nb.core.read import read_myst_markdown_notebook

    text = (ROOT / "docs" / f"{docname}.md").read_text("utf-8")
    cells = read_myst_markdown_notebook(text).cells
    return [
        (c.metadata.get("tags", []), c.source) for c in cells if c.cell_type == "code"
    ]


def badges(edition: str) -> set[str]:
    """The words the pages show as badges ({bdg-...}`word`), in this edition."""
    words = set()
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if "_build" not in page.parts:
            words |= set(
                re.findall(r"\{bdg-[\w-]+\}`([^`]+)`", page.read_text("utf-8"))
            )
    if edition == "zh_CN":
        for po in sorted((ROOT / "docs/locale/zh_CN/LC_MESSAGES").rglob("*.po")):
            with po.open("rb") as f:
                for m in read_po(f):
                    words |= set(re.findall(r"\{bdg-[\w-]+\}`([^`]+)`", str(m.string)))
    return words


@pytest.mark.slow
@pytest.mark.parametrize("edition", list(EDITIONS))
def test_page_notebooks_show_what_the_page_shows(built_site: Path, edition: str):
    """No badge word as a paragraph; no check from a cell the page hides
    (``remove-cell``: gone; ``remove-input``: collapsed, without asserts)."""
    words = badges(edition)
    assert {"Explanation", "How-to guide"} <= words or edition != "en", words
    pages = [d for d in executed_docnames() if not d.startswith("tutorials/")]
    for docname in pages:
        path = EDITIONS[edition] / "notebooks" / f"{docname}.ipynb"
        cells = json.loads(path.read_text("utf-8"))["cells"]
        for text in markdown_of({"cells": cells}):
            paragraphs = {p.strip() for p in text.split("\n\n")}
            assert not paragraphs & words, (docname, paragraphs & words)
        shown = "\n".join(s for tags, s in page_cells(docname) if not tags)
        hidden = [
            c for c in cells if c["metadata"].get("jupyter", {}).get("source_hidden")
        ]
        inputs = [tags for tags, _ in page_cells(docname) if "remove-input" in tags]
        assert len(hidden) == len(inputs), docname
        for cell in cells:
            if cell["cell_type"] != "code":
                continue
            for line in "".join(cell["source"]).splitlines():
                if line.lstrip().startswith("assert "):  # comments translated
                    assert line.partition("#")[0].strip() in shown, (docname, line)
