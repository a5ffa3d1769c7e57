"""autograd_site/freshness.py: a change to what the pages execute re-executes them.

sphinx-gallery and myst-nb re-run a page only when its own source changes;
``freshness.invalidate`` removes their outputs when the package changes. The
package is its Python *and* its data: the graph view's script and styles
(``_html/view.js``, ``view.css``) are in every page that shows the view.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]

from autograd_site import freshness  # noqa: E402


def site(tmp_path: Path) -> tuple[SimpleNamespace, SimpleNamespace, Path]:
    """A project laid out like ours, with one executed output in each cache."""
    package = tmp_path / "src" / "autograd_notes"
    (package / "_html").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_html" / "view.js").write_text("var a = 1;")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"1")
    (tmp_path / "constraints.txt").write_text("torch==2.13.0\n")
    docs = tmp_path / "docs"
    (docs / "tutorials").mkdir(parents=True)
    (docs / "conf.py").write_text("")
    build = docs / "_build"
    app = SimpleNamespace(
        srcdir=str(docs), doctreedir=str(build / "doctrees"), outdir=str(build / "html")
    )
    config = SimpleNamespace(
        nb_execution_cache_path=str(build / "jupyter_cache"),
        locale_dirs=[],
        sphinx_gallery_conf={"gallery_dirs": ["tutorials"]},
    )
    return app, config, package


def executed_output(app: SimpleNamespace) -> Path:
    output = Path(app.srcdir) / "tutorials" / "01_page.rst"
    output.parent.mkdir(exist_ok=True)  # the first run removed it: no stamp yet
    output.write_text("ran")
    return output


@pytest.mark.parametrize("changed", ["__init__.py", "_html/view.js", "_html/view.css"])
def test_a_change_in_the_package_or_its_data_re_executes(
    tmp_path: Path, changed: str
) -> None:
    app, config, package = site(tmp_path)
    freshness.invalidate(app, config)  # type: ignore[arg-type]
    output = executed_output(app)
    freshness.invalidate(app, config)  # type: ignore[arg-type]
    assert output.exists()  # nothing changed: kept
    (package / changed).write_text("var a = 2;")
    freshness.invalidate(app, config)  # type: ignore[arg-type]
    assert not output.exists()


def test_a_new_bytecode_file_re_executes_nothing(tmp_path: Path) -> None:
    app, config, package = site(tmp_path)
    freshness.invalidate(app, config)  # type: ignore[arg-type]
    output = executed_output(app)
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"2")
    freshness.invalidate(app, config)  # type: ignore[arg-type]
    assert output.exists()
