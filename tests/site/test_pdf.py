"""The whole-site PDFs that ``docs/pdf.py`` printed, checked against the site.

Run by ``nox -s pdf`` and ``nox -s browser`` right after they print them
(``pytest tests/site/test_pdf.py``;
``nox -s tests`` leaves this file out, as the PDFs do not exist before the
site is built). A missing PDF fails, never skips. For each edition:

* both editions' folders serve the same file, so each hosted edition offers
  both PDFs;
* the page count is sane: at least one sheet per page of the site plus the
  title and contents, at most twelve per page;
* the outline (bookmarks) has every page of the site, in the order of the
  table of contents and nested as in the sidebar, and each bookmark opens the
  sheet where that page's title is printed; the contents page lists them;
* every link inside the document leads to a sheet of it; links to other
  sites are web addresses (nothing points at a file of the build machine);
  the pages link to one another as on the site;
* every font is embedded (a font file, or a Type 3 font's own glyph
  outlines), and no text is drawn with a missing glyph (.notdef);
* the text is the site's text: every short plain Chinese sentence of the
  catalogs that the Chinese pages show, and every line of every executed
  output on the site, is in the text extracted from the PDF;
* every picture of the site is in it;
* no launch bar (its links lead nowhere on paper), and each tutorial card is
  printed whole on one sheet, inside the margins.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from autograd_site.cjk import han
from babel.messages.pofile import read_po
from pypdf import PdfReader
from pypdf.generic import ContentStream, DictionaryObject, IndirectObject

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = ROOT / "docs" / "locale" / "zh_CN" / "LC_MESSAGES"


def load_pdf_module() -> Any:
    spec = importlib.util.spec_from_file_location("pdf", ROOT / "docs" / "pdf.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pdf"] = module
    spec.loader.exec_module(module)
    return module


pdf = load_pdf_module()
EDITIONS = list(pdf.EDITIONS)


@cache
def reader(edition: str) -> PdfReader:
    path = pdf.outputs(edition)[0]
    if not path.exists():
        pytest.fail(f"{path} is missing: run `nox -s pdf`", pytrace=False)
    return PdfReader(path)


@cache
def site_pages(edition: str) -> list[Any]:
    return pdf.pages(pdf.EDITIONS[edition])


@cache
def page_texts(edition: str) -> tuple[str, ...]:
    return tuple(page.extract_text() for page in reader(edition).pages)


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


@cache
def all_text(edition: str) -> str:
    return squeeze("".join(page_texts(edition)))


@pytest.fixture(params=EDITIONS)
def edition(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_each_edition_serves_both_pdfs(edition: str):
    first, *copies = pdf.outputs(edition)
    reader(edition)
    for copy in copies:
        assert copy.read_bytes() == first.read_bytes(), f"{copy} differs from {first}"


def test_page_count(edition: str):
    count = len(reader(edition).pages)
    pages = len(site_pages(edition))
    assert pages >= 30, f"only {pages} pages found in the site's table of contents"
    assert pages + 2 <= count <= 12 * pages, (count, pages)


def outline(edition: str) -> list[tuple[int, str, int]]:
    """(depth, title, sheet from 0) of every bookmark, in order."""
    r = reader(edition)
    found: list[tuple[int, str, int]] = []

    def walk(items: list[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                found.append((depth, item.title, r.get_destination_page_number(item)))

    walk(r.outline, 0)
    return found


def test_outline_has_every_page_nested_in_order(edition: str):
    marks = outline(edition)
    pages = site_pages(edition)
    # Every page of the site, in table-of-contents order, at its depth: each
    # page's bookmark comes after the previous page's (a section of an earlier
    # page may share its title: 掩码).
    positions = []
    for doc in pages:
        later = range(positions[-1] + 1 if positions else 0, len(marks))
        found = [i for i in later if marks[i][:2] == (doc.depth, doc.title)]
        assert found, f"no bookmark for {doc.title!r} after the previous page's"
        positions.append(found[0])
    for position in positions:
        _, title, sheet = marks[position]
        assert squeeze(title) in squeeze(page_texts(edition)[sheet]), (
            f"bookmark {title!r} opens sheet {sheet + 1}, which does not show it"
        )
    # Each page's sections follow it, one level down.
    assert len(marks) > len(pages)
    assert all(0 <= sheet < len(reader(edition).pages) for *_, sheet in marks)


def test_contents_page_lists_every_page(edition: str):
    contents = squeeze(page_texts(edition)[1])
    heading = pdf.text(edition)["contents"]
    assert contents.startswith(heading) or heading in contents[:40]
    text = squeeze("".join(page_texts(edition)[1:12]))
    for doc in site_pages(edition):
        assert squeeze(doc.title) in text, f"{doc.title!r} is not in the contents"


def links(edition: str) -> Iterator[tuple[int, DictionaryObject]]:
    for number, page in enumerate(reader(edition).pages):
        for annotation in page.get("/Annots") or []:
            annotation = annotation.get_object()
            if annotation.get("/Subtype") == "/Link":
                yield number, annotation


def test_links_resolve_inside_the_document(edition: str):
    r = reader(edition)
    names = r.named_destinations
    internal: list[tuple[int, int]] = []
    for number, link in links(edition):
        action = link.get("/A")
        target = link.get("/Dest") or (action.get("/D") if action else None)
        if action is not None and action.get("/S") == "/URI":
            uri = str(action["/URI"])
            assert uri.startswith(("https://", "http://")), (number + 1, uri)
            continue
        assert target is not None, f"sheet {number + 1}: a link that goes nowhere"
        if isinstance(target, IndirectObject):
            target = target.get_object()
        name = str(target)
        assert name in names or name.lstrip("/") in names or f"/{name}" in names, (
            f"sheet {number + 1}: link to {name!r}, which is not in the document"
        )
        destination = names.get(name) or names.get(f"/{name}")
        internal.append((number, r.get_destination_page_number(destination)))
    assert internal, "no internal links"
    first = outline(edition)[0][2]  # the landing page, after the contents
    # The pages link to one another, not only the contents page to them.
    between = {(a, b) for a, b in internal if a >= first and a != b}
    assert len(between) >= len(site_pages(edition)), len(between)


def fonts(edition: str) -> dict[int, DictionaryObject]:
    found: dict[int, DictionaryObject] = {}
    for page in reader(edition).pages:
        for font in (page["/Resources"].get("/Font") or {}).values():
            found[font.idnum] = font.get_object()
    return found


def test_every_font_is_embedded(edition: str):
    kinds = set()
    for font in fonts(edition).values():
        kinds.add(str(font["/Subtype"]))
        if font["/Subtype"] == "/Type3":
            assert font["/CharProcs"], font
            continue
        descendant = font["/DescendantFonts"][0].get_object()
        descriptor = (descendant if font["/Subtype"] == "/Type0" else font)[
            "/FontDescriptor"
        ].get_object()
        files = {"/FontFile", "/FontFile2", "/FontFile3"} & set(descriptor)
        assert files, f"{font.get('/BaseFont')} is not embedded"
    assert "/Type0" in kinds, kinds


def test_no_missing_glyphs(edition: str):
    """No text is drawn with glyph 0 (.notdef, a "tofu" box)."""
    missing: list[str] = []
    for number, page in enumerate(reader(edition).pages):
        resources = page["/Resources"].get_object()
        known = {name: f.get_object() for name, f in resources.get("/Font", {}).items()}
        font: DictionaryObject | None = None
        stream = ContentStream(page.get_contents(), reader(edition))
        for operands, operator in stream.operations:
            if operator == b"Tf":
                font = known[operands[0]]
                continue
            if operator not in (b"Tj", b"TJ", b"'", b'"'):
                continue
            assert font is not None
            shown = operands[-1] if operator != b"TJ" else operands[0]
            strings = shown if operator == b"TJ" else [shown]
            for string in strings:
                if isinstance(string, int | float):
                    continue
                data = bytes(string.original_bytes)
                if font["/Subtype"] == "/Type0":  # Identity-H: glyph ids
                    codes = [data[i : i + 2] for i in range(0, len(data), 2)]
                    bad = [c for c in codes if c == b"\0\0"]
                else:  # Type 3: each code names a glyph g<id> with an outline
                    names = font["/Encoding"]["/Differences"]
                    assert names[0] == 0
                    procs = font["/CharProcs"]
                    last = len(names) - 1
                    glyphs = [names[c + 1] if c < last else None for c in data]
                    bad = [g for g in glyphs if g in (None, "/g0") or g not in procs]
                if bad:
                    missing.append(f"sheet {number + 1}: {font.get('/BaseFont')}")
    assert missing == []


@cache
def page_text_html(edition: str) -> str:
    """The text of every page's article, as the PDF shows it."""
    parts = []
    for doc in site_pages(edition):
        article = doc.soup.select_one("article.bd-article")
        article = article.__copy__()
        for node in article.select(pdf.DROP):
            node.decompose()
        parts.append(article.get_text())
    return squeeze("".join(parts))


