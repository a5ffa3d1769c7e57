"""Read the site on every core (``-j N``): evenly, and without a race.

With ``-j N`` Sphinx reads the pages in contiguous chunks of the sorted page
list (``sphinx.util.parallel.make_chunks``). myst-nb executes a page while it
is read, and the executed pages (``explanations/``, ``how-to/``,
``reference/``) sit next to each other in that list: one process ran nearly
all of them while the others had nothing left to do. Neither Sphinx nor
myst-nb has an option to balance them. :func:`spread`
(``env-before-read-docs``, only when reading in parallel):

* reorders the pages before they are read, dealing the executed ones
  (:func:`executes`) out over the chunks like cards (:func:`deal`). The order
  only decides which process reads a page; the pages do not change;
* creates myst-nb's execution cache (a SQLite database) before the reading
  processes start: two of them executing their first page at once would
  both try to create it, and one would fail ("table settings already
  exists").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from myst_nb.core.read import is_myst_markdown_notebook
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.parallel import make_chunks


def executes(source: Path) -> bool:
    """Whether myst-nb executes the page ``source`` when it is read.

    myst-nb's own test (``file_format: mystnb`` in the front matter), so this
    agrees with the build; ``downloads`` uses it to find the pages that get a
    notebook.
    """
    return source.suffix == ".md" and is_myst_markdown_notebook(
        source.read_text("utf-8")
    )


def deal(docnames: list[str], executed: set[str], nproc: int) -> list[str]:
    """``docnames`` reordered so each read chunk holds its share of ``executed``.

    >>> deal(["a", "b", "c", "d"], {"a", "b"}, 2)
    ['a', 'c', 'b', 'd']
    """
    sizes = [len(chunk) for chunk in make_chunks(docnames, nproc)]
    chunks: list[list[str]] = [[] for _ in sizes]
    heavy = [d for d in docnames if d in executed]
    light = [d for d in docnames if d not in executed]
    for doc in heavy:  # to the chunk with room that holds the fewest so far
        room = [i for i, chunk in enumerate(chunks) if len(chunk) < sizes[i]]
        chunks[min(room, key=lambda i: len(chunks[i]))].append(doc)
    for chunk, size in zip(chunks, sizes, strict=True):
        chunk += [light.pop(0) for _ in range(size - len(chunk))]
    return [doc for chunk in chunks for doc in chunk]


def spread(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    if app.parallel <= 1 or len(docnames) < 2:
        return
    from jupyter_cache import get_cache

    get_cache(app.config.nb_execution_cache_path).db.dispose()
    executed = {doc for doc in docnames if executes(env.doc2path(doc))}
    docnames[:] = deal(docnames, executed, app.parallel)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("env-before-read-docs", spread)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
