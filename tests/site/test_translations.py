"""The zh_CN edition: complete catalogs, one term list, nothing stale.

* Every page has a catalog and every catalog passes ``check_catalogs.py``.
* The term list parses, and the checks it drives flag what they should.
* (slow) In a throw-away site: a translation goes stale when its English
  changes, and the zh build then fails, naming the message and the page,
  until the catalog is updated and the message translated again.
"""

from __future__ import annotations

import csv
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from babel.messages.catalog import Message
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LOCALE = DOCS / "locale"
CATALOGS = LOCALE / "zh_CN" / "LC_MESSAGES"

# The minimal site of test_strict_build.py, and downloads.py as conf.py
# loads it (docs/_ext is on pytest's pythonpath).
import sitebuild  # noqa: E402
from autograd_site.cjk import WIDE, han  # noqa: E402
from autograd_site.sitewords import say  # noqa: E402


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
# pydata-sphinx-theme, "booktheme" those sphinx-book-theme lacks in Chinese,
# "site" the words of our own code (settings, editions, downloads, figure legends).
NOT_PAGES = {"sphinx", "booktheme", "site"}


def site_pages() -> set[str]:
    """Docnames of every page: docs/**/*.md and *.rst, and each gallery tutorial."""
    pages = {"tutorials/index"}
    for md in [*DOCS.rglob("*.md"), *DOCS.rglob("*.rst")]:
        rel = md.relative_to(DOCS)
        # docs/inventories/README.md is excluded from the site (conf.py)
        skip = {"_build", "tutorials", "jupyter_execute", "inventories", "generated"}
        if not set(rel.parts[:-1]) & skip:
            pages.add(rel.with_suffix("").as_posix())
    for script in (ROOT / "gallery").glob("[0-9][0-9]_*.py"):
        pages.add(f"tutorials/{script.stem}")
    return pages


def test_every_exercise_marker_is_the_word_exercises_looks_for() -> None:
    """A tutorial's "**Solution**" paragraph is translated with site.po's word,
    which exercises.py finds on the page and in the notebook to collapse."""
    word = say("zh_CN", "Solution")
    found = 0
    for po in sorted((CATALOGS / "tutorials").glob("*.po")):
        with po.open("rb") as f:
            for message in read_po(f):
                if message.id == "**Solution**":
                    assert message.string == f"**{word}**", po.name
                    found += 1
    assert found >= 8  # one entry per tutorial that has exercises


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
        # Chinese, or a name kept as it is in English (Hessian).
        assert han(row["chinese"]) or row["chinese"] in row["english"].split("/"), row
        english += row["english"].split("/")
    duplicates = {word for word in english if english.count(word) > 1}
    assert not duplicates, f"English terms listed twice: {duplicates}"


def test_term_agreed_is_never_flagged() -> None:
    """Using an agreed term is never flagged, not even where it contains a
    word another row avoids (操作指南 holds 操作, 激活检查点 holds 检查点)."""
    for term in TERMS:
        assert (
            check_catalogs.problems(
                f"A {term.english[0]} here.", f"这里是{term.chinese}。", TERMS
            )
            == []
        ), term
    assert any("操作" in term.avoid for term in TERMS)
    assert any("检查点" in term.avoid for term in TERMS)


