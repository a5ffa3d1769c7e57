"""Publish the package's wheel with the site, and say how to install it.

``autograd_notes`` is not on PyPI: the site itself serves the exact version
that produced its outputs. No Sphinx extension publishes a wheel, so:

* :func:`publish_wheel` (``build-finished``) builds the wheel of this
  checkout in the Sphinx process, with hatchling (pinned in
  ``constraints.txt``, no network), into each edition's ``_static/wheels/``,
  alone there. A wheel whose version is not the one the pages were built
  with is a warning, so the build fails rather than publish it;
* :func:`wheel_url` and :func:`requirement` are the one URL every download
  installs from: ``html_baseurl`` + ``_static/wheels/<wheel>``. Both
  editions point at the copy at the site's root, the English edition's (the
  Chinese edition's own copy makes its folder complete);
* at ``config-inited``, :func:`on_read_the_docs` makes the base URL the
  English project's address of the version being built, and
  :func:`check_baseurl` (after every handler that may set it) warns when
  there is none;
* :func:`fill_url` (``doctree-resolved``) writes that URL for ``{wheel_url}``
  in code blocks (the landing page's install command) as the page is
  written, not read, so a build with another
  ``html_baseurl`` never shows a cached one.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from .siteconfig import EDITIONS, SOURCE

logger = logging.getLogger(__name__)

DISTRIBUTION = "autograd-notes"
WHEELS = "_static/wheels"  # from each edition's root


def root(app: Sphinx) -> Path:
    """The checkout whose package the site documents (docs/ is inside it)."""
    return Path(app.srcdir).resolve().parent


def wheel_name(version: str) -> str:
    return f"{DISTRIBUTION.replace('-', '_')}-{version}-py3-none-any.whl"


def wheel_url(app: Sphinx) -> str:
    """Where a reader's pip fetches the wheel this build publishes."""
    base = app.config.html_baseurl.rstrip("/") + "/"
    return f"{base}{WHEELS}/{wheel_name(app.config.release)}"


def requirement(app: Sphinx, extras: str = "") -> str:
    """``autograd-notes[extras] @ <url>``."""
    return f"{DISTRIBUTION}{extras} @ {wheel_url(app)}"


def build_wheel(source: Path, directory: Path) -> Path:
    from hatchling.builders.wheel import WheelBuilder

    builder = WheelBuilder(str(source))
    (built,) = builder.build(directory=str(directory), versions=["standard"])
    return Path(built)


def publish_wheel(app: Sphinx, exception: Exception | None) -> None:
    """Write the wheel into ``<outdir>/_static/wheels/``, alone there."""
    if exception is not None or app.builder.format != "html":
        return
    expected = wheel_name(app.config.release)
    with tempfile.TemporaryDirectory() as tmp:
        built = build_wheel(root(app), Path(tmp))
        if built.name != expected:
            msg = "the wheel built from %s is %s, but the pages are of version %s"
            args = (root(app).name, built.name, app.config.release)
            logger.warning(msg, *args, type="sitewheel")
            return
        folder = Path(app.outdir, WHEELS)
        if folder.exists():
            shutil.rmtree(folder)  # no wheel of an older version stays
        folder.mkdir(parents=True)
        shutil.copyfile(built, folder / built.name)


PLACEHOLDER = "{wheel_url}"


def fill_url(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``{wheel_url}`` in code becomes the URL as the page is written, not read."""
    for block in doctree.findall(nodes.literal_block):
        for text in list(block.findall(nodes.Text)):
            if PLACEHOLDER in text:
                text.parent.replace(
                    text, nodes.Text(text.replace(PLACEHOLDER, wheel_url(app)))
                )
                block.rawsource = block.astext()


def on_read_the_docs(app: Sphinx, config: Any) -> None:
    """On Read the Docs (unless ``-D html_baseurl``), the English project's address:
    it publishes the wheel both editions install.

    Read the Docs serves each version under ``/<language>/<version>/`` and
    says where (``READTHEDOCS_CANONICAL_URL``); the root pyproject.toml names
    serves only a redirect. A translation's project (``/zh-cn/``, the
    edition's language tag) is read as the source edition's (``/en/``)."""
    canonical = os.environ.get("READTHEDOCS_CANONICAL_URL", "")
    overridden = "html_baseurl" in config.overrides  # -D html_baseurl=...
    if canonical and not overridden:
        tags = [edition.tag.replace("-", "[-_]") for edition in EDITIONS.values()]
        source = EDITIONS[SOURCE].tag
        base = re.sub(
            f"/(?:{'|'.join(tags[1:])})/", f"/{source}/", canonical, flags=re.I
        )
        config.html_baseurl = base.rstrip("/") + "/"


def check_baseurl(app: Sphinx, config: Any) -> None:
    if not config.html_baseurl:
        logger.warning(
            "html_baseurl is empty: the downloads need the site's address "
            "to install the package from it",
            type="sitewheel",
        )


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", on_read_the_docs)
    app.connect("config-inited", check_baseurl, priority=600)
    app.connect("doctree-resolved", fill_url)
    app.connect("build-finished", publish_wheel)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
