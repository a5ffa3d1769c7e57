"""The launch bar at the top of every page that runs code.

Jobs:

* :func:`add_launch_bar` (``html-page-context``) puts on every tutorial page
  (``tutorials/NN_name``) and every MyST page that executes code
  (``notebooks.executed_pages``), right under the title, a bar of plain links
  (``_templates/launch-bar.html``, labels in the page's language): *Open in
  Colab*, *Download notebook*, *Download script* (tutorials only) and *View
  source*;
* :class:`RemoveDownloadNote` (a transform) removes sphinx-gallery's "Go to
  the end to download the full example code" note, which the bar replaces.

The links (:func:`launch_links`):

* Colab opens the notebook of the same edition and version as the page, from
  the ``notebooks`` branch that ``.github/workflows/docs.yml`` publishes with
  ``docs/publish_notebooks.py``:
  ``https://colab.research.google.com/github/<owner>/<repo>/blob/notebooks/<version>/<edition>/<docname>.ipynb``;
* the notebook and script are this edition's downloads (a tutorial's from
  ``_downloads/``, as at the end of the page; a page's ``notebooks/<docname>.ipynb``);
* View source is the file in the repository on ``main`` (``gallery/NN_name.py``
  or ``docs/<docname>.md``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

COLAB = "https://colab.research.google.com/github/{repo}/blob/notebooks/{path}"


def github_repo(repository_url: str) -> str:
    """``owner/name`` from ``https://github.com/owner/name``."""
    match = re.fullmatch(r"https://github\.com/([^/]+/[^/]+?)/?", repository_url)
    if match is None:
        raise ValueError(f"not a GitHub repository URL: {repository_url}")
    return match.group(1)


def published_path(version: str, language: str, docname: str) -> str:
    """Where ``docs/publish_notebooks.py`` puts a page's notebook."""
    return f"{version}/{language}/{docname}.ipynb"


def colab_url(repository_url: str, version: str, language: str, docname: str) -> str:
    return COLAB.format(
        repo=github_repo(repository_url),
        path=published_path(version, language, docname),
    )


def launch_links(
    app: Sphinx, pagename: str, body: str, pathto: Any
) -> dict[str, str] | None:
    """The bar's links for a page, or None if the page runs no code."""
    from editlinks import source_in_repository
    from downloads import executed_pages

    options = app.config.html_theme_options
    repository = options["repository_url"].rstrip("/")
    branch = options.get("repository_branch", "main")
    source = source_in_repository(pagename)
    if source is not None and source.endswith(".py"):
        name = Path(source).stem
        found = {
            suffix: re.search(rf'href="([^"]*_downloads/[^"]*/{name}\.{suffix})"', body)
            for suffix in ("ipynb", "py")
        }
        if not all(found.values()):
            return None
        notebook, script = (m.group(1) for m in found.values() if m)
    elif pagename in executed_pages(app):
        source = f"docs/{Path(app.env.doc2path(pagename)).relative_to(app.srcdir)}"
        notebook, script = pathto(f"notebooks/{pagename}.ipynb", 1), ""
    else:
        return None
    return {
        "colab": colab_url(
            repository, app.config.release, app.config.language, pagename
        ),
        "notebook": notebook,
        "script": script,
        "source": f"{repository}/blob/{branch}/{source}",
    }


def add_launch_bar(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: nodes.document | None,
) -> None:
    body = context.get("body", "")
    if doctree is None or "</h1>" not in body:
        return
    links = launch_links(app, pagename, body, context["pathto"])
    if links is None:
        return
    bar = app.builder.templates.render("launch-bar.html", {**context, "launch": links})
    context["body"] = body.replace("</h1>", "</h1>\n" + bar, 1)


class RemoveDownloadNote(SphinxTransform):
    """sphinx-gallery's "Go to the end to download" note: the bar replaces it."""

    # Before Locale (20): a message removed from the catalogs must not be
    # looked up, or the zh build reports it untranslated.
    default_priority = 15

    def apply(self, **kwargs: Any) -> None:
        if not self.env.docname.startswith("tutorials/"):
            return
        for note in list(self.document.findall(nodes.note)):
            if "sphx-glr-download-link-note" in note["classes"]:
                parent = note.parent
                parent.remove(note)
                if not parent.children and parent.parent is not None:
                    parent.parent.remove(parent)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(RemoveDownloadNote)
    app.connect("html-page-context", add_launch_bar)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
