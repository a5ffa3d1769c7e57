"""The site machinery of autograd-notes: one Sphinx extension, ``autograd_site``.

``docs/conf.py`` names only this package in ``extensions`` (after the
libraries: ``settings`` marks one of them parallel-safe). :func:`setup` sets
up each feature in ``FEATURES``, one module each, in this order; each
module's docstring says what it does and why no option of Sphinx,
sphinx-gallery, myst-nb or the theme does it. The modules without a
``setup`` are libraries the features share, with no Sphinx import:
``siteconfig`` (``pyproject.toml``'s table: the editions, the verified
torch versions) and ``cjk`` (what counts as Chinese text, and its width).

This file imports nothing at run time, so the build script, the PDF printer, the tests
and a page's kernel can import one module of the package without Sphinx.
A test builds a site without one feature by listing the others:
``extensions = [..., *(f"autograd_site.{name}" for name in FEATURES if name
!= "codecomments")]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinx.application import Sphinx

FEATURES = (
    "quietbuild",  # no configuration dumps, no kernel notices
    "freshness",  # a new torch, package or pin re-executes every page
    "sitecheck",  # warnings fail the build; no machine path on a page
    "exercises",  # tutorial solutions collapse into <details>
    "editions",  # each page links to itself in the other edition
    "catalogs",  # zh_CN: English API, theme strings, checks, search
    "codecomments",  # comments in code: in the catalogs, translated on zh pages
    "parallelread",  # -j: every core executes its share of the pages
    "tutorialcards",  # gallery cards: translated, numbered, drawn when no figure
    "figures",  # 2x figures, graph alt text and legends in the page's language
    "downloads",  # every .py, .ipynb and .zip, both editions, in one pass
    "launchbar",  # Colab, notebook, script and source links atop executed pages
    "sitepdf",  # links the whole-site PDFs that docs/pdf.py prints
    "torchlinks",  # PyTorch names link to PyTorch's docs, in code and prose
    "sitewheel",  # the package's wheel, published with the site
    # Last: its config-inited handlers read the words catalogs loads and keep
    # the address sitewheel finds on Read the Docs.
    "settings",  # what conf.py cannot write down: torch's, the edition's
)


def setup(app: Sphinx) -> dict[str, bool]:
    for name in FEATURES:
        app.setup_extension(f"{__name__}.{name}")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
