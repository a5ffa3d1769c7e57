"""Print the built site as one PDF per edition: ``python docs/pdf.py [edition]``.

Run it after ``docs/build.py -D site_pdf=1`` (``nox -s pdf`` runs both, then
``tests/site/test_pdf.py``). For each edition it

1. finds the pages in the order of the site's table of contents, by following
   each page's "next" link from the edition's ``index.html`` (:func:`pages`);
2. assembles their articles into one HTML document (:func:`assemble`): every
   ``id`` is prefixed with its page's, so a link to another page or to an
   anchor in it becomes a link inside the document; a link to a file that is
   not in it (a download, the source viewer) becomes plain text; headings
   move down one level per level of the table of contents, so the outline
   nests as the sidebar does; solutions are opened; what means nothing on
   paper (``DROP``: the launch bar, header links, buttons) goes;
3. adds a title page and a contents page, whose page numbers come from a
   first printing (the second has the same layout, with the numbers);
4. prints it with Chromium through Playwright, offline (a request for
   anything outside the edition's folder stops the script), with
   ``docs/pdf.css``, on A4 with page numbers, as a tagged PDF;
5. finishes it with pypdf (:func:`finish`): the outline (Chromium's garbles
   titles), title, author, language, the outline open in the viewer, no
   dates (two printings of the same site are the same file), and text that
   copies and searches as written: Chromium maps some CJK glyphs to a radical
   (⽂ for 文), which the text map corrects from Noto Sans CJK's own
   character map;
6. writes both PDFs into both editions' ``_static/pdf/``, so each hosted
   edition (Read the Docs serves them as separate projects) serves both.

Nothing is printed again when neither the site (``docs/build.py``'s
fingerprint) nor this script or its stylesheet changed. Sphinx's latexpdf
(xelatex, xeCJK) falls short: untagged, slower to install and build
(issue 23).
"""

from __future__ import annotations

import copy
import io
import logging
import os
import posixpath
import re
import shutil
import subprocess
import sys
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from bs4 import BeautifulSoup, Tag
from fontTools.ttLib import TTFont
from playwright.sync_api import Page, Route, sync_playwright
from pypdf import PdfReader, PdfWriter
from pypdf.generic import Fit, NameObject, TextStringObject

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from autograd_site import siteconfig  # noqa: E402
from autograd_site.freshness import fingerprint, unchanged  # noqa: E402
from autograd_site.siteconfig import SOURCE  # noqa: E402
from autograd_site.sitepdf import PROJECT, pdf_path  # noqa: E402
from autograd_site.sitewords import say, site_words  # noqa: E402

BUILD = ROOT / "docs" / "_build"
EDITIONS = {lang: BUILD / "html" / e.folder for lang, e in siteconfig.EDITIONS.items()}
STYLESHEET = ROOT / "docs" / "pdf.css"
STAMP = BUILD / ".pdf-fingerprint"
# Written into the edition's folder for the printing only (its relative links
# then resolve), then removed.
SCRATCH = "_pdf-print.html"
# The title and contents pages' words: raw HTML, like the site's footer, so
# not in any page's catalog; a translated edition's are in its site.po.
TEXT = {
    "contents": "Contents",
    "edition": "English edition",  # the name of the edition the PDF prints
    "note": "The whole site as one document: every output was produced by "
    "running the code while the site was built.",
}


@cache
def text(edition: str) -> dict[str, str]:
    """``TEXT`` in ``edition``'s language: the source edition's, or its site.po's."""
    missing = [m for m in TEXT.values() if m not in site_words(edition)]
    if missing and edition != SOURCE:
        raise SystemExit(
            f"docs/pdf.py: {edition}'s site.po does not translate {missing}"
        )
    return {key: say(edition, english) for key, english in TEXT.items()}


FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;color:#555;">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)
# Parts of a page that mean nothing on paper.
DROP = (
    "a.headerlink, .viewcode-link, .launch-bar, .sphx-glr-download-link-note, "
    ".sphx-glr-footer, .sphx-glr-download, p.sphx-glr-signature, .prev-next-area, "
    ".prev-next-footer, script, noscript, button"
)


def outputs(edition: str) -> list[Path]:
    """The PDF of ``edition`` in every edition's _static."""
    return [site / pdf_path(edition) for site in EDITIONS.values()]


