"""PyTorch names link to PyTorch's documentation, on every page of each edition.

Read from the built pages, against the inventory the build used
(``docs/inventories/torch-X.Y.inv``, derived from PyTorch's documentation
sources; ``tests/site/test_torchlinks.py`` checks that derivation):

* every link to an object of PyTorch's API reference goes to the
  documentation of the torch series that built the site, at a page and
  anchor the inventory has;
* in highlighted Python code, every ``torch.``-qualified name the inventory
  documents as a function, class, method or attribute is a link (a name in a
  comment or a string is not a name; viewcode's listings of our own source
  in ``_modules/`` are not checked);
* in prose, every code span that is such a name, or a call of one, is a link
  (headings excepted);
* the number of links is printed per edition (the closing note quotes it),
  and both editions link the same names: they share code, roles and spans.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import harness
from bs4 import BeautifulSoup, Tag

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "inventories"))
import make_torch_inventory as inv  # noqa: E402

SERIES = inv.torch_series()
BASE = f"https://docs.pytorch.org/docs/{SERIES}/"
ENTRIES = inv.read_inventory(inv.inventory_path(SERIES))
URIS = {uri for _, uri in ENTRIES.values()}
# A link to an object of PyTorch's API reference, of any version.
API = re.compile(r"https://(docs\.)?pytorch\.org/docs/[^/]+/(generated/|[^#]*#torch\.)")
SPAN = re.compile(r"(torch(?:\.\w+)+)(?:\(.*\))?", re.DOTALL)
NAME_CLASSES = {"n", "nn", "nc", "nf", "nb", "bp", "fm", "py", "vc", "vg", "vi", "vm"}
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def documented(dotted: str) -> str | None:
    """The longest prefix of ``dotted`` the inventory documents as an object
    (a function, class, method ...; a module alone is not linked in code)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        name = ".".join(parts[:cut])
        if name in ENTRIES:
            return name if ENTRIES[name][0] != "py:module" else None
    return None


def unlinked_in_code(pre: Tag) -> list[str]:
    """``torch.``-qualified documented names in a code block that no link holds."""
    found = []
    tokens = [t for t in pre.descendants if isinstance(t, Tag) and t.name == "span"]
    for token in tokens:
        if token.get_text() != "torch" or not NAME_CLASSES & set(
            token.get("class", [])
        ):
            continue
        if token.find_parent("a") is not None:
            continue
        before = token.find_previous_sibling("span")
        if before is not None and before.get_text() == ".":
            continue  # an attribute of something else: x.torch
        parts, node = ["torch"], token
        while True:
            dot = node.find_next_sibling("span")
            name = dot.find_next_sibling("span") if dot is not None else None
            if dot is None or dot.get_text() != "." or name is None:
                break
            parts.append(name.get_text())
            node = name
        if name_ := documented(".".join(parts)):
            found.append(name_)
    return found


def page_problems(markup: str) -> tuple[list[str], list[str]]:
    """(the PyTorch names a page links, problems) of one page's article."""
    soup = BeautifulSoup(markup, "html.parser")
    article = soup.find("article") or soup
    linked, problems = [], []
    for a in article.find_all("a", href=True):
        href = a["href"]
        if not API.match(href):
            continue  # not a link to PyTorch's API (its notes, say)
        if not href.startswith(BASE) or href.removeprefix(BASE) not in URIS:
            problems.append(f"link to an API page the inventory does not have: {href}")
        linked.append(href.removeprefix(BASE))
    for pre in article.select("div.highlight pre"):
        problems += [f"unlinked in code: {n}" for n in unlinked_in_code(pre)]
    for code in article.find_all("code"):
        if code.find_parent("a") is not None or code.find_parent(HEADINGS):
            continue
        match = SPAN.fullmatch(code.get_text())
        if match and match.group(1) in ENTRIES:
            problems.append(f"unlinked code span: {code.get_text()}")
    return linked, problems


def edition_links(edition_site: Path) -> tuple[Counter[str], list[str]]:
    """How often each PyTorch page is linked in an edition, and the problems."""
    counts: Counter[str] = Counter()
    problems = []
    for page in harness.discover_pages(edition_site):
        if page.startswith("_modules/"):
            continue  # viewcode's listings of our own source: not linked
        markup = (edition_site / page).read_text(encoding="utf-8")
        linked, found = page_problems(markup)
        counts.update(linked)
        problems += [f"{page}: {problem}" for problem in found]
    return counts, problems


def test_torch_names_link_to_pytorch(edition: str, edition_site: Path) -> None:
    counts, problems = edition_links(edition_site)
    print(
        f"{edition}: {sum(counts.values())} links to PyTorch's documentation, "
        f"{len(counts)} distinct names"
    )
    assert problems == []
    assert sum(counts.values()) > 0


def test_both_editions_link_the_same_names(site: Path) -> None:
    en, zh = (edition_links(harness.edition_root(site, e))[0] for e in ("en", "zh_CN"))
    assert en == zh, {"only en": en - zh, "only zh_CN": zh - en}
