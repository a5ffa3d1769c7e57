"""Every downloaded script and notebook runs outside this repository.

A reader who downloads a tutorial has torch, perhaps, but not
``autograd_notes``, which is not on PyPI: the site publishes its wheel
(``sitewheel``). After everything else has written the downloads (sphinx-
gallery, ``zhdownloads`` at priority 500, the page notebooks),
:func:`rewrite_downloads` (``build-finished``, priority 800) rewrites every
``*.ipynb`` and ``*.py`` under ``<outdir>/_downloads/`` and
``<outdir>/notebooks/``:

* a notebook gets, after its title, a Markdown cell saying why, and a first
  code cell ``%pip install "autograd-notes[plot] @ <wheel URL>"`` (without
  ``[plot]`` when the notebook draws nothing);
* a script gets, after its docstring, a text cell with the same install
  command, to run once in a terminal;
* a script that draws a figure gets a last cell that saves each figure as a
  PNG (and shows them when matplotlib can open a window), so ``python
  NN_name.py`` in a terminal loses nothing. The page itself is unchanged:
  sphinx-gallery executes the source, not the download;
* every ``.zip`` beside them is rebuilt with the rewritten files, with fixed
  timestamps, so the archives match the single downloads.

The new text is in each edition's language (:data:`TEXT`).
"""

from __future__ import annotations

import ast
import json
import re
import zipfile
from pathlib import Path
from typing import Any

from sitewheel import requirement, wheel_url
from sphinx.application import Sphinx

FOLDERS = ("_downloads", "notebooks")
"""The folders of ``<outdir>`` whose scripts and notebooks are rewritten."""

DRAWS = re.compile(r"\bdraw_graph\(|\bmatplotlib\b|\bplt\.")
"""Code that makes a figure: it needs the ``plot`` extra."""

MARK = "autograd-notes-install"
"""The id (or tag) of the install cell added to a notebook."""

TEXT: dict[str, dict[str, str]] = {
    "en": {
        "install_title": "Install the helper package",
        "stop": ".",
        "install_notebook": (
            "This notebook imports `autograd_notes`, a small helper package "
            "written for this site; it is not on PyPI. The next cell installs "
            "the exact version that produced the outputs on the site "
            "({version}), from the site itself{plot}. Run it once per "
            "environment (in Colab, once per session); it needs only torch."
        ),
        "install_script": (
            "This script imports ``autograd_notes``, a small helper package "
            "written for this site; it is not on PyPI. Before you run the "
            "script, install the exact version that produced the outputs on "
            "the site ({version}), from the site itself{plot}, once, in the "
            "environment you run it in (it needs only torch):"
        ),
        "plot": ", with matplotlib and networkx for the figures",
        "figures_title": "Keep the figures",
        "figures": (
            "Run in a terminal, a script's figures vanish when it ends. This "
            "cell saves each one as a PNG file in the current folder, and "
            "also shows them when matplotlib can open a window."
        ),
        "no_matplotlib": "without matplotlib the script drew nothing",
    },
    "zh_CN": {
        "install_title": "安装辅助包",
        "stop": "。",
        "install_notebook": (
            "本笔记本导入`autograd_notes`，这是为本站编写的一个小型辅助包，"
            "不在 PyPI 上。下一个单元格从本站安装产生本站输出的版本"
            "（{version}）{plot}。每个环境运行一次即可（在 Colab 中每个会话"
            "一次）；它只依赖 torch。"
        ),
        "install_script": (
            "本脚本导入\\ ``autograd_notes``\\ ，这是为本站编写的一个小型辅助包，"
            "不在 PyPI 上。运行脚本之前，请在运行它的环境中安装一次产生本站输出的"
            "版本（{version}），安装包由本站提供{plot}；它只依赖 torch："
        ),
        "plot": "，并附带绘图所需的 matplotlib 和 networkx",
        "figures_title": "保存图形",
        "figures": (
            "在终端中运行时，脚本画出的图形会随脚本结束而消失。这个单元格把"
            "每个图形保存为当前文件夹中的 PNG 文件；matplotlib 能打开窗口时，"
            "也会显示它们。"
        ),
        "no_matplotlib": "没有 matplotlib 时，脚本什么也没有画",
    },
}

# Backends that cannot open a window: plt.show() would only warn.
NON_INTERACTIVE = '{"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}'


def text(app: Sphinx) -> dict[str, str]:
    return TEXT.get(app.config.language, TEXT["en"])


def install_command(app: Sphinx, draws: bool) -> str:
    """The shell command, as in the downloads (``%pip`` in a notebook)."""
    extras = "[plot]" if draws else ""
    return f'pip install "{requirement(app, extras)}"'


WIDE = "\u3000-\u9fff\uff00-\uffef"
"""Chinese characters and full-width punctuation: two columns each."""
OPENING = "（“「《"
"""Full-width punctuation a line never ends with."""


def _columns(text: str) -> int:
    return sum(2 if re.match(f"[{WIDE}]", ch) else 1 for ch in text)


