"""Every downloadable .py and .ipynb, in both editions, runs outside this
repository, in a fresh environment that has only torch, and installs the
package the way a reader would: from the wheel the site publishes.

The site is built the way docs/build.py builds it (the project's conf.py, the
zh_CN edition into html/zh_CN) but without executing anything, from a copy of
the repository, with ``-D html_baseurl=http://127.0.0.1:<port>/``; then it is
served on that port. A venv gets torch (pinned) and nothing else; each
download runs in its own empty venv layered on that one (its site-packages
sees the base's torch and pip through a ``.pth`` file), so that no run sees
what another installed:

* a script: the ``pip install ...`` command its install cell shows, run as a
  shell would split it, then ``python NN_name.py`` in a terminal without a
  display (``MPLBACKEND=Agg``);
* a notebook: its code cells in order, ``%pip`` turned into what IPython runs
  for it (``<python> -m pip ...`` in a shell); any other magic fails.

Before each run the env has no autograd_notes and no matplotlib; after it,
the installed autograd-notes is the site's version, installed from the
site's wheel URL (pip's ``direct_url.json``). The table of results is printed.

The English downloads run. A Chinese download is the English one with its
text and code comments translated: it compiles, and its code (Python's
syntax tree, which no comment or text is part of; a script's docstring
aside) and its install command are the English twin's, so it runs as that
one ran; running it too would run the same program again (half of this
file's time in CI).

The site ``docs/build.py`` builds (nothing runs when it is current): each
tutorial's script, in both editions, holds no hidden check and no Sphinx
markup, and is Python; two builds write the same downloads.
"""

from __future__ import annotations

import ast
import functools
import html
import http.server
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import sysconfig
import threading
import venv
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from babel.messages.pofile import read_po
from sphinx_gallery.py_source_parser import (
    remove_config_comments,
    remove_ignore_blocks,
    split_code_and_text_blocks,
)

ROOT = Path(__file__).resolve().parents[2]
from autograd_site import siteconfig  # noqa: E402
from autograd_site.cjk import han  # noqa: E402
from autograd_site.comments import without_comments  # noqa: E402
from autograd_site.downloads import TEXT, markup_left  # noqa: E402
from autograd_site.sitewheel import build_wheel, on_read_the_docs, wheel_name  # noqa: E402

import autograd_notes  # noqa: E402

EXAMPLES = sorted(p.name for p in (ROOT / "gallery").glob("[0-9][0-9]_*.py"))
# Where docs/build.py writes each edition, under docs/_build.
EDITIONS = {
    lang: f"html/{e.folder}".rstrip("/") for lang, e in siteconfig.EDITIONS.items()
}
# Written into docs/ by a build: not copied (but docs/locale's tutorials/
# holds the tutorials' catalogs).
GENERATED = {"_build", "tutorials", "generated", "jupyter_execute", "__pycache__"}
WHEEL = wheel_name(autograd_notes.__version__)
SITE_PO = ROOT / "docs" / "locale" / "zh_CN" / "LC_MESSAGES" / "site.po"


def words(edition: str) -> dict[str, str]:
    """``downloads.TEXT`` in ``edition``: site.po's Chinese, reST escapes dropped."""
    if edition == "en":
        return TEXT
    with SITE_PO.open("rb") as f:
        chinese = {m.id: m.string for m in read_po(f) if m.id and not m.fuzzy}
    return {key: chinese[english].replace("\\ ", "") for key, english in TEXT.items()}


INSTALL = re.compile(r'^pip install "(autograd-notes(?:\[plot\])?) @ (\S+)"$')
# Two downloads run at once: the machine's cores are shared.
WORKERS = 2

pytestmark = pytest.mark.slow


def _generated(folder: str, names: list[str]) -> list[str]:
    """What a build wrote into docs/ (the catalogs' tutorials/ is a source)."""
    if Path(folder).is_relative_to(ROOT / "docs" / "locale"):
        return [name for name in names if name == "__pycache__"]
    return [name for name in names if name in GENERATED]


