"""The zh_CN edition: complete catalogs, one term list, nothing stale.

* Every page has a catalog and every catalog passes ``check_catalogs.py``.
* The term list parses, and the checks it drives flag what they should.
* ``translation.py`` rewrites a tutorial's text cells and keeps its code.
* (slow) In a throw-away site: a translation goes stale when its English
  changes, and the zh build then fails, naming the message and the page,
  until the catalog is updated and the message translated again.
"""

from __future__ import annotations

import ast
import csv
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from babel.messages.catalog import Message
from babel.messages.pofile import read_po, write_po
from sphinx_gallery.py_source_parser import split_code_and_text_blocks

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LOCALE = DOCS / "locale"
CATALOGS = LOCALE / "zh_CN" / "LC_MESSAGES"
CJK = re.compile(r"[\u4e00-\u9fff]")

# The minimal site of test_strict_build.py, and translation.py as conf.py
# loads it (docs/_ext on sys.path).
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(DOCS / "_ext"))
import sitebuild  # noqa: E402
import translation  # noqa: E402


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


check_catalogs = _load(LOCALE / "check_catalogs.py")
TERMS = check_catalogs.load_terms()


# -- The repository's catalogs ---------------------------------------------------


def test_every_catalog_passes_the_checks() -> None:
    catalogs = sorted(CATALOGS.rglob("*.po"))
    assert catalogs, f"no catalogs in {CATALOGS}"
    report = check_catalogs.check(catalogs)
    assert not report, "\n".join(report)


# Catalogs of no page: "sphinx" holds the strings of docs/_templates and of
# pydata-sphinx-theme, "booktheme" those sphinx-book-theme lacks in Chinese.
NOT_PAGES = {"sphinx", "booktheme"}


def site_pages() -> set[str]:
    """Docnames of every page: docs/**/*.md, and each gallery tutorial."""
    pages = {"tutorials/index"}
    for md in DOCS.rglob("*.md"):
        rel = md.relative_to(DOCS)
        if not set(rel.parts[:-1]) & {"_build", "tutorials", "jupyter_execute"}:
            pages.add(rel.with_suffix("").as_posix())
    for script in (ROOT / "gallery").glob("[0-9][0-9]_*.py"):
        pages.add(f"tutorials/{script.stem}")
    return pages


def test_every_page_has_a_catalog_and_every_catalog_a_page() -> None:
    pages = site_pages()
    assert len(pages) > 20, pages
    catalogs = {
        po.relative_to(CATALOGS).with_suffix("").as_posix()
        for po in CATALOGS.rglob("*.po")
    } - NOT_PAGES
    assert not pages - catalogs, (
        f"pages without a catalog (run nox -s translations): {sorted(pages - catalogs)}"
    )
    assert not catalogs - pages, (
        f"catalogs of no page (delete them): {sorted(catalogs - pages)}"
    )


# -- The term list ---------------------------------------------------------------


def test_term_list_parses() -> None:
    with (LOCALE / "zh_CN" / "terms.csv").open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert reader.fieldnames == ["english", "chinese", "avoid"]
    assert len(rows) == len(TERMS) > 10
    english: list[str] = []
    for row in rows:
        assert row["english"].strip(), row
        assert row["chinese"].strip(), row
        assert None not in row, f"extra column in {row}"
        assert CJK.search(row["chinese"]), row
        english += row["english"].split("/")
    duplicates = {word for word in english if english.count(word) > 1}
    assert not duplicates, f"English terms listed twice: {duplicates}"


def test_no_agreed_term_contains_an_avoided_one() -> None:
    """Otherwise using the agreed term would itself be flagged."""
    for term in TERMS:
        for other in TERMS:
            for avoided in other.avoid:
                assert avoided not in term.chinese, (term, other)
        assert (
            check_catalogs.problems(
                f"A {term.english[0]} here.", f"这里是{term.chinese}。", TERMS
            )
            == []
        ), term


