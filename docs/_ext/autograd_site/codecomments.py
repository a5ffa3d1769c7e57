"""Comments in the pages' code, translated like the prose around them.

A code block shows the same code in both editions, but its comments explain,
and the zh_CN edition explains in Chinese. Sphinx's and pybabel's extractors
read prose, never the comments inside a code block, so:

* :class:`ExtractCodeComments` (a transform before ``Locale``) finds the
  comments of every Python block (the tutorials' and the executed pages'
  code cells, ``python`` blocks, ``>>>`` sessions) and every shell block,
  but not the examples of an API entry, with :mod:`tokenize` for Python (a
  ``#`` in a string is no comment). One
  message per comment, a run of full-line comments one message; pragmas
  (``# noqa``, ``# %%``, ...) and wordless comments are skipped. Each
  becomes an invisible :class:`code_comment` after its block, so the
  gettext builder puts it into the page's catalog with the block's location;
* ``Locale`` translates each node like any message, and the node writes the
  translation into the code, a run rewrapped no wider than the block (a
  Chinese character takes two columns); ``catalogs.RequireTranslation`` then
  names a comment left in English as it names any message, and
  :class:`DropCodeComments` removes the nodes;
* the finding and the translating are ``comments``' (pure functions), which
  also write the zh ``.py`` and ``.ipynb`` downloads (``downloads``): code
  unchanged, only comments translated.

The English edition shows the code as written: nothing is extracted there
(the gettext build aside).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

from .comments import PYTHON, SHELL, CommentError, find_comments, translate_comments
from .siteconfig import SOURCE

logger = logging.getLogger(__name__)


class code_comment(nodes.literal_block, addnodes.translatable):
    """A comment of the code block before it, as a message; never shown. A
    ``literal_block``, so ``Locale`` takes its translation as literal text:
    any other message is parsed as reST or MyST first, where a comment's
    ``*args`` would be a markup error."""

    def preserve_original_messages(self) -> None:  # an attribute, never overwritten
        pass

    def extract_original_messages(self) -> list[str]:
        return [self["message"]]

    def apply_translated_message(self, original: str, translated: str) -> None:
        block = self.block()
        if block is not None:
            code = translate_comments(
                block.astext(), {original: translated}.get, self["syntax"]
            )
            block.rawsource = code
            block[:] = [nodes.Text(code)]
        self["translated"] = True  # Locale marks only what it translates itself

    def astext(self) -> str:
        """The comment: what ``catalogs`` names when it is untranslated."""
        return str(self["message"])

    def block(self) -> nodes.literal_block | None:
        """The code block this comment belongs to."""
        assert self.parent is not None
        before = self.parent.children[: self.parent.index(self)]
        for sibling in reversed(before):
            if not isinstance(sibling, code_comment):
                return sibling if isinstance(sibling, nodes.literal_block) else None
        return None


def skip(self: Any, node: code_comment) -> None:
    raise nodes.SkipNode


def code_syntax(block: nodes.literal_block) -> str | None:
    """``python`` or ``shell``; None if the block's comments are not translated."""
    if isinstance(block, code_comment) or block.get("translatable") is False:
        return None  # marked not to be translated: its comments neither
    if len(block.children) != 1 or not isinstance(block[0], nodes.Text):
        return None  # parsed-literal: markup, not code
    language = str(block.get("language", "")).lower()
    if language in SHELL:
        return "shell"
    parent = block.parent
    if language in PYTHON or (
        # An executed page's code cell: Python, whatever the lexer's name
        # ("ipython3", or "none" when the page was not executed).
        isinstance(parent, nodes.container)
        and parent.get("nb_element") == "cell_code_source"
    ):
        return "python"
    return None


class ExtractCodeComments(SphinxTransform):
    """After each code block, one :class:`code_comment` per comment."""

    default_priority = 15  # before sphinx.transforms.i18n.Locale (20)

    def apply(self, **kwargs: Any) -> None:
        if self.config.language == SOURCE and self.app.builder.name != "gettext":
            return  # the English edition shows the code as written
        api: set[int] = set()  # the API's examples stay English
        for desc in self.document.findall(addnodes.desc):
            api.update(map(id, desc.findall(nodes.literal_block)))
        for block in list(self.document.findall(nodes.literal_block)):
            syntax = code_syntax(block)
            if syntax is None or id(block) in api:
                continue
            try:
                comments = find_comments(block.astext(), syntax)
            except CommentError as error:
                logger.warning(
                    "the comments of this code block cannot be translated: %s",
                    error,
                    location=block,
                    type="codecomments",
                )
                continue
            parent = block.parent
            assert parent is not None
            index = parent.index(block)
            for offset, comment in enumerate(comments, start=1):
                node = code_comment(message=comment.message, syntax=syntax)
                node.source, node.line = block.source, block.line
                parent.insert(index + offset, node)


class DropCodeComments(SphinxTransform):
    """Translated (or reported by ``catalogs``), they have done their job."""

    default_priority = 350  # after catalogs.RequireTranslation (345) read them

    def apply(self, **kwargs: Any) -> None:
        if self.app.builder.name == "gettext":
            return  # the gettext builder extracts them after the transforms
        for node in list(self.document.findall(code_comment)):
            assert node.parent is not None
            node.parent.remove(node)


def setup(app: Sphinx) -> dict[str, Any]:
    formats = ("html", "latex", "text", "man", "texinfo")
    app.add_node(code_comment, **dict.fromkeys(formats, (skip, None)))
    app.add_transform(ExtractCodeComments)
    app.add_transform(DropCodeComments)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