@pytest.fixture(scope="module")
def port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, port: int) -> Path:
    """Both editions, built without executing, for http://127.0.0.1:<port>/."""
    site = tmp_path_factory.mktemp("site")
    for name in ("docs", "gallery", "src"):
        shutil.copytree(ROOT / name, site / name, ignore=_generated)
    for name in ("pyproject.toml", "constraints.txt", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, site / name)
    for language, folder in EDITIONS.items():
        cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", "auto"]
        cmd += ["-D", "plot_gallery=0", "-D", "nb_execution_mode=off"]
        cmd += ["-D", f"html_baseurl=http://127.0.0.1:{port}/"]
        cmd += ["-D", f"language={language}", "docs", f"docs/_build/{folder}"]
        subprocess.run(cmd, cwd=site, check=True, capture_output=True)
    return site / "docs" / "_build" / "html"


@pytest.fixture(scope="module")
def served(site: Path, port: int) -> Iterator[str]:
    """The built site on 127.0.0.1, as a reader's browser and pip reach it."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def torch_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with torch (pinned, from constraints.txt) and nothing else."""
    env = tmp_path_factory.mktemp("torch-only") / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    pins = ["-c", str(ROOT / "constraints.txt")]
    pip = [str(python), "-m", "pip", "install", "--quiet", *pins]
    subprocess.run([*pip, "torch"], check=True, env=outside())
    return env


def site_packages(env: Path) -> Path:
    paths = sysconfig.get_paths(vars={"base": str(env), "platbase": str(env)})
    return Path(paths["purelib"])


def fresh_env(torch_only: Path, where: Path) -> Path:
    """An empty venv that sees the torch-only venv's packages, and nothing else."""
    env = where / "venv"
    venv.create(env, with_pip=False)
    (site_packages(env) / "torch_only.pth").write_text(
        str(site_packages(torch_only)) + "\n"
    )
    return env / "bin" / "python"


PROBE = """
import importlib.metadata as m, importlib.util as u, json
try:
    dist = m.distribution("autograd-notes")
except m.PackageNotFoundError:
    dist = None
print(json.dumps({
    "torch": u.find_spec("torch") is not None,
    "autograd_notes": u.find_spec("autograd_notes") is not None,
    "matplotlib": u.find_spec("matplotlib") is not None,
    "version": dist and dist.version,
    "url": dist and json.loads(dist.read_text("direct_url.json") or "{}").get("url"),
}))
"""


def outside() -> dict[str, str]:
    """The environment of a reader's terminal: nothing of this repository on
    the path, and no display (matplotlib's Agg backend)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "MPLBACKEND": "Agg"}


def probe(python: Path) -> dict[str, Any]:
    out = subprocess.run(
        [str(python), "-c", PROBE],
        capture_output=True,
        text=True,
        check=True,
        env=outside(),
        cwd=python.parents[2],
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


@dataclass
class Run:
    edition: str
    file: str
    ok: bool
    detail: str


def download(site: Path, edition: str, name: str) -> Path:
    root = site / EDITIONS[edition].removeprefix("html").lstrip("/")
    matches = list((root / "_downloads").rglob(name))
    assert len(matches) == 1, f"expected one download named {name}, got {matches}"
    return matches[0]


def all_downloads(site: Path) -> list[tuple[str, Path]]:
    """(edition, file) for every .py and .ipynb each edition offers."""
    found = []
    for edition in EDITIONS:
        root = site / EDITIONS[edition].removeprefix("html").lstrip("/")
        for folder in ("_downloads", "notebooks"):
            for path in sorted((root / folder).rglob("*")):
                # notebooks/tutorials/ holds byte-identical copies of the
                # tutorials' downloads, for publishing (tests/site/test_launchbar.py)
                copy = path.relative_to(root / folder).parts[0] == "tutorials"
                if path.suffix in (".py", ".ipynb") and not (
                    folder == "notebooks" and copy
                ):
                    found.append((edition, path))
    names = [(edition, path.name) for edition, path in found]
    assert len(set(names)) == len(names), "two downloads share a name"
    return found


def install_line(script: str) -> str:
    """The one ``pip install`` command a script's install cell shows."""
    lines = [m.group(1) for m in re.finditer(r"^#\s+(pip install .*)$", script, re.M)]
    assert len(lines) == 1, f"expected one install command, got {lines}"
    return lines[0]


