"""The downloadable .py and .ipynb of every tutorial run with only torch and
this package installed.

The downloads are produced the way the site produces them (sphinx-gallery,
with the project's conf.py, but without executing the examples), then run in
a fresh virtual environment that holds torch, autograd-notes and their
dependencies, and nothing else: no matplotlib, no networkx, no Jupyter.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.name for p in (ROOT / "gallery").glob("[0-9][0-9]_*.py"))

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


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the gallery's download files without executing the examples."""
    site = tmp_path_factory.mktemp("site")
    ignore = shutil.ignore_patterns(
        "_build", "tutorials", "generated", "jupyter_execute"
    )
    for name in ("docs", "gallery"):
        shutil.copytree(ROOT / name, site / name, ignore=ignore)
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, site / name)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q"]
    cmd += ["-D", "plot_gallery=0", "-D", "nb_execution_mode=off"]
    cmd += ["docs", "docs/_build/html"]
    subprocess.run(cmd, cwd=site, check=True, capture_output=True)
    return site / "docs" / "_build" / "html" / "_downloads"


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


def test_every_example_is_offered_for_download(downloads: Path) -> None:
    assert EXAMPLES, "no gallery examples found"
    for zip_name in ("tutorials_python.zip", "tutorials_jupyter.zip"):
        with zipfile.ZipFile(find(downloads, zip_name)) as archive:
            names = {Path(n).name for n in archive.namelist()}
        suffix = ".py" if "python" in zip_name else ".ipynb"
        assert {Path(e).stem + suffix for e in EXAMPLES} <= names


@pytest.mark.parametrize("example", EXAMPLES)
def test_downloaded_script_runs(
    fresh_python: Path, downloads: Path, example: str
) -> None:
    script = find(downloads, example)
    assert script.read_text() == (ROOT / "gallery" / example).read_text()
    run(fresh_python, script)


@pytest.mark.parametrize("example", EXAMPLES)
def test_downloaded_notebook_runs(
    fresh_python: Path, downloads: Path, example: str, tmp_path: Path
) -> None:
    notebook = json.loads(find(downloads, example.replace(".py", ".ipynb")).read_text())
    cells = [
        "".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"
    ]
    assert cells, f"{example}: the notebook has no code cells"
    assert not any(
        line.lstrip().startswith(("%", "!")) for c in cells for line in c.splitlines()
    )
    script = tmp_path / example
    script.write_text("\n\n".join(cells))
    run(fresh_python, script)
