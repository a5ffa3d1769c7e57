"""The gallery's tutorial cards: numbered, translated, each drawn as its number.

sphinx-gallery shows each tutorial on the gallery index as a card (a
thumbnail, a title, a tooltip), written as raw HTML: outside the catalogs,
so Sphinx never translates it. Its thumbnail is the tutorial's first figure
shrunk, too small to read; a title drawn into it was too.

* :func:`write_cards` (``builder-inited``, after sphinx-gallery has
  generated the gallery) draws each tutorial's thumbnail as its number on a
  coloured card (:func:`draw_card`, :func:`card_name`), the same in both
  editions, so it needs no font for Chinese. The PNG names no matplotlib
  version, and is written only when its bytes change;
* :class:`GalleryCards` (a transform) puts that card in place of each
  thumbnail, the tutorial's number before its title (``figures.css`` styles
  it), and on a zh page translates the title and tooltip from the catalogs;
  a text without a translation is a warning.
"""

from __future__ import annotations

import html
import io
import re
from functools import partial
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

from .catalogs import messages, plain, unmarked
from .siteconfig import SOURCE

logger = logging.getLogger(__name__)


THUMBNAIL_TEXT = [
    re.compile(r'(tooltip=")([^"]*)(")'),
    re.compile(r'(<div class="sphx-glr-thumbnail-title">)(.*?)(</div>)'),
]
TITLE = '<div class="sphx-glr-thumbnail-title">'
THUMB = re.compile(r"sphx_glr_((\d\d)_\w+?)_thumb\.png$")
CARDS = "tutorials/images/thumb"
CARD_COLOURS = ["#dbe7f5", "#c6f0cf", "#fbd38d", "#e9d8fd"]


def card_name(stem: str) -> str:
    return f"card_{stem}.png"


def draw_card(number: str) -> bytes:
    """A thumbnail: the tutorial's number, large, 800 x 560 px."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.0, 2.8), dpi=200)
    fig.set_facecolor(CARD_COLOURS[int(number) % len(CARD_COLOURS)])
    fig.text(0.5, 0.5, number, fontsize=72, weight="bold", ha="center", va="center")
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def write_cards(app: Sphinx) -> None:
    """A card for each tutorial."""
    if app.builder.name == "gettext":
        return
    (Path(app.srcdir, CARDS)).mkdir(parents=True, exist_ok=True)
    (gallery,) = app.config.sphinx_gallery_conf["examples_dirs"]
    for script in sorted(Path(app.srcdir, gallery).glob("[0-9][0-9]_*.py")):
        target = Path(app.srcdir, CARDS, card_name(script.stem))
        data = draw_card(script.stem[:2])
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)


class GalleryCards(SphinxTransform):
    """Each tutorial card: its own thumbnail, its number, its text translated."""

    default_priority = 27

    def apply(self, **kwargs: Any) -> None:
        if self.app.builder.name == "gettext":
            return
        number, by_plain = None, None
        found = self.document.findall(lambda n: isinstance(n, nodes.image | nodes.raw))
        for node in list(found):
            if isinstance(node, nodes.image):
                if match := THUMB.search(node["uri"]):
                    stem, number = match.groups()
                    card = Path(self.env.srcdir, CARDS, card_name(stem))
                    if card.exists():
                        node["uri"] = f"/{CARDS}/{card.name}"
                continue
            text = node.astext()
            if "sphx-glr-thumb" not in text:
                continue
            if self.config.language != SOURCE:
                by_plain = by_plain or {
                    plain(k): v for k, v in messages(self.app).items()
                }
                translate = partial(self._translate, by_plain=by_plain, node=node)
                for pattern in THUMBNAIL_TEXT:
                    text = pattern.sub(translate, text)
            if number is not None and TITLE in text:
                number_span = f'<span class="card-number">{number}</span> '
                text, number = text.replace(TITLE, TITLE + number_span, 1), None
            node.replace_self(nodes.raw(text, text, format="html"))

    def _translate(
        self, match: re.Match[str], by_plain: dict[str, str], node: nodes.Node
    ) -> str:
        before, english, after = match.groups()
        chinese = by_plain.get(plain(html.unescape(english)))
        if chinese is None:
            logger.warning(
                "untranslated thumbnail text on page %s: %r",
                self.env.current_document.docname,
                english[:100],
                location=node,
                type="translation",
            )
            return match.group(0)
        # As text, code is set off by a space (in the article, by its box).
        text = unmarked(chinese.replace("\\ ", " "))
        return before + html.escape(text) + after


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(GalleryCards)
    app.connect("builder-inited", write_cards, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
