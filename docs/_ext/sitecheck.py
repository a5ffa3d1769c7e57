"""Guards that make the docs build fail instead of publishing something wrong.

* :func:`strict_warnings` is a sphinx-gallery ``reset_modules`` hook: while an
  example runs, every Python warning is an error. Examples that *expect* a
  warning catch it with ``warnings.catch_warnings(record=True)`` and print it.
* :func:`run_docstring_examples` runs every ``>>>`` example of the package's
  docstrings (they are shown on the API reference pages) and fails the build
  if one no longer prints what it shows.
* :func:`scan_html` runs when the build finishes and fails it if any page
  shows a memory address (``object at 0x...``), a timing or a path of the
  build machine.

``conf.py`` names :func:`strict_warnings` in sphinx-gallery's
``reset_modules``; the other two are ``builder-inited`` and
``build-finished`` handlers.
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
    from editions import EDITIONS

    others = {folder.strip("/") for _, folder in EDITIONS.values() if folder}
    for page in sorted(Path(app.outdir).rglob("*.html")):
        where = page.relative_to(app.outdir)
        if where.parts[0] in others:
            continue  # another edition, built (and scanned) into a subfolder
        text = page.read_text(encoding="utf-8")
        if match := ADDRESS.search(text):
            logger.warning("memory address in %s: %r", where, match.group(0))
        if match := TIMING.search(text):
            logger.warning("timing in %s: %r", where, match.group(0))
        for path in paths:
            if path in text:
                logger.warning("build-machine path %r in %s", path, where)


def run_docstring_examples(app: Sphinx) -> None:
    """Execute the docstring examples that the reference pages show.

    Skipped when the package sources are unchanged since they last passed.
    """
    import doctest
    import hashlib
    import importlib
    import pkgutil

    import torch

    import autograd_notes

    digest = hashlib.sha256(torch.__version__.encode())
    for path in sorted(Path(autograd_notes.__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    stamp = (
        Path(app.config.nb_execution_cache_path).parent / ".docstring-examples-passed"
    )
    if stamp.exists() and stamp.read_text() == digest.hexdigest():
        return

    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    names = [m.name for m in pkgutil.iter_modules(autograd_notes.__path__)]
    for name in ["autograd_notes", *(f"autograd_notes.{n}" for n in names)]:
        module = importlib.import_module(name)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = doctest.testmod(module, optionflags=flags, report=False)
        if result.failed:
            logger.warning(
                "%d of %d docstring examples in %s fail (run pytest %s)",
                result.failed,
                result.attempted,
                name,
                module.__file__,
            )
            return
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest.hexdigest())


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", run_docstring_examples)
    app.connect("build-finished", scan_html)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
