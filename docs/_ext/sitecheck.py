"""Guards that make the docs build fail instead of publishing something wrong.

* :func:`strict_warnings` is a sphinx-gallery ``reset_modules`` hook: while an
  example runs, every Python warning is an error. Examples that *expect* a
  warning catch it with ``warnings.catch_warnings(record=True)`` and print it.
* :func:`scan_html` runs when the build finishes and fails it if any page
  shows a memory address (``object at 0x...``), a timing or a path of the
  build machine.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

_saved_filters: list[Any] = []


def strict_warnings(gallery_conf: dict[str, Any], fname: str | None, when: str) -> None:
    """Turn warnings into errors before each example, restore them after."""
    if when == "before":
        _saved_filters[:] = warnings.filters[:]
        warnings.simplefilter("error")
    else:
        warnings.filters[:] = _saved_filters
        warnings._filters_mutated()  # type: ignore[attr-defined]


ADDRESS = re.compile(r"(?:object|Generator|function \S+) at 0x[0-9a-fA-F]+")
TIMING = re.compile(r"Total running time|\b\d+\.\d+ ?(?:seconds|ms|µs)\b")


def _machine_paths(app: Sphinx) -> list[str]:
    """Absolute paths that would reveal where the site was built."""
    root = Path(app.srcdir).resolve().parent
    candidates = {
        str(root),
        sys.prefix,
        sys.base_prefix,
        str(Path.home()),
        tempfile.gettempdir() + os.sep,
    }
    return sorted(p for p in candidates if len(p) > 4)


def scan_html(app: Sphinx, exception: Exception | None) -> None:
    """Report every generated page that leaks an address or a local path."""
    if exception is not None or app.builder.format != "html":
        return
    paths = _machine_paths(app)
    for page in sorted(Path(app.outdir).rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(app.outdir)
        if match := ADDRESS.search(text):
            logger.warning("memory address in %s: %r", where, match.group(0))
        if match := TIMING.search(text):
            logger.warning("timing in %s: %r", where, match.group(0))
        for path in paths:
            if path in text:
                logger.warning("build-machine path %r in %s", path, where)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", scan_html)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
