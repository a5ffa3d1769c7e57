"""Comments in code are translated like prose (``autograd_site/codecomments.py``;
finding and translating them: ``test_comments.py``).

* The :class:`code_comment` node carries its comment into the catalogs and
  writes the translation into the code block before it.
* English comments on a built page are counted (the check that there are none).
* (slow) In a throw-away site: the comments reach the catalogs with their
  page's location; an untranslated or outdated comment fails the zh build,
  naming it and its page; a translated one is on the zh page and in the zh
  ``.py`` and ``.ipynb``; the English edition is unchanged.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po
from docutils import nodes
from sphinx_gallery.py_source_parser import split_code_and_text_blocks

ROOT = Path(__file__).resolve().parents[2]
import sitebuild  # noqa: E402
from autograd_site.cjk import BREAKABLE  # noqa: E402
from autograd_site.codecomments import code_comment, code_syntax  # noqa: E402
from autograd_site.comments import (  # noqa: E402
    PRAGMAS,
    find_comments,
    translate_comments,
    without_comments,
)
from test_comments import code_tokens  # noqa: E402  (the code, as tokens)

# -- Counting the comments left in English on built pages ------------------------

HAN = re.compile(f"[{BREAKABLE}]")
ENGLISH_WORD = re.compile(r"[A-Za-z]{2,}(?:['-][A-Za-z]+)*")
# conf.py's last lines for a site built with every feature but this one.
WITHOUT_CODECOMMENTS = """
from autograd_site import FEATURES
extensions.remove("autograd_site")
extensions += [f"autograd_site.{name}" for name in FEATURES if name != "codecomments"]
"""


def is_english(comment: str) -> bool:
    """A comment with no CJK character and at least two English words
    (two letters or more; ``x.grad`` or ``loss.backward()`` is no word)."""
    if HAN.search(comment) or PRAGMAS.match(comment.strip()):
        return False
    words = [w.strip("\"'()[]{},.;:!?") for w in comment.lstrip("#").split()]
    return sum(1 for w in words if ENGLISH_WORD.fullmatch(w)) >= 2


def english_comments(html: str) -> list[str]:
    """The English comments in the code of a built page.

    Comments are what Pygments marks ``c1``, ``c``, ``ch`` or ``cm`` in a
    ``div.highlight``. API docstrings (object descriptions) are English in
    both editions and not counted.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    found = []
    for span in soup.select(
        "div.highlight span.c1, div.highlight span.c, "
        "div.highlight span.ch, div.highlight span.cm"
    ):
        if span.find_parent("dl", class_="py") is None and is_english(span.get_text()):
            found.append(span.get_text())
    return found


def english_comments_on_site(outdir: Path) -> dict[str, list[str]]:
    """Page (path under ``outdir``) -> its English comments, for every page
    with any. Sphinx's own folders (``_modules``: source listings, ...) and
    other editions' folders below ``outdir`` are not pages of this one."""
    report = {}
    for page in sorted(outdir.rglob("*.html")):
        rel = page.relative_to(outdir)
        if (
            any(part.startswith("_") for part in rel.parts)
            or (outdir / rel.parts[0] / "_static").is_dir()
        ):
            continue
        found = english_comments(page.read_text(encoding="utf-8"))
        if found:
            report[rel.as_posix()] = found
    return report


# -- The node ------------------------------------------------------------------------


def section_with_code(code: str) -> tuple[nodes.section, nodes.literal_block]:
    block = nodes.literal_block(code, code, language="python")
    section = nodes.section()
    section += block
    return section, block


def test_the_node_carries_its_comment_and_translates_its_block() -> None:
    code = "x = 1  # one\n# two\ny = 2  # one\n"
    section, block = section_with_code(code)
    comments = [
        code_comment(message=c.message, syntax="python") for c in find_comments(code)
    ]
    section.extend(comments)
    assert [c.extract_original_messages() for c in comments] == [
        ["one"],
        ["two"],
        ["one"],
    ]
    assert comments[1].astext() == "two"  # what an untranslated warning names
    assert all(c.block() is block for c in comments)

    comments[0].apply_translated_message("one", "一")
    comments[1].apply_translated_message("two", "二")
    translated = "x = 1  # 一\n# 二\ny = 2  # 一\n"
    assert block.astext() == block.rawsource == translated
    assert comments[0]["translated"]
    assert "translated" not in comments[2]  # Locale marks that one


def test_which_code_blocks_have_translatable_comments() -> None:
    def block(language: str | None = None, **attributes: object) -> nodes.literal_block:
        node = nodes.literal_block("x", "x", **attributes)
        if language is not None:
            node["language"] = language
        return node

    assert code_syntax(block("python")) == "python"
    assert code_syntax(block("Python")) == "python"  # sphinx-gallery's spelling
    assert code_syntax(block("ipython3")) == "python"
    assert code_syntax(block("bash")) == "shell"
    assert code_syntax(block("none")) is None  # printed output
    assert code_syntax(block("python", translatable=False)) is None  # docstrings
    cell = nodes.container(nb_element="cell_code_source", classes=["cell_input"])
    cell += block("none")  # an executed page's code, read without executing it
    assert code_syntax(cell[0]) == "python"


