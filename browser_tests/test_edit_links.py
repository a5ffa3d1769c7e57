"""The header's "Suggest edit" and "Open issue" links of every page, as built.

"Suggest edit" opens the file the page comes from: a tutorial's script in gallery/,
a page's source in docs/; on the Chinese edition, the page's catalog (its
translation), not the English source. "Open issue" names the page in its body."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import webcheck
from bs4 import BeautifulSoup

REPOSITORY = "https://github.com/autograd-notes/autograd-notes"
EDIT = f"{REPOSITORY}/edit/main/"


def expected_source(edition: str, page: str) -> str:
    name = page.removesuffix(".html")
    if edition != "en":
        return f"docs/locale/{edition}/LC_MESSAGES/{name}.po"
    if name == "tutorials/index":
        return "gallery/GALLERY_HEADER.rst"
    if name.startswith("tutorials/"):
        return f"gallery/{name.removeprefix('tutorials/')}.py"
    return ""  # docs/<name>.md or .rst


def test_edit_and_issue_links(edition: str, edition_site: Path, repo_root: Path):
    checked = 0
    for page in webcheck.discover_pages(edition_site):
        soup = BeautifulSoup((edition_site / page).read_text("utf-8"), "html.parser")
        edit = soup.select_one("a.btn-source-edit-button")
        issue = soup.select_one("a.btn-source-issues-button")
        if edit is None:
            continue
        href = str(edit["href"])
        assert href.startswith(EDIT), (page, href)
        source = href.removeprefix(EDIT)
        wanted = expected_source(edition, page)
        if wanted:
            assert source == wanted, page
        else:
            assert source.startswith("docs/"), page
        assert (repo_root / source).is_file(), f"{page} edits {source}: no such file"
        assert issue is not None, page
        body = parse_qs(urlsplit(str(issue["href"])).query)["body"][0]
        assert page in body, f"{page}: the issue's body does not name it: {body!r}"
        assert "Your issue content here" not in body
        checked += 1
    assert checked >= 38  # 16 tutorials, 22 pages
