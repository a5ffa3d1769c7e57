"""The gallery's tutorial cards: numbered, in the page's language, drawn when no figure.

Not a library: sphinx-gallery writes its cards as raw HTML, outside the catalogs.
* :func:`write_cards` (``builder-inited``, :func:`draw_card`, :func:`cjk_font_known`):
  a thumbnail for each tutorial without a figure (:func:`card_name`);
* :class:`GalleryCards`: shows it, numbers each card, translates its title and
  tooltip (warns if untranslated).
"""

from __future__ import annotations

import html
import io
import re
import textwrap
from functools import partial
from pathlib import Path
from typing import Any

from catalogs import messages, plain, unmarked
from docutils import nodes
from editions import EDITIONS
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)


THUMBNAIL_TEXT = [
    re.compile(r'(tooltip=")([^"]*)(")'),
    re.compile(r'(<div class="sphx-glr-thumbnail-title">)(.*?)(</div>)'),
]
TITLE = '<div class="sphx-glr-thumbnail-title">'
THUMB = re.compile(r"sphx_glr_((\d\d)_\w+?)_thumb\.png$")
CARDS = "tutorials/images/thumb"
CARD_COLOURS = ["#dbe7f5", "#c6f0cf", "#fbd38d", "#e9d8fd"]


def card_name(stem: str, language: str) -> str:
    return f"card_{stem}_{language}.png"


def _question(app: Sphinx, script: Path) -> str:
    """The tutorial's title, in the edition's language."""
    english = script.read_text(encoding="utf-8").split('"""')[1].strip().splitlines()[0]
    if app.config.language == "en":
        return unmarked(english)
    by_plain = {plain(k): v for k, v in messages(app).items()}
    return unmarked(by_plain.get(plain(english), english))


def draw_card(number: str, question: str, language: str) -> bytes:
    """A thumbnail: the tutorial's number and its question, 800 x 560 px."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.0, 2.8), dpi=200)
    fig.set_facecolor(CARD_COLOURS[int(number) % len(CARD_COLOURS)])
    fig.text(0.07, 0.88, number, fontsize=30, weight="bold", va="top", color="#1b1f24")
    wrap = textwrap.wrap if language == "en" else _cjk_wrap
    lines = wrap(question, 26)  # _cjk_wrap counts a wide character as two
    fig.text(
        0.07,
        0.42,
        "\n".join(lines[:4]),
        fontsize=14,
        va="center",
        color="#1b1f24",
        family=["DejaVu Sans", *CJK_FAMILIES],
        linespacing=1.3,
    )
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def _cjk_wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` columns (a wide character takes two)."""
    lines, line, used = [], "", 0
    for ch in text:
        cost = 1 if ord(ch) < 0x2E80 else 2
        if used + cost > width:
            lines.append(line)
            line, used = "", 0
        line += ch
        used += cost
    return [*lines, line] if line else lines


CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans CJK JP")


def cjk_font_known() -> bool:
    """Whether matplotlib can draw Chinese (adding CJK fonts its cache missed)."""
    from matplotlib import font_manager

    fonts = font_manager.fontManager
    if not any(f.name in CJK_FAMILIES for f in fonts.ttflist):
        for path in font_manager.findSystemFonts():
            if "CJK" in Path(path).name:
                fonts.addfont(path)
    return any(f.name in CJK_FAMILIES for f in fonts.ttflist)


def write_cards(app: Sphinx) -> None:
    """A card for each tutorial without a figure of its own."""
    if app.builder.name == "gettext":
        return
    language = app.config.language if app.config.language in EDITIONS else "en"
    if language != "en" and not cjk_font_known():
        logger.warning(
            "the %s tutorial cards need a CJK font: apt-get install fonts-noto-cjk",
            language,
        )
    images = Path(app.srcdir, "tutorials", "images")
    (images / "thumb").mkdir(parents=True, exist_ok=True)
    (gallery,) = app.config.sphinx_gallery_conf["examples_dirs"]
    for script in sorted(Path(app.srcdir, gallery).glob("[0-9][0-9]_*.py")):
        stem = script.stem
        if (images / f"sphx_glr_{stem}_001.png").exists():
            continue  # its own first figure is its thumbnail
        target = images / "thumb" / card_name(stem, language)
        data = draw_card(stem[:2], _question(app, script), language)
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)


class GalleryCards(SphinxTransform):
    """Each tutorial card: its own thumbnail, its number, its text translated."""

    default_priority = 27

    def apply(self, **kwargs: Any) -> None:
        if self.app.builder.name == "gettext":
            return
        language = self.config.language if self.config.language in EDITIONS else "en"
        number, by_plain = None, None
        found = self.document.findall(lambda n: isinstance(n, nodes.image | nodes.raw))
        for node in list(found):
            if isinstance(node, nodes.image):
                if match := THUMB.search(node["uri"]):
                    stem, number = match.groups()
                    card = Path(self.env.srcdir, CARDS, card_name(stem, language))
                    if card.exists():
                        node["uri"] = f"/{CARDS}/{card.name}"
                continue
            text = node.astext()
            if "sphx-glr-thumb" not in text:
                continue
            if self.config.language != "en":
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
        return before + html.escape(unmarked(chinese)) + after


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(GalleryCards)
    app.connect("builder-inited", write_cards, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