@pytest.mark.parametrize(
    ("english", "chinese", "expected"),
    [
        pytest.param(
            "An in-place operation.",
            "一次原地操作。",
            "use '运算', not '操作'",
            id="operation-not-caozuo",
        ),
        pytest.param(
            "An in-place operation.",
            "一次原地修改。",
            "term 'operation' must be '运算'",
            id="operation-missing",
        ),
        pytest.param(
            "Gradients stop there.",
            "梯度在这里被截断。",
            "use '梯度阻断' (stop-gradient), '钳制' (clamp) or '梯度裁剪' "
            "(gradient clipping) by meaning, not '截断'",
            id="jieduan-three-meanings",
        ),
        pytest.param(
            "A stop-gradient inside a product.",
            "乘积中的梯度截断。",
            "term 'stop-gradient' must be '梯度阻断'",
            id="stop-gradient",
        ),
        pytest.param(
            "This square root clamps its input.",
            "这个平方根对输入做了截断。",
            "term 'clamp' must be '钳制'",
            id="clamp",
        ),
        pytest.param(
            "Frozen entries do not feed gradient clipping.",
            "被冻结的元素不计入梯度剪裁。",
            "use '梯度裁剪', not '梯度剪裁'",
            id="gradient-clipping",
        ),
        pytest.param(
            "A layer loaded from a checkpoint.",
            "一个从检查点加载的层。",
            "use '激活检查点' (activation checkpointing) or '模型检查点文件' "
            "(model checkpoint) by meaning, not '检查点'",
            id="checkpoint-two-meanings",
        ),
        pytest.param(
            "Without checkpointing, each block keeps its input.",
            "不使用检查点时，每个块都保留它的输入。",
            "term 'activation checkpointing' must be '激活检查点'",
            id="activation-checkpointing",
        ),
        pytest.param(
            "The Hessian is diagonal.",
            "海森矩阵是对角矩阵。",
            "use 'Hessian', not '海森'",
            id="hessian-kept",
        ),
        pytest.param(
            "Add it to the critic's loss.",
            "把它加到判别器的损失中。",
            "term 'critic' must be '评判器'",
            id="critic",
        ),
        pytest.param(
            "Fold the batch dimensions.",
            "把批维度合并。",
            "use '批量维度', not '批维度'",
            id="batch-dimension",
        ),
        pytest.param(
            "Backward frees the saved tensors.",
            "反向传播会释放已保存张量。",
            "term 'saved tensor' must be '保存的张量'",
            id="saved-tensors",
        ),
        pytest.param(
            "The version counter stops it.",
            "版本号会拦下它。",
            "term 'version counter' must be '版本计数器'",
            id="version-counter",
        ),
    ],
)
def test_term_misused_is_flagged(english: str, chinese: str, expected: str) -> None:
    found = check_catalogs.problems(english, chinese, TERMS)
    assert any(expected in problem for problem in found), found


def test_term_rows_of_the_issue() -> None:
    """The terms that used to be mixed up each have one row."""
    agreed = {term.english[0]: term.chinese for term in TERMS}
    assert agreed["operation"] == "运算"
    assert agreed["how-to guide"] == "操作指南"
    assert agreed["stop-gradient"] == "梯度阻断"
    assert agreed["clamp"] == "钳制"
    assert agreed["gradient clipping"] == "梯度裁剪"
    assert agreed["activation checkpointing"] == "激活检查点"
    assert agreed["model checkpoint"] == "模型检查点文件"
    assert agreed["Hessian"] == "Hessian"
    assert agreed["Hessian-vector product"] == "Hessian 向量积"
    assert agreed["batch dimension"] == "批量维度"
    assert agreed["saved tensor"] == "保存的张量"
    assert agreed["version counter"] == "版本计数器"
    assert "critic" in agreed


# -- One translation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("syntax", "english", "chinese"),
    [
        pytest.param(
            "rst",
            "After a backward pass the gradient of every leaf is in ``.grad``; "
            "see :doc:`the glossary <reference/glossary>` and :math:`v^\\top J`.",
            "反向传播之后，每个叶子张量的梯度都在\\ ``.grad``\\ 中；"
            "参见\\ :doc:`术语表 <reference/glossary>`\\ 和 :math:`v^\\top J`。",
            id="rst",
        ),
        pytest.param(
            "myst",
            "After a backward pass the gradient of every leaf is in `.grad`; "
            "see {doc}`the glossary <reference/glossary>` and $v^\\top J$.",
            "反向传播之后，每个叶子张量的梯度都在`.grad`中；"
            "参见{doc}`术语表 <reference/glossary>`和 $v^\\top J$。",
            id="myst",
        ),
    ],
)
def test_a_good_translation_passes(syntax: str, english: str, chinese: str) -> None:
    assert check_catalogs.problems(english, chinese, TERMS, syntax) == []


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
            "调用一次\\ ``loss.backward``。",
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


def test_a_titled_role_may_translate_its_title() -> None:
    english = ":ref:`Go to the end <sphx_glr_download_x.py>` to download the code."
    chinese = ":ref:`跳到末尾 <sphx_glr_download_x.py>`\\ 下载代码。"
    assert check_catalogs.problems(english, chinese, TERMS) == []


# -- Spacing: inline markup next to Chinese text ------------------------------------

