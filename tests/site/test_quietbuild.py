"""A clean build prints progress and the result: no warning, no config dump.

The build is strict, so a Sphinx warning fails it. Anything else that reads
as a warning in a build that passed (a kernel's log line, a library's
``...Warning:``) or a configuration dump (``MdParserConfig(...)``) is noise
that hides the lines that matter; ``autograd_site/quietbuild.py`` switches each
source off where it starts.

(slow) A throw-away site (``tests/sitebuild.py``: the project's conf and
extensions, an executed MyST page and a gallery example, with zh_CN catalogs)
is built from scratch by ``docs/build.py``, the entry point of ``nox -s
docs``: both editions, a kernel started for the page. The build passes and
no line of its output is noise.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sitebuild
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[2]

NOISE = [
    re.compile(r"warning", re.IGNORECASE),  # "WARNING", "UserWarning: ..."
    re.compile(r"\b\w+Config\("),  # "MdParserConfig(...)", "NbParserConfig(...)"
]


def noise(output: str) -> list[str]:
    """The lines of a build's output that read as a warning or a config dump."""
    return [
        line
        for line in output.splitlines()
        if any(pattern.search(line) for pattern in NOISE)
    ]


# What a clean build printed before (ipykernel 7, myst-parser 5, myst-nb 1.4).
BEFORE = """\
docs: building the en edition into docs/_build/html
Running Sphinx v9.0.4
myst v5.2.0: MdParserConfig(commonmark_only=False, gfm_only=False)
myst-nb v1.4.0: NbParserConfig(custom_formats={}, metadata_key='mystnb')
reading sources... [ 50%] page
[IPKernelApp] WARNING | Kernel is running over TCP without encryption. All communication
/tmp/x/docs/page.md: Executed notebook in 3.70 seconds [mystnb]
/tmp/x/gallery/01_example.py:3: DeprecationWarning: old
build succeeded.
"""


def test_noise_is_recognised() -> None:
    lines = BEFORE.splitlines()
    assert noise(BEFORE) == [lines[2], lines[3], lines[5], lines[7]]


def write_catalogs(site: Path, scratch: Path) -> None:
    """zh_CN catalogs of every message of ``site``, each "translated" as
    "中文：" and the English (markup intact), made in a copy of the site so
    that ``site`` itself stays unbuilt."""
    scratch.mkdir()
    copy = sitebuild.make_site(scratch)
    cmd = [sys.executable, "-m", "sphinx", "-q", "-b", "gettext"]
    cmd += ["-D", "plot_gallery=0", "-D", "nb_execution_mode=off"]
    cmd += ["docs", "docs/_build/gettext"]
    result = subprocess.run(cmd, cwd=copy, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    templates = copy / "docs" / "_build" / "gettext"
    catalogs = site / "docs" / "locale" / "zh_CN" / "LC_MESSAGES"
    for pot in sorted(templates.rglob("*.pot")):
        with pot.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            if message.id:
                message.string = f"中文：{message.id}"
        po = catalogs / pot.relative_to(templates).with_suffix(".po")
        po.parent.mkdir(parents=True, exist_ok=True)
        with po.open("wb") as f:
            write_po(f, catalog)


@pytest.mark.slow
def test_a_clean_build_prints_progress_and_the_result_only(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    site = sitebuild.make_site(tmp_path / "site")
    shutil.copy(ROOT / "docs" / "build.py", site / "docs" / "build.py")
    write_catalogs(site, tmp_path / "catalogs")

    result = subprocess.run(
        [sys.executable, "docs/build.py"],
        cwd=site,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # in the order a terminal shows them
        text=True,
        timeout=900,
    )
    output = result.stdout
    assert result.returncode == 0, output
    # It was a clean build of both editions: the page ran in a kernel, the
    # example ran, and each edition says so.
    assert "page.md: Executed notebook" in output, output
    assert "executed 1 out of 1 file" in output, output
    assert output.count("build succeeded.") == 2, output
    assert "building the zh_CN edition" in output, output
    assert not noise(output), "\n".join(["noise in a clean build:", *noise(output)])
