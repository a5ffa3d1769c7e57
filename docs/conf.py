"""Sphinx configuration for autograd-notes.

The build is strict on purpose: every example and page is executed, any
error or Sphinx warning fails the build (``-W --keep-going`` in the nox
session), and unexpected Python warnings in examples are errors.
"""

from __future__ import annotations

import sys
from pathlib import Path

import tomllib
from sphinx.application import Sphinx
from sphinx.config import Config

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

with (ROOT / "pyproject.toml").open("rb") as f:
    _pyproject = tomllib.load(f)
_project = _pyproject["project"]
# The versions `nox -s compat` verifies.
_verified = _pyproject["tool"]["autograd-notes"]["verified-torch"]

# The one place the repository is named: pyproject.toml's [project.urls].
REPOSITORY = _project["urls"]["Repository"]
# The address the site is served from (override: -D html_baseurl=...).
# Notebooks link their cross-references there, and the downloads install the
# package from there (docs/_ext/sitewheel.py), so it must be the address of
# this very build, version segment included (on Read the Docs sitewheel.py
# reads it from the environment).
html_baseurl = _project["urls"]["Documentation"].rstrip("/") + "/"

project = "autograd-notes"
author = "autograd-notes developers"
copyright = "2026, autograd-notes developers"

import autograd_notes  # noqa: E402

release = version = autograd_notes.__version__

