"""The API reference stays English in both editions.

One job: the :class:`KeepDocstringsEnglish` transform (before Sphinx's
``Locale``) marks every message of the API reference (a docstring, or text
inside an object description) not translatable, so the docstrings are never
extracted into the catalogs and never looked up in them. The zh edition's
reference index says so in its own prose.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util.nodes import is_translatable


def _is_docstring(node: nodes.Node) -> bool:
    """Text of the API reference: a docstring, or inside an object description."""
    if not isinstance(node, nodes.TextElement):
        return False
    return "docstring of " in (node.source or "") or _inside_description(node)


def _inside_description(node: nodes.Node) -> bool:
    """Whether an ancestor of ``node`` is an object description."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, addnodes.desc):
            return True
        parent = parent.parent
    return False


class KeepDocstringsEnglish(SphinxTransform):
    """API docstrings are not translated: keep them out of the catalogs.

    Only the nodes that are messages (what the gettext builder extracts and
    ``Locale`` translates: paragraphs, field names, ...) are marked. Marking
    any other node would do harm: ``RemoveTranslatableInline`` unwraps every
    ``inline`` that has a ``translatable`` attribute, whatever its value, and
    appends its children to the end of its parent. The pieces of a signature
    (name, ``=``, default) are such inlines, so a signature came out as
    ``=namesNone``. An inline is a message only when it already says so, and
    then marking it changes nothing about that unwrapping.
    """

    default_priority = 10  # before sphinx.transforms.i18n.Locale (20)

    def apply(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(_is_docstring_message)):
            node["translatable"] = False


def _is_docstring_message(node: nodes.Node) -> bool:
    """A message (as the catalogs hold them) of the API reference."""
    return is_translatable(node) and _is_docstring(node)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(KeepDocstringsEnglish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
