"""Guards that fail the docs build instead of publishing something wrong.

* :func:`strict_warnings` is a sphinx-gallery ``reset_modules`` hook
  (``conf.py``, with ``reset_modules_order = "both"``): while an example
  runs, every Python warning is an error, not stray output on the page. An
  example that *expects* a warning catches it with
  ``warnings.catch_warnings(record=True)`` and prints it, so the page shows
  it on purpose. myst-nb's pages get the same rule from ``conf.py``'s
  ``nb_output_stderr = "error"``.
* :func:`scan_html` (``build-finished``) warns on every page that shows a
  memory address (``object at 0x...``), a timing or a path of the build
  machine: each differs from build to build and means nothing to a reader.

The build fails on what they report because ``docs/build.py`` runs Sphinx
with ``-W``. Neither sphinx-gallery nor myst-nb has such a check.
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

_guards: list[warnings.catch_warnings[None]] = []


def strict_warnings(gallery_conf: dict[str, Any], fname: str | None, when: str) -> None:
    """Turn warnings into errors before each example, restore them after.

    ``warnings.catch_warnings`` saves and restores the filters, so what an
    example changes in them does not leak into the next one. The guard waits
    in ``_guards`` between the hook's two calls per example.
    """
    if when == "before":
        _guards.append(warnings.catch_warnings())
        _guards[-1].__enter__()
        warnings.simplefilter("error")
    elif _guards:
        _guards.pop().__exit__(None, None, None)


ADDRESS = re.compile(r"(?:object|Generator|function \S+) at 0x[0-9a-fA-F]+")
TIMING = re.compile(r"Total running time|\b\d+\.\d+ ?(?:seconds|ms|µs)\b")


def scan_html(app: Sphinx, exception: Exception | None) -> None:
    """Warn on every page that leaks an address, a timing or a local path.

    The paths are the checkout, the interpreter's prefixes, the home folder
    and the temporary folder (with its separator, as it appears in a path).
    Four characters or fewer (``/``, ``/usr``) would match ordinary text.
    """
    if exception is not None or app.builder.format != "html":
        return
    from .siteconfig import EDITIONS

    home = {str(Path(app.srcdir).resolve().parent), sys.prefix, sys.base_prefix}
    home |= {str(Path.home()), tempfile.gettempdir() + os.sep}
    paths = sorted(p for p in home if len(p) > 4)
    others = {e.folder.strip("/") for e in EDITIONS.values() if e.folder}
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


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", scan_html)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
