"""Link the whole-site PDFs that ``docs/pdf.py`` prints (``nox -s pdf``).

Two jobs:

* :func:`whole_site_button` (``html-page-context``): the header's download
  menu offers "PDF of the whole site" (the edition's PDF) where
  sphinx-book-theme offered ".pdf", which only printed the page;
* the ``sitepdf`` role links a PDF from the text: ``{sitepdf}`English <en>```
  links ``_static/pdf/autograd-notes-en.pdf`` of the edition the page is in
  (``docs/pdf.py`` writes both PDFs into both editions).

The PDFs are printed from the built HTML, so they are written after this
build, and only by a build that is told it will print them: ``-D
site_pdf=1`` (``nox -s pdf`` and ``nox -s browser`` pass it, and so do the
hosting configurations). Without it, ``nox -s docs`` links no PDF (the
theme's print-this-page entry goes too, and the role's text is plain), so
the site it builds has no dead link.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst.states import Inliner
from sphinx.application import Sphinx
from sphinx.locale import get_translation

EDITIONS = ("en", "zh_CN")
PROJECT = "autograd-notes"
_ = get_translation("sphinx")  # the theme's strings' catalog (sphinx.locale._)
ROLE = re.compile(r"^(?P<text>.+?)\s*<(?P<edition>[\w-]+)>$", re.S)


def pdf_path(edition: str) -> str:
    """The PDF of ``edition``, from the root of either edition."""
    return f"_static/pdf/{PROJECT}-{edition}.pdf"


def whole_site_button(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Replace the theme's print-this-page entry with the edition's PDF, or
    drop it in a build that prints no PDF."""
    for group in context.get("header_buttons", []):
        buttons = group.get("buttons", [])
        if not app.config.site_pdf:
            kept = [b for b in buttons if b.get("label") != "download-pdf-button"]
            buttons[:] = kept
            continue
        for index, button in enumerate(buttons):
            if button.get("label") == "download-pdf-button":
                group["buttons"][index] = {
                    "type": "link",
                    "url": context["pathto"](pdf_path(app.config.language), 1),
                    "text": _("PDF of the whole site"),
                    "tooltip": _("Download the whole site as one PDF"),
                    "icon": "fas fa-file-pdf",
                    "label": "download-pdf-button",
                }


def sitepdf_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Inliner,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """``{sitepdf}`link text <edition>```: a link to that edition's PDF."""
    match = ROLE.match(text)
    if match is None or match["edition"] not in EDITIONS:
        message = inliner.reporter.error(
            f"sitepdf: expected `text <edition>` with an edition of {EDITIONS}: "
            f"{text!r}",
            line=lineno,
        )
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    env = inliner.document.settings.env
    if not env.config.site_pdf:  # no PDF is printed: the text, unlinked
        return [nodes.inline(rawtext, match["text"])], []
    docname = env.docname
    to_root = "../" * docname.count("/")
    uri = to_root + pdf_path(match["edition"])
    node = nodes.reference(rawtext, match["text"], refuri=uri, internal=False)
    node["classes"].append("sitepdf")
    return [node], []


def setup(app: Sphinx) -> dict[str, Any]:
    # After sphinx-book-theme builds its header buttons (priority 501).
    app.connect("html-page-context", whole_site_button, priority=502)
    app.add_role("sitepdf", sitepdf_role)
    # "env": the role reads it while parsing, so a change re-reads every page.
    app.add_config_value("site_pdf", False, "env", types=[bool])
    return {"parallel_read_safe": True, "parallel_write_safe": True}
