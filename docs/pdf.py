"""Print the built site as one PDF per edition: ``python docs/pdf.py [edition]``.

Run it after ``docs/build.py`` (``nox -s pdf`` runs both, then
``tests/site/test_pdf.py``). For each edition it

1. finds the pages in the order of the site's table of contents, by following
   each page's "next" link from the edition's ``index.html``;
2. assembles their articles into one HTML document: every ``id`` is prefixed
   with its page, so a link to another page (or to an anchor in it) becomes a
   link inside the document; links to anything not in the document (the
   source viewer, downloads) are unwrapped to plain text; headings move down
   one level per level of the table of contents, so the PDF outline nests as
   the sidebar does; collapsed solutions are opened;
3. adds a title page and a contents page (each page and its sections) whose
   page numbers come from a first printing (the second printing has the same
   layout, with the numbers);
4. prints it with Debian's Chromium through Playwright, offline (a request
   for anything outside the edition's folder is aborted), with
   ``docs/pdf.css`` for print, on A4 with page numbers, as a tagged PDF.
   Chromium embeds (a subset of) every font it uses; Chinese text is set in
   Noto CJK (``fonts-noto-cjk``), whose CFF outlines Chromium embeds as
   Type 3 fonts (the outline of each glyph used);
5. finishes it with pypdf: the outline (bookmarks: the pages nested as in the
   sidebar, each with its sections), title, author, language, the outline
   open in the viewer, no creation date (two printings of the same site are
   the same file), and text that copies and searches as written: Chromium
   maps some CJK glyphs to a radical (U+2E80-U+2FDF) rather than the
   ideograph the page has (文 came out as ⽂, 页 as ⻚), which the text map
   corrects, from Noto CJK's own character map;
6. writes both PDFs into both editions, ``_static/pdf/autograd-notes-en.pdf``
   and ``autograd-notes-zh_CN.pdf``, so each hosted edition (Read the Docs
   serves them as separate projects) serves both.

Nothing is printed again when neither the site (``docs/build.py``'s
fingerprint) nor this script or its stylesheet changed since the last run.
"""

from __future__ import annotations

import copy
import hashlib
import io
import logging
import os
import posixpath
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bs4 import BeautifulSoup, Tag
from fontTools.ttLib import TTFont
from playwright.sync_api import Page, Route, sync_playwright
from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    DictionaryObject,
    Fit,
    NameObject,
    TextStringObject,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BUILD = DOCS / "_build"
SITE = BUILD / "html"
EDITIONS = {"en": SITE, "zh_CN": SITE / "zh_CN"}
STYLESHEET = DOCS / "pdf.css"
SITE_STAMP = BUILD / ".site-fingerprint"
STAMP = BUILD / ".pdf-fingerprint"
PROJECT = "autograd-notes"
AUTHOR = "autograd-notes developers"
# Written into the edition's folder for the printing only, then removed.
SCRATCH = "_pdf-print.html"

# The strings of the title and contents pages (raw HTML, like conf.py's
# footers, so one per edition here rather than in the catalogs).
TEXT = {
    "en": {
        "contents": "Contents",
        "edition": "English edition",
        "lang": "en",
        "note": "The whole site as one document: every output was produced by "
        "running the code while the site was built.",
    },
    "zh_CN": {
        "contents": "目录",
        "edition": "简体中文版",
        "lang": "zh-CN",
        "note": "整个网站合为一份文档：每一个输出都是构建网站时实际运行代码产生的。",
    },
}
FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;color:#555;">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)
MARGIN = {"top": "16mm", "bottom": "18mm", "left": "16mm", "right": "16mm"}


def pdf_name(edition: str) -> str:
    return f"{PROJECT}-{edition}.pdf"


def outputs(edition: str) -> list[Path]:
    """Where the PDF of ``edition`` is written: into every edition's _static."""
    return [site / "_static" / "pdf" / pdf_name(edition) for site in EDITIONS.values()]


@dataclass
class Doc:
    """One page of the site, as it goes into the PDF."""

    path: str  # relative to the edition's root, e.g. "tutorials/index.html"
    title: str
    depth: int  # 0: the landing page and the top-level sections
    soup: BeautifulSoup
    sections: list[tuple[str, str]] = field(default_factory=list)  # (id, title)

    @property
    def key(self) -> str:
        """The page's id in the assembled document."""
        return "p-" + re.sub(r"[^\w-]", "-", self.path.removesuffix(".html"))


@dataclass
class Entry:
    """A line of the contents and an item of the outline."""

    level: int
    title: str
    target: str  # an id in the assembled document