def test_every_tutorial_comment_can_be_translated_in_the_download() -> None:
    """The zh .py download translates each code cell's comments as downloads.py
    does: every comment the page shows is translated, the code is unchanged."""
    from sphinx_gallery.py_source_parser import remove_ignore_blocks

    for script in sorted((ROOT / "gallery").glob("[0-9][0-9]_*.py")):
        _, blocks = split_code_and_text_blocks(str(script))
        for block in blocks:
            if block.type != "code":
                continue
            code = remove_ignore_blocks(block.content)
            zh = translate_comments(code, lambda m: f"中文{m}")
            assert without_comments(zh) == without_comments(code), script.name
            for comment in find_comments(zh):
                assert comment.message.startswith("中文"), (script.name, comment)


# -- Counting English comments on built pages ------------------------------------

PAGE = """
<div class="highlight-python notranslate"><div class="highlight"><pre>
<span class="n">x</span> <span class="c1"># a leaf made by hand</span>
<span class="c1"># 叶子张量：手动创建</span>
<span class="c1"># noqa: E402 type ignore</span>
<span class="c1"># x.grad</span>
<span class="c1"># loss.backward() twice</span>
<span class="sd">&quot;&quot;&quot;A docstring is a string&quot;&quot;&quot;</span>
</pre></div></div>
<div class="highlight-bash notranslate"><div class="highlight"><pre>
<span class="c"># both editions, into html</span>
</pre></div></div>
<dl class="py function"><dd><div class="doctest highlight-default notranslate">
<div class="highlight"><pre>
<span class="c1"># an API docstring stays English</span>
</pre></div>
</div></dd></dl>
<p># prose is not code</p>
"""


def test_english_comments_are_counted() -> None:
    assert english_comments(PAGE) == [
        "# a leaf made by hand",
        "# both editions, into html",
    ]