def test_a_good_translation_passes() -> None:
    english = (
        "After a backward pass the gradient of every leaf is in ``.grad``; "
        "see {doc}`the glossary <reference/glossary>` and :math:`v^\\top J`."
    )
    chinese = (
        "反向传播之后，每个叶子张量的梯度都在 ``.grad`` 中；"
        "参见 {doc}`术语表 <reference/glossary>` 和 :math:`v^\\top J`。"
    )
    assert check_catalogs.problems(english, chinese, TERMS) == []


@pytest.mark.parametrize(
    ("english", "chinese", "expected"),
    [
        pytest.param(
            "Every leaf holds its gradient.",
            "每个叶节点都持有自己的梯度。",
            "use '叶子', not '叶节点'",
            id="avoided-alternative",
        ),
        pytest.param(
            "Every leaf holds its gradient.",
            "每个叶子都持有自己的斜率。",
            "use '梯度', not '斜率'",
            id="avoided-alternative-2",
        ),
        pytest.param(
            "The gradient flows back to the input.",
            "它流回输入。",
            "term 'gradient' must be '梯度'",
            id="agreed-term-missing",
        ),
        pytest.param(
            "Call ``loss.backward()`` once.",
            "调用一次 ``loss.backward`` 。",
            "inline code differs: missing ['``loss.backward()``'], "
            "extra ['``loss.backward``']",
            id="inline-code-changed",
        ),
        pytest.param(
            "Call ``loss.backward()`` once.",
            "调用一次 loss.backward()。",
            "inline code differs",
            id="inline-code-dropped",
        ),
        pytest.param(
            "See {doc}`tutorials/index`.",
            "参见 {doc}`tutorials/overview`。",
            "roles differ: missing ['{doc}`tutorials/index`'], "
            "extra ['{doc}`tutorials/overview`']",
            id="role-target-changed",
        ),
        pytest.param(
            "Read {ref}`the glossary <glossary>`.",
            "阅读 {ref}`术语表 <terms>`。",
            "roles differ",
            id="titled-role-target-changed",
        ),
        pytest.param(
            "Call ``loss.backward()`` once.",
            "调用``loss.backward()``一次。",
            "inline markup touches a Chinese character or bracket",
            id="markup-touches-chinese",
        ),
        pytest.param(
            "A *leaf* tensor.",
            "一个*叶子*张量。",
            "inline markup touches a Chinese character or bracket",
            id="emphasis-touches-chinese",
        ),
        pytest.param(
            "A tensor with a gradient.",
            "A tensor with a gradient.",
            "no Chinese in the translation",
            id="left-in-english",
        ),
        pytest.param("A tensor.", "", "no translation", id="empty"),
    ],
)
def test_a_bad_translation_is_flagged(
    english: str, chinese: str, expected: str
) -> None:
    found = check_catalogs.problems(english, chinese, TERMS)
    assert any(expected in problem for problem in found), found


def test_fix_spacing_makes_touching_markup_pass() -> None:
    english = "Call ``loss.backward()`` once on a *leaf* tensor."
    touching = "对*叶子*张量调用一次``loss.backward()``。"
    fixed = check_catalogs.fix_spacing(touching)
    assert fixed == "对 *叶子* 张量调用一次 ``loss.backward()``。"
    assert check_catalogs.problems(english, fixed, TERMS) == []


def test_a_titled_role_may_translate_its_title() -> None:
    english = ":ref:`Go to the end <sphx_glr_download_x.py>` to download the code."
    chinese = ":ref:`跳到末尾 <sphx_glr_download_x.py>` 下载代码。"
    assert check_catalogs.problems(english, chinese, TERMS) == []


# -- translation.py: the translated .py download ------------------------------