REST_SPACING = [
    # (as written, as reST needs it)
    (
        "对 *叶子* 张量调用一次 ``loss.backward()``。",
        r"对\ *叶子*\ 张量调用一次\ ``loss.backward()``。",
    ),
    (
        "对*叶子*张量调用一次``loss.backward()``。",
        r"对\ *叶子*\ 张量调用一次\ ``loss.backward()``。",
    ),
    ("是 **原地** 累加", r"是\ **原地**\ 累加"),
    ("用 ``x.grad`` （即梯度）", r"用\ ``x.grad``\ （即梯度）"),
    ("（ ``x`` ），``y`` ，", "（``x``），``y``，"),
    ("“ **原地** ”修改", "“**原地**”修改"),
    (
        "**2. 预测。** ``a.tanh()`` 保存什么？",
        r"**2. 预测**。``a.tanh()``\ 保存什么？",
    ),
    (
        "一个 *leaf* 张量，autograd ``x`` 和 ``y`` ok",
        r"一个\ *leaf*\ 张量，autograd ``x``\ 和\ ``y`` ok",
    ),
    ("直线\\ :math:`y`\\ 附近，:math:`x`\\ 的", "直线 :math:`y` 附近，:math:`x` 的"),
    ("**可微：**\\ 取梯度。", "**可微**：取梯度。"),
    (
        "其中 :math:`x` 是 :math:`D` （critic）",
        r"其中 :math:`x` 是 :math:`D`\ （critic）",
    ),
]
MYST_SPACING = [
    (
        "对 *叶子* 张量调用一次 `loss.backward()`。",
        "对*叶子*张量调用一次`loss.backward()`。",
    ),
    ("是 **原地** 累加", "是**原地**累加"),
    (r"是\ **原地**\ 累加", "是**原地**累加"),
    ("用 `x.grad` （即梯度）", "用`x.grad`（即梯度）"),
    ("在 **“原地”** 累加", "在“**原地**”累加"),
    ("**目标：** 训练一部分", "**目标**：训练一部分"),
    ("**摘要（上游）。** 在 2.13 中", "**摘要（上游）**。在 2.13 中"),
    ("参见 [文档](https://example.org/x) 。", "参见[文档](https://example.org/x)。"),
    ("一条 **边** `(node, input_nr)` 指明", "一条**边**`(node, input_nr)`指明"),
    (
        "见 {doc}`术语表 </reference/glossary>` 。",
        "见{doc}`术语表 </reference/glossary>`。",
    ),
    ("用 *autograd* 和 `x` 算", "用*autograd*和`x`算"),
    ("由 $y$ 决定，$x$ 。", "由 $y$ 决定，$x$ 。"),  # math is not touched
]
UNCHANGED = [
    # Badges and math keep their spaces to Chinese characters, Latin text its.
    ("rst", ":bdg-info-line:`教程` 可运行的脚本"),
    ("rst", "用 autograd 算 the *leaf* tensor's ``x.grad`` here"),
    ("rst", "参见 :math:`H` 的对角线"),
    ("myst", "{bdg-danger}`不成立` `retain_graph=True`保留"),
    ("myst", "the *leaf* tensor has `x.grad` set"),
]


def _render(text: str, syntax: str) -> str:
    """``text`` as HTML, parsed as the zh build parses a translation: by
    docutils (reST) or by myst-parser's markdown-it (MyST, the site's
    extensions)."""
    if syntax == "myst":
        from markdown_it.renderer import RendererHTML
        from myst_parser.config.main import MdParserConfig
        from myst_parser.parsers.mdit import create_md_parser

        config = MdParserConfig(
            enable_extensions={"colon_fence", "dollarmath", "deflist", "attrs_inline"}
        )
        return create_md_parser(config, RendererHTML).renderInline(text)
    from docutils.core import publish_parts

    settings = {"report_level": 5, "halt_level": 5, "output_encoding": "unicode"}
    parts = publish_parts(text, writer="html", settings_overrides=settings)
    return str(parts["fragment"])


TAG = r"</?(?:strong|em|code|tt)\b[^>]*>"


def _rendered_problems(html: str) -> list[str]:
    """Markup that did not render, and visible spaces between Chinese text and
    a <strong>, <em> or <code> (either side)."""
    found = []
    text = re.sub(r"<(?!/?(?:strong|em|code|tt)\b)[^>]+>", "", html)
    plain = re.sub(TAG, "", text)
    if re.search(r"\*|``|(?<![\w(])`", plain):
        found.append(f"markup left as text: {plain!r}")
    wide = f"[{WIDE}]"
    if re.search(rf"{wide}\s+(?:{TAG})+|(?:{TAG})+\s+{wide}", text):
        found.append(f"space next to Chinese: {text!r}")
    return found


