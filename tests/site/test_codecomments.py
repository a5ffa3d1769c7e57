"""Comments in code are translated like prose (``autograd_site/codecomments.py``).

* Comments are found by the tokenizer (a ``#`` in a string is no comment),
  one message per comment, a run of full-line comments one message; pragmas
  and comments without a word are left alone.
* A translation replaces a trailing comment in place and re-wraps a run no
  wider than the code (a Chinese character takes two columns), never inside a
  word or inline code; the code itself does not change.
* The :class:`code_comment` node carries its comment into the catalogs and
  writes the translation into the code block before it.
* English comments on a built page are counted (the check that there are none).
* (slow) In a throw-away site: the comments reach the catalogs with their
  page's location; an untranslated or outdated comment fails the zh build,
  naming it and its page; a translated one is on the zh page and in the zh
  ``.py`` and ``.ipynb``; the English edition is unchanged.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po
from docutils import nodes
from sphinx_gallery.py_source_parser import split_code_and_text_blocks

ROOT = Path(__file__).resolve().parents[2]
import sitebuild  # noqa: E402
from autograd_site.cjk import BREAKABLE, width  # noqa: E402
from autograd_site.codecomments import (  # noqa: E402
    PRAGMAS,
    CommentError,
    code_comment,
    code_syntax,
    find_comments,
    translate_comments,
    without_comments,
    wrap,
)

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


def messages(code: str, syntax: str = "python") -> list[str]:
    return [c.message for c in find_comments(code, syntax)]


def code_tokens(code: str) -> list[tuple[int, str]]:
    """The code as the tokenizer sees it, without comments and blank lines."""
    skip = {tokenize.COMMENT, tokenize.NL}
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return [(t.type, t.string) for t in tokens if t.type not in skip]


# -- Finding comments --------------------------------------------------------------


def test_a_hash_inside_a_string_is_not_a_comment() -> None:
    code = (
        's = "# not a comment"  # a real one\n'
        't = \'#\' + """\n'
        "# still inside the string\n"
        '"""\n'
        'u = f"{s!r}#{t}"  # after an f-string\n'
    )
    assert messages(code) == ["a real one", "after an f-string"]


def test_each_trailing_comment_is_one_message() -> None:
    code = "x = 1  # the first\ny = 2  # the second\n"
    found = find_comments(code)
    assert [c.message for c in found] == ["the first", "the second"]
    assert all(c.trailing for c in found)
    assert [(c.start, c.column) for c in found] == [(0, 7), (1, 7)]


def test_a_run_of_full_line_comments_is_one_message() -> None:
    code = (
        "# w = w - 0.1 * w.grad would be recorded,\n"
        "#   making w a non-leaf with a grad_fn\n"
        "with torch.no_grad():\n"
        "    # in place and unrecorded:\n"
        "    # w stays the same leaf\n"
        "    w -= 0.1 * w.grad  # a trailing comment is its own message\n"
    )
    found = find_comments(code)
    assert [c.message for c in found] == [
        "w = w - 0.1 * w.grad would be recorded, making w a non-leaf with a grad_fn",
        "in place and unrecorded: w stays the same leaf",
        "a trailing comment is its own message",
    ]
    assert [(c.start, c.end, c.column, c.trailing) for c in found] == [
        (0, 1, 0, False),
        (3, 4, 4, False),
        (5, 5, 23, True),
    ]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("# one\n\n# two", ["one", "two"], id="blank-line"),
        pytest.param("# one\n#\n# two", ["one", "two"], id="bare-hash"),
        pytest.param("# one\nx = 1\n# two", ["one", "two"], id="code"),
        pytest.param(
            "if x:\n    # one\n# two\n    pass", ["one", "two"], id="indentation"
        ),
        pytest.param("x = 1  # one\n# two", ["one", "two"], id="trailing-first"),
        pytest.param("# one\nx = 1  # two", ["one", "two"], id="trailing-next"),
    ],
)
def test_what_ends_a_run(code: str, expected: list[str]) -> None:
    assert messages(code) == expected


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: E402",
        "# type: ignore[attr-defined]",
        "# sphinx_gallery_start_ignore",
        "# sphinx_gallery_thumbnail_number = 2",
        "# %%",
        "#!/usr/bin/env python",
        "# ----------",
        "# (A)",
        "# 12 * w**2 * v = [12, 0, -108]",
    ],
)
def test_pragmas_and_comments_without_a_word_are_not_messages(comment: str) -> None:
    assert messages(f"x = 1  {comment}\n{comment}\ny = 2\n") == []


def test_a_pragma_splits_a_run() -> None:
    code = "# before\n# sphinx_gallery_start_ignore\n# after\n"
    assert messages(code) == ["before", "after"]


