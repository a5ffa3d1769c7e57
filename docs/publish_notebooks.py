"""Lay out the built notebooks the way the Colab links expect them.

``python docs/publish_notebooks.py [SITE] [OUT]`` copies every notebook of
both editions of the built site ``SITE`` (default ``docs/_build/html``; its
``notebooks/`` and ``zh_CN/notebooks/``) to ``OUT/<version>/<edition>/
<docname>.ipynb`` (default ``OUT``: ``docs/_build/notebooks``), where
``<version>`` is the package version that built the site. OUT then holds
exactly what ``.github/workflows/docs.yml`` pushes to the ``notebooks``
branch, and what the launch bar's "Open in Colab" links point at
(``docs/_ext/launchbar.py``). The version folder is replaced as a whole;
other versions' folders are left alone, so older pages keep working.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Each edition's folder in the built site.
EDITIONS = {"en": "", "zh_CN": "zh_CN/"}


def package_version() -> str:
    """``autograd_notes.__version__``, read from the source (no import)."""
    init = (ROOT / "src" / "autograd_notes" / "__init__.py").read_text("utf-8")
    match = re.search(r'^__version__\s*=\s*"([^"]+)"', init, re.M)
    if match is None:
        raise SystemExit("no __version__ in src/autograd_notes/__init__.py")
    return match.group(1)


def publish(site: Path, out: Path, version: str) -> list[Path]:
    """Copy the notebooks; return the published files, relative to ``out``."""
    target = out / version
    if target.exists():
        shutil.rmtree(target)
    published = []
    for edition, folder in EDITIONS.items():
        notebooks = site / folder / "notebooks"
        found = sorted(notebooks.rglob("*.ipynb"))
        if not found:
            raise SystemExit(f"no notebooks in {notebooks}: build the site first")
        for notebook in found:
            dest = target / edition / notebook.relative_to(notebooks)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(notebook, dest)
            published.append(dest.relative_to(out))
    return published


def main(argv: list[str]) -> int:
    site = Path(argv[0]) if argv else ROOT / "docs" / "_build" / "html"
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "_build" / "notebooks"
    published = publish(site, out, package_version())
    print(f"published {len(published)} notebooks into {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