@pytest.mark.parametrize(("written", "wanted"), REST_SPACING)
def test_fix_spacing_rst(written: str, wanted: str) -> None:
    """reST (the tutorials): no visible space, and ``\\ `` where docutils needs
    a separator; docutils renders the result with nothing between."""
    assert check_catalogs.fix_spacing(written, "rst") == wanted
    assert check_catalogs.fix_spacing(wanted, "rst") == wanted  # idempotent
    assert check_catalogs.spaced_markup(wanted, "rst") == []
    if ":math:" not in wanted:
        assert _rendered_problems(_render(wanted, "rst")) == []


@pytest.mark.parametrize(("written", "wanted"), MYST_SPACING)
def test_fix_spacing_myst(written: str, wanted: str) -> None:
    """MyST (the .md pages): no space and no backslash, and emphasis that
    CommonMark's flanking rules let open and close, as myst-parser renders it."""
    assert check_catalogs.fix_spacing(written, "myst") == wanted
    assert check_catalogs.fix_spacing(wanted, "myst") == wanted
    assert check_catalogs.spaced_markup(wanted, "myst") == []
    if "$" not in wanted:
        assert _rendered_problems(_render(wanted, "myst")) == []


@pytest.mark.parametrize(("syntax", "text"), UNCHANGED)
def test_fix_spacing_leaves_badges_math_and_latin_alone(syntax: str, text: str) -> None:
    assert check_catalogs.fix_spacing(text, syntax) == text


def test_spacing_as_written_before_did_not_render_right() -> None:
    """What the old fixer wrote shows spaces (both syntaxes); what it wrote
    without a space did not render in reST, nor emphasis at punctuation in MyST."""
    assert _rendered_problems(_render("是 **原地** 累加", "rst"))
    assert _rendered_problems(_render("是**原地**累加", "rst"))
    assert _rendered_problems(_render("是 **原地** 累加", "myst"))
    assert _rendered_problems(_render("在**“原地”**累加", "myst"))
    assert _rendered_problems(_render("**目标：**训练", "myst"))
    assert not _rendered_problems(_render("是**原地**累加", "myst"))


CALL = {"rst": "Call ``loss.backward()`` once.", "myst": "Call `loss.backward()` once."}


@pytest.mark.parametrize(
    ("syntax", "english", "chinese", "expected"),
    [
        ("rst", CALL["rst"], "调用``loss.backward()``一次。", "escaped space"),
        ("rst", "A *leaf* tensor.", "一个*叶子*张量。", "escaped space"),
        ("rst", CALL["rst"], "调用 ``loss.backward()`` 一次。", "escaped space"),
        ("myst", CALL["myst"], "调用 `loss.backward()` 一次。", "no backslash"),
        ("myst", CALL["myst"], "调用\\ `loss.backward()`\\ 一次。", "no backslash"),
        ("myst", "It *adds up*.", "它会**“累加”**起来。", "the inner edge"),
    ],
)
def test_spacing_problems_are_flagged(
    syntax: str, english: str, chinese: str, expected: str
) -> None:
    found = check_catalogs.problems(english, chinese, TERMS, syntax)
    assert any(expected in p for p in found), found
    fixed = check_catalogs.fix_spacing(chinese, syntax)
    assert check_catalogs.problems(english, fixed, TERMS, syntax) == []


def test_spacing_that_commonmark_needs_stays_and_is_reported() -> None:
    """Code at the edge of bold, next to a Chinese character: CommonMark opens
    ``**`` there only after a space. The fixer keeps it; the check asks for
    another wording."""
    fixed = check_catalogs.fix_spacing("在**`x`**中", "myst")
    assert fixed == "在 **`x`** 中"
    assert "<strong>" in _render(fixed, "myst")
    found = check_catalogs.problems("In **`x`**.", fixed, TERMS, "myst")
    assert any("a space stays" in p for p in found), found


def test_spacing_syntax_of_each_catalog() -> None:
    """Tutorials (sphinx-gallery writes .rst) are reST, the .md pages MyST."""
    syntax = {}
    for po in sorted(CATALOGS.rglob("*.po")):
        with po.open("rb") as f:
            syntax[po.relative_to(CATALOGS).as_posix()] = check_catalogs.catalog_syntax(
                read_po(f)
            )
    for name, found in syntax.items():
        page = DOCS / name.removesuffix(".po")
        if name.startswith("tutorials/"):
            assert found == "rst", name
        elif page.with_suffix(".md").exists():
            assert found == "myst", name
        elif page.with_suffix(".rst").exists():  # the API pages: docstrings are reST
            assert found == "rst", name
    assert syntax["tutorials/index.po"] == "rst"
    assert syntax["about.po"] == "myst"
    assert syntax["reference/masks.po"] == "rst"


