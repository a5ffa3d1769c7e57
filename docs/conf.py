"""Sphinx configuration: strict (every page executed; any error or warning fails)."""

from __future__ import annotations

import importlib
import os
import sys
from functools import reduce
from pathlib import Path
from urllib.parse import urlsplit

from sphinx.application import Sphinx
from sphinx.config import Config

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

import siteconfig  # noqa: E402  pyproject.toml, read once for the whole site

_project = siteconfig.TABLE["project"]
_verified = siteconfig.VERIFIED_TORCH  # the versions `nox -s compat` verifies

REPOSITORY = _project["urls"]["Repository"]  # named once, in pyproject.toml
# Where this very build is served (override: -D html_baseurl=...). The downloads
# link their cross-references there and install the package's wheel from there
# (docs/_ext/sitewheel.py), so it must be this build's own address, version
# segment included (on Read the Docs, sitewheel.py reads it from the environment).
html_baseurl = _project["urls"]["Documentation"].rstrip("/") + "/"

project = "autograd-notes"
author = "autograd-notes developers"
copyright = "2026, autograd-notes developers"

import autograd_notes  # noqa: E402

release = version = autograd_notes.__version__

extensions = [
    "quietbuild",  # no configuration dumps, no kernel notices
    "myst_nb",
    "sphinx_gallery.gen_gallery",
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",
    "sphinx_design",
    "sphinx-mathjax-offline",  # MathJax served from _static: no CDN request
    "sphinxext.rediraffe",  # old addresses lead to the new pages, #fragment kept
    "notfound.extension",  # a 404 page per edition, its links absolute
    "freshness",
    "sitecheck",
    "exercises",  # collapse tutorial solutions into <details>
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
]

exclude_patterns = [
    "_build",
    "jupyter_execute",
    "**.ipynb_checkpoints",
    # sphinx-gallery writes a notebook beside each generated page; myst-nb
    # would otherwise read it as a second copy of the example.
    "tutorials/**.ipynb",
    "**sg_execution_times.rst",
    # PyTorch's inventory, its listing and their README: data, not pages.
    "inventories",
]

# -- Two editions: English, and zh_CN from the catalogs (docs/build.py) --------
# docs/build.py builds English into _build/html, then the same sources with
# -D language=zh_CN into _build/html/zh_CN; the second reuses the first's executed
# outputs, so nothing runs twice. docs/_ext/catalogs.py fails the zh build on a
# message with no current translation.
BUILD = DOCS / "_build"
locale_dirs = ["locale/"]
gettext_compact = False  # one catalog per page: docs/locale/zh_CN/LC_MESSAGES/
gettext_uuid = False
gettext_location = True

# A reference that does not resolve is an error: to our own API, and to PyTorch's,
# whose names link to the documentation of the torch that builds the site. Its
# inventory is in the repository (docs/inventories/, derived from PyTorch's
# documentation sources by make_torch_inventory.py), so intersphinx reads a local
# file and the build stays offline.
import torch  # noqa: E402

TORCH_SERIES = ".".join(torch.__version__.split("+")[0].split(".")[:2])
TORCH_INVENTORY = DOCS / "inventories" / f"torch-{TORCH_SERIES}.inv"
if not TORCH_INVENTORY.is_file():
    raise SystemExit(
        f"docs/conf.py: no PyTorch inventory for torch {torch.__version__}: "
        f"docs/inventories/{TORCH_INVENTORY.name} does not exist. Make it with "
        "docs/inventories/make_torch_inventory.py --source PYTORCH/docs/source "
        "(see docs/inventories/README.md)."
    )
intersphinx_mapping = {
    "torch": (f"https://docs.pytorch.org/docs/{TORCH_SERIES}/", str(TORCH_INVENTORY)),
}
intersphinx_cache_limit = -1  # a local file: nothing to fetch or expire
nitpicky = True
nitpick_ignore_regex = [
    # What PyTorch documents nowhere: the graph's node class and the
    # ``grad_fn`` attribute (autograd.md documents only Node's methods).
    (r"py:.*", r"torch\.autograd\.graph\.Node|torch\.Tensor\.grad_fn"),
    # Other libraries have no inventory offline: they are not checked.
    (r"py:.*", r"(matplotlib|networkx|graphviz|collections|typing|pathlib)\..*"),
    (r"py:.*", r"(Figure|Axes|Path|Sequence|Mapping|Iterator|Any|RemovableHandle)"),
    (r"py:.*", r"(optional|callable|Literal\[.*\]|int|float|str|bool|None|object)"),
    (r"py:.*", r"(tuple|list|dict|sequence|iterable|os\.PathLike)"),
    # numpy-style type prose ("mapping of str to object", "default False");
    # every class of ours is CamelCase, so lowercase targets are never ours.
    (r"py:class", r"(default .*|[a-z][\w .]*)"),
]