def read(site: Path, path: str) -> BeautifulSoup:
    return BeautifulSoup((site / path).read_text(encoding="utf-8"), "html.parser")


def resolve(page: str, href: str) -> tuple[str, str] | None:
    """``href`` on ``page`` as (path from the edition's root, fragment); None
    when it leaves the edition or names another scheme or host."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return None
    if not parts.path:
        return page, unquote(parts.fragment)
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page), parts.path))
    if target.startswith(".."):
        return None
    return unquote(target), unquote(parts.fragment)


def text_of(heading: Tag) -> str:
    heading = copy.copy(heading)
    for link in heading.select("a.headerlink"):
        link.decompose()
    return " ".join(heading.get_text(" ", strip=True).split())


def toctree_depth(soup: BeautifulSoup) -> int:
    """How deep the page sits in the sidebar's table of contents."""
    levels = [
        int(m.group(1))
        for li in soup.select("nav.bd-docs-nav li.current")
        for m in [re.search(r"toctree-l(\d)", " ".join(li.get("class", [])))]
        if m
    ]
    return max(max(levels, default=1) - 1, 0)


def pages(site: Path) -> list[Doc]:
    """Every page in table-of-contents order, from index.html via "next"."""
    docs: list[Doc] = []
    path: str | None = "index.html"
    while path is not None and all(d.path != path for d in docs):
        soup = read(site, path)
        article = soup.select_one("article.bd-article")
        heading = article.find("h1") if article else None
        if article is None or not isinstance(heading, Tag):
            raise SystemExit(f"pdf: {path} has no article with a title")
        depth = 0 if path == "index.html" else toctree_depth(soup)
        doc = Doc(path, text_of(heading), depth, soup)
        for h2 in article.select("section > h2"):
            section = h2.parent
            if isinstance(section, Tag) and section.get("id"):
                doc.sections.append((str(section["id"]), text_of(h2)))
        docs.append(doc)
        nxt = soup.select_one("a.right-next")
        found = resolve(path, str(nxt["href"])) if nxt and nxt.get("href") else None
        path = found[0] if found else None
    return docs


# Parts of a page that mean nothing on paper (or lead out of the document).
DROP = [
    "a.headerlink",
    ".viewcode-link",
    ".sphx-glr-download-link-note",
    ".sphx-glr-footer",
    ".sphx-glr-download",
    "p.sphx-glr-signature",
    ".prev-next-area",
    ".prev-next-footer",
    "script",
    "noscript",
    "button",
]


def assemble(docs: list[Doc]) -> str:
    """The articles of ``docs`` as the body of one document."""
    keys = {d.path: d.key for d in docs}
    articles = [copy.copy(d.soup.select_one("article.bd-article")) for d in docs]
    ids: dict[tuple[str, str], str] = {}
    for doc, article in zip(docs, articles, strict=True):
        for node in article.select("[id]"):
            ids[doc.path, str(node["id"])] = f"{doc.key}--{node['id']}"
    body: list[str] = []
    for doc, article in zip(docs, articles, strict=True):
        for selector in DROP:
            for node in article.select(selector):
                node.decompose()
        for node in article.select("[id]"):
            node["id"] = ids[doc.path, str(node["id"])]
        for link in article.select("a[href]"):
            target = resolve(doc.path, str(link["href"]))
            if target is None:
                if urlsplit(str(link["href"])).scheme not in ("http", "https"):
                    link.unwrap()  # mailto: stays text; http(s) stays a link
                continue
            path, fragment = target
            if (path, fragment) in ids:
                link["href"] = "#" + ids[path, fragment]
            elif path in keys:
                link["href"] = "#" + keys[path]
            else:
                link.unwrap()  # a download, the source viewer, the index...
        for node in article.select("[src]"):
            found = resolve(doc.path, str(node["src"]))
            if found:
                node["src"] = found[0]
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


def entries(docs: list[Doc]) -> list[Entry]:
    """Each page at its depth, then its sections one level below it."""
    found: list[Entry] = []
    for doc in docs:
        found.append(Entry(doc.depth, doc.title, doc.key))
        found += [Entry(doc.depth + 1, t, f"{doc.key}--{i}") for i, t in doc.sections]
    return found


def head(docs: list[Doc]) -> str:
    """The stylesheets of the site and MathJax, with paths from the root."""
    parts: list[str] = []
    for doc in docs:
        for node in doc.soup.select('head link[rel="stylesheet"], head script'):
            node = copy.copy(node)
            attribute = "href" if node.name == "link" else "src"
            source = str(node.get(attribute) or "")
            if node.name == "script" and "mathjax" not in (source + str(node)).lower():
                continue
            if source:
                found = resolve(doc.path, source.split("?")[0])
                if found is None:
                    continue
                node[attribute] = found[0]
            if str(node) not in parts:
                parts.append(str(node))
    parts.append(f"<style>{STYLESHEET.read_text(encoding='utf-8')}</style>")
    return "\n".join(parts)


