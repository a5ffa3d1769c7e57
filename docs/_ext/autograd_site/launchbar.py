"""The launch bar under the title of every page that runs code.

:func:`add_launch_bar` (``html-page-context``) puts on each tutorial and each
executed MyST page (``downloads.executed_pages``) a bar of plain links
(``_templates/launch-bar.html``, in the page's language), from
:func:`launch_links`:

* *Open in Colab*: the notebook of this edition and version, from the
  ``notebooks`` branch that ``.github/workflows/docs.yml`` publishes
  (``<version>/<edition>/<docname>.ipynb``);
* *Download notebook* and *Download script* (tutorials only): this edition's
  downloads, a tutorial's from ``_downloads/`` as at the end of its page, a
  page's ``notebooks/<docname>.ipynb``;
* *View source*: the file in the repository (``gallery/NN_name.py`` or
  ``docs/<docname>.md``).

:class:`RemoveDownloadNote` drops sphinx-gallery's "Go to the end to
download" note, which the bar replaces. Our own code: sphinx-book-theme's
launch buttons open the page's source file in Colab, which for a MyST page
or a gallery script is no notebook, and never a translated one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

COLAB = "https://colab.research.google.com/github/{repo}/blob/notebooks/{path}"


def launch_links(
    app: Sphinx, pagename: str, body: str, pathto: Any
) -> dict[str, str] | None:
    """The bar's links for a page, or None if the page runs no code."""
    from .downloads import executed_pages
    from .editions import source_in_repository

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
    repo = re.fullmatch(r"https://github\.com/([^/]+/[^/]+?)/?", repository)
    if repo is None:
        raise ValueError(f"not a GitHub repository URL: {repository}")
    # Where .github/workflows/docs.yml publishes each edition's notebooks/.
    path = f"{app.config.release}/{app.config.language}/{pagename}.ipynb"
    return {
        "colab": COLAB.format(repo=repo.group(1), path=path),
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
