"""Search in the zh_CN edition: Chinese words found, and search that runs.

Sphinx's Chinese search splits words with jieba. Jobs:

* :func:`configure_search` (``config-inited``) teaches jieba the site's terms
  (``locale/<lang>/terms.csv`` and a few compounds), so 计算图 or 反向传播 is
  one search word;
* :class:`SearchChineseWithEnglishStemmer` (the ``zh`` search language)
  names a stemmer the search page's script can find.
"""

from __future__ import annotations

import logging as stdlib_logging
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.search.zh import SearchChinese


def configure_search(app: Sphinx, config: Config) -> None:
    """Teach jieba the site's terms, so 计算图 or 反向传播 is one search word."""
    if not config.language.startswith("zh"):
        return
    import jieba

    jieba.setLogLevel(stdlib_logging.WARNING)
    terms = Path(app.srcdir, "locale", config.language, "terms.csv")
    words = {
        row.split(",")[1]
        for row in terms.read_text(encoding="utf-8").splitlines()[1:]
        if row.strip()
    }
    words |= {f"{w}张量" for w in ("叶子", "非叶子")} | {"叶子节点", "计算图"}
    build = Path(config.nb_execution_cache_path).parent
    build.mkdir(parents=True, exist_ok=True)
    userdict = build / f"jieba-{config.language}.txt"
    userdict.write_text("".join(f"{w} 100000\n" for w in sorted(words)), "utf-8")
    config.html_search_options = {**config.html_search_options, "dict": str(userdict)}


class SearchChineseWithEnglishStemmer(SearchChinese):
    """Sphinx's Chinese search, with a stemmer its page script can find.

    Sphinx 9.0's ``language_data.js`` for Chinese sets ``window.Stemmer =
    ChineseStemmer``, a name no script defines (sphinx-doc/sphinx#14229), so
    search breaks on every page. The Chinese splitter stems Latin words with
    the English stemmer, and that is the one it ships: name it.
    """

    language_name = "English"


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_search_language(SearchChineseWithEnglishStemmer)
    app.connect("config-inited", configure_search)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