# -- MyST / myst-nb: executed concept pages ---------------------------------
myst_enable_extensions = [
    "colon_fence",
    "dollarmath",
    "deflist",
    "attrs_inline",
    "substitution",
]
# Importing font_manager builds matplotlib's font cache on a fresh machine now, in
# the Sphinx process, not inside the first executed page, where its one-time
# message on stderr would fail the build.
import matplotlib.font_manager  # noqa: E402, F401

myst_substitutions = {
    "torch_version": torch.__version__,
    "torch_range": next(d for d in _project["dependencies"] if d.startswith("torch"))
    .removeprefix("torch")
    .replace(">=", "≥ "),
    "torch_verified": " and ".join(_verified),
    "package_version": autograd_notes.__version__,
}
myst_heading_anchors = 3
nb_execution_mode = "cache"
# Shared by both editions, wherever each writes its HTML.
nb_execution_cache_path = str(BUILD / ".jupyter_cache")
nb_execution_raise_on_error = True
nb_execution_timeout = 180
nb_execution_show_tb = True
# A warning printed by a cell goes to stderr: fail the build instead of publishing
# it. Pages that expect a warning catch it and print it.
nb_output_stderr = "error"
# myst-nb joins a cell's stream chunks; our kernel sends one per cell
# (docs/_ext/quietbuild.py says why).
nb_merge_streams = True
# -- Redirects: tutorial NN became NN+1 (tests/site/test_redirects.py) ---------
# When the first tutorial came, every other one moved up a number; links from
# outside still reach them (sphinxext-rediraffe writes a page at each old address,
# in both editions). test_redirects.py fails on a page renamed or deleted without
# a redirect.
RENUMBERED = """leaf_tensors grad_fn_and_the_graph detach_and_stopping_gradients
in_place_and_views backward_of_non_scalars several_losses training_part_of_a_weight
writing_a_custom_function testing_a_custom_function hooks non_differentiable_points
higher_order_gradients forward_mode_and_torch_func memory_and_checkpointing
torch_compile_and_autograd""".split()  # noqa: SIM905
rediraffe_redirects = {
    f"tutorials/{n:02d}_{name}": f"tutorials/{n + 1:02d}_{name}"
    for n, name in enumerate(RENUMBERED, start=1)
}
rediraffe_template = "_templates/redirect.html"

# -- sphinx-gallery: the tutorials ---------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["../gallery"],
    "gallery_dirs": ["tutorials"],
    "filename_pattern": r"/\d\d_",  # execute every numbered script
    "ignore_pattern": r"(__init__|conftest)\.py",
    "within_subsection_order": "FileNameSortKey",
    "reset_modules": ("matplotlib", "sitecheck.strict_warnings"),
    "reset_modules_order": "both",
    "doc_module": ("autograd_notes",),
    "backreferences_dir": "reference/generated/backreferences",
    "remove_config_comments": True,
    "image_srcset": ["2x"],
    "image_scrapers": ("figures.graph_scraper",),  # graphs: alt text (figures.py)
    "show_signature": False,
    # The timings page loads jQuery and DataTables from CDNs: not offline-safe.
    "write_computation_times": False,
    # No "Total running time" footer: pages show nothing machine-dependent.
    "min_reported_time": float("inf"),
    "parallel": True,  # on as many cores as Sphinx reads with (-j)
}

# -- autodoc --------------------------------------------------------------------
autodoc_typehints = "description"
autodoc_inherit_docstrings = False  # torch's docstrings carry torch-internal refs
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_numpy_docstring = True
napoleon_google_docstring = False

