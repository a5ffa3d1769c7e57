"""The downloadable .py and .ipynb of every tutorial run with only torch and
this package installed, in both editions.

The downloads are produced the way the site produces them (sphinx-gallery,
with the project's conf.py, but without executing the examples; the zh_CN
edition from the repository's catalogs, into html/zh_CN), then run in a fresh
virtual environment that holds torch, autograd-notes and their dependencies,
and nothing else: no matplotlib, no networkx, no Jupyter. The zh_CN downloads
carry Chinese text and exactly the English code, apart from its comments
(translated, as on the page: docs/_ext/codecomments.py).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sphinx_gallery.py_source_parser import split_code_and_text_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from codecomments import without_comments  # noqa: E402

EXAMPLES = sorted(p.name for p in (ROOT / "gallery").glob("[0-9][0-9]_*.py"))
# Where docs/build.py writes each edition, under docs/_build.
EDITIONS = {"en": "html", "zh_CN": "html/zh_CN"}
# Written into docs/ by a build: not copied (but docs/locale's tutorials/
# holds the tutorials' catalogs).
GENERATED = {"_build", "tutorials", "generated", "jupyter_execute"}
CJK = re.compile(r"[\u4e00-\u9fff]")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with only torch (pinned) and this package installed."""
    env = tmp_path_factory.mktemp("fresh") / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    pins = ["-c", str(ROOT / "constraints.txt")]
    pip = [str(python), "-m", "pip", "install", "--quiet", *pins]
    subprocess.run([*pip, "torch"], check=True)
    subprocess.run([*pip, str(ROOT)], check=True)
    probe = "import importlib.util as u; print(u.find_spec('matplotlib') is None)"
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
    assert out.stdout.strip() == "True", "the fresh env must not have matplotlib"
    return python


def _generated(folder: str, names: list[str]) -> list[str]:
    """What a build wrote into docs/ (the catalogs' tutorials/ is a source)."""
    if Path(folder).is_relative_to(ROOT / "docs" / "locale"):
        return []
    return [name for name in names if name in GENERATED]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build both editions' download files without executing the examples."""
    site = tmp_path_factory.mktemp("site")
    for name in ("docs", "gallery"):
        shutil.copytree(ROOT / name, site / name, ignore=_generated)
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, site / name)
    for language, folder in EDITIONS.items():
        cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", "auto"]
        cmd += ["-D", "plot_gallery=0", "-D", "nb_execution_mode=off"]
        cmd += ["-D", f"language={language}", "docs", f"docs/_build/{folder}"]
        subprocess.run(cmd, cwd=site, check=True, capture_output=True)
    return site


def downloads(site: Path, edition: str) -> Path:
    return site / "docs" / "_build" / EDITIONS[edition] / "_downloads"


def find(downloads: Path, name: str) -> Path:
    matches = list(downloads.rglob(name))
    assert len(matches) == 1, f"expected one download named {name}, got {matches}"
    return matches[0]


def run(python: Path, script: Path) -> None:
    result = subprocess.run(
        # Plain `python`, as a reader would run it: the docs build already
        # turns warnings into errors, and torch 2.13 itself warns on import
        # when NumPy is absent, as it is here.
        [str(python), str(script)],
        capture_output=True,
        text=True,
        cwd=script.parent,
        timeout=600,
    )
    assert result.returncode == 0, (
        f"{script.name} failed:\n{result.stdout}\n{result.stderr}"
    )


def code_and_text(script: Path) -> tuple[list[str], list[str]]:
    """The code blocks and the text blocks of a sphinx-gallery script."""
    _, blocks = split_code_and_text_blocks(str(script))
    code = [b.content for b in blocks if b.type == "code"]
    return code, [b.content for b in blocks if b.type == "text"]


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_example_is_offered_for_download(site: Path, edition: str) -> None:
    assert EXAMPLES, "no gallery examples found"
    for zip_name in ("tutorials_python.zip", "tutorials_jupyter.zip"):
        with zipfile.ZipFile(find(downloads(site, edition), zip_name)) as archive:
            members = {Path(n).name: archive.read(n) for n in archive.namelist()}
        suffix = ".py" if "python" in zip_name else ".ipynb"
        for example in EXAMPLES:
            name = Path(example).stem + suffix
            assert name in members, f"{name} not in {zip_name}"
            # The archive holds this edition's files, not the other's.
            alone = find(downloads(site, edition), name).read_bytes()
            assert members[name] == alone, f"{name} in {zip_name} differs"
    for example in EXAMPLES:  # each tutorial's own archive too
        with zipfile.ZipFile(
            find(downloads(site, edition), example[:-3] + ".zip")
        ) as z:
            for name in z.namelist():
                member = find(downloads(site, edition), Path(name).name)
                assert z.read(name) == member.read_bytes(), name


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("example", EXAMPLES)
def test_downloaded_script_runs(
    fresh_python: Path, site: Path, example: str, edition: str
) -> None:
    script = find(downloads(site, edition), example)
    english = ROOT / "gallery" / example
    if edition == "en":
        assert script.read_text() == english.read_text()
    else:
        code, text = code_and_text(script)
        assert list(map(without_comments, code)) == [
            without_comments(block) for block in code_and_text(english)[0]
        ], "the zh script's code differs"
        assert text, f"{example}: no text blocks"
        for block in text:
            assert CJK.search(block), (
                f"{example}: a text block without Chinese:\n{block}"
            )
    run(fresh_python, script)


def code_cells(notebook: dict[str, Any]) -> list[str]:
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def notebook(site: Path, edition: str, example: str) -> dict[str, Any]:
    name = example.replace(".py", ".ipynb")
    return json.loads(find(downloads(site, edition), name).read_text())


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("example", EXAMPLES)
def test_downloaded_notebook_runs(
    fresh_python: Path, site: Path, example: str, edition: str, tmp_path: Path
) -> None:
    cells = code_cells(notebook(site, edition, example))
    assert cells, f"{example}: the notebook has no code cells"
    assert not any(
        line.lstrip().startswith(("%", "!")) for c in cells for line in c.splitlines()
    )
    script = tmp_path / example
    script.write_text("\n\n".join(cells))
    run(fresh_python, script)


@pytest.mark.parametrize("example", EXAMPLES)
def test_zh_notebook_text_is_chinese(site: Path, example: str) -> None:
    cells = notebook(site, "zh_CN", example)["cells"]
    markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    assert markdown, f"{example}: the notebook has no text"
    for text in markdown:
        assert CJK.search(text), f"{example}: a text cell without Chinese:\n{text}"
    english = notebook(site, "en", example)["cells"]
    assert [c["cell_type"] for c in cells] == [c["cell_type"] for c in english]


@pytest.mark.parametrize("example", EXAMPLES)
def test_zh_notebook_has_the_english_code(site: Path, example: str) -> None:
    zh = code_cells(notebook(site, "zh_CN", example))
    english = code_cells(notebook(site, "en", example))
    assert list(map(without_comments, zh)) == list(map(without_comments, english))
