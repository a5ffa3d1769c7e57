"""Print the built site as one PDF per edition: ``python docs/pdf.py``.

Run it after ``docs/build.py`` (``nox -s pdf`` runs both, then
``tests/test_pdf.py``). For each edition it

1. finds the pages in the order of the site's table of contents, by following
   each page's "next" link from the edition's ``index.html``;
2. assembles their articles into one HTML document: every ``id`` is prefixed
   with its page, so a link to another page (or to an anchor in it) becomes a
   link inside the document; links to anything not in the document (the
   source viewer, downloads) are unwrapped to plain text; headings move down
   one level per level of the table of contents, so the PDF outline nests as
   the sidebar does; collapsed solutions are opened;
3. adds a title page and a contents page whose page numbers come from a first
   printing (the second printing has the same layout, with the numbers);
4. prints it with Debian's Chromium through Playwright, offline (a request
   for anything outside the edition's folder is aborted), with
   ``docs/pdf.css`` for print, on A4 with page numbers, as a tagged PDF with
   an outline (bookmarks). Chromium embeds (a subset of) every font it uses;
   Chinese text is set in Noto CJK (``fonts-noto-cjk``);
5. finishes it with pypdf: title, author, language, the outline open in the
   viewer, and no creation date, so two printings of the same site are the
   same file;
6. writes both PDFs into both editions, ``_static/pdf/autograd-notes-en.pdf``
   and ``autograd-notes-zh_CN.pdf``, so each hosted edition (Read the Docs
   serves them as separate projects) serves both.

Nothing is printed again when neither the site (``docs/build.py``'s
fingerprint) nor this script or its stylesheet changed since the last run.
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bs4 import BeautifulSoup, Tag
from playwright.sync_api import Page, Route, sync_playwright
from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject, TextStringObject

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BUILD = DOCS / "_build"
SITE = BUILD / "html"
EDITIONS = {"en": SITE, "zh_CN": SITE / "zh_CN"}
STYLESHEET = DOCS / "pdf.css"
SITE_STAMP = BUILD / ".site-fingerprint"
STAMP = BUILD / ".pdf-fingerprint"
PROJECT = "autograd-notes"
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
    article: Tag

    @property
    def key(self) -> str:
        """The page's id in the assembled document."""
        return "p-" + re.sub(r"[^\w-]", "-", self.path.removesuffix(".html"))


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