# As in gallery/: the docstring escapes its backslashes (``\\top`` in the file
# is ``\top`` to Python, and in the catalogs); comments do not.
SCRIPT = r'''"""
Vector-Jacobian products
========================

Autograd computes the *vector-Jacobian product* :math:`v^\\top J`, for a
vector :math:`v` that you pass.

.. math::

   v^\\top J = \\sum_i v_i \\nabla y_i

* A scalar needs no ``v``.
* A tensor needs one, of
  its own shape.
"""

# %%
# Scalars
# -------
# A scalar output is the common case: after ``loss.backward()`` every leaf
# with ``requires_grad=True`` has its gradient in ``.grad``.
#
# 1. Call ``backward()``.
# 2. Read ``.grad``.
#
# .. math::
#
#    \frac{\partial L}{\partial x}

import torch

x = torch.ones(2, requires_grad=True)
(x * 2).sum().backward()  # a comment in code stays English
print(x.grad)
'''

CHINESE = {
    "Vector-Jacobian products": "向量-雅可比积",
    "Autograd computes the *vector-Jacobian product* :math:`v^\\top J`, for a "
    "vector :math:`v` that you pass.": "自动微分计算 *向量-雅可比积* "
    ":math:`v^\\top J`，其中向量 :math:`v` 由你传入。",
    "A scalar needs no ``v``.": "标量不需要 ``v``。",
    "A tensor needs one, of its own shape.": "张量需要一个与它形状相同的 ``v``。",
    "Scalars": "标量",
    "A scalar output is the common case: after ``loss.backward()`` every leaf "
    "with ``requires_grad=True`` has its gradient in ``.grad``.": "标量输出最常见："
    "调用 ``loss.backward()`` 后，叶子张量的梯度在 ``.grad`` 中。",
    "Call ``backward()``.": "调用 ``backward()``。",
    "Read ``.grad``.": "读取 ``.grad``。",
}

EXPECTED = r'''"""
向量-雅可比积
=============

自动微分计算 *向量-雅可比积* :math:`v^\\top J`，其中向量 :math:`v` 由你传入。

.. math::

   v^\\top J = \\sum_i v_i \\nabla y_i

* 标量不需要 ``v``。
* 张量需要一个与它形状相同的 ``v``。
"""

# %%
# 标量
# ----
# 标量输出最常见：调用 ``loss.backward()`` 后，叶子张量的梯度在 ``.grad`` 中。
#
# 1. 调用 ``backward()``。
# 2. 读取 ``.grad``。
#
# .. math::
#
#    \frac{\partial L}{\partial x}

import torch

x = torch.ones(2, requires_grad=True)
(x * 2).sum().backward()  # a comment in code stays English
print(x.grad)
'''


def blocks(source: str, tmp_path: Path, name: str) -> list[tuple[str, str]]:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    _, found = split_code_and_text_blocks(str(path))
    return [(block.type, block.content) for block in found]


def test_translate_script_rewrites_text_and_keeps_code(tmp_path: Path) -> None:
    result = translation.translate_script(SCRIPT, CHINESE.__getitem__)
    assert result == EXPECTED
    # Headings are underlined to their width: a Chinese character takes two.
    assert translation._width("向量-雅可比积") == 13
    # It is still Python, its docstring is the translated reST (one backslash),
    # and the code is the English code.
    docstring = ast.get_docstring(ast.parse(result), clean=False)
    assert docstring is not None
    assert ":math:`v^\\top J`" in docstring
    assert "v^\\top J = \\sum_i v_i \\nabla y_i" in docstring
    english = blocks(SCRIPT, tmp_path, "en.py")
    chinese = blocks(result, tmp_path, "zh.py")
    assert [b for b in chinese if b[0] == "code"] == [
        b for b in english if b[0] == "code"
    ]
    texts = [content for kind, content in chinese if kind == "text"]
    assert len(texts) == 2
    assert all(CJK.search(text) for text in texts)


