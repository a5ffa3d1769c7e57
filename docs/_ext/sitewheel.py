"""Publish the package's wheel with the site, and say how to install it.

``autograd_notes`` is not on PyPI: the site itself serves the exact version
that produced its outputs. This extension:

* :func:`publish_wheel` (``build-finished``) builds the wheel of this
  checkout at the end of each HTML build, in the Sphinx process, with the
  hatchling pinned in ``constraints.txt`` and no network, into
  ``<outdir>/_static/wheels/`` of each edition. hatchling's reproducible
  mode gives every file the same timestamp, so two builds of the same
  sources publish identical bytes; a wheel whose version is not the
  one the pages were built with fails the build;
* defines the one URL every download installs from, :func:`wheel_url`:
  ``html_baseurl`` (from pyproject's Documentation URL, or
  ``-D html_baseurl=...``) + ``_static/wheels/<wheel>``. Both editions point
  at the copy at the site's root, the English edition's, which every host
  publishes (the Chinese edition's own copy makes its folder complete);
  on Read the Docs the base URL is the English project's address of the
  version being built (:func:`on_read_the_docs`, ``config-inited``), and
  :func:`check_baseurl` fails the build when there is no base URL at all;
* adds the ``wheel-install`` directive (:class:`WheelInstall`): a bash code
  block in which ``{wheel_url}`` becomes that URL when the page is written
  (:func:`fill_url`, ``doctree-resolved``), so the landing page shows the
  same command the downloads use.
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
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

DISTRIBUTION = "autograd-notes"
WHEELS = "_static/wheels"
"""Where each edition publishes the wheel, relative to its root."""


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
    """``autograd-notes[extras] @ <url>``: pip's form for a wheel at a URL."""
    return f"{DISTRIBUTION}{extras} @ {wheel_url(app)}"


def build_wheel(source: Path, directory: Path) -> Path:
    """Build the wheel of ``source`` into ``directory``, offline."""
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
            logger.warning(
                "the wheel built from %s is %s, but the pages were built "
                "with version %s",
                root(app).name,
                built.name,
                app.config.release,
                type="sitewheel",
            )
            return
        folder = Path(app.outdir, WHEELS)
        if folder.exists():
            shutil.rmtree(folder)  # no wheel of an older version stays
        folder.mkdir(parents=True)
        shutil.copyfile(built, folder / built.name)


PLACEHOLDER = "{wheel_url}"


class WheelInstall(SphinxDirective):
    """A bash code block whose ``{wheel_url}`` becomes the wheel's URL.

    The URL is filled in when the page is written (:func:`fill_url`), so a
    build with another ``html_baseurl`` never shows a cached one.
    """

    has_content = True

    def run(self) -> list[nodes.Node]:
        text = "\n".join(self.content)
        block = nodes.literal_block(text, text, language="bash")
        block["classes"].append("wheel-install")
        self.set_source_info(block)
        return [block]


def fill_url(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for block in doctree.findall(nodes.literal_block):
        if "wheel-install" not in block["classes"]:
            continue
        for text in list(block.findall(nodes.Text)):
            if PLACEHOLDER in text:
                new = nodes.Text(text.replace(PLACEHOLDER, wheel_url(app)))
                text.parent.replace(text, new)
        block.rawsource = block.astext()


def on_read_the_docs(app: Sphinx, config: Any) -> None:
    """On Read the Docs, the address of the English project's build.

    Read the Docs serves each version under ``/<language>/<version>/`` and
    tells the build where (``READTHEDOCS_CANONICAL_URL``); the root that
    pyproject names serves nothing but a redirect. So, unless ``-D
    html_baseurl=...`` chose otherwise, the base URL is that address, with
    the Chinese project's ``/zh-cn/`` read as ``/en/``: the English project
    of the same version publishes the wheel both editions install.
    """
    canonical = os.environ.get("READTHEDOCS_CANONICAL_URL", "")
    overridden = "html_baseurl" in config._overrides  # -D html_baseurl=...
    if canonical and not overridden:
        base = re.sub(r"/zh[-_](?:cn|CN)/", "/en/", canonical)
        config.html_baseurl = base.rstrip("/") + "/"


def check_baseurl(app: Sphinx, config: Any) -> None:
    if not config.html_baseurl:
        logger.warning(
            "html_baseurl is empty: the downloads need the site's address "
            "to install the package from it",
            type="sitewheel",
        )


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("wheel-install", WheelInstall)
    app.connect("config-inited", on_read_the_docs)
    app.connect("config-inited", check_baseurl, priority=600)
    app.connect("doctree-resolved", fill_url)
    # Before the downloads that point at it are rewritten (priority 800).
    app.connect("build-finished", publish_wheel, priority=700)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
