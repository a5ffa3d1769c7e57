"""The site's configuration in ``pyproject.toml``, read in one place.

``[tool.autograd-notes]`` holds what the site machinery, the PDF printer and
the tests must agree on: the torch versions ``nox -s compat`` verifies
(``verified-torch``) and the editions (``editions``: language, name, folder,
language tag). ``docs/conf.py``, ``docs/build.py``, ``docs/pdf.py``, the
extensions, ``tests/site`` and ``browser_tests`` read :data:`EDITIONS`
(language -> :class:`Edition`) from here, so each edition's folder, name and
tag are written once. No Sphinx import: the build script and the browser
tests use it too.
"""

from pathlib import Path
from typing import NamedTuple

import tomllib

ROOT = Path(__file__).resolve().parents[3]
TABLE = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
SETTINGS = TABLE["tool"]["autograd-notes"]


class Edition(NamedTuple):
    """One edition: ``folder`` is below the site's root ("" for the root)."""

    name: str
    folder: str
    tag: str


EDITIONS = {lang: Edition(**row) for lang, row in SETTINGS["editions"].items()}
SOURCE = next(iter(EDITIONS))  # the language the sources and our code are written in
VERIFIED_TORCH: list[str] = SETTINGS["verified-torch"]
