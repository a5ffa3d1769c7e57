"""Graph drawings that read on any screen, in the page's language.

Graph drawings (``autograd_notes.draw_graph``) reach the pages two ways:
sphinx-gallery runs the tutorials, myst-nb's kernels run the other pages.
Neither describes a figure or translates one, so:

* every figure is saved at twice its display resolution: for tutorials by
  the gallery's ``image_srcset``; in a kernel by :func:`kernel_setup`, run
  through ``KERNEL_ARGS`` (``conf.py`` puts them in the kernel spec), which
  renders figures as 2x PNGs shown at half their pixel size;
* every graph drawing carries its description (its axes' label): the
  gallery's scraper :func:`graph_scraper` (``image_scrapers`` in
  ``conf.py``) writes it into the reST as alt text, a kernel's PNG holds it
  as its ``Description``;
* the legend drawn into the picture, English in both editions, is removed,
  and a figure that holds only the drawing is cut to the drawing's width at
  the same scale (the margins were room for that legend), so its text is as
  large as it can be on a phone;
* :class:`GraphFigures` (a transform) gives every graph drawing that
  description as alt text in the page's language (:func:`describe_in`), a
  legend under it in the page's language (the same colours, as HTML), and a
  link to the full-size image;
* ``figures.css`` (on every page) styles them, and the tutorial cards'
  numbers (``tutorialcards``).
"""

from __future__ import annotations

import html
import io
import re
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

from .siteconfig import SOURCE
from .sitewords import say

logger = logging.getLogger(__name__)

EXT = Path(__file__).resolve().parents[1]  # the folder that holds autograd_site
KERNEL_ARGS = [
    f"--IPKernelApp.exec_lines=import sys; sys.path.insert(0, {str(EXT)!r}); "
    "from autograd_site import figures; figures.kernel_setup()"
]

DESCRIPTION = re.compile(r"^(Backward graph: \d+ arrows?|No backward graph: )")

LEGEND = {  # in Chinese: docs/locale/zh_CN/LC_MESSAGES/site.po
    "root": "root",
    "node": "backward node",
    "leaf": "leaf (AccumulateGrad)",
    "group": "module (group of nodes)",
    "flow": "Arrows show gradient flow, from the root to the leaves.",
}
# draw_graph's sentences; their words in another edition: its site.po, as are
# how a list ("{}, {}") and two sentences ("{} {}") join.
SENTENCES = [
    "Backward graph: {} arrows from the root down to the leaves.",
    "Backward graph: {} arrow from the root down to the leaves.",
    "No backward graph: only {}.",
    "Root: {}.",
    "Backward nodes: {}.",
    "Modules: {}.",
    "Leaves: {}.",
    "Arrows into {}: {}.",
]
PATTERNS = [(re.compile(re.escape(s).replace(r"\{\}", "(.*)")), s) for s in SENTENCES]
SENTENCE_END = re.compile(
    r"\. (?=Root: |Backward nodes: |Modules: |Leaves: |Arrows into )"
)


def describe_in(language: str, description: str) -> str:
    """A drawing's description in ``language`` (names and numbers unchanged).

    A sentence none of ``SENTENCES`` matches raises, so a new sentence in
    ``draw_graph``'s descriptions fails the build until it is added here (and
    a sentence missing from a ``site.po``, until it is translated there).
    """
    if language == SOURCE:
        return description
    sentences = SENTENCE_END.split(description)
    listed = say(language, "{}, {}").format("", "")
    out = ""
    for i, sentence in enumerate(sentences):
        sentence += "" if i == len(sentences) - 1 else "."
        for pattern, english in PATTERNS:
            if match := pattern.fullmatch(sentence):
                values = [v.replace(", ", listed) for v in match.groups()]
                said = say(language, english).format(*values)
                out = said if not out else say(language, "{} {}").format(out, said)
                break
        else:
            raise ValueError(f"no translation for the sentence {sentence!r}")
    return out


def _graph_description(fig: Any) -> str | None:
    """A draw_graph drawing's description; its legend dropped, its margins cut."""
    for ax in fig.axes:
        label = ax.get_label()
        if DESCRIPTION.match(label):
            if (legend := ax.get_legend()) is not None:
                legend.remove()
            if len(fig.axes) == 1 and tuple(ax.get_position().intervalx) == (0, 1):
                _trim(fig, ax)
            return str(label)
    return None