def test_translate_rst_wraps_chinese_without_breaking_markup() -> None:
    english = "Gradients accumulate.\nCall it twice and they add up."
    chinese = "梯度会累加到 ``.grad`` 中，" * 6 + "调用两次就相加。"
    lookup = {"Gradients accumulate. Call it twice and they add up.": chinese}
    lines = translation.translate_rst(english, lookup.__getitem__, 40).split("\n")
    assert len(lines) > 1
    # A closing mark never starts a line: it may stick out past the width.
    assert all(translation._width(line.rstrip("，。")) <= 40 for line in lines)
    # Breaks fall at spaces or between characters: nothing is added or lost.
    assert "".join(lines).replace(" ", "") == chinese.replace(" ", "")
    assert all(line.count("``") % 2 == 0 for line in lines)  # markup is whole
    assert not any(line.startswith(("，", "。")) for line in lines)
    # Without a width (the notebook's Markdown), a paragraph stays one line.
    assert translation.translate_rst(english, lookup.__getitem__) == chinese


def test_translate_rst_without_a_translation_raises() -> None:
    with pytest.raises(KeyError):
        translation.translate_rst(
            "Scalars\n-------\n\nNot in the catalog.", {}.__getitem__
        )


def test_translate_script_leaves_a_code_only_cell_alone() -> None:
    code_only = '"""\nScalars\n=======\n"""\n\n# %%\nprint(1)\n'
    result = translation.translate_script(code_only, CHINESE.__getitem__)
    assert result == '"""\n标量\n====\n"""\n\n# %%\nprint(1)\n'


# -- (slow) A translation cannot go stale ---------------------------------------

OLD = "It prints, and shows an expected warning by catching it."
NEW = "It prints, and shows the expected warning by catching it."
TUTORIAL_PO = Path("docs/locale/zh_CN/LC_MESSAGES/tutorials/01_example.po")