# -- copybutton: code, never prompts or outputs; prompts stay visible to it ------
# Prompts must stay visible to copybutton, so that "only prompt lines" drops the
# outputs and tracebacks of >>> examples.
copybutton_prompt_text = r">>> |\.\.\. |\$ |In \[\d*\]: | {2,5}\.\.\.: "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
copybutton_exclude = ".linenos"

# -- HTML -------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "autograd-notes"
html_static_path = ["_static"]
templates_path = ["_templates"]
html_css_files = ["custom.css"]
# table-labels.js: wide tables stack on phones, or scroll in their box with a cue.
html_js_files = ["sidebar-a11y.js", "table-labels.js"]
html_theme_options = {
    "repository_url": REPOSITORY,
    "use_repository_button": True,
    "use_edit_page_button": True,
    "use_issues_button": True,
    "home_page_in_toc": True,
    "show_toc_level": 2,
    # One search box per page: the sidebar's. The header's copy goes.
    "navbar_persistent": [],
    # The link to the same page in the other edition, before the buttons.
    "article_header_end": ["edition-switcher.html", "article-header-buttons.html"],
}
# Raw HTML, so not in the pages' catalogs: their Chinese is in site.po.
FOOTER = "Every output on this site was produced by torch {} while the site was built."
# "Suggest edit" (the theme renders this): a tutorial's script in gallery/; on a
# translated page, its catalog. The theme wants "file_name" in the template.
EDIT = f"{REPOSITORY}/edit/main/"
EDIT_SOURCE = (
    EDIT + "{% if pagename == 'tutorials/index' %}gallery/GALLERY_HEADER.rst"
    "{% elif pagename.startswith('tutorials/') %}gallery/{{ pagename[10:] }}.py"
    "{% else %}docs/{{ file_name }}{% endif %}"
)
# "{}": the edition's language (str.format); the doubled braces are Jinja's.
EDIT_CATALOG = (
    EDIT + "docs/locale/{}/LC_MESSAGES/{{{{ pagename }}}}.po{{# file_name #}}"
)
html_context = {"default_mode": "auto", "edit_page_url_template": EDIT_SOURCE}
# The 404 page: raw HTML, its links absolute (the hosting layout: the path of
# html_baseurl, then the edition's folder).
NOT_FOUND = (
    "Page not found",
    "This page does not exist (any more). Start from the "
    '<a href="{0}">home page</a> or <a href="{0}search.html">search</a>.',
)


def per_edition(app: Sphinx, config: Config) -> None:
    """Settings that depend on the edition (``-D language=...``); our words in
    it from site.po (``catalogs.theme_strings`` reads it first)."""
    from sphinx.locale import get_translation

    lang, words = config.language, get_translation("site")
    footer = str(words(FOOTER)).format(torch.__version__)
    config.html_theme_options["extra_footer"] = f"<p>{footer}</p>"
    # sphinx-book-theme's own catalog has no Chinese for its search box.
    config.html_theme_options["search_bar_text"] = str(words("Search..."))
    source = lang == next(iter(siteconfig.EDITIONS))
    edit = EDIT_SOURCE if source else EDIT_CATALOG.format(lang)
    config.html_context["edit_page_url_template"] = edit
    if not os.environ.get("READTHEDOCS"):  # there, the library reads the address
        from siteconfig import EDITIONS

        path = urlsplit(config.html_baseurl).path.rstrip("/") + "/"
        config.notfound_urls_prefix = path + EDITIONS[lang].folder
    title, body = (str(words(text)) for text in NOT_FOUND)
    body = body.format(config.notfound_urls_prefix)
    config.notfound_context = {
        "title": title,
        "body": f"<h1>{title}</h1>\n<p>{body}</p>",
    }
    if lang == "zh_CN":
        config.myst_substitutions["torch_verified"] = " 和 ".join(_verified)


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


def setup(app: Sphinx) -> None:
    app.connect("viewcode-follow-imported", own_source)
    app.connect("config-inited", per_edition)
    app.connect("html-page-context", quote_the_article)
    # sphinx-mathjax-offline only copies MathJax into _static, but does not say
    # it is safe for parallel reading; say it, so `-j auto` reads in parallel.
    app.extensions["sphinx-mathjax-offline"].parallel_read_safe = True