def ipython_pip(line: str) -> str:
    """What IPython runs for ``%pip ...``: ``<python> -m pip ...`` in a shell."""
    rest = line.removeprefix("%pip")
    return (
        "import subprocess, sys\n"
        f"subprocess.run(f'{{sys.executable}} -m pip' + {rest!r}, "
        "shell=True, check=True)"
    )


def notebook_as_script(notebook: dict[str, Any]) -> str:
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        lines = []
        for line in "".join(cell["source"]).splitlines():
            if line.startswith("%pip "):
                lines.append(ipython_pip(line))
            else:
                assert not line.lstrip().startswith(("%", "!")), line
                lines.append(line)
        cells.append("\n".join(lines))
    return "\n\n".join(cells) + "\n"


def run_one(torch_only: Path, served: str, edition: str, path: Path, work: Path) -> Run:
    work.mkdir(parents=True)
    python = fresh_env(torch_only, work)
    before = probe(python)
    name = path.name
    if not before["torch"] or before["autograd_notes"] or before["matplotlib"]:
        return Run(edition, name, False, f"not a torch-only env: {before}")
    env = outside()
    if path.suffix == ".py":
        command = shlex.split(install_line(path.read_text()))
        assert command[:2] == ["pip", "install"], command
        pip = [str(python), "-m", *command]
        installed = subprocess.run(pip, capture_output=True, text=True, env=env)
        if installed.returncode:
            return Run(edition, name, False, installed.stdout + installed.stderr)
        script = work / name
        shutil.copy(path, script)
    else:
        script = work / (path.stem + ".py")
        script.write_text(notebook_as_script(json.loads(path.read_text())))
    result = subprocess.run(
        [str(python), script.name],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=900,
    )
    if result.returncode:
        return Run(edition, name, False, result.stdout[-2000:] + result.stderr[-4000:])
    if "cannot be shown" in result.stderr or "non-interactive" in result.stderr:
        return Run(edition, name, False, "a figure was lost:\n" + result.stderr)
    saved = re.findall(r"^saved (\S+\.png)$", result.stdout, re.M)
    for png in saved:
        if not (work / png).read_bytes().startswith(b"\x89PNG"):
            return Run(edition, name, False, f"{png} is not a PNG")
    after = probe(python)
    expected = (autograd_notes.__version__, f"{served}_static/wheels/{WHEEL}")
    if (after["version"], after["url"]) != expected:
        return Run(edition, name, False, f"installed {after}, expected {expected}")
    figures = f", {len(saved)} figure(s) saved" if saved else ""
    return Run(edition, name, True, f"ok{figures}")


@pytest.fixture(scope="module")
def runs(
    site: Path,
    served: str,
    torch_only: Path,
    tmp_path_factory: pytest.TempPathFactory,
    pytestconfig: pytest.Config,
) -> dict[tuple[str, str], Run]:
    """Run every download; print the table edition / file / result."""
    work = tmp_path_factory.mktemp("runs")
    jobs = [job for job in all_downloads(site) if job[0] == "en"]
    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(
            pool.map(
                lambda job: run_one(
                    torch_only, served, job[0], job[1], work / f"{job[0]}-{job[1].name}"
                ),
                jobs,
            )
        )
    results.sort(key=lambda r: (r.edition, r.file))
    width = max(len(r.file) for r in results)
    lines = [f"{'edition':7}  {'file':{width}}  result", "-" * (width + 30)]
    for r in results:
        lines.append(
            f"{r.edition:7}  {r.file:{width}}  {r.detail if r.ok else 'FAILED'}"
        )
    # Printed past pytest's capture: the closing note quotes this table.
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    if capture is not None and reporter is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line("\n" + "\n".join(lines))
    return {(r.edition, r.file): r for r in results}


