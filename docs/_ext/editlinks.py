"""Point "Edit" and "View source" of a tutorial page at its script in gallery/.

sphinx-gallery generates ``docs/tutorials/NN_name.rst`` from
``gallery/NN_name.py``; the generated file is not in the repository, so the
theme's default links would lead nowhere. Jobs:

* :func:`source_in_repository`: the repository file a tutorial page comes
  from (``launchbar``'s *View source* links to it too);
* :func:`point_at_gallery` (``html-page-context``) points the header's
  "Edit" button there: it runs after the theme defines
  ``get_edit_provider_and_url`` and before the header buttons use it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

GALLERY = Path(__file__).resolve().parents[2] / "gallery"


def source_in_repository(pagename: str) -> str | None:
    """The repository path a generated tutorial page comes from, if any."""
    if not pagename.startswith("tutorials/"):
        return None
    name = pagename.removeprefix("tutorials/")
    if name == "index":
        return "gallery/GALLERY_HEADER.rst"
    if (GALLERY / f"{name}.py").is_file():
        return f"gallery/{name}.py"
    return None


def point_at_gallery(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    path = source_in_repository(pagename)
    if path is None or "get_edit_provider_and_url" not in context:
        return
    options = app.config.html_theme_options
    url = (
        f"{options['repository_url'].rstrip('/')}/edit/"
        f"{options.get('repository_branch', 'main')}/{path}"
    )
    context["get_edit_provider_and_url"] = lambda: ("GitHub", url)


def setup(app: Sphinx) -> dict[str, Any]:
    # pydata-sphinx-theme sets the default at 500; sphinx-book-theme builds
    # its buttons at 501, and this extension registers first.
    app.connect("html-page-context", point_at_gallery, priority=501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