extensions = [
    "myst_nb",
    "sphinx_gallery.gen_gallery",
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",
    "sphinx_design",
    "sphinx-mathjax-offline",  # MathJax served from _static: no CDN request
    "freshness",
    "sitecheck",
    "exercises",  # collapse tutorial solutions into <details>
    "editlinks",  # "Edit" on a tutorial page opens its gallery/ script
    "editions",  # each page links to itself in the other edition
    "englishdocstrings",  # the API reference stays English: not in the catalogs
    "translationchecks",  # zh_CN: no message untranslated, fuzzy or unrendered
    "themestrings",  # zh_CN: our words for the theme's interface strings
    "zhsearch",  # zh_CN: search splits Chinese words and runs
    "codecomments",  # comments in code: in the catalogs, translated on zh pages
    "parallelread",  # -j: every core executes its share of the pages
    "redirects",  # old tutorial URLs lead to the renumbered pages
    "tutorialcards",  # gallery cards: translated, numbered, drawn when no figure
    "figures",  # 2x figures, graph alt text and legends in the page's language
    "downloads",  # every .py, .ipynb and .zip, both editions, in one pass
    "launchbar",  # Colab, notebook, script and source links atop executed pages
    "sitepdf",  # links the whole-site PDFs that docs/pdf.py prints
    "torchlinks",  # PyTorch names link to PyTorch's docs, in code and prose
    "searchsnippets",  # search results quote the article, not the theme
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
suppress_warnings: list[str] = []

# -- Two editions: English, and Simplified Chinese from gettext catalogs --------
# `nox -s docs` builds English into _build/html, then the same sources again
# with `-D language=zh_CN` into _build/html/zh_CN. The second build reuses the
# first one's executed outputs (sphinx-gallery's generated pages and myst-nb's
# cache under _build/), so nothing runs twice. docs/_ext/translationchecks.py
# fails the zh build on any message without a current translation.
BUILD = DOCS / "_build"
language = "en"
locale_dirs = ["locale/"]
gettext_compact = False  # one catalog per page: docs/locale/zh_CN/LC_MESSAGES/
gettext_uuid = False
gettext_location = True

# A reference that does not resolve is an error: to our own API, and to
# PyTorch's, whose names link to PyTorch's documentation of the torch that
# builds the site. Its inventory is in the repository (docs/inventories/,
# derived from PyTorch's documentation sources by make_torch_inventory.py),
# so intersphinx reads a local file and the build stays offline.
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
import matplotlib.font_manager  # noqa: E402, F401

# Importing font_manager builds matplotlib's font cache on a fresh machine
# now, in the Sphinx process, instead of inside the first executed page where
# its one-time message on stderr would fail the build.

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
# A warning printed by a cell goes to stderr: fail the build instead of
# publishing it. Pages that expect a warning catch it and print it.
nb_output_stderr = "error"
nb_merge_streams = True
# myst-nb merges a cell's stream chunks by stripping each one's end, so a
# line break that starts a chunk turns into a blank line: what a page shows
# would depend on when the kernel flushed. The kernel flushes a cell's output
# once, when the cell ends or displays something (see the kernel spec below).
STREAMS_AT_CELL_END = (
    "--IPKernelApp.exec_lines="
    "import sys; sys.stdout.flush_interval = sys.stderr.flush_interval = 1e9"
)


# -- A quiet build: progress and the result, nothing that reads as a warning ---
def _quiet_build() -> None:
    """No configuration dumps, no kernel notices (tests/site/test_quiet_build.py).

    * myst-parser and myst-nb log their whole configuration (``MdParserConfig(
      ...)``, ``NbParserConfig(...)``) and the cache's path at info level when
      the builder starts. Those two setup loggers now pass warnings and errors
      only.
    * Each kernel that executes a page logs a warning as it starts: it talks
      to the build over local TCP without encryption, and myst-nb offers no
      way to ask for IPC or encryption. The kernels start from a kernel spec
      the build writes, found first on ``JUPYTER_PATH``: ipykernel's own, for
      this Python, whose application logs errors only. What a cell writes to
      stderr still fails the build (``nb_output_stderr``); a kernel that
      cannot start still fails it too.
    * The same kernel spec makes each cell's output one stream chunk
      (``STREAMS_AT_CELL_END``), so two builds print identical pages.
    """
    import json
    import logging
    import os

    from ipykernel.kernelspec import get_kernel_dict

    for name in ("myst_parser.sphinx_ext.main", "myst_nb.sphinx_ext"):
        logging.getLogger(f"sphinx.{name}").setLevel(logging.WARNING)
    kernels = BUILD / "jupyter"
    # "python3": the kernel the pages' front matter names.
    spec = kernels / "kernels" / "python3" / "kernel.json"
    from figures import KERNEL_ARGS  # 2x figures, described graph drawings

    argv = ["--IPKernelApp.log_level=ERROR", STREAMS_AT_CELL_END, *KERNEL_ARGS]
    text = json.dumps(get_kernel_dict(argv), indent=1)
    if not spec.exists() or spec.read_text() != text:
        spec.parent.mkdir(parents=True, exist_ok=True)
        spec.write_text(text)
    path = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    if str(kernels) not in path:
        os.environ["JUPYTER_PATH"] = os.pathsep.join([str(kernels), *path])


_quiet_build()

# -- Redirects: the tutorials' addresses before "01_one_training_step" --------
# Tutorial NN became NN+1 when the first tutorial was added; links from
# outside still reach them (docs/_ext/redirects.py writes a page at each old
# address of both editions).
redirects = {
    f"tutorials/{old}": f"tutorials/{int(old[:2]) + 1:02d}{old[2:]}"
    for old in (
        "01_leaf_tensors",
        "02_grad_fn_and_the_graph",
        "03_detach_and_stopping_gradients",
        "04_in_place_and_views",
        "05_backward_of_non_scalars",
        "06_several_losses",
        "07_training_part_of_a_weight",
        "08_writing_a_custom_function",
        "09_testing_a_custom_function",
        "10_hooks",
        "11_non_differentiable_points",
        "12_higher_order_gradients",
        "13_forward_mode_and_torch_func",
        "14_memory_and_checkpointing",
        "15_torch_compile_and_autograd",
    )
}

# -- sphinx-gallery: the tutorials ---------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["../gallery"],
    "gallery_dirs": ["tutorials"],
    "filename_pattern": r"/\d\d_",  # execute every numbered script
    "ignore_pattern": r"(__init__|conftest)\.py",
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": False,  # run them all, then fail listing each error
    "only_warn_on_example_error": False,
    "reset_modules": ("matplotlib", "sitecheck.strict_warnings"),
    "reset_modules_order": "both",
    "doc_module": ("autograd_notes",),
    "backreferences_dir": "reference/generated/backreferences",
    "download_all_examples": True,
    "remove_config_comments": True,
    "show_memory": False,
    "capture_repr": ("_repr_html_", "__repr__"),
    "image_srcset": ["2x"],
    # Graph drawings: alt text that says what they show (docs/_ext/figures.py).
    "image_scrapers": ("figures.graph_scraper",),
    "thumbnail_size": (400, 280),
    "first_notebook_cell": None,
    "show_signature": False,
    # The timings page loads jQuery and DataTables from CDNs: not offline-safe.
    "write_computation_times": False,
    # No "Total running time" footer: pages show nothing machine-dependent.
    "min_reported_time": float("inf"),
    # Run the scripts on as many cores as Sphinx reads pages with (``-j``).
    "parallel": True,
}

