"""Torch versions are compared parsed, never as strings (issue 26, "Leftovers").

``"2.2" >= "2.13"`` is true for strings: a page that branches on
``torch.__version__ >= "2.13"`` would take the wrong branch on torch 2.2 or
2.100 (``torch.__version__`` itself parses the other side today, but a plain
``str`` copy of it does not). Pages and tutorials parse the version with
``torch.torch_version.TorchVersion`` and compare it with a tuple.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATED = {"_build", "tutorials", "jupyter_execute", "generated"}
SOURCES = sorted(
    [
        *(ROOT / "gallery").glob("*.py"),
        *(
            p
            for pattern in ("*.md", "*.py")
            for p in (ROOT / "docs").rglob(pattern)
            if not GENERATED & set(p.relative_to(ROOT / "docs").parts)
        ),
        *(ROOT / "src").rglob("*.py"),
    ]
)
VERSION = r"__version__\b(?:\s*\))?"
OPERATOR = r"(?:[<>]=?|==|!=)"
STRING = r"""[rbuf]?["'][^"'\n]*["']"""
STRING_COMPARE = re.compile(
    rf"{VERSION}\s*{OPERATOR}\s*{STRING}|{STRING}\s*{OPERATOR}\s*\w[\w.]*__version__"
)


def string_compares(text: str) -> list[str]:
    return STRING_COMPARE.findall(text)


def test_the_pattern_finds_string_compares() -> None:
    assert string_compares('crashes = torch.__version__ >= "2.13"')
    assert string_compares("if torch.__version__ < '2.14': pass")
    assert string_compares('ok = "2.13" <= torch.__version__')
    assert string_compares('str(torch.__version__) >= "2.13"')
    assert not string_compares("TorchVersion(torch.__version__) >= (2, 13)")
    assert not string_compares('print(f"torch {torch.__version__}")')


def test_the_sources_are_found() -> None:
    names = {p.name for p in SOURCES}
    assert {
        "known-pytorch-issue-deep-graphs.md",
        "12_non_differentiable_points.py",
    } <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_string_version_compare(path: Path) -> None:
    found = string_compares(path.read_text(encoding="utf-8"))
    assert not found, f"compare a parsed TorchVersion with a tuple: {found}"
