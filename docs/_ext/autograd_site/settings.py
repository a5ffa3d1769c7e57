"""The settings ``conf.py`` cannot write down: those read from the running
torch, the package, ``pyproject.toml`` or the edition being built.

``conf.py`` is declarative (settings only, nothing imported, nothing run at
import), so what depends on the environment is set here, when the
configuration is read:

* :func:`from_the_project` (``config-inited``): the package's version
  (``release``), the repository's and the site's addresses from
  ``pyproject.toml`` (``html_baseurl`` only when no ``-D html_baseurl=``
  gave one), PyTorch's inventory for the running torch (``intersphinx``
  reads it, offline, before its own ``config-inited`` handler checks it), the
  pages' substitutions (torch's version, the supported range, the
  package's version), and matplotlib's font cache, built here
  on a fresh machine, not inside the first executed page, whose stderr it
  would fail;
* :func:`per_edition` (``config-inited``): the footer, the search box's
  words, the verified torch versions (``torch_verified``), the "Suggest
  edit" link (a tutorial's script in ``gallery/``; on a translated page, its
  catalog) and the 404 page, in the edition's language (``site.po``;
  ``catalogs.theme_strings`` reads it first);
* :func:`quote_the_article` (``html-page-context``): search results quote
  the article (``search-snippets.js``), not the theme around it;
* :func:`own_source` (``viewcode-follow-imported``): what we inherit from
  torch (``Function.apply``) gets no source link;
* :func:`mathjax_reads_in_parallel` (``config-inited``):
  ``sphinx-mathjax-offline`` only copies MathJax into ``_static`` but does
  not say it is safe for parallel reading; this says it, so ``-j auto``
  reads in parallel.
"""

from __future__ import annotations

import importlib
import os
from functools import reduce
from pathlib import Path
from urllib.parse import urlsplit

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError
from sphinx.locale import get_translation

from .siteconfig import EDITIONS, TABLE, VERIFIED_TORCH

PROJECT = TABLE["project"]
REPOSITORY = PROJECT["urls"]["Repository"]
# Raw HTML, so not in the pages' catalogs: their Chinese is in site.po.
FOOTER = "Every output on this site was produced by torch {} while the site was built."
EDIT = f"{REPOSITORY}/edit/main/"
# The theme renders these Jinja templates; it wants "file_name" in them.
EDIT_SOURCE = (
    EDIT + "{% if pagename == 'tutorials/index' %}gallery/GALLERY_HEADER.rst"
    "{% elif pagename.startswith('tutorials/') %}gallery/{{ pagename[10:] }}.py"
    "{% else %}docs/{{ file_name }}{% endif %}"
)
# "{}": the edition's language (str.format); the doubled braces are Jinja's.
EDIT_CATALOG = (
    EDIT + "docs/locale/{}/LC_MESSAGES/{{{{ pagename }}}}.po{{# file_name #}}"
)
# The 404 page: raw HTML, its links absolute (the hosting layout: the path of
# html_baseurl, then the edition's folder).
NOT_FOUND = (
    "Page not found",
    "This page does not exist (any more). Start from the "
    '<a href="{0}">home page</a> or <a href="{0}search.html">search</a>.',
)


def from_the_project(app: Sphinx, config: Config) -> None:
    """What the running torch, the package and ``pyproject.toml`` say."""
    import matplotlib.font_manager  # noqa: F401  builds the font cache now
    import torch

    import autograd_notes

    config.release = config.version = autograd_notes.__version__
    # Where this very build is served: the downloads link their
    # cross-references there and install the package's wheel from there
    # (sitewheel.py), so it must be this build's own address.
    if not config.html_baseurl:
        config.html_baseurl = PROJECT["urls"]["Documentation"].rstrip("/") + "/"
    config.html_theme_options["repository_url"] = REPOSITORY

    # A reference to PyTorch links to the documentation of the torch that
    # builds the site; its inventory is in the repository (docs/inventories/,
    # made by make_torch_inventory.py), so the build stays offline.
    series = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    inventory = Path(app.confdir) / "inventories" / f"torch-{series}.inv"
    if not inventory.is_file():
        raise ConfigError(
            f"no PyTorch inventory for torch {torch.__version__}: "
            f"docs/inventories/{inventory.name} does not exist. Make it with "
            "docs/inventories/make_torch_inventory.py --source "
            "PYTORCH/docs/source (see docs/inventories/README.md)."
        )
    url = f"https://docs.pytorch.org/docs/{series}/"
    config.intersphinx_mapping = {
        **config.intersphinx_mapping,
        "torch": (url, str(inventory)),
    }

    torch_pin = next(d for d in PROJECT["dependencies"] if d.startswith("torch"))
    config.myst_substitutions = {
        **config.myst_substitutions,
        "torch_version": torch.__version__,
        "torch_range": torch_pin.removeprefix("torch").replace(">=", "≥ "),
        "package_version": autograd_notes.__version__,
    }


def per_edition(app: Sphinx, config: Config) -> None:
    """Settings that depend on the edition (``-D language=...``)."""
    import torch

    lang, words = config.language, get_translation("site")
    footer = str(words(FOOTER)).format(torch.__version__)
    config.html_theme_options["extra_footer"] = f"<p>{footer}</p>"
    # sphinx-book-theme's own catalog has no Chinese for its search box.
    config.html_theme_options["search_bar_text"] = str(words("Search..."))
    source = lang == next(iter(EDITIONS))
    edit = EDIT_SOURCE if source else EDIT_CATALOG.format(lang)
    config.html_context["edit_page_url_template"] = edit
    if not os.environ.get("READTHEDOCS"):  # there, the library reads the address
        path = urlsplit(config.html_baseurl).path.rstrip("/") + "/"
        config.notfound_urls_prefix = path + EDITIONS[lang].folder
    title, body = (str(words(text)) for text in NOT_FOUND)
    body = body.format(config.notfound_urls_prefix)
    config.notfound_context = {
        "title": title,
        "body": f"<h1>{title}</h1>\n<p>{body}</p>",
    }
    *earlier, newest = VERIFIED_TORCH  # oldest and newest: "2.13.0 and 2.15.0"
    verified = str(words("{} and {}")).format(", ".join(earlier), newest)
    config.myst_substitutions["torch_verified"] = verified


def quote_the_article(app: Sphinx, pagename: str, *args: object) -> None:
    """Search results quote the article (Sphinx quotes the theme around it too)."""
    if pagename == "search":
        app.add_js_file("search-snippets.js")


def own_source(app: Sphinx, modname: str, fullname: str) -> str | None:
    """viewcode: what we inherit from torch (``Function.apply``) gets no source link."""
    owner = getattr(importlib.import_module(modname), fullname.split(".")[0])
    obj = reduce(lambda o, n: getattr(o, n, None), fullname.split(".")[1:], owner)
    ours = getattr(obj, "__module__", "autograd_notes").startswith("autograd_notes")
    return None if ours else owner.__module__


def mathjax_reads_in_parallel(app: Sphinx, config: Config) -> None:
    """sphinx-mathjax-offline reads nothing: say so for it."""
    app.extensions["sphinx-mathjax-offline"].parallel_read_safe = True


def setup(app: Sphinx) -> dict[str, bool]:
    app.connect("config-inited", from_the_project)
    app.connect("config-inited", per_edition)
    app.connect("html-page-context", quote_the_article)
    app.connect("viewcode-follow-imported", own_source)
    app.connect("config-inited", mathjax_reads_in_parallel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
