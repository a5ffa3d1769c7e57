"""``nox -s compat`` runs every code cell the docs build runs on executed pages.

``.ci/compat.py`` joins a page's code cells into one script. These tests read
each page's ``{code-cell}`` fences independently (a plain line scan, not
myst-nb) and check that every line of every cell, hidden checks included, is in
that script, so a cell dropped by compat's page runner fails here.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)
OPTION = re.compile(r":[\w-]+:")  # a cell option line, such as ":tags: [remove-cell]"


def load_compat() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compat", ROOT / ".ci" / "compat.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fenced_cells(text: str) -> list[list[str]]:
    """The body lines of each ``{code-cell}`` fence, options taken off."""
    cells: list[list[str]] = []
    lines = iter(text.splitlines())
    for line in lines:
        if not line.startswith("```{code-cell}"):
            continue
        body = []
        for inner in lines:
            if inner.startswith("```"):
                break
            body.append(inner)
        if body and body[0] == "---":  # a YAML block of options
            body = body[body.index("---", 1) + 1 :]
        while body and OPTION.match(body[0]):
            body.pop(0)
        cells.append(body)
    return cells


EXECUTED = [p for p in PAGES if "file_format: mystnb" in p.read_text(encoding="utf-8")]


def test_every_executed_page_is_found() -> None:
    compat = load_compat()
    found = [p for p in PAGES if compat.page_cells(p) is not None]
    assert found == EXECUTED
    assert len(EXECUTED) >= 10


@pytest.mark.parametrize("page", EXECUTED, ids=lambda p: p.stem)
def test_compat_runs_every_cell_of_the_page(page: Path) -> None:
    compat = load_compat()
    cells = compat.page_cells(page)
    expected = [c for c in fenced_cells(page.read_text(encoding="utf-8")) if any(c)]
    assert len(cells) == len(expected), f"{page.name}: cells dropped or added"
    script = compat.page_code(cells).splitlines()
    position = 0
    for cell in expected:
        for line in (x for x in cell if x.strip()):
            assert line in script[position:], f"{page.name}: {line!r} does not run"
            position = script.index(line, position)


def test_hidden_checks_are_among_the_cells_run() -> None:
    compat = load_compat()
    hidden = 0
    for page in EXECUTED:
        text = page.read_text(encoding="utf-8")
        hidden += text.count(":tags: [remove-cell]")
        script = compat.page_code(compat.page_cells(page))
        for cell in re.findall(r":tags: \[remove-cell\]\n(.*?)^```", text, re.M | re.S):
            assert cell.strip() in script, f"{page.name}: a hidden cell does not run"
    assert hidden > 0
