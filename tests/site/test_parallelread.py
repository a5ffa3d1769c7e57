"""autograd_site/parallelread.py deals the executed pages out over the read chunks."""

from __future__ import annotations

from pathlib import Path

import pytest
from autograd_site.parallelread import deal, executes
from sphinx.util.parallel import make_chunks

DOCS = Path(__file__).resolve().parents[2] / "docs"


def site_pages() -> tuple[list[str], set[str]]:
    """The site's hand-written pages (sorted, as Sphinx reads them), and which
    of them myst-nb executes."""
    pages = sorted(
        p.relative_to(DOCS).with_suffix("").as_posix()
        for p in DOCS.rglob("*.md")
        if not {"_build", "locale", "_templates", "inventories"}
        & set(p.relative_to(DOCS).parts)
    )
    executed = {d for d in pages if executes(DOCS / f"{d}.md")}
    return pages, executed


@pytest.mark.parametrize("nproc", [2, 3, 4, 8])
def test_every_chunk_gets_its_share(nproc: int) -> None:
    pages, executed = site_pages()
    assert len(executed) >= 5  # the site executes pages; this test means something
    before = [len(executed & set(c)) for c in make_chunks(pages, nproc)]
    order = deal(pages, executed, nproc)
    assert sorted(order) == pages  # every page once, nothing else
    chunks = make_chunks(order, nproc)
    counts = [len(executed & set(c)) for c in chunks]
    # As even as the chunks' sizes allow: a chunk with fewer executed pages
    # than another by two or more is full of them (make_chunks may end with
    # a chunk of one page).
    for count, chunk in zip(counts, chunks, strict=True):
        assert count >= max(counts) - 1 or count == len(chunk), (counts, chunks)
    assert max(counts) <= max(before)


def test_fewer_pages_than_cores() -> None:
    assert sorted(deal(["a", "b", "c"], {"b", "c"}, 8)) == ["a", "b", "c"]
