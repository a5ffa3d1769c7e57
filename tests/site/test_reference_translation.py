"""The Chinese API reference is in Chinese, and stays so when a docstring changes.

(slow) A throw-away site holds the real API pages of ``docs/reference/``
(every page with an ``automodule`` directive) and their zh_CN catalogs,
built with the project's ``conf.py`` and extensions, and a copy of the
package in ``src/``, which the build imports. Then:

* no message of those pages is untranslated or fuzzy, and the docstrings'
  paragraphs (descriptions, parameters, returns, raises) read in Chinese:
  every paragraph with English words outside its code has Chinese, and most
  of each page's prose letters are Chinese;
* the code is the English edition's: every doctest block, signature and
  parameter name reads the same in both editions;
* a docstring edited in the package, and not in the catalog, fails the gate:
  the zh build warns (``docs/build.py`` builds with ``-W``: it fails) that the
  message on that page is untranslated, and names it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sitebuild
from autograd_site.cjk import HAN_CHARACTER, han
from bs4 import BeautifulSoup, Tag

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
CATALOGS = ROOT / "docs" / "locale" / "zh_CN" / "LC_MESSAGES" / "reference"
LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
# The docstring edited: the first line of check_mask's (masks.py).
EDITED = (
    "masks.py",
    "Validate ``mask`` against ``weight`` and return it as a bool tensor.",
)
ADDED = "A sentence the catalog has never seen."


def api_pages() -> list[Path]:
    pages = [
        p
        for p in sorted(REFERENCE.glob("*.*"))
        if p.suffix in (".md", ".rst")
        and ".. automodule:: autograd_notes." in p.read_text(encoding="utf-8")
    ]
    assert len(pages) >= 6, pages
    return pages


def build(root: Path, language: str) -> str:
    """One edition of the site (not strict: it has only the API pages, which
    link to pages it does not have); its output. The copy of the package in
    ``root / "src"`` comes first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(root / "src"), *filter(None, [env.get("PYTHONPATH")])]
    )
    docs = root / "docs"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-D", "plot_gallery=0"]
    cmd += ["-D", f"language={language}", str(docs)]
    cmd += [str(docs / "_build" / sitebuild.OUTDIRS[language])]
    result = subprocess.run(
        cmd, capture_output=True, text=True, cwd=root, env=env, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = sitebuild.make_site(tmp_path_factory.mktemp("reference"))
    docs = root / "docs"
    (docs / "page.md").unlink()
    (docs / "reference").mkdir()
    catalogs = docs / "locale" / "zh_CN" / "LC_MESSAGES" / "reference"
    catalogs.mkdir(parents=True)
    for page in api_pages():
        shutil.copy(page, docs / "reference")
        shutil.copy(CATALOGS / f"{page.stem}.po", catalogs)
    toctree = "".join(f"reference/{page.stem}\n" for page in api_pages())
    (docs / "index.md").write_text(f"# Site\n\n```{{toctree}}\n{toctree}```\n")
    return root


@pytest.fixture(scope="module")
def outputs(site: Path) -> dict[str, str]:
    return {language: build(site, language) for language in ("en", "zh_CN")}


def soup(site: Path, language: str, page: Path) -> BeautifulSoup:
    out = site / "docs" / "_build" / sitebuild.OUTDIRS[language] / "reference"
    html = (out / f"{page.stem}.html").read_text(encoding="utf-8")
    return BeautifulSoup(html, "html.parser")


def prose(paragraph: Tag) -> str:
    """A paragraph's words: without code, links, parameter names and types."""
    copy = BeautifulSoup(str(paragraph), "html.parser")
    for code in copy.select("code, .sig, span.pre, a, strong, em"):
        code.decompose()
    return " ".join(copy.get_text().split())


# The field that holds a type, not a sentence (Sphinx's word for it).
RETURN_TYPE = ("Return type", "返回类型")


def docstring_paragraphs(page: BeautifulSoup) -> list[Tag]:
    """The paragraphs of the API entries, the return types aside."""
    found = []
    for paragraph in page.select("article dl.py > dd p"):
        field = paragraph.find_parent("dd", class_=re.compile("field-"))
        name = field.find_previous_sibling("dt") if field else None
        if name is not None and name.get_text().strip(" :") in RETURN_TYPE:
            continue
        if paragraph.get_text(strip=True):
            found.append(paragraph)
    return found


def untranslated(output: str, page: str) -> list[str]:
    """The warnings of the zh build about ``page``'s messages (catalogs.py):
    untranslated, fuzzy, or a translation whose markup did not render."""
    on_page = re.compile(rf"on page reference/{page}\b")
    return [
        line
        for line in output.splitlines()
        if (
            on_page.search(line)
            and ("untranslated message" in line or "did not render" in line)
        )
        or ("fuzzy" in line and f"reference/{page}.po" in line)
    ]


def test_no_message_of_the_api_pages_is_untranslated(outputs: dict[str, str]):
    output = outputs["zh_CN"]
    found = [line for page in api_pages() for line in untranslated(output, page.stem)]
    assert not found, "\n".join(found)


def test_the_docstrings_read_in_chinese(site: Path, outputs: dict[str, str]):
    problems, pages_checked = [], 0
    for page in api_pages():
        paragraphs = docstring_paragraphs(soup(site, "zh_CN", page))
        assert len(paragraphs) >= 3, page.name
        cjk = latin = 0
        for paragraph in paragraphs:
            text = prose(paragraph)
            cjk += len(HAN_CHARACTER.findall(text))
            latin += sum(len(w) for w in LATIN_WORD.findall(text))
            if LATIN_WORD.search(text) and not han(text):
                problems.append(f"{page.stem}: English: {text[:100]!r}")
        # Chinese needs about half as many characters as English letters.
        if cjk < 2 * latin:
            problems.append(f"{page.stem}: {cjk} Chinese characters, {latin} letters")
        pages_checked += 1
    assert pages_checked == len(api_pages())
    assert not problems, "\n".join(problems)


def test_the_code_is_not_translated(site: Path, outputs: dict[str, str]):
    for page in api_pages():
        en, zh = soup(site, "en", page), soup(site, "zh_CN", page)
        for selector in ("article div.doctest pre", "article dl.py > dt em.sig-param"):
            english = [" ".join(e.get_text().split()) for e in en.select(selector)]
            chinese = [" ".join(e.get_text().split()) for e in zh.select(selector)]
            assert english == chinese, (page.stem, selector)
        assert en.select("article div.doctest pre") or page.stem == "expect"


def test_a_changed_docstring_fails_the_gate(site: Path, outputs: dict[str, str]):
    module, first_line = EDITED
    source = site / "src" / "autograd_notes" / module
    text = source.read_text(encoding="utf-8")
    assert first_line in text
    source.write_text(text.replace(first_line, f"{first_line} {ADDED}"), "utf-8")
    try:
        output = build(site, "zh_CN")
    finally:
        source.write_text(text, "utf-8")
    # The warning quotes the paragraph as text (its first 100 characters).
    quoted = "Validate mask against weight and return it as a bool tensor. A sentence"
    found = untranslated(output, "masks")
    assert any("untranslated message" in line and quoted in line for line in found), (
        output[-3000:]
    )
    assert not untranslated(output, "freezing"), "another page went stale"
