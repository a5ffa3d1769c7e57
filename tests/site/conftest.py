"""The fixtures that the site tests share: the two ways to get a site.

* ``built_site``: both editions of the real site, where ``docs/build.py``
  writes them (``docs/_build/html``, zh_CN inside it). Requesting it runs
  ``docs/build.py``, which does nothing when the site is current, and whose
  lock makes a second pytest worker wait for the first one's build.
* ``tiny_site``: a throw-away site in ``tmp_path``, made by
  ``sitebuild.make_site`` (the project's real configuration and extensions,
  one gallery script and one executed page); build it with
  ``sitebuild.build``. Tests that change the configuration or the content
  change this copy, never the real one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sitebuild

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def built_site() -> Path:
    subprocess.run([sys.executable, str(ROOT / "docs" / "build.py")], check=True)
    return ROOT / "docs" / "_build" / "html"


@pytest.fixture
def tiny_site(tmp_path: Path) -> Path:
    return sitebuild.make_site(tmp_path)