def test_the_site_publishes_its_wheel_reproducibly(site: Path, tmp_path: Path) -> None:
    """Each edition serves the same wheel, of the package's version, and a
    wheel built again from the repository has the same bytes."""
    english = site / "_static" / "wheels" / WHEEL
    chinese = site / "zh_CN" / "_static" / "wheels" / WHEEL
    assert sorted(p.name for p in english.parent.iterdir()) == [WHEEL]
    assert english.read_bytes() == chinese.read_bytes()
    again = build_wheel(ROOT, tmp_path)
    assert again.read_bytes() == english.read_bytes()
    with zipfile.ZipFile(english) as wheel:
        names = wheel.namelist()
    assert "autograd_notes/__init__.py" in names
    assert all(n.startswith(("autograd_notes/", "autograd_notes-")) for n in names)


@pytest.mark.parametrize("example", EXAMPLES)
@pytest.mark.parametrize("suffix", [".py", ".ipynb"])
def test_download_runs_outside_the_repository(
    runs: dict[tuple[str, str], Run], example: str, suffix: str
) -> None:
    name = example.removesuffix(".py") + suffix
    run = runs[("en", name)]
    assert run.ok, f"en/{name}: {run.detail}"


def program(path: Path) -> str:
    """What running a download runs: its syntax tree, and its install command.

    Comments and notebook text are not part of the tree; a script's
    docstring (its translated title and introduction) is left out, and no
    download may read it (``__doc__``).
    """
    text = path.read_text("utf-8")
    if path.suffix == ".ipynb":
        code, install = notebook_as_script(json.loads(text)), ""
    else:
        code, install = text, install_line(text)
    tree = ast.parse(code, filename=path.name)
    assert "__doc__" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if ast.get_docstring(tree, clean=False) is not None:
        tree.body = tree.body[1:]
    return install + "\n" + ast.dump(tree, include_attributes=False)


def test_every_download_was_run(site: Path, runs: dict[tuple[str, str], Run]) -> None:
    """Page notebooks too (notebooks/), not only the tutorials; each Chinese
    download runs the program its English twin ran."""
    assert len(runs) >= 2 * len(EXAMPLES)
    failed = [f"{e}/{f}: {r.detail}" for (e, f), r in runs.items() if not r.ok]
    assert not failed, "\n\n".join(failed)
    english = {
        path.name: path for edition, path in all_downloads(site) if edition == "en"
    }
    chinese = [path for edition, path in all_downloads(site) if edition == "zh_CN"]
    assert sorted(path.name for path in chinese) == sorted(english)
    for path in chinese:
        assert program(path) == program(english[path.name]), path.name


def test_a_changed_program_is_told_from_a_translated_one(tmp_path: Path) -> None:
    """program() ignores what translation changes and sees what running would."""
    source = '"""Title\n=====\n"""\n# pip install "autograd-notes @ u"\nx = 1  # one\n'
    translated = '"""标题\n====\n"""\n# pip install "autograd-notes @ u"\nx = 1  # 一\n'
    changed = source.replace("x = 1", "x = 2")
    other_install = source.replace("@ u", "@ v")
    found = {}
    for name, text in [
        ("en", source),
        ("zh", translated),
        ("code", changed),
        ("pip", other_install),
    ]:
        path = tmp_path / name / "t.py"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        found[name] = program(path)
    assert found["zh"] == found["en"]
    assert found["code"] != found["en"]
    assert found["pip"] != found["en"]