def _trim(fig: Any, ax: Any) -> None:
    """Cut a drawing's figure to what is drawn in it, one data unit an inch."""
    fig.draw_without_rendering()
    boxes = [a.get_window_extent() for a in [*ax.texts, *ax.patches] if a.get_visible()]
    left, right = (
        ax.transData.inverted().transform((x, 0))[0]
        for x in (min(b.x0 for b in boxes), max(b.x1 for b in boxes))
    )
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    inch = (x1 - x0) / fig.get_size_inches()[0]  # data units per inch
    left, right = max(x0, left - 0.2 * inch), min(x1, right + 0.2 * inch)
    fig.set_size_inches((right - left) / inch, (y1 - y0) / inch)
    ax.set_position((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(left, right)


def graph_scraper(block: Any, block_vars: Any, gallery_conf: Any, **kwargs: Any) -> str:
    """sphinx-gallery's matplotlib scraper, with alt text for graph drawings."""
    import matplotlib.pyplot as plt
    from sphinx_gallery.scrapers import matplotlib_scraper

    alts = [_graph_description(plt.figure(n)) for n in plt.get_fignums()]
    rst = matplotlib_scraper(
        block, block_vars, gallery_conf, bbox_inches="tight", **kwargs
    )
    found = iter(alts)

    def alt(match: re.Match[str]) -> str:
        text = next(found, None)
        return match.group(0) if text is None else match.group(1) + text

    return re.sub(r"^(\s*:alt: ).*$", alt, rst, flags=re.MULTILINE)


def kernel_setup() -> None:
    """In a page's kernel: figures as 2x PNGs, graph drawings described."""
    import matplotlib.pyplot as plt
    from IPython import get_ipython
    from matplotlib.figure import Figure

    shell = get_ipython()
    if shell is None:
        return
    # The inline backend registers its own PNG formatter when it loads, which
    # the first figure makes it do: load it now, then replace that formatter.
    plt.close(plt.figure())
    shell.display_formatter.formatters["image/png"].for_type(Figure, _png_2x)


def _png_2x(fig: Any) -> tuple[bytes, dict[str, int]]:
    """A figure as a PNG at twice its dpi, to show at half its pixel size."""
    from PIL import Image

    description, out = _graph_description(fig), io.BytesIO()
    fig.savefig(
        out,
        format="png",
        dpi=2 * fig.dpi,
        bbox_inches="tight",
        facecolor=fig.get_facecolor(),
        metadata={"Description": description} if description else None,
    )
    width, height = Image.open(io.BytesIO(out.getvalue())).size
    return out.getvalue(), {"width": width // 2, "height": height // 2}


def _png_description(path: Path) -> str | None:
    from PIL import Image

    if path.suffix != ".png" or not path.is_file():
        return None
    with Image.open(path) as image:
        text = getattr(image, "text", {}).get("Description")
    return text if isinstance(text, str) and DESCRIPTION.match(text) else None


class GraphFigures(SphinxTransform):
    """Alt text, a legend in the page's language, a link to the full size."""

    default_priority = 500

    def apply(self, **kwargs: Any) -> None:
        if self.app.builder.name == "gettext":
            return
        from sphinx_gallery.directives import imgsgnode

        language = self.config.language
        for node in list(self.document.findall(nodes.image)):
            description = _png_description(self._path(node["uri"]))
            if description is None:
                continue
            node["alt"] = describe_in(language, description)
            node["classes"].append("graph-drawing")
            self._after(node, language, description)
        for node in list(self.document.findall(imgsgnode)):
            description = html.unescape(node.get("alt") or "")
            if not DESCRIPTION.match(description):
                continue
            node["alt"] = html.escape(describe_in(language, description))
            full = _largest(node["srcset"] or node["uri"])
            depth = self.env.current_document.docname.count("/")
            link = nodes.reference(
                "", "", refuri="../" * depth + "_images/" + full, internal=True
            )
            wrapper = nodes.paragraph("", "", classes=["graph-figure"])
            node.replace_self(wrapper)
            wrapper += link
            link += node
            self._after(wrapper, language, description)

    def _path(self, uri: str) -> Path:
        path = Path(uri)
        if path.is_absolute():
            return path if path.exists() else Path(self.env.srcdir, uri.lstrip("/"))
        return Path(self.env.doc2path(self.env.current_document.docname)).parent / uri

    def _after(self, node: nodes.Element, language: str, description: str) -> None:
        """Put the legend right after the picture."""
        words = {k: str(get_translation("site")(v)) for k, v in LEGEND.items()}
        kinds = ["root", "node", "leaf", "group"][: 3 + ("Modules: " in description)]
        line = nodes.paragraph("", "", classes=["graph-legend"])
        for kind in kinds:
            key = nodes.inline("", "", classes=["graph-key", f"graph-key-{kind}"])
            key += nodes.inline("", "", classes=["graph-swatch"])
            key += nodes.Text(words[kind])
            line += key
        line += nodes.inline("", words["flow"], classes=["graph-flow"])
        node.parent.insert(node.parent.index(node) + 1, line)


def _largest(srcset: str) -> str:
    """File name of the highest-density candidate of a srcset (or of a URI)."""
    candidates = [c.split() for c in srcset.split(",") if c.split()]
    best = max(candidates, key=lambda c: float(c[1].rstrip("x")) if c[1:] else 1.0)
    return best[0].rsplit("/", 1)[-1]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(GraphFigures)
    app.add_css_file("figures.css")
    sys.modules.setdefault("figures", sys.modules[__name__])
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
