"""Link the whole-site PDFs that ``docs/pdf.py`` prints.

* :func:`whole_site_button` (``html-page-context``, after the theme's handler
  that makes the header buttons): the header's download menu offers "PDF of
  the whole site", the edition's PDF, where sphinx-book-theme offered
  ".pdf", which only printed the page;
* the ``sitepdf`` role links a PDF from the text: ``{sitepdf}`English <en>```
  links ``_static/pdf/autograd-notes-en.pdf`` of the edition the page is in
  (``docs/pdf.py`` writes both PDFs into both editions).

The PDFs are printed from the built HTML, so they come after this build, and
only a build told it will print them links them: ``-D site_pdf=1`` (the
config value ``site_pdf``; ``nox -s pdf``, ``nox -s browser`` and the
hosting configurations pass it). Without it the theme's print-this-page
entry goes too and the role's text is plain, so the site has no dead link.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util.docutils import SphinxRole

from .siteconfig import EDITIONS

PROJECT = "autograd-notes"
LABEL = "download-pdf-button"
_ = get_translation("sphinx")  # the theme's strings' catalog
ROLE = re.compile(r"^(?P<text>.+?)\s*<(?P<edition>[\w-]+)>$", re.S)


def pdf_path(edition: str) -> str:
    """The PDF of ``edition``, from the root of either edition."""
    return f"_static/pdf/{PROJECT}-{edition}.pdf"


def whole_site_button(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """The theme's print-this-page entry: the edition's PDF, or nothing."""
    link = {
        "type": "link",
        "url": context["pathto"](pdf_path(app.config.language), 1),
        "text": _("PDF of the whole site"),
        "tooltip": _("Download the whole site as one PDF"),
        "icon": "fas fa-file-pdf",
        "label": LABEL,
    }
    for group in context.get("header_buttons", []):
        if "buttons" in group:
            group["buttons"] = [
                link if button.get("label") == LABEL else button
                for button in group["buttons"]
                if app.config.site_pdf or button.get("label") != LABEL
            ]


class SitePdfRole(SphinxRole):
    """``{sitepdf}`text <edition>```: a link to that edition's PDF."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        match = ROLE.match(self.text)
        if match is None or match["edition"] not in EDITIONS:
            message = self.inliner.reporter.error(
                "sitepdf: expected `text <edition>` with an edition of "
                f"{tuple(EDITIONS)}: {self.text!r}",
                line=self.lineno,
            )
            problem = self.inliner.problematic(self.rawtext, self.rawtext, message)
            return [problem], [message]
        if not self.config.site_pdf:  # no PDF is printed: the text, unlinked
            return [nodes.inline(self.rawtext, match["text"])], []
        uri = "../" * self.env.docname.count("/") + pdf_path(match["edition"])
        node = nodes.reference(self.rawtext, match["text"], refuri=uri, internal=False)
        node["classes"].append("sitepdf")
        return [node], []


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", whole_site_button, priority=502)  # after theme
    app.add_role("sitepdf", SitePdfRole())
    # "env": the role reads it while parsing, so a change re-reads every page.
    app.add_config_value("site_pdf", False, "env", types=[bool])
    return {"parallel_read_safe": True, "parallel_write_safe": True}
