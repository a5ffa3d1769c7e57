"""Pictures on every page of each edition, on a phone (390 px) and a desktop.

* every ``<img>`` has alt text that says something (not a file name or path;
  empty only where the image is decorative: a card whose title is its text);
* every picture is high resolution: its largest source (``src`` or a
  ``srcset`` candidate) has at least twice as many pixels across as the page
  shows, or it is an SVG (the theme's own icons in ``_static/``, such as the
  index's 11 px "minus" toggle, are interface, not pictures: alt text only);
* a graph drawing opens full size on tap (it is a link to its largest
  image), has the legend under it in the page's language, and alt text in
  that language too;
* each tutorial card shows its number, and no two tutorials' cards on a page
  share a thumbnail (hashes of the image files; a mini-gallery may show one
  tutorial's card twice); every card is the tutorial's number drawn
  (autograd_site/tutorialcards.py), the same in both editions: its title is text.

The pictures are measured by ``views.pictures`` on the one load of each page
and width that ``test_layout.py`` shares (``views.PageViews``): a phone
context at 390 px, a desktop window at 1280 px.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import harness
import pytest
from autograd_site.cjk import han
from PIL import Image
from playwright.sync_api import BrowserContext
from views import WIDTHS, PageViews

# The width of each view of a page (views.WIDTHS), as the tests' ids name it.
SIZES = {width: size for size, width in WIDTHS.items()}
# Alt text that is a file's name: a path, an image file, or sphinx-gallery's
# default (the script's name: "03 grad fn and the graph").
PATH_LIKE = re.compile(r"[/\\]|\.(png|svg|jpe?g|gif|webp)$|^\d\d( [a-z0-9]+)+$", re.I)
GRAPH_ALT = re.compile(r"^(Backward graph: |No backward graph: |计算图：|没有计算图：)")


def local_file(site: Path, base_url: str, url: str) -> Path:
    """The file of the built site that ``url`` (on the test server) serves."""
    path = unquote(urlsplit(url).path)
    base = urlsplit(base_url).path
    assert path.startswith(base), url
    return site / path.removeprefix(base)


def largest_source(site: Path, base_url: str, image: dict[str, object]) -> Path:
    """The source of an image with the most pixels across."""
    candidates = [str(image["src"])]
    for item in str(image["srcset"]).split(","):
        if item.strip():
            candidates.append(urljoin(str(image["src"]), item.split()[0]))
    files = [local_file(site, base_url, url) for url in candidates]
    return max(files, key=lambda f: 10**9 if f.suffix == ".svg" else pixels(f))


def pixels(path: Path) -> int:
    with Image.open(path) as image:
        return int(image.size[0])


@pytest.mark.parametrize("width", list(SIZES))
def test_pictures(
    page_views: PageViews,
    site: Path,
    base_url: str,
    edition: str,
    page_path: str,
    width: int,
):
    view = page_views(edition, page_path, SIZES[width])
    images = view["pictures"]
    problems = []
    hashes: dict[str, str] = {}  # thumbnail's hash -> its tutorial
    for image in images:
        name = urlsplit(image["src"]).path.rpartition("/")[2]
        alt = image["alt"]
        if alt is None:
            problems.append(f"{name}: no alt attribute")
        elif not alt.strip():
            decorative = image["hidden"] or (image["card"] and image["card"]["title"])
            if not decorative:
                problems.append(f"{name}: empty alt, but the image is not decorative")
        elif PATH_LIKE.search(alt.strip()):
            problems.append(f"{name}: alt text is a file name: {alt!r}")
        if str(image["src"]).startswith("data:"):
            # A graph view's print picture is inline SVG: no file to measure.
            if not str(image["src"]).startswith("data:image/svg+xml;"):
                problems.append(f"{name}: an inline picture that is not SVG")
            if image["visible"] and image["right"] > width + 1:
                problems.append(f"{name}: runs off a {width} px screen")
            continue
        source = largest_source(site, base_url, image)
        low = source.suffix != ".svg" and pixels(source) < 2 * image["width"] - 1
        if image["visible"] and low and "_static" not in source.parts:
            problems.append(
                f"{name}: shown {image['width']:.0f} px wide, largest source "
                f"{source.name} has {pixels(source)} px"
            )
        if image["visible"] and image["right"] > width + 1:
            problems.append(f"{name}: runs off a {width} px screen")
        if alt and GRAPH_ALT.match(alt):
            language_ok = han(alt) == (edition == "zh_CN")
            if not language_ok:
                problems.append(f"{name}: alt text not in the page's language")
            if image["link"] is None:
                problems.append(f"{name}: graph drawing does not open full size")
            else:
                target = local_file(site, base_url, image["link"])
                if not target.is_file() or pixels(target) < pixels(source):
                    problems.append(f"{name}: its link is not the full-size image")
            legend = image["legend"]
            if not legend:
                problems.append(f"{name}: no legend under the graph drawing")
            elif han(legend) != (edition == "zh_CN"):
                problems.append(f"{name}: legend not in the page's language")
        if image["card"]:
            wanted = re.search(r"/(\d\d)_\w+\.html", image["card"]["href"])
            number = image["card"]["number"]
            if wanted is None or number != wanted.group(1):
                problems.append(f"card {image['card']['href']}: number {number!r}")
            digest = hashlib.sha256(source.read_bytes()).hexdigest()
            tutorial = image["card"]["href"]
            if hashes.setdefault(digest, tutorial) != tutorial:
                problems.append(f"{tutorial}: same thumbnail as {hashes[digest]}")
            if not name.startswith("card_"):  # one kind of card: its number
                problems.append(f"{tutorial}: its thumbnail {name} is not its card")
    assert problems == []
    assert view["load"] == []


def test_cards_are_numbered_in_order(
    context: BrowserContext, edition_url: str, edition: str
):
    """The tutorials index numbers its cards 01, 02, ... in reading order."""
    page, _ = harness.open_page(context, urljoin(edition_url, "tutorials/index.html"))
    numbers = page.locator(".sphx-glr-thumbcontainer .card-number").all_inner_texts()
    assert numbers == [f"{n:02d}" for n in range(1, len(numbers) + 1)]
    assert len(numbers) >= 15