def front(docs: list[Doc], edition: str, numbers: dict[str, int]) -> str:
    """The title page and the contents page."""
    text = TEXT[edition]
    index = docs[0].soup
    tagline = index.select_one("article.bd-article p")
    footer = index.select_one(".extra_footer")
    lines = [
        '<section class="pdf-title">',
        f"<h1>{PROJECT}</h1>",
        f"<p class='pdf-tagline'>{tagline.decode_contents() if tagline else ''}</p>",
        f"<p class='pdf-edition'>{text['edition']}</p>",
        f"<p>{text['note']}</p>",
        footer.decode_contents() if footer else "",
        "</section>",
        '<nav class="pdf-contents" id="pdf-contents">',
        f"<h1>{text['contents']}</h1><ol>",
    ]
    for entry in entries(docs):
        lines.append(
            f'<li class="pdf-toc-{entry.level}"><a href="#{entry.target}">'
            f'<span class="pdf-toc-title">{entry.title}</span>'
            f'<span class="pdf-toc-page">{numbers.get(entry.target, "")}</span>'
            "</a></li>"
        )
    lines.append("</ol></nav>")
    return "\n".join(lines)


def document(docs: list[Doc], edition: str, numbers: dict[str, int]) -> str:
    return (
        f'<!DOCTYPE html><html lang="{TEXT[edition]["lang"]}" data-theme="light" '
        f'data-mode="light"><head><meta charset="utf-8"><title>{PROJECT}</title>'
        f"{head(docs)}</head><body class='pdf'>"
        f"{front(docs, edition, numbers)}<main>{assemble(docs)}</main></body></html>"
    )


def destinations(reader: PdfReader) -> dict[str, tuple[int, float | None]]:
    """The page (from 0) and height of every named destination."""
    found: dict[str, tuple[int, float | None]] = {}
    for name, destination in reader.named_destinations.items():
        number = reader.get_destination_page_number(destination)
        if number is not None and number >= 0:
            top = destination.get("/Top")
            found[str(name).lstrip("/")] = (number, float(top) if top else None)
    return found


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
            margin=MARGIN,  # type: ignore[arg-type]
            print_background=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=FOOTER,
            tagged=True,
        )
    finally:
        scratch.unlink(missing_ok=True)


RADICALS = re.compile("[\u2e80-\u2fdf\uf900-\ufaff]")
IDEOGRAPHS = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
BFCHAR = re.compile(rb"beginbfchar(.*?)endbfchar", re.S)
PAIR = re.compile(rb"<([0-9A-Fa-f]+)>(\s*)<([0-9A-Fa-f]+)>")


