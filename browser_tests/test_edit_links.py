"""The header's "Suggest edit" and "Open issue" links of every page, as built.

"Suggest edit" opens the file the page comes from: a tutorial's script in gallery/,
a page's source in docs/; on the Chinese edition, the page's catalog (its
translation), not the English source. "Open issue" names the page in its body,
in the edition's language (docs/_ext/autograd_site/editions.py, site.po)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import harness
from babel.messages.pofile import read_po
from bs4 import BeautifulSoup

REPOSITORY = "https://github.com/autograd-notes/autograd-notes"
EDIT = f"{REPOSITORY}/edit/main/"


ISSUE_BODY = "Page: {}\n\nWhat is wrong or unclear:\n"  # the source edition's


def issue_body(edition: str, repo_root: Path) -> str:
    """The issue's text in ``edition``: English, or its site.po's translation."""
    po = repo_root / "docs" / "locale" / edition / "LC_MESSAGES" / "site.po"
    if not po.is_file():
        return ISSUE_BODY
    with po.open("rb") as f:
        message = read_po(f).get(ISSUE_BODY)
    assert message is not None, f"{po}: no {ISSUE_BODY!r}"
    assert message.string, f"{po}: {ISSUE_BODY!r} is not translated"
    return str(message.string)


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
    before, after = issue_body(edition, repo_root).split("{}")
    checked = 0
    for page in harness.discover_pages(edition_site):
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
        assert body.startswith(before), (page, body)
        assert body.endswith(after), (page, body)
        assert "Your issue content here" not in body
        checked += 1
    assert checked >= 38  # 16 tutorials, 22 pages