def code_and_text(script: Path) -> tuple[list[str], list[str]]:
    """The code blocks and the text blocks of a sphinx-gallery script."""
    _, blocks = split_code_and_text_blocks(str(script))
    code = [b.content for b in blocks if b.type == "code"]
    return code, [b.content for b in blocks if b.type == "text"]


def visible_code(example: str) -> list[str]:
    """The code blocks of a tutorial as its page shows them: no hidden checks."""
    code, _ = code_and_text(ROOT / "gallery" / example)
    shown = [remove_config_comments(remove_ignore_blocks(c)) for c in code]
    return [c for c in shown if c.strip()]


def draws(example: str) -> bool:
    return "draw_graph(" in (ROOT / "gallery" / example).read_text()


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("example", EXAMPLES)
def test_script_adds_only_the_install_and_figure_cells(
    site: Path, served: str, example: str, edition: str
) -> None:
    script = download(site, edition, example)
    code, text = code_and_text(script)
    source = visible_code(example)
    # The code of the page, then (for a script that draws) the figures cell.
    assert [without_comments(c).strip() for c in code[: len(source)]] == [
        without_comments(c).strip() for c in source
    ], "the download's code differs from the page's"
    assert len(code) == len(source) + draws(example)
    if draws(example):
        assert "savefig(" in code[-1]
    install = [block for block in text if words(edition)["install_title"] in block]
    assert len(install) == 1, "expected one install cell"
    match = INSTALL.match(install_line(script.read_text()))
    assert match, install_line(script.read_text())
    extra = "[plot]" if draws(example) else ""
    assert match.groups() == (
        f"autograd-notes{extra}",
        f"{served}_static/wheels/{WHEEL}",
    )
    if edition == "zh_CN":
        for block in text:
            assert han(block), f"{example}: a text block without Chinese"


def notebook(site: Path, edition: str, example: str) -> dict[str, Any]:
    name = example.replace(".py", ".ipynb")
    result: dict[str, Any] = json.loads(download(site, edition, name).read_text())
    return result


def code_cells(notebook: dict[str, Any]) -> list[str]:
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("example", EXAMPLES)
def test_notebook_installs_the_wheel_first(
    site: Path, served: str, example: str, edition: str
) -> None:
    cells = notebook(site, edition, example)["cells"]
    extra = "[plot]" if draws(example) else ""
    url = f"{served}_static/wheels/{WHEEL}"
    why, pip = "".join(cells[0]["source"]).split("\n")
    assert pip == f'%pip install "autograd-notes{extra} @ {url}"'
    assert why.startswith("# `autograd_notes`"), why
    others = code_cells({"cells": cells})[1:]
    assert not any(
        line.lstrip().startswith(("%", "!")) for c in others for line in c.splitlines()
    )


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_example_is_offered_for_download(site: Path, edition: str) -> None:
    """The zips hold exactly the single downloads (rewritten ones included)."""
    assert EXAMPLES, "no gallery examples found"
    for zip_name in ("tutorials_python.zip", "tutorials_jupyter.zip"):
        with zipfile.ZipFile(download(site, edition, zip_name)) as archive:
            members = {Path(n).name: archive.read(n) for n in archive.namelist()}
            stamps = {info.date_time for info in archive.infolist()}
        assert stamps == {(1980, 1, 1, 0, 0, 0)}, "zip timestamps vary by build"
        suffix = ".py" if "python" in zip_name else ".ipynb"
        for example in EXAMPLES:
            name = Path(example).stem + suffix
            assert name in members, f"{name} not in {zip_name}"
            alone = download(site, edition, name).read_bytes()
            assert members[name] == alone, f"{name} in {zip_name} differs"
    for example in EXAMPLES:  # each tutorial's own archive too
        with zipfile.ZipFile(download(site, edition, example[:-3] + ".zip")) as z:
            for name in z.namelist():
                member = download(site, edition, Path(name).name)
                assert z.read(name) == member.read_bytes(), name