def _wrap(paragraph: str, prefix: str = "# ", width: int = 79) -> list[str]:
    """Comment lines of at most ``width`` columns (CJK text breaks anywhere)."""
    lines: list[str] = []
    line = ""
    for token in re.findall(rf"[{WIDE}] ?|[^\s{WIDE}]+ ?", paragraph):
        if line and len(prefix) + _columns(line + token) > width:
            carried = line[-1] if line[-1] in OPENING else ""  # never end on "（"
            lines.append(prefix + line.removesuffix(carried).rstrip())
            line = carried
        line += token
    if line.strip():
        lines.append(prefix + line.rstrip())
    return lines


def _heading(title: str) -> list[str]:
    return [f"# {title}", "# " + "-" * _columns(title)]


def rewrite_script(app: Sphinx, source: str, name: str) -> str:
    """The script with the install cell (and the figures cell) added."""
    if wheel_url(app) in source:  # rewritten already
        return source
    words = text(app)
    draws = bool(DRAWS.search(source))
    version = app.config.release
    intro = words["install_script"].format(
        version=version, plot=words["plot"] if draws else ""
    )
    cell = [
        "",
        "# %%",
        *_heading(words["install_title"]),
        *_wrap(intro),
        "#",
        "# .. code-block:: bash",
        "#",
        f"#    {install_command(app, draws)}",
        "",
    ]
    lines = source.splitlines()
    body = ast.parse(source).body
    after = 0  # the line after the module docstring, or the top
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    ):
        after = body[0].end_lineno or 0
    lines[after:after] = cell
    if draws:
        lines += ["", "", "# %%", *_heading(words["figures_title"])]
        lines += _wrap(words["figures"])
        lines += figures_code(Path(name).stem, words["no_matplotlib"])
    return "\n".join(lines) + "\n"


def figures_code(stem: str, no_matplotlib: str) -> list[str]:
    return [
        "try:",
        "    import matplotlib.pyplot as plt",
        f"except ImportError:  # {no_matplotlib}",
        "    numbers = []",
        "else:",
        "    numbers = plt.get_fignums()",
        "for number in numbers:",
        f'    name = f"{stem}_figure_{{number}}.png"',
        "    plt.figure(number).savefig(name, dpi=200)",
        '    print(f"saved {name}")',
        f"windowless = {NON_INTERACTIVE}",
        "if numbers and plt.get_backend().lower() not in windowless:",
        "    plt.show()",
    ]


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def rewrite_notebook(app: Sphinx, raw: str) -> str:
    """The notebook with the install cells after its title."""
    notebook = json.loads(raw)
    cells: list[dict[str, Any]] = notebook["cells"]
    if any(cell.get("id") == MARK for cell in cells):
        return raw
    words = text(app)
    code = "\n".join(_source(c) for c in cells if c["cell_type"] == "code")
    draws = bool(DRAWS.search(code))
    intro = words["install_notebook"].format(
        version=app.config.release, plot=words["plot"] if draws else ""
    )
    markdown = {
        "cell_type": "markdown",
        "metadata": {},
        "source": [f"**{words['install_title']}{words['stop']}** {intro}"],
    }
    install = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": [f"%{install_command(app, draws)}"],
    }
    with_ids = all("id" in cell for cell in cells)
    if with_ids:
        markdown["id"] = MARK + "-why"
        install["id"] = MARK
    else:  # nbformat < 4.5 has no cell ids: mark the code cell's metadata
        install["metadata"] = {"tags": [MARK]}
    first = 1 if cells and cells[0]["cell_type"] == "markdown" else 0
    cells[first:first] = [markdown, install]
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def _rezip(archive: Path, replaced: dict[bytes, bytes]) -> None:
    """Rebuild ``archive`` with each member whose bytes were rewritten."""
    with zipfile.ZipFile(archive) as old:
        members = [(info.filename, old.read(info)) for info in old.infolist()]
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as new:
        for filename, data in members:
            info = zipfile.ZipInfo(filename, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            new.writestr(info, replaced.get(data, data))


def rewrite_downloads(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    replaced: dict[bytes, bytes] = {}  # old bytes -> new bytes
    archives: list[Path] = []
    for folder in FOLDERS:
        for path in sorted(Path(app.outdir, folder).rglob("*")):
            if path.suffix == ".zip":
                archives.append(path)
                continue
            if path.suffix not in (".py", ".ipynb") or not path.is_file():
                continue
            old = path.read_text(encoding="utf-8")
            if path.suffix == ".py":
                new = rewrite_script(app, old, path.name)
            else:
                new = rewrite_notebook(app, old)
            if new != old:
                path.write_text(new, encoding="utf-8")
                replaced[old.encode("utf-8")] = new.encode("utf-8")
    for archive in archives:
        _rezip(archive, replaced)


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sitewheel")
    # After the zh downloads (zhdownloads, 500) and the page notebooks (500).
    app.connect("build-finished", rewrite_downloads, priority=800)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