@dataclass
class Doc:
    """One page of the site, as it goes into the PDF."""

    path: str  # from the edition's root, e.g. "tutorials/index.html"
    key: str  # its id in the assembled document
    title: str
    depth: int  # 0: the landing page and the top-level sections
    soup: BeautifulSoup
    sections: list[tuple[str, str]] = field(default_factory=list)  # (id, title)


def resolve(page: str, href: str) -> tuple[str, str] | None:
    """``href`` on ``page`` as (path, fragment) in the edition, else None."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), parts.path))
    if target.startswith(".."):
        return None
    return unquote(target) if parts.path else page, unquote(parts.fragment)


def text_of(heading: Tag) -> str:
    heading = copy.copy(heading)
    for link in heading.select("a.headerlink"):
        link.decompose()
    return " ".join(heading.get_text(" ", strip=True).split())


def pages(site: Path) -> list[Doc]:
    """Every page in table-of-contents order, from index.html via "next"."""
    docs: list[Doc] = []
    path: str | None = "index.html"
    while path is not None and all(d.path != path for d in docs):
        soup = BeautifulSoup((site / path).read_text(encoding="utf-8"), "html.parser")
        article = soup.select_one("article.bd-article")
        heading = article.find("h1") if article else None
        if article is None or not isinstance(heading, Tag):
            raise SystemExit(f"pdf: {path} has no article with a title")
        current = soup.select("nav.bd-docs-nav li.current")
        levels = [int(c[9:]) for li in current for c in li["class"] if "toctree-l" in c]
        depth = 0 if path == "index.html" else max(max(levels, default=1) - 1, 0)
        key = "p-" + re.sub(r"[^\w-]", "-", path.removesuffix(".html"))
        doc = Doc(path, key, text_of(heading), depth, soup)
        for h2 in article.select("section[id] > h2"):
            doc.sections.append((str(h2.parent["id"]), text_of(h2)))  # type: ignore[index]
        docs.append(doc)
        nxt = soup.select_one("a.right-next")
        found = resolve(path, str(nxt["href"])) if nxt and nxt.get("href") else None
        path = found[0] if found else None
    return docs


def assemble(docs: list[Doc]) -> str:
    """The articles of ``docs`` as the body of one document."""
    keys = {d.path: d.key for d in docs}
    articles = [copy.copy(d.soup.select_one("article.bd-article")) for d in docs]
    ids = {
        (doc.path, str(node["id"])): f"{doc.key}--{node['id']}"
        for doc, article in zip(docs, articles, strict=True)
        for node in article.select("[id]")  # type: ignore[union-attr]
    }
    body: list[str] = []
    for doc, article in zip(docs, articles, strict=True):
        assert article is not None
        for node in article.select(DROP):
            node.decompose()
        for node in article.select("[id]"):
            node["id"] = ids[doc.path, str(node["id"])]
        for link in article.select("a[href]"):
            target = resolve(doc.path, str(link["href"]))
            if target in ids:
                link["href"] = "#" + ids[target]  # type: ignore[index]
            elif target and target[0] in keys:
                link["href"] = "#" + keys[target[0]]
            elif target or urlsplit(str(link["href"])).scheme not in ("http", "https"):
                link.unwrap()  # a download, the source viewer, mailto:...
        for node in article.select("[src]"):
            node["src"] = (resolve(doc.path, str(node["src"])) or (node["src"],))[0]
        for node in article.select("[srcset]"):
            node["srcset"] = ", ".join(
                " ".join([(resolve(doc.path, url) or (url, ""))[0], *size])
                for url, *size in (c.split() for c in str(node["srcset"]).split(","))
            )
        for node in article.select("details"):
            node["open"] = ""
        for node in article.select("h1, h2, h3, h4, h5, h6"):
            node.name = f"h{min(int(node.name[1]) + doc.depth, 6)}"
        body.append(
            f'<section class="pdf-page pdf-depth-{doc.depth}" id="{doc.key}">'
            f"{article.decode_contents()}</section>"
        )
    return "\n".join(body)


def entries(docs: list[Doc]) -> list[tuple[int, str, str]]:
    """(level, title, id) of each page, then of its sections one level below."""
    found: list[tuple[int, str, str]] = []
    for doc in docs:
        found.append((doc.depth, doc.title, doc.key))
        found += [(doc.depth + 1, t, f"{doc.key}--{i}") for i, t in doc.sections]
    return found


def document(docs: list[Doc], edition: str, numbers: dict[str, int]) -> str:
    """The whole edition: stylesheets, MathJax, title, contents, pages."""
    head: list[str] = []
    for doc in docs:
        for node in doc.soup.select('head link[rel="stylesheet"], head script'):
            node = copy.copy(node)
            attribute = "href" if node.name == "link" else "src"
            source = str(node.get(attribute) or "")
            if node.name == "script" and "mathjax" not in (source + str(node)).lower():
                continue
            if source and (found := resolve(doc.path, source.split("?")[0])):
                node[attribute] = found[0]
            elif source:
                continue
            if str(node) not in head:
                head.append(str(node))
    words, index = text(edition), docs[0].soup
    tagline = index.select_one("article.bd-article p")
    footer = index.select_one(".extra_footer")
    contents = "".join(
        f'<li class="pdf-toc-{level}"><a href="#{target}">'
        f'<span class="pdf-toc-title">{title}</span>'
        f'<span class="pdf-toc-page">{numbers.get(target, "")}</span></a></li>'
        for level, title, target in entries(docs)
    )
    return (
        f'<!DOCTYPE html><html lang="{siteconfig.EDITIONS[edition].tag}" '
        'data-theme="light" data-mode="light"><head><meta charset="utf-8">'
        f"<title>{PROJECT}</title>"
        f"{''.join(head)}<style>{STYLESHEET.read_text(encoding='utf-8')}</style>"
        f"</head><body class='pdf'><section class='pdf-title'><h1>{PROJECT}</h1>"
        f"<p class='pdf-tagline'>{tagline.decode_contents() if tagline else ''}</p>"
        f"<p class='pdf-edition'>{words['edition']}</p><p>{words['note']}</p>"
        f"{footer.decode_contents() if footer else ''}</section>"
        f'<nav class="pdf-contents" id="pdf-contents"><h1>{words["contents"]}</h1>'
        f"<ol>{contents}</ol></nav><main>{assemble(docs)}</main></body></html>"
    )


def print_pdf(page: Page, site: Path, html: str, blocked: list[str]) -> bytes:
    scratch = site / SCRATCH
    scratch.write_text(html, encoding="utf-8")
    try:
        page.goto(scratch.as_uri(), wait_until="load")
        page.evaluate(
            "async () => { await document.fonts.ready;"
            " if (window.MathJax && MathJax.startup) await MathJax.startup.promise; }"
        )
        if blocked:
            raise SystemExit(f"pdf: the pages asked for {sorted(set(blocked))}")
        return page.pdf(
            format="A4",
            margin={"top": "16mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
            print_background=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=FOOTER,
            tagged=True,
        )
    finally:
        scratch.unlink(missing_ok=True)


RADICALS = re.compile("[\u2e80-\u2fdf\uf900-\ufaff]")
BFCHAR = re.compile(rb"beginbfchar(.*?)endbfchar", re.S)  # pairs <glyph> <text>
PAIR = re.compile(rb"<([0-9A-Fa-f]+)>(\s*)<([0-9A-Fa-f]+)>")


@cache
def ideographs() -> dict[str, str]:
    """Radical -> ideograph where Noto Sans CJK SC shares their glyph (⽂, 文)."""
    found = subprocess.run(
        ["fc-match", "-f", "%{file}:%{index}", "Noto Sans CJK SC"],
        capture_output=True,
        text=True,
    ).stdout
    path, _, index = found.rpartition(":")
    if not path.endswith((".ttc", ".otf", ".ttf")):
        return {}
    cmap = TTFont(path, fontNumber=int(index or 0), lazy=True).getBestCmap()
    glyphs: dict[str, str] = {}
    for code, glyph in sorted(cmap.items()):
        if 0x3400 <= code <= 0x9FFF:
            glyphs.setdefault(glyph, chr(code))
    return {chr(c): glyphs[g] for c, g in cmap.items() if g in glyphs}


def ideograph(match: re.Match[bytes]) -> bytes:
    """A ToUnicode pair with Chromium's radical (⽂) made the page's ideograph (文)."""
    text = bytes.fromhex(match[3].decode()).decode("utf-16-be", "replace")
    if not RADICALS.fullmatch(text):
        return match[0]
    fixed = ideographs().get(text) or unicodedata.normalize("NFKC", text)
    hexcode = fixed.encode("utf-16-be").hex().encode()
    return b"<%s>%s<%s>" % (match[1], match[2], hexcode)


def finish(pdf: bytes, edition: str, docs: list[Doc]) -> bytes:
    """Outline (Chromium's garbles titles), fixed text maps, metadata, no dates.

    The text maps are fixed once per font: its ``bfchar`` pairs name glyphs
    one by one, and only a pair whose text is a radical changes.
    """
    reader = PdfReader(io.BytesIO(pdf))
    writer = PdfWriter(clone_from=reader)
    places = {str(k).lstrip("/"): v for k, v in reader.named_destinations.items()}
    parents: dict[int, Any] = {}
    for level, title, target in entries(docs):
        top = places[target].get("/Top")
        parents[level] = writer.add_outline_item(
            title=title,
            page_number=reader.get_destination_page_number(places[target]),
            parent=parents.get(level - 1) if level else None,
            fit=Fit.xyz(top=float(top) if top else None),
        )
    done: set[int] = set()
    for page in writer.pages:
        for font in page["/Resources"].get_object().get("/Font", {}).values():
            if font.idnum in done or "/ToUnicode" not in font.get_object():
                continue
            done.add(font.idnum)
            stream = font.get_object()["/ToUnicode"].get_object()
            fixed = BFCHAR.sub(lambda b: PAIR.sub(ideograph, b[0]), stream.get_data())
            stream.set_data(fixed)
    title = f"{PROJECT} ({text(edition)['edition']})"
    # Replaces Chromium's, dates included: two printings are the same file.
    writer.metadata = {"/Title": title, "/Author": f"{PROJECT} developers"}
    writer.root_object[NameObject("/PageMode")] = NameObject("/UseOutlines")
    writer.root_object[NameObject("/Lang")] = TextStringObject(
        siteconfig.EDITIONS[edition].tag
    )
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def print_edition(chromium: str | None, edition: str) -> bytes:
    """The finished PDF of ``edition``, printed from the edition's files only,
    by a Chromium of its own (``chromium``: its executable, None for
    Playwright's): Playwright's sync API wants one instance per thread, and
    ``main`` prints the editions side by side, one core each."""
    site, blocked = EDITIONS[edition], []
    docs, root = pages(site), site.resolve().as_uri() + "/"

    def block(route: Route) -> None:
        blocked.append(route.request.url)
        route.abort("blockedbyclient")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        # Scale 2: pictures print from their high-resolution (2x) files.
        context = browser.new_context(device_scale_factor=2)
        context.route(lambda url: not url.startswith((root, "data:", "blob:")), block)
        page, numbers = context.new_page(), {}
        for _ in range(2):  # the second printing has the contents' page numbers
            pdf = print_pdf(page, site, document(docs, edition, numbers), blocked)
            reader = PdfReader(io.BytesIO(pdf))
            numbers = {
                str(name).lstrip("/"): reader.get_destination_page_number(place) + 1
                for name, place in reader.named_destinations.items()
            }
        browser.close()
    return finish(pdf, edition, docs)


def main(only: list[str]) -> int:
    """Print every edition (or those named on the command line)."""
    site_stamp = BUILD / ".site-fingerprint"
    current = fingerprint(ROOT, [site_stamp, Path(__file__), STYLESHEET])
    done = all(p.exists() for e in EDITIONS for p in outputs(e))
    if not only and done and site_stamp.is_file() and unchanged(STAMP, current):
        print("pdf: the site has not changed since the PDFs were printed.")
        return 0
    if not all((site / "index.html").exists() for site in EDITIONS.values()):
        sys.exit("pdf: no site in docs/_build/html; run `nox -s docs` first")
    STAMP.unlink(missing_ok=True)
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # Chromium's trailer: harmless
    # Debian's Chromium, else Playwright's own (`playwright install chromium`).
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium")
    editions = [e for e in EDITIONS if not only or e in only]
    # Printing is Chromium's layout, one core per edition: side by side.
    with ThreadPoolExecutor(max_workers=len(EDITIONS)) as pool:
        printed = pool.map(lambda edition: print_edition(chromium, edition), editions)
        for edition, data in zip(editions, printed, strict=True):
            for path in outputs(edition):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            sheets, size = len(PdfReader(io.BytesIO(data)).pages), len(data) / 1e6
            print(f"pdf: {edition}: {sheets} pages, {size:.1f} MB")
    if not only:
        STAMP.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