def plain_chinese_messages() -> set[str]:
    found = set()
    for path in sorted(CATALOGS.glob("**/*.po")):
        if path.stem in ("sphinx", "booktheme", "site"):
            continue
        with path.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            text = message.string
            if (
                isinstance(text, str)
                and han(text)
                and not re.search(r"[`*{}\[\]<>|:\\$#_]", text)
                and len(text) <= 60
            ):
                found.add(text)
    return found


def test_chinese_text_round_trips():
    """Each short plain sentence of the catalogs that a Chinese page shows is
    in the PDF's text as written (no radical in place of an ideograph, no
    box, no lost character)."""
    shown = page_text_html("zh_CN")
    messages = [m for m in plain_chinese_messages() if squeeze(m) in shown]
    assert len(messages) >= 100, len(messages)
    text = all_text("zh_CN")
    lost = sorted(m for m in messages if squeeze(m) not in text)
    assert lost == []
    assert not re.search("[\u2e80-\u2fdf\ufffd]", text), "radicals or U+FFFD"


def test_executed_outputs_are_in_it(edition: str):
    lines = set()
    for doc in site_pages(edition):
        for block in doc.soup.select(
            "article .sphx-glr-script-out pre, article .cell_output pre"
        ):
            # A graph view's text fallback is for a notebook that drops its
            # frame; the page (and so its print) shows the view or its picture.
            if block.find_parent(class_="autograd-notes-fallback"):
                continue
            lines.update(squeeze(line) for line in block.get_text().splitlines())
    lines.discard("")
    assert len(lines) >= 200, len(lines)
    assert any("Backward0" in line for line in lines)
    text = all_text(edition)
    assert sorted(line for line in lines if line not in text) == []