def toctree_depth(soup: BeautifulSoup) -> int:
    """How deep the page sits in the sidebar's table of contents."""
    current = soup.select("nav.bd-docs-nav li.current")
    levels = [
        int(m.group(1))
        for li in current
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
        if article is None:
            raise SystemExit(f"pdf: {path} has no article")
        heading = article.find("h1")
        title = heading.get_text(" ", strip=True) if heading else path
        title = title.rstrip("#¶ ").strip()
        docs.append(Doc(path, title, 0 if path == "index.html" else 0, article))
        docs[-1].depth = toctree_depth(soup) if path != "index.html" else 0
        nxt = soup.select_one("a.right-next")
        path = None
        if nxt is not None and nxt.get("href"):
            found = resolve(docs[-1].path, str(nxt["href"]))
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


def assemble(docs: list[Doc]) -> tuple[str, dict[str, str]]:
    """The articles as one body; the ids of the pages, by page path."""
    keys = {d.path: d.key for d in docs}
    ids: dict[tuple[str, str], str] = {}
    for doc in docs:
        for node in doc.article.select("[id]"):
            ids[doc.path, str(node["id"])] = f"{doc.key}--{node['id']}"
    body: list[str] = []
    for doc in docs:
        article = doc.article
        for selector in DROP:
            for node in article.select(selector):
                node.decompose()
        for node in article.select("[id]"):
            node["id"] = ids[doc.path, str(node["id"])]
        for link in article.select("a[href]"):
            target = resolve(doc.path, str(link["href"]))
            if target is None:
                if urlsplit(str(link["href"])).scheme in ("http", "https", "mailto"):
                    continue  # a link to another site stays one
                link.unwrap()
                continue
            path, fragment = target
            if path in keys and fragment and (path, fragment) in ids:
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
    return "\n".join(body), keys


def head(site: Path, docs: list[Doc]) -> str:
    """The stylesheets of the site and MathJax, with paths from the root."""
    parts: list[str] = []
    seen: set[str] = set()
    for doc in docs:
        soup = read(site, doc.path)
        for node in soup.select('head link[rel="stylesheet"], head script'):
            src = node.get("href") or node.get("src")
            text = node.string or ""
            is_math = "mathjax" in str(src).lower() or "MathJax" in text
            if node.name == "script" and not is_math:
                continue
            if src:
                found = resolve(doc.path, str(src).split("?")[0])
                if found is None:
                    continue
                node["href" if node.name == "link" else "src"] = found[0]
            html = str(node)
            if html not in seen:
                seen.add(html)
                parts.append(html)
    parts.append(f"<style>{STYLESHEET.read_text(encoding='utf-8')}</style>")
    return "\n".join(parts)


def front(site: Path, docs: list[Doc], edition: str, numbers: dict[str, int]) -> str:
    """The title page and the contents page."""
    text = TEXT[edition]
    index = read(site, "index.html")
    tagline = index.select_one("article.bd-article p")
    footer = index.select_one(".footer-item .extra_footer, .extra_footer")
    lines = [
        '<section class="pdf-title">',
        f"<h1 class='pdf-no-outline'>{PROJECT}</h1>",
        f"<p class='pdf-tagline'>{tagline.decode_contents() if tagline else ''}</p>",
        f"<p class='pdf-edition'>{text['edition']}</p>",
        f"<p>{text['note']}</p>",
        footer.decode_contents() if footer else "",
        "</section>",
        '<nav class="pdf-contents" id="pdf-contents">',
        f"<h1 class='pdf-no-outline'>{text['contents']}</h1><ol>",
    ]
    for doc in docs:
        number = numbers.get(doc.key, "")
        lines.append(
            f'<li class="pdf-toc-{doc.depth}"><a href="#{doc.key}">'
            f'<span class="pdf-toc-title">{doc.title}</span>'
            f'<span class="pdf-toc-page">{number}</span></a></li>'
        )
    lines.append("</ol></nav>")
    return "\n".join(lines)


def document(site: Path, edition: str, numbers: dict[str, int]) -> str:
    docs = pages(site)  # fresh soup each time: assemble() edits it
    body, _ = assemble(docs)
    return (
        f'<!DOCTYPE html><html lang="{TEXT[edition]["lang"]}" data-theme="light" '
        f'data-mode="light"><head><meta charset="utf-8"><title>{PROJECT}</title>'
        f"{head(site, docs)}</head><body class='pdf'>"
        f"{front(site, docs, edition, numbers)}<main>{body}</main></body></html>"
    )


def destinations(pdf: bytes) -> dict[str, int]:
    """The page number (from 1) of every named destination of ``pdf``."""
    reader = PdfReader(io.BytesIO(pdf))
    found: dict[str, int] = {}
    for name, destination in reader.named_destinations.items():
        number = reader.get_destination_page_number(destination)
        if number is not None and number >= 0:
            found[str(name)] = number + 1
    return found


def printed(page: Page, site: Path, html: str) -> bytes:
    scratch = site / SCRATCH
    scratch.write_text(html, encoding="utf-8")
    try:
        page.goto(scratch.as_uri(), wait_until="load")
        page.evaluate(
            "async () => { await document.fonts.ready;"
            " if (window.MathJax && MathJax.startup) await MathJax.startup.promise; }"
        )
        return page.pdf(
            format="A4",
            margin={"top": "16mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
            print_background=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=FOOTER,
            outline=True,
            tagged=True,
        )
    finally:
        scratch.unlink(missing_ok=True)


def finish(pdf: bytes, edition: str, title: str) -> bytes:
    """Metadata, the outline open, and no dates: reproducible output."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.add_metadata(
        {
            "/Title": f"{PROJECT}: {title}",
            "/Author": "autograd-notes developers",
            "/Creator": "docs/pdf.py (Chromium)",
        }
    )
    info = writer._info
    if info is not None:
        for key in ("/CreationDate", "/ModDate"):
            info.get_object().pop(NameObject(key), None)
    writer._root_object[NameObject("/PageMode")] = NameObject("/UseOutlines")
    writer._root_object[NameObject("/Lang")] = TextStringObject(TEXT[edition]["lang"])
    digest = hashlib.sha256(pdf).digest()[:16]
    writer._ID = None  # computed from the content instead of the clock:
    out = io.BytesIO()
    writer.write(out)
    data = out.getvalue()
    del digest
    return data


def find_chromium() -> str | None:
    """Debian's Chromium ($CHROMIUM, ``chromium`` on PATH, /usr/bin/chromium);
    None to use a Chromium that ``playwright install`` put there (the hosted
    builders, which have no Debian package)."""
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def offline(site: Path):  # type: ignore[no-untyped-def]
    root = site.resolve().as_uri() + "/"

    def handle(route: Route) -> None:
        url = route.request.url
        if url.startswith(root) or url.startswith(("data:", "blob:", "about:")):
            route.fallback()
        else:
            print(f"pdf: blocked {url}", file=sys.stderr)
            route.abort("blockedbyclient")

    return handle


def fingerprint() -> str:
    digest = hashlib.sha256()
    for path in (SITE_STAMP, Path(__file__), STYLESHEET):
        digest.update(path.read_bytes() if path.exists() else os.urandom(8))
    return digest.hexdigest()


def main() -> int:
    current = fingerprint()
    done = all(p.exists() for e in EDITIONS for p in outputs(e))
    if done and STAMP.exists() and STAMP.read_text() == current:
        print("pdf: the site has not changed since the PDFs were printed.")
        return 0
    for site in EDITIONS.values():
        if not (site / "index.html").exists():
            print(f"pdf: no site in {site}; run `nox -s docs` first", file=sys.stderr)
            return 1
    STAMP.unlink(missing_ok=True)
    with sync_playwright() as playwright:
        executable = find_chromium()
        browser = playwright.chromium.launch(executable_path=executable)
        for edition, site in EDITIONS.items():
            start = time.monotonic()
            context = browser.new_context(device_scale_factor=2)
            context.route("**/*", offline(site))
            page = context.new_page()
            draft = printed(page, site, document(site, edition, {}))
            numbers = destinations(draft)
            pdf = printed(page, site, document(site, edition, numbers))
            context.close()
            title = TEXT[edition]["edition"]
            data = finish(pdf, edition, title)
            for path in outputs(edition):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            count = len(PdfReader(io.BytesIO(data)).pages)
            print(
                f"pdf: {edition}: {count} pages, {len(data) / 1e6:.1f} MB, "
                f"{time.monotonic() - start:.0f} s -> "
                f"{outputs(edition)[0].relative_to(ROOT)}",
                flush=True,
            )
        browser.close()
    STAMP.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main())