# -- autodoc --------------------------------------------------------------------
autodoc_typehints = "description"
autodoc_inherit_docstrings = (
    False  # torch.autograd.Function docstrings carry torch-internal refs
)
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_numpy_docstring = True
napoleon_google_docstring = False

# -- copybutton: copy code, never prompts or outputs -------------------------------
copybutton_prompt_text = r">>> |\.\.\. |\$ |In \[\d*\]: | {2,5}\.\.\.: "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
# Prompts must stay visible to copybutton so that "only prompt lines" drops
# outputs and tracebacks of >>> examples.
copybutton_exclude = ".linenos"

# -- HTML -------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "autograd-notes"
html_static_path = ["_static"]
templates_path = ["_templates"]
html_css_files = ["custom.css"]
# table-labels.js: wide tables stack on phones, or scroll in their box with a cue.
html_js_files = ["sidebar-a11y.js", "table-labels.js"]
html_last_updated_fmt = None
html_theme_options = {
    "repository_url": REPOSITORY,
    "repository_branch": "main",
    "path_to_docs": "docs",
    "use_repository_button": True,
    "use_edit_page_button": True,
    "use_issues_button": True,
    "use_download_button": True,
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    # One search box per page: the sidebar's. The header's copy goes.
    "navbar_persistent": [],
    # The link to the same page in the other edition, before the buttons.
    "article_header_end": ["edition-switcher.html", "article-header-buttons.html"],
}
# Raw HTML, so not in the catalogs: one footer per edition.
FOOTERS = {
    "en": f"<p>Every output on this site was produced by torch {torch.__version__} "
    "while the site was built.</p>",
    "zh_CN": f"<p>本站的每一个输出，都是构建网站时由 torch {torch.__version__} "
    "实际运行产生的。</p>",
}
html_theme_options["extra_footer"] = FOOTERS["en"]
SEARCH_BAR = {"en": "Search...", "zh_CN": "搜索……"}
html_context = {"default_mode": "auto"}


def per_edition(app: Sphinx, config: Config) -> None:
    """Settings that depend on the edition (``-D language=...``)."""
    config.html_theme_options["extra_footer"] = FOOTERS[config.language]
    # sphinx-book-theme's own catalog has no Chinese for its search box.
    config.html_theme_options["search_bar_text"] = SEARCH_BAR[config.language]
    if config.language == "zh_CN":
        config.myst_substitutions["torch_verified"] = " 和 ".join(_verified)


def setup(app: Sphinx) -> None:
    app.connect("config-inited", per_edition)
    # sphinx-mathjax-offline only copies MathJax into _static, but does not say
    # it is safe for parallel reading; say it, so `-j auto` reads in parallel.
    app.extensions["sphinx-mathjax-offline"].parallel_read_safe = True