def update_catalogs(site: Path, *options: str) -> None:
    """``nox -s translations``: extract the messages, update the catalogs."""
    gettext = [sys.executable, "-m", "sphinx", "-q", "-j", "auto", "-b", "gettext"]
    gettext += [*options, "docs", "docs/_build/gettext"]
    intl = [sys.executable, "-m", "sphinx_intl", "update", "-p", "docs/_build/gettext"]
    intl += ["-d", "docs/locale", "-l", "zh_CN", "-w", "76"]
    for cmd in (gettext, intl):
        result = subprocess.run(cmd, cwd=site, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def translate_catalogs(site: Path) -> list[str]:
    """Translate every message without a current translation, as a translator
    would: "中文：" before the English keeps its markup intact. Returns them."""
    done = []
    for po in sorted((site / "docs/locale/zh_CN/LC_MESSAGES").rglob("*.po")):
        with po.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            if message.id and (message.fuzzy or not message.string):
                message.string = f"中文：{message.id}"
                message.flags.discard("fuzzy")
                message.previous_id = []
                done.append(str(message.id))
        with po.open("wb") as f:
            write_po(f, catalog, width=76)
    return done


def message(site: Path, msgid: str) -> Message | None:
    with (site / TUTORIAL_PO).open("rb") as f:
        return read_po(f).get(msgid)


def assert_reused(zh: subprocess.CompletedProcess[str]) -> None:
    """The zh build ran nothing: it reused what the English build executed."""
    assert "executed 0 out of 0 files" in zh.stdout, zh.stdout
    assert "after excluding 1 file that had previously been run" in zh.stdout
    assert "Executing" not in zh.stdout  # myst-nb: no page executed either


@pytest.mark.slow
def test_a_changed_paragraph_fails_the_zh_build_until_translated(
    tmp_path: Path,
) -> None:
    site = sitebuild.make_site(tmp_path)
    zh_html = site / "docs/_build/html/zh_CN/tutorials/01_example.html"

    # A fully translated site: both editions pass.
    english = sitebuild.build(site)
    sitebuild.assert_passes(english)
    assert "executed 1 out of 1" in english.stdout
    update_catalogs(site)
    done = translate_catalogs(site)
    assert {"A tiny example", OLD, "A page", "Tutorials"} <= set(done)
    zh = sitebuild.build(site, "zh_CN")
    sitebuild.assert_passes(zh)
    assert_reused(zh)
    assert "page.md: Using cached notebook" in zh.stdout
    assert f"中文：{OLD}" in zh_html.read_text(encoding="utf-8")

    # The English paragraph changes; the old translation no longer applies.
    example = site / "gallery" / "01_example.py"
    example.write_text(example.read_text().replace(OLD, NEW))
    english = sitebuild.build(site)
    sitebuild.assert_passes(english)
    zh = sitebuild.build(site, "zh_CN")
    untranslated = f"untranslated message on page tutorials/01_example: {NEW!r}"
    sitebuild.assert_fails(zh, untranslated, "locale/zh_CN/LC_MESSAGES/tutorials")
    assert_reused(zh)

    # nox -s translations: the message is now fuzzy, its old translation a
    # suggestion only. Still a failure, naming the message and the catalog.
    update_catalogs(site)
    stale = message(site, NEW)
    assert stale is not None
    assert stale.fuzzy
    assert stale.string == f"中文：{OLD}"
    assert message(site, OLD) is None
    report = check_catalogs.check([site / TUTORIAL_PO])
    assert any(NEW[:40] in line and "fuzzy" in line for line in report), report
    zh = sitebuild.build(site, "zh_CN")
    fuzzy = f"fuzzy (outdated) translation in {TUTORIAL_PO.relative_to('docs')}"
    sitebuild.assert_fails(zh, untranslated, f"{fuzzy}: {NEW!r}")

    # Translated: the zh edition passes, with the new text on the page and in
    # the download.
    assert translate_catalogs(site) == [NEW]
    assert check_catalogs.check([site / TUTORIAL_PO]) == []
    zh = sitebuild.build(site, "zh_CN")
    sitebuild.assert_passes(zh)
    assert_reused(zh)
    assert f"中文：{NEW}" in zh_html.read_text(encoding="utf-8")
    (script,) = (site / "docs/_build/html/zh_CN/_downloads").rglob("01_example.py")
    assert f"中文：{NEW}" in script.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_page_without_a_catalog_fails_the_zh_build(tmp_path: Path) -> None:
    """A page added after the last ``nox -s translations`` is all English."""
    site = sitebuild.make_site(tmp_path)
    no_run = ("-D", "plot_gallery=0")  # the tutorial: no need to run it here
    update_catalogs(site, *no_run)
    translate_catalogs(site)
    for catalog in (site / "docs/locale/zh_CN/LC_MESSAGES").glob("page.*"):
        catalog.unlink()
    zh = sitebuild.build(site, "zh_CN", *no_run)
    sitebuild.assert_fails(zh, "untranslated message on page page: 'A page'")


@pytest.mark.slow
def test_theme_strings_are_ours_in_a_clean_build(tmp_path: Path) -> None:
    """The header buttons use the site's booktheme.po even in a first build,
    before Sphinx has compiled any ``.mo``, and it wins over the theme's own
    catalog where both have a message ("Print to PDF")."""
    site = sitebuild.make_site(tmp_path)
    no_run = ("-D", "plot_gallery=0")
    update_catalogs(site, *no_run)
    translate_catalogs(site)
    ours = CATALOGS / "booktheme.po"
    (site / "docs/locale/zh_CN/LC_MESSAGES/booktheme.po").write_bytes(ours.read_bytes())
    assert not list((site / "docs/locale").rglob("*.mo"))
    sitebuild.assert_passes(sitebuild.build(site, "zh_CN", *no_run))
    page = (site / "docs/_build/html/zh_CN/page.html").read_text(encoding="utf-8")
    with ours.open("rb") as f:
        catalog = read_po(f)
    for english in ("Repository", "Open issue", "Print to PDF"):
        translation = catalog.get(english)
        assert translation is not None
        assert str(translation.string) in page, english
        assert f">{english}<" not in page, english
    assert "列印成 PDF" not in page  # the theme's own zh_CN (Taiwan's usage)
