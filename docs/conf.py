"""Sphinx configuration: strict (every page executed; any error or warning fails)."""

from __future__ import annotations

import sys
from pathlib import Path

# The site machinery is one package, docs/_ext/autograd_site (its __init__
# lists the features). This is the only line that is not a setting.
DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "autograd-notes"
author = "autograd-notes developers"
copyright = "2026, autograd-notes developers"
# release, html_baseurl (unless -D html_baseurl=... gives it), the theme's
# repository_url, PyTorch's inventory and the pages' substitutions are read
# from the package, torch and pyproject.toml: docs/_ext/autograd_site/settings.py.

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
    "sphinxext.rediraffe",  # old addresses lead to the new pages, #fragment kept
    "notfound.extension",  # a 404 page per edition, its links absolute
    "autograd_site",  # ours, last: FEATURES in docs/_ext/autograd_site/__init__.py
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
# outputs, so nothing runs twice. autograd_site/catalogs.py fails the zh build on a
# message with no current translation.
locale_dirs = ["locale/"]
gettext_compact = False  # one catalog per page: docs/locale/zh_CN/LC_MESSAGES/
gettext_uuid = False
gettext_location = True

# A reference that does not resolve is an error: to our own API, and to PyTorch's,
# whose names link to the documentation of the torch that builds the site. Its
# inventory is in the repository (docs/inventories/, derived from PyTorch's
# documentation sources by make_torch_inventory.py), so intersphinx reads a local
# file and the build stays offline (settings.py adds it for the running torch).
intersphinx_mapping: dict[str, tuple[str, str]] = {}
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
# Also the substitutions torch_version, torch_range, torch_verified and
# package_version (settings.py).
myst_substitutions: dict[str, str] = {}
myst_heading_anchors = 3
nb_execution_mode = "cache"
# Shared by both editions, wherever each writes its HTML.
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_raise_on_error = True
nb_execution_timeout = 180
nb_execution_show_tb = True
# A warning printed by a cell goes to stderr: fail the build instead of publishing
# it. Pages that expect a warning catch it and print it.
nb_output_stderr = "error"
# myst-nb joins a cell's stream chunks; our kernel sends one per cell
# (autograd_site/quietbuild.py says why).
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
    "reset_modules": ("matplotlib", "autograd_site.sitecheck.strict_warnings"),
    "reset_modules_order": "both",
    "doc_module": ("autograd_notes",),
    "backreferences_dir": "reference/generated/backreferences",
    "remove_config_comments": True,
    "image_srcset": ["2x"],
    # graphs get alt text (docs/_ext/autograd_site/figures.py)
    "image_scrapers": ("autograd_site.figures.graph_scraper",),
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
# The footer, the search box's words, "Suggest edit" and the 404 page are the
# edition's (settings.per_edition).
html_context = {"default_mode": "auto"}