@cache
def ideographs() -> dict[str, str]:
    """Each radical that Noto Sans CJK SC draws with an ideograph's glyph
    (⻚ and 页, ⽂ and 文), and that ideograph."""
    found = subprocess.run(
        ["fc-match", "-f", "%{file}:%{index}", "Noto Sans CJK SC"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    path, _, index = found.rpartition(":")
    if not path.endswith((".ttc", ".otf", ".ttf")):
        return {}
    cmap = TTFont(path, fontNumber=int(index or 0), lazy=True).getBestCmap()
    glyphs: dict[str, str] = {}
    for code, glyph in sorted(cmap.items()):
        if IDEOGRAPHS.fullmatch(chr(code)):
            glyphs.setdefault(glyph, chr(code))
    return {
        chr(code): glyphs[glyph]
        for code, glyph in cmap.items()
        if RADICALS.fullmatch(chr(code)) and glyph in glyphs
    }


def ideograph(match: re.Match[bytes]) -> bytes:
    """A ``<code> <text>`` pair, with a CJK radical or compatibility
    character as its text replaced by the ideograph it stands for."""
    text = bytes.fromhex(match[3].decode()).decode("utf-16-be", "replace")
    if not RADICALS.fullmatch(text):
        return match[0]
    fixed = ideographs().get(text) or unicodedata.normalize("NFKC", text)
    hexcode = fixed.encode("utf-16-be").hex().upper().encode()
    return b"<%s>%s<%s>" % (match[1], match[2], hexcode)


def fix_text_map(font: DictionaryObject) -> None:
    """Map glyphs that Chromium mapped to a Kangxi radical to the ideograph
    (the pages contain ideographs: 文, never ⽂). Its maps name those one by
    one (``bfchar``)."""
    if "/ToUnicode" not in font:
        return
    stream = font["/ToUnicode"].get_object()
    data = stream.get_data()
    fixed = BFCHAR.sub(lambda block: PAIR.sub(ideograph, block[0]), data)
    if fixed != data:
        stream.set_data(fixed)


def finish(pdf: bytes, edition: str, docs: list[Doc]) -> bytes:
    """The outline, the text maps, metadata, and no dates."""
    reader = PdfReader(io.BytesIO(pdf))
    writer = PdfWriter(clone_from=reader)
    places = destinations(reader)
    parents: dict[int, object] = {}
    for entry in entries(docs):
        number, top = places[entry.target]
        parent = parents.get(entry.level - 1) if entry.level else None
        item = writer.add_outline_item(
            title=entry.title, page_number=number, parent=parent, fit=Fit.xyz(top=top)
        )
        parents[entry.level] = item
    done: set[int] = set()
    for page in writer.pages:
        fonts = page["/Resources"].get_object().get("/Font", {})
        for font in fonts.get_object().values():
            if font.idnum not in done:
                done.add(font.idnum)
                fix_text_map(font.get_object())
    writer.add_metadata(
        {"/Title": f"{PROJECT} ({TEXT[edition]['edition']})", "/Author": AUTHOR}
    )
    info = writer._info.get_object() if writer._info is not None else {}
    for key in ("/CreationDate", "/ModDate"):
        info.pop(NameObject(key), None)
    writer._root_object[NameObject("/PageMode")] = NameObject("/UseOutlines")
    writer._root_object[NameObject("/Lang")] = TextStringObject(TEXT[edition]["lang"])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def find_chromium() -> str | None:
    """Debian's Chromium ($CHROMIUM, ``chromium`` on PATH, /usr/bin/chromium);
    None: Playwright's own (``playwright install chromium``, on hosted
    builders that have no Debian package)."""
    candidates = [os.environ.get("CHROMIUM"), shutil.which("chromium")]
    for candidate in [*candidates, "/usr/bin/chromium"]:
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def offline(site: Path, blocked: list[str]) -> Callable[[Route], None]:
    """Serve only files of the edition's folder; note anything else."""
    root = site.resolve().as_uri() + "/"

    def handle(route: Route) -> None:
        url = route.request.url
        if url.startswith((root, "data:", "blob:")):
            route.fallback()
        else:
            blocked.append(url)
            route.abort("blockedbyclient")

    return handle


def fingerprint() -> str:
    """What the PDFs are printed from; a missing file never matches."""
    digest = hashlib.sha256()
    for path in (SITE_STAMP, Path(__file__), STYLESHEET):
        digest.update(path.read_bytes() if path.exists() else os.urandom(8))
    return digest.hexdigest()


def main(only: list[str]) -> int:
    """Print every edition (or those named on the command line)."""
    current = fingerprint()
    done = all(p.exists() for e in EDITIONS for p in outputs(e))
    if not only and done and STAMP.exists() and STAMP.read_text() == current:
        print("pdf: the site has not changed since the PDFs were printed.")
        return 0
    for site in EDITIONS.values():
        if not (site / "index.html").exists():
            print(f"pdf: no site in {site}; run `nox -s docs` first", file=sys.stderr)
            return 1
    STAMP.unlink(missing_ok=True)
    # pypdf notes, harmlessly, that Chromium's trailer undercounts objects.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium())
        for edition, site in EDITIONS.items():
            if only and edition not in only:
                continue
            start = time.monotonic()
            docs = pages(site)
            blocked: list[str] = []
            # Scale 2: pictures print from their high-resolution (2x) files.
            context = browser.new_context(device_scale_factor=2)
            context.route("**/*", offline(site, blocked))
            page = context.new_page()
            draft = print_pdf(page, site, document(docs, edition, {}), blocked)
            numbers = {
                name: number + 1
                for name, (number, _) in destinations(
                    PdfReader(io.BytesIO(draft))
                ).items()
            }
            pdf = print_pdf(page, site, document(docs, edition, numbers), blocked)
            context.close()
            data = finish(pdf, edition, docs)
            for path in outputs(edition):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            count = len(PdfReader(io.BytesIO(data)).pages)
            print(
                f"pdf: {edition}: {count} pages, {len(data) / 1e6:.1f} MB "
                f"in {time.monotonic() - start:.0f} s -> "
                f"{outputs(edition)[0].relative_to(ROOT)}",
                flush=True,
            )
        browser.close()
    if not only:
        STAMP.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