def test_a_console_session_keeps_its_prompts_out_of_the_messages() -> None:
    code = (
        ">>> x = 1  # one\n"
        ">>> # two,\n"
        ">>> # continued\n"
        ">>> for i in range(2):\n"
        "...     print(i)  # three\n"
        "0\n"
        "it's output, # not a comment\n"
    )
    found = find_comments(code)
    assert [c.message for c in found] == ["one", "two, continued", "three"]
    assert [c.trailing for c in found] == [True, False, True]


def test_shell_comments() -> None:
    code = (
        "pip install nox     # the build's one tool\n"
        "echo '# quoted' \"#too\" a#b  # a real one\n"
        "# full line\n"
        "# and its sequel\n"
    )
    assert messages(code, "shell") == [
        "the build's one tool",
        "a real one",
        "full line and its sequel",
    ]


def test_code_that_does_not_tokenize_raises() -> None:
    with pytest.raises(CommentError, match="tokenize"):
        find_comments('s = """never closed\n# in the string\n')


# -- Writing translations -------------------------------------------------------


def test_cjk_characters_take_two_columns() -> None:
    assert width("grad") == 4
    assert width("梯度") == 4
    assert width("w 的梯度，") == 10  # full-width punctuation too
    assert width("（）") == 4


def test_wrap_breaks_between_chinese_characters_and_at_spaces() -> None:
    text = (
        "调用 ``loss.backward()`` 之后，叶子张量 w_long_name 的梯度"
        "累加到 ``w.grad`` 中。"
    ) * 3
    for room in range(12, 60):
        lines = wrap(text, room)
        # A piece longer than the room sticks out; nothing else does.
        assert all(
            width(line) <= max(room, width("``loss.backward()``")) for line in lines
        ), (room, lines)
        # Nothing is lost but the spaces a line break replaced...
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
        # ...and no word or inline code is split.
        for line in lines:
            assert line.count("``") % 2 == 0, lines
            assert not line.startswith(("，", "。", "name", "_name")), lines
        assert "w_long_name" in " ".join(lines)


def test_a_trailing_comment_is_replaced_in_place() -> None:
    code = "x = torch.ones(2)  # a leaf\ny = x * 2  # not a leaf\n"
    lookup = {"a leaf": "叶子张量", "not a leaf": "非叶子张量：由运算得到"}.get
    assert translate_comments(code, lookup) == (
        "x = torch.ones(2)  # 叶子张量\ny = x * 2  # 非叶子张量：由运算得到\n"
    )


def test_a_run_is_rewrapped_with_its_indentation_no_wider_than_the_code() -> None:
    code = (
        "with torch.no_grad():\n"
        "    # w = w - 0.1 * w.grad would be recorded, making w a\n"
        "    # non-leaf with a grad_fn; in place, nothing is recorded\n"
        "    w -= 0.1 * w.grad\n"
        's = "# no comment"  # kept: no translation\n'
    )
    chinese = (
        "``w = w - 0.1 * w.grad`` 会被记录下来，使 w 成为一个带 ``grad_fn`` 的"
        "非叶子张量；原地更新则什么都不记录，w 仍是同一个叶子张量。"
    )
    english = find_comments(code)[0].message
    result = translate_comments(code, {english: chinese}.get)
    lines = result.split("\n")
    comment = [line for line in lines if line.startswith("    # ")]
    assert len(comment) > 2  # the Chinese needs more lines than the English
    assert all(width(line) <= max(map(width, code.split("\n"))) for line in lines)
    assert "".join(line[6:] for line in comment).replace(" ", "") == chinese.replace(
        " ", ""
    )
    assert all(line.count("``") % 2 == 0 for line in comment)
    # The code is the same code.
    assert code_tokens(result) == code_tokens(code)
    assert without_comments(result) == without_comments(code)
    assert 's = "# no comment"  # kept: no translation' in lines


def test_a_short_comment_in_narrow_code_still_gets_room() -> None:
    code = "x = 1\n# why\ny = x\n"
    result = translate_comments(code, {"why": "因为下一行要用到它，所以先算出来"}.get)
    assert result == "x = 1\n# 因为下一行要用到它，\n# 所以先算出来\ny = x\n"


def test_without_a_translation_nothing_changes() -> None:
    code = "x = 1  # one\n# two\n# three\n"
    assert translate_comments(code, {}.get) == code
    assert translate_comments(code, {"one": ""}.get) == code


def test_a_console_session_keeps_its_prompts() -> None:
    code = ">>> x = 1  # one\n>>> # two\n>>> y = x\n"
    lookup = {"one": "一", "two": "二"}.get
    assert translate_comments(code, lookup) == ">>> x = 1  # 一\n>>> # 二\n>>> y = x\n"


def test_shell_comments_are_translated() -> None:
    code = "nox -s docs   # both editions\nnox -s tests  # the tests\n"
    lookup = {"both editions": "两个版本", "the tests": "测试"}.get
    assert translate_comments(code, lookup, "shell") == (
        "nox -s docs   # 两个版本\nnox -s tests  # 测试\n"
    )


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