def test_every_picture_is_in_it(edition: str):
    pictures = set()  # raster pictures: an SVG prints as drawing, not image
    for doc in site_pages(edition):
        for img in doc.soup.select("article.bd-article img"):
            name = str(img["src"]).rsplit("/", 1)[-1]
            if name.lower().endswith((".png", ".jpg", ".jpeg", ".gif", ".webp")):
                pictures.add(name)
    images = set()
    for page in reader(edition).pages:
        for _name, thing in (page["/Resources"].get("/XObject") or {}).items():
            if thing.get_object().get("/Subtype") == "/Image":
                images.add(thing.idnum)
    assert len(pictures) >= 15
    assert len(images) >= len(pictures), (len(images), len(pictures))


def test_every_page_links_the_pdfs(edition: str):
    """The download menu of every page offers the edition's PDF, the landing
    page links both, and each link leads to the PDF file that was checked."""
    site = pdf.EDITIONS[edition]
    own = pdf.outputs(edition)[0].name
    for doc in site_pages(edition):
        menu = doc.soup.select('.dropdown-download-buttons a[href$=".pdf"]')
        hrefs = [str(a["href"]) for a in menu]
        assert [h.rsplit("/", 1)[-1] for h in hrefs] == [own], (doc.path, hrefs)
        landing = (
            doc.soup.select("article a.sitepdf") if doc.path == "index.html" else []
        )
        for href in hrefs + [str(a["href"]) for a in landing]:
            target = pdf.resolve(doc.path, href)
            assert target is not None, (doc.path, href)
            path = site / target[0]
            assert path.is_file(), f"{doc.path} links {href}, which is missing"
            name = path.name.removeprefix(f"{pdf.PROJECT}-").removesuffix(".pdf")
            assert path.read_bytes() == pdf.outputs(name)[0].read_bytes()
    index = site_pages(edition)[0].soup
    names = {str(a["href"]).rsplit("/", 1)[-1] for a in index.select("a.sitepdf")}
    assert names == {pdf.outputs(e)[0].name for e in EDITIONS}, names


def test_no_launch_bar(edition: str):
    """The bar's labels ("Open in Colab", ...) are not printed under titles."""
    labels = {
        squeeze(link.get_text())
        for doc in site_pages(edition)
        for link in doc.soup.select("article .launch-bar a")
    }
    assert len(labels) >= 3, labels
    printed = [label for label in labels if label in all_text(edition)]
    assert printed == []


def test_tutorial_cards_are_whole_and_inside_the_margins(edition: str):
    index = next(d for d in site_pages(edition) if d.path == "tutorials/index.html")
    cards = [
        squeeze(card.get_text())
        for card in index.soup.select("article .sphx-glr-thumbnail-title")
    ]
    assert len(cards) >= 16, cards
    texts = [squeeze(t) for t in page_texts(edition)]
    split = [card for card in cards if not any(card in t for t in texts)]
    assert split == [], "cards split across sheets"
    # Every picture of the cards' sheets lies within the 16 mm side margins.
    margin, slack = 16 / 25.4 * 72, 2
    # The index's sheets: from its bookmark to the next page's (each page starts a
    # sheet). The contents and the tutorials themselves print card titles too.
    marks = outline(edition)
    at = next(n for n, mark in enumerate(marks) if mark[1] == index.title)
    depth, _, start = marks[at]
    end = next(sheet for d, _, sheet in marks[at + 1 :] if d <= depth)
    sheets = [i for i in range(start, end) if any(c in texts[i] for c in cards)]
    assert len(sheets) >= 2, sheets
    for number in sheets:
        page = reader(edition).pages[number]
        xs = pictures_x(page)
        assert xs, f"sheet {number + 1}: no picture"
        where = f"sheet {number + 1}: drawn from x={min(xs):.0f} to {max(xs):.0f} pt"
        assert min(xs) >= margin - slack, where
        assert max(xs) <= float(page.mediabox.width) - margin + slack, where


def pictures_x(page: Any) -> list[float]:
    """The left and right edges (pt) of every picture drawn on ``page``."""
    xs: list[float] = []

    def seen(operator: bytes, operands: Any, cm: list[float], tm: Any) -> None:
        if operator == b"Do":  # cm maps the picture's unit square
            xs.extend([cm[4], cm[4] + cm[0]])

    page.extract_text(visitor_operand_before=seen)
    return xs
