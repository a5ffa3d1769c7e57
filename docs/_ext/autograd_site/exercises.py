"""Collapse each tutorial exercise's solution until the reader opens it.

A tutorial writes an exercise as a text cell whose last paragraph is exactly
``**Solution**`` (as the edition's catalogs translate it: the page's
catalog translates the paragraph, and ``site.po`` the word, which this
module looks for and writes on the page), then the code cell that solves
it. In the ``.py`` download that reads naturally. Our own code:
sphinx-design's dropdown wraps a directive's content, not the cells
sphinx-gallery generates.

* On the HTML page, :class:`CollapseSolutions` (a transform, tutorials only)
  moves the marker, the solution's code and its output or figure into a
  :class:`solution` node, written as a ``<details>`` element: closed, opened
  by a click or the keyboard, no JavaScript. Other builders show it as is.
* In a notebook, :func:`collapse_in_notebook` (``downloads`` applies it to
  every notebook) hides the solution's code cell (``HIDDEN``: Jupyter's
  ``source_hidden``, Colab's form view).

The code still runs in the build, so a wrong solution (its hidden
``assert``) fails it.
"""

from __future__ import annotations

import itertools
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

# A notebook cell's metadata that collapses its code: Jupyter's, Colab's.
HIDDEN = {"jupyter": {"source_hidden": True}, "colab": {"cellView": "form"}}


class solution(nodes.General, nodes.Element):
    """A collapsed solution: the code and its output."""


def marker_word() -> str:
    """ "Solution" in the language of the edition being built (``site.po``)."""
    return str(get_translation("site")("Solution"))


def visit_solution_html(self: Any, node: solution) -> None:
    summary = marker_word()
    self.body.append(f'<details class="solution">\n<summary>{summary}</summary>\n')


def depart_solution_html(self: Any, node: solution) -> None:
    self.body.append("</details>\n")


def visit_solution_other(self: Any, node: solution) -> None:
    pass  # other builders show the content as it is


def collapse_in_notebook(notebook: dict[str, Any], word: str) -> None:
    """Hide each code cell after a Markdown cell whose last line is ``**word**``."""
    marker = f"**{word}**"
    for cell, after in itertools.pairwise(notebook["cells"]):
        last = "".join(cell["source"]).strip().rpartition("\n")[2].strip()
        kinds = (cell["cell_type"], after["cell_type"])
        if kinds == ("markdown", "code") and last == marker:
            after["metadata"] = after.get("metadata", {}) | HIDDEN


def _is_marker(node: nodes.Node, marker: str) -> bool:
    return (
        isinstance(node, nodes.paragraph)
        and len(node.children) == 1
        and isinstance(node.children[0], nodes.strong)
        and node.astext() == marker
    )


OUTPUTS = {"sphx-glr-script-out", "sphx-glr-single-img", "sphx-glr-horizontal"}


def _is_output(node: nodes.Node) -> bool:
    """Printed output or a figure, as sphinx-gallery writes them."""
    classes = node.get("classes", []) if isinstance(node, nodes.Element) else []
    return bool(OUTPUTS.intersection(classes)) or isinstance(node, nodes.image)


class CollapseSolutions(SphinxTransform):
    """Wrap each ``**Solution**`` paragraph and the code after it."""

    default_priority = 800

    def apply(self, **kwargs: Any) -> None:
        if not self.env.docname.startswith("tutorials/"):
            return
        if self.app.builder.name == "gettext":
            return  # the catalogs need the marker paragraph, to translate it
        # The marker as the page's catalog translates it.
        text = marker_word()
        for marker in list(self.document.findall(lambda n: _is_marker(n, text))):
            parent = marker.parent
            index = parent.index(marker)
            taken: list[nodes.Node] = []
            code_seen = False
            for sibling in parent.children[index + 1 :]:
                if isinstance(sibling, nodes.comment):
                    taken.append(sibling)
                elif not code_seen and isinstance(sibling, nodes.literal_block):
                    taken.append(sibling)
                    code_seen = True
                elif code_seen and _is_output(sibling):
                    taken.append(sibling)
                else:
                    break
            if not code_seen:
                logger.warning(
                    "a **Solution** paragraph is not followed by a code cell",
                    location=marker,
                )
                continue
            box = solution()
            for node in taken:
                parent.remove(node)
                box += node
            parent.replace(marker, box)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(
        solution,
        html=(visit_solution_html, depart_solution_html),
        latex=(visit_solution_other, visit_solution_other),
        text=(visit_solution_other, visit_solution_other),
    )
    app.add_transform(CollapseSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