def test_english_comments_on_site(tmp_path: Path) -> None:
    (tmp_path / "tutorials").mkdir()
    (tmp_path / "tutorials" / "a.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "b.html").write_text("<p>nothing</p>", encoding="utf-8")
    (tmp_path / "_modules").mkdir()  # source listings: not pages
    (tmp_path / "_modules" / "c.html").write_text(PAGE, encoding="utf-8")
    assert english_comments_on_site(tmp_path) == {
        "tutorials/a.html": ["# a leaf made by hand", "# both editions, into html"]
    }


# -- (slow) A throw-away site in both editions --------------------------------------

EXAMPLE = '''\
"""
Comments in code
================

The code explains itself in comments.
"""

# %%
import torch

# A leaf made by hand: after backward, its gradient
# is in .grad, three for each element.
w = torch.ones(2, requires_grad=True)
label = "# not a comment"  # a hash inside a string is no comment
(w * 3).sum().backward()
print(w.grad, label)


def total(*args):  # *args gathers the arguments
    return sum(args)

# %%
# Exercises
# ---------
#
# **1. Predict.** What does a second backward add to ``w.grad``?
#
# **Solution**

# %%
(w * 3).sum().backward()
print(w.grad)  # backward adds three again: the gradients accumulate
'''

PAGE_CELL = """
```{code-cell} python
total = 1 + 1  # two numbers added together
print(total)
```
"""

CHINESE = {
    "A leaf made by hand: after backward, its gradient is in .grad, "
    "three for each element.": "手动创建的叶子张量：反向传播之后，"
    "它的梯度在 .grad 中，每个元素都是三。",
    "a hash inside a string is no comment": "字符串里的井号不是注释",
    # reST markup in a translated message would fail the build ("Inline
    # emphasis start-string without end-string"): a comment is code.
    "*args gathers the arguments": "*args 收集全部参数",
    "backward adds three again: the gradients accumulate": "反向传播再加三：梯度会累加",
    "two numbers added together": "两个数相加",
}
# The marker before a solution, as the catalogs translate it (exercises.py).
PROSE = {"**Solution**": "**答案**"}
SOLUTION = "backward adds three again: the gradients accumulate"
TUTORIAL_PO = Path("docs/locale/zh_CN/LC_MESSAGES/tutorials/02_comments.po")


def update_catalogs(site: Path) -> None:
    """``nox -s translations``: extract the messages, update the catalogs."""
    gettext = [sys.executable, "-m", "sphinx", "-q", "-b", "gettext"]
    gettext += ["docs", "docs/_build/gettext"]
    intl = [sys.executable, "-m", "sphinx_intl", "update", "-p", "docs/_build/gettext"]
    intl += ["-d", "docs/locale", "-l", "zh_CN", "-w", "76"]
    for cmd in (gettext, intl):
        result = subprocess.run(cmd, cwd=site, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def translate(site: Path, leave: str | None = None) -> list[str]:
    """Translate every message without a current translation but ``leave``:
    comments from ``CHINESE``, prose as "中文：" and the English (the
    solution marker as in the site's catalogs)."""
    done = []
    for po in sorted((site / "docs/locale/zh_CN/LC_MESSAGES").rglob("*.po")):
        with po.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            if (
                message.id
                and message.id != leave
                and (message.fuzzy or not message.string)
            ):
                chinese = {**CHINESE, **PROSE}.get(str(message.id))
                message.string = chinese or f"中文：{message.id}"
                message.flags.discard("fuzzy")
                message.previous_id = []
                done.append(str(message.id))
        with po.open("wb") as f:
            write_po(f, catalog, width=76)
    return done


def html(site: Path, edition: str, page: str) -> str:
    folder = sitebuild.OUTDIRS[edition]
    return (site / "docs/_build" / folder / page).read_text(encoding="utf-8")


def article(page: str) -> str:
    """The page's content (the head's links carry checksums of static files
    that a first build writes only after its pages)."""
    return page[page.index('<article class="bd-article">') : page.index("</article>")]


@pytest.mark.slow
def test_comments_are_translated_and_checked_in_the_zh_edition(
    tmp_path: Path,
) -> None:
    site = sitebuild.make_site(tmp_path)
    (site / "gallery" / "02_comments.py").write_text(EXAMPLE)
    page = site / "docs" / "page.md"
    page.write_text(page.read_text() + PAGE_CELL)
    pages = ["tutorials/02_comments.html", "page.html", "tutorials/01_example.html"]

    # (c) The English edition is the same with the extension as without it.
    conf = site / "docs" / "conf.py"
    with_extension = conf.read_text()
    conf.write_text(with_extension + WITHOUT_CODECOMMENTS)
    sitebuild.assert_passes(sitebuild.build(site))
    without = {name: article(html(site, "en", name)) for name in pages}
    conf.write_text(with_extension)
    sitebuild.assert_passes(sitebuild.build(site))
    assert {name: article(html(site, "en", name)) for name in pages} == without
    assert "# A leaf made by hand: after backward, its gradient" in without[pages[0]]

    # The comments reach their page's catalog, located at their code block.
    update_catalogs(site)
    with (site / TUTORIAL_PO).open("rb") as f:
        catalog = read_po(f)
    for english in list(CHINESE)[:3]:
        message = catalog.get(english)
        assert message is not None, english
        assert message.locations, english
        assert all("tutorials/02_comments.rst" in p for p, _ in message.locations)
    assert catalog.get("not a comment") is None
    assert catalog.get("# not a comment") is None

    # (b) One comment left untranslated: the zh build fails, naming it.
    done = translate(site, leave=SOLUTION)
    assert set(CHINESE) - {SOLUTION} <= set(done)
    zh = sitebuild.build(site, "zh_CN")
    sitebuild.assert_fails(
        zh, f"untranslated message on page tutorials/02_comments: {SOLUTION!r}"
    )

    # (a) Translated: on the zh pages, in the solution, and in the downloads.
    assert translate(site) == [SOLUTION]
    sitebuild.assert_passes(sitebuild.build(site, "zh_CN"))
    tutorial = html(site, "zh_CN", pages[0])
    for chinese in CHINESE.values():
        if chinese != "两个数相加":
            assert chinese[:8] in tutorial, chinese
    assert "两个数相加" in html(site, "zh_CN", "page.html")
    assert "*args 收集全部参数" in tutorial
    solution = tutorial[tutorial.index('<details class="solution">') :]
    solution = solution[: solution.index("</details>")]
    assert "反向传播再加三" in solution
    assert "sphx-glr-script-out" in solution  # the output is still collapsed with it
    assert "not a comment" in tutorial  # the string is code
    zh_site = site / "docs/_build/html/zh_CN"
    assert english_comments_on_site(zh_site) == {}
    assert "tutorials/02_comments.html" in english_comments_on_site(
        site / "docs/_build/html"
    )

    (script,) = (zh_site / "_downloads").rglob("02_comments.py")
    downloaded = script.read_text(encoding="utf-8")
    assert "# 手动创建的叶子张量" in downloaded
    assert "print(w.grad)  # 反向传播再加三：梯度会累加" in downloaded
    code = EXAMPLE[EXAMPLE.index("import torch") :]
    assert code_tokens(downloaded[downloaded.index("import torch") :]) == code_tokens(
        code
    )
    (notebook,) = (zh_site / "_downloads").rglob("02_comments.ipynb")
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert any("# 反向传播再加三：梯度会累加" in source for source in sources)

    # An outdated translation: the English comment changed.
    example = site / "gallery" / "02_comments.py"
    changed = SOLUTION.replace("again", "once more")
    example.write_text(EXAMPLE.replace(SOLUTION, changed))
    update_catalogs(site)
    with (site / TUTORIAL_PO).open("rb") as f:
        stale = read_po(f).get(changed)
    assert stale is not None
    assert stale.fuzzy
    zh = sitebuild.build(site, "zh_CN")
    sitebuild.assert_fails(
        zh,
        f"untranslated message on page tutorials/02_comments: {changed!r}",
        f"fuzzy (outdated) translation in {TUTORIAL_PO.relative_to('docs')}",
    )
