"""The search page of each edition finds the pages that are about a term:
English terms on the English edition, Chinese ones on the Chinese edition
(whose index Sphinx splits into words with jieba at build time; the browser
searches it offline)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import harness
import pytest
import webcheck
from autograd_site.cjk import han
from bs4 import BeautifulSoup
from playwright.sync_api import BrowserContext

TERMS = ["retain_graph", "leaf", "detach"]

# Chinese terms -> pages a reader searching for them must be offered, beyond
# those whose title holds the term: the tutorial that is about it.
ZH_TERMS = {
    "叶子": ["tutorials/02_leaf_tensors.html"],  # leaf
    "计算图": ["tutorials/03_grad_fn_and_the_graph.html"],  # computation graph
    # backpropagation: the tutorial on backward through several losses, and the
    # explanation of what backward does (saved tensors, a second backward)
    "反向传播": ["tutorials/07_several_losses.html", "explanations/mental-model.html"],
}
GLOSSES = {"叶子": "leaf", "计算图": "graph", "反向传播": "backprop"}  # test ids
# The page about a term is among the first results after those whose title
# holds the term (they rank first: see test_a_matching_title_ranks_first).
TOP = 5

CASES = [pytest.param("en", term, id=f"en-{term}") for term in TERMS] + [
    pytest.param("zh_CN", term, id=f"zh_CN-{GLOSSES[term]}") for term in ZH_TERMS
]


def search_index(site: Path) -> dict[str, list[str]]:
    """The docnames and titles of Sphinx's search index."""
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    data = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    return {"docnames": data["docnames"], "titles": data["titles"]}


def _words(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower())


def expected_pages(site: Path, term: str) -> list[str]:
    """Indexed pages whose title or file name carries the term: a reader who
    searches for it must be offered them (e.g. leaf -> 02_leaf_tensors.html).
    Chinese has no spaces between words: there, the title contains the term."""
    index = search_index(site)
    wanted = f" {_words(term).strip()} "
    pages = []
    for docname, title in zip(index["docnames"], index["titles"], strict=True):
        name = docname.rpartition("/")[2]
        if han(term):
            found = term in title
        else:
            found = wanted in f" {_words(title)} " or wanted in f" {_words(name)} "
        if found:
            pages.append(f"{docname}.html")
    return pages


@pytest.mark.parametrize(("edition", "term"), CASES)
def test_search_finds(
    context: BrowserContext,
    edition_url: str,
    edition_site: Path,
    edition: str,
    term: str,
):
    results, summary = webcheck.search(context, edition_url, term)
    assert results, f"searching {term!r} found nothing"
    if edition != "en":  # the page speaks the edition's language
        assert han(summary), f"the search summary is {summary!r}"
    missing = [p for p in results if not (edition_site / p).is_file()]
    assert missing == [], f"search results that are not pages: {missing}"
    about = [
        p
        for p in results
        if term.lower()
        in harness.article_text((edition_site / p).read_text(encoding="utf-8")).lower()
    ]
    assert about, f"no result of {term!r} has the term in its body: {results}"
    for page in expected_pages(edition_site, term):
        assert page in results, f"searching {term!r} does not offer {page}: {results}"
    first = TOP + len(expected_pages(edition_site, term))
    for page in ZH_TERMS.get(term, []):
        assert page in results[:first], (
            f"searching {term!r} does not offer {page} in the first {first}: {results}"
        )


# A query -> the pages one of which must be its first result: the page whose
# title (or file name) holds it, before pages that merely use its words.
FIRST = [
    pytest.param("en", "leaf tensor", ["tutorials/02_leaf_tensors.html"], id="en"),
    pytest.param(
        "zh_CN",
        "叶子张量",
        ["tutorials/02_leaf_tensors.html", "reference/glossary.html"],
        id="zh_CN",
    ),
]


@pytest.mark.parametrize(("edition", "query", "wanted"), FIRST)
def test_a_matching_title_ranks_first(
    context: BrowserContext, edition_url: str, query: str, wanted: list[str]
):
    results, _ = webcheck.search(context, edition_url, query)
    assert len(results) > 5, f"searching {query!r}: too few results to rank"
    assert results[0] in wanted, f"searching {query!r} ranks first {results[:3]}"


# PyTorch names, as a reader types them: searching one offers every page that
# uses it (in its code or its prose), in both editions.
TORCH_NAMES = ["autograd.grad", "torch.no_grad", "nn.Linear"]
# How many of the first results must quote their page (all of them do).
QUOTED = 10

SNIPPETS_JS = """() => Array.from(
  document.querySelectorAll('#search-results ul.search li'),
  li => [li.querySelector('a').href,
         (li.querySelector('p.context') || {}).textContent || '',
         li.querySelector(':scope > span') !== null]
)"""