@pytest.mark.parametrize("example", EXAMPLES)
def test_zh_notebook_text_is_chinese(site: Path, example: str) -> None:
    cells = notebook(site, "zh_CN", example)["cells"]
    markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    assert markdown, f"{example}: the notebook has no text"
    for text in markdown:
        assert han(text), f"{example}: a text cell without Chinese:\n{text}"
    english = notebook(site, "en", example)["cells"]
    assert [c["cell_type"] for c in cells] == [c["cell_type"] for c in english]


@pytest.mark.parametrize("example", EXAMPLES)
def test_zh_notebook_has_the_english_code(site: Path, example: str) -> None:
    zh = code_cells(notebook(site, "zh_CN", example))
    english = code_cells(notebook(site, "en", example))
    assert list(map(without_comments, zh)) == list(map(without_comments, english))


def test_the_new_text_is_translated() -> None:
    """site.po has every English entry, in Chinese, with its fields."""
    chinese = words("zh_CN")
    for key, english in TEXT.items():
        assert han(chinese[key]), key
        assert re.findall(r"\{\w+\}", chinese[key]) == re.findall(r"\{\w+\}", english)
        assert re.findall(r"`+\w+`+", chinese[key]) == re.findall(r"`+\w+`+", english)


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_landing_page_gives_the_same_command(
    site: Path, served: str, edition: str
) -> None:
    """The command on the landing page is the one the downloads run."""
    page = site / EDITIONS[edition].removeprefix("html").lstrip("/") / "index.html"
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
    command = f'pip install "autograd-notes[plot] @ {served}_static/wheels/{WHEEL}"'
    assert command in text.splitlines()


@pytest.mark.parametrize(
    ("canonical", "overrides", "expected"),
    [
        (
            "https://a.readthedocs.io/en/latest/",
            {},
            "https://a.readthedocs.io/en/latest/",
        ),
        (
            "https://a.readthedocs.io/zh-cn/v1.0/",
            {},
            "https://a.readthedocs.io/en/v1.0/",
        ),
        ("", {}, "https://a.readthedocs.io/"),  # not on Read the Docs
        ("https://a.readthedocs.io/en/latest/", {"html_baseurl": "x"}, "http://h/"),
    ],
)
def test_read_the_docs_installs_from_the_english_project_of_the_version(
    monkeypatch: pytest.MonkeyPatch,
    canonical: str,
    overrides: dict[str, str],
    expected: str,
) -> None:
    monkeypatch.setenv("READTHEDOCS_CANONICAL_URL", canonical)
    base = "http://h/" if overrides else "https://a.readthedocs.io/"
    config = SimpleNamespace(overrides=overrides, html_baseurl=base)
    on_read_the_docs(None, config)  # type: ignore[arg-type]
    assert config.html_baseurl == expected


HIDDEN = re.compile(
    r"# sphinx_gallery_start_ignore\n(.*?)# sphinx_gallery_end_ignore", re.S
)


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("example", EXAMPLES)
def test_script_holds_no_hidden_check_and_no_markup(
    built_site: Path, edition: str, example: str
) -> None:
    """What the page hides is not in the script, its text has no Sphinx
    markup (in zh_CN no reST escape either), and it is Python."""
    script = download(built_site, edition, example)
    text = script.read_text("utf-8")
    ast.parse(text)
    assert "sphinx_gallery_" not in text
    source = (ROOT / "gallery" / example).read_text("utf-8")
    shown = "\n".join(visible_code(example))
    hidden = [
        line.strip()
        for block in HIDDEN.findall(source)
        for line in block.splitlines()
        if line.strip().startswith("assert ") and line.strip() not in shown
    ]
    assert hidden, f"{example} has no hidden check: this test checks nothing"
    assert [line for line in hidden if line in text] == []
    _, prose = code_and_text(script)
    assert [left for block in prose for left in markup_left(block)] == []
    _, original = code_and_text(ROOT / "gallery" / example)
    assert any(markup_left(block) for block in original), "nothing to convert"