def test_spacing_fixer_is_idempotent_on_every_catalog() -> None:
    for po in sorted(CATALOGS.rglob("*.po")):
        with po.open("rb") as f:
            catalog = read_po(f)
        syntax = check_catalogs.catalog_syntax(catalog)
        for message in catalog:
            if message.id and isinstance(message.string, str):
                once = check_catalogs.fix_spacing(message.string, syntax)
                assert check_catalogs.fix_spacing(once, syntax) == once, (po, once)


def test_fix_spacing_rewrites_a_catalog(tmp_path: Path) -> None:
    """``--fix-spacing`` on catalogs: each as its page's syntax needs, counting
    the messages it changed; a second run changes nothing."""
    from babel.messages.catalog import Catalog

    written = {}
    for name, source in (("page", "page.md"), ("tutorial", "tutorial.rst")):
        catalog = Catalog(locale="zh_CN")
        catalog.add("It is *in place*.", "它是 *原地* 的。", locations=[(source, 3)])
        catalog.add("Plain.", "平常。", locations=[(source, 5)])
        path = tmp_path / f"{name}.po"
        with path.open("wb") as f:
            write_po(f, catalog)
        written[name] = path
    assert check_catalogs.fix(list(written.values())) == {
        written["page"]: 1,
        written["tutorial"]: 1,
    }
    for name, wanted in (
        ("page", "它是*原地*的。"),
        ("tutorial", "它是\\ *原地*\\ 的。"),
    ):
        with written[name].open("rb") as f:
            message = read_po(f).get("It is *in place*.")
        assert message is not None
        assert message.string == wanted
    assert set(check_catalogs.fix(list(written.values())).values()) == {0}
    assert check_catalogs.check(list(written.values())) == []


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
    before Sphinx has compiled any ``.mo``; the theme's print-one-page entry
    is replaced by the whole-site PDF."""
    site = sitebuild.make_site(tmp_path)
    no_run = ("-D", "plot_gallery=0")
    update_catalogs(site, *no_run)
    translate_catalogs(site)
    ours = CATALOGS / "booktheme.po"
    (site / "docs/locale/zh_CN/LC_MESSAGES/booktheme.po").write_bytes(ours.read_bytes())
    assert not list((site / "docs/locale").rglob("*.mo"))
    printed = ("-D", "site_pdf=1")  # as nox -s pdf builds it, to link the PDF
    sitebuild.assert_passes(sitebuild.build(site, "zh_CN", *no_run, *printed))
    page = (site / "docs/_build/html/zh_CN/page.html").read_text(encoding="utf-8")
    with ours.open("rb") as f:
        catalog = read_po(f)
    for english in ("Repository", "Open issue"):
        translation = catalog.get(english)
        assert translation is not None
        assert str(translation.string) in page, english
        assert f">{english}<" not in page, english
    # The theme's "Print to PDF" entry (列印成 PDF in its own zh_CN, Taiwan's
    # usage) is replaced by the edition's whole-site PDF (autograd_site/sitepdf.py).
    assert "Print to PDF" not in page
    assert "列印成 PDF" not in page
    assert "_static/pdf/autograd-notes-zh_CN.pdf" in page


@pytest.mark.slow
def test_two_clean_builds_of_both_editions_are_byte_identical(tmp_path: Path) -> None:
    site = sitebuild.make_site(tmp_path)
    update_catalogs(site)
    translate_catalogs(site)
    shutil.copy(DOCS / "build.py", site / "docs" / "build.py")
    html = site / "docs" / "_build" / "html"
    published = []
    for _ in range(2):
        shutil.rmtree(html.parent)
        run = [sys.executable, "docs/build.py"]
        result = subprocess.run(run, cwd=site, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
        files = (p for p in sorted(html.rglob("*")) if p.is_file())
        site_files = (p for p in files if ".doctrees" not in p.parts)
        published.append({str(p.relative_to(html)): p.read_bytes() for p in site_files})
    assert "zh_CN/index.html" in published[0]
    # myst-nb's executed copies (random cell ids) stay out of the site.
    assert not [name for name in published[0] if "jupyter_execute" in name]
    assert published[0] == published[1]