QUOTES_LOADED_JS = """() => Array.from(
  document.querySelectorAll('#search-results ul.search li'),
).every(li => li.querySelector(':scope > span, p.context') !== null)"""


def pages_using(edition_site: Path, name: str) -> list[str]:
    """The indexed pages whose article holds ``name`` as a name (not part of
    a longer one)."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    found = []
    for docname in search_index(edition_site)["docnames"]:
        page = f"{docname}.html"
        text = harness.article_text((edition_site / page).read_text(encoding="utf-8"))
        if pattern.search(text) or pattern.search(text.replace(" ", "")):
            found.append(page)
    return found


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def quotable_text(markup: str) -> str:
    """The article's text as a search result may quote it (no ¶ links, code
    copy buttons, launch bar, scripts or styles), without white space."""
    article = BeautifulSoup(markup, "html.parser").select_one("article.bd-article")
    assert article is not None
    for element in article.select(".headerlink, .copybtn, .launch-bar, script, style"):
        element.decompose()
    return _squeeze(article.get_text())


def snippets(
    context: BrowserContext, edition_url: str, query: str
) -> list[tuple[str, str, bool]]:
    """(href, snippet, described) of each result the search page lists for ``query``."""
    page, visit = harness.open_page(context, edition_url + "search.html?q=" + query)
    # Sphinx lists each result at once and fetches its page for the quote
    # afterwards, so "Search finished" comes before the quotes do: wait until
    # every result is either described or quoted.
    page.wait_for_function(
        "() => { const s = document.querySelector('#search-results .search-summary');"
        " return s !== null && s.textContent.trim() !== ''; }",
        timeout=20_000,
    )
    try:
        page.wait_for_function(QUOTES_LOADED_JS, timeout=20_000)
    except Exception as error:  # playwright's TimeoutError
        unquoted = [
            href
            for href, quote, described in page.evaluate(SNIPPETS_JS)
            if not described and not quote
        ]
        raise AssertionError(
            f"searching {query!r}: no quote came in 20 s for {unquoted}"
        ) from error
    items: list[tuple[str, str, bool]] = page.evaluate(SNIPPETS_JS)
    page.close()
    assert visit.problems() == []
    return items


@pytest.mark.parametrize("name", TORCH_NAMES)
def test_search_finds_torch_names_and_quotes_the_page(
    context: BrowserContext, edition_url: str, edition_site: Path, name: str
):
    results, _ = webcheck.search(context, edition_url, name)
    using = pages_using(edition_site, name)
    assert using, f"no page uses {name!r}: the check would be empty"
    missing = [page for page in using if page not in results]
    assert missing == [], f"searching {name!r} does not offer {missing}"
    # What each result quotes is the text of its page's article: no header
    # buttons, colour-mode switch or table of contents around it.
    items = snippets(context, edition_url, name)
    assert len(items) >= min(QUOTED, len(results))
    # An object (a function of ours, a module) is listed with its description
    # instead of a quote, as Sphinx lists objects; every page is quoted.
    pages = [(href, snippet) for href, snippet, described in items if not described]
    assert pages, f"searching {name!r} lists no page"
    for href, snippet in pages[:QUOTED]:
        path = href.removeprefix(edition_url).split("#")[0] or "index.html"
        article = quotable_text((edition_site / path).read_text(encoding="utf-8"))
        quoted = _squeeze(snippet).strip(".")
        assert quoted, f"searching {name!r}: {path} is listed without a quote"
        assert quoted in article, f"{path} is quoted as {snippet[:200]!r}"


# Terms in the title of executed pages, whose launch bar sits under the title: a
# quote from the start of such a page would run through the bar.
BAR_TERMS = [
    pytest.param("en", "leaf", id="en"),
    pytest.param("zh_CN", "叶子", id="zh"),
]


@pytest.mark.parametrize(("edition", "term"), BAR_TERMS)
def test_snippets_do_not_quote_the_launch_bar(
    context: BrowserContext, edition_url: str, edition_site: Path, term: str
):
    items = snippets(context, edition_url, term)
    with_bar = 0
    for href, snippet, _ in items:
        path = href.removeprefix(edition_url).split("#")[0] or "index.html"
        markup = (edition_site / path).read_text(encoding="utf-8")
        bar = BeautifulSoup(markup, "html.parser").select_one(".launch-bar")
        if bar is None or not snippet.strip():
            continue
        with_bar += 1
        labels = [_squeeze(span.get_text()) for span in bar.select("span")]
        quoted = [label for label in labels if label and label in _squeeze(snippet)]
        assert quoted == [], f"{path} is quoted with its launch bar: {snippet[:200]!r}"
    assert with_bar >= 2, "no quoted result has a launch bar: the check is empty"
