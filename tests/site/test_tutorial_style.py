"""The tutorials follow the house rules in CONTRIBUTING.md ("Add a tutorial")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = sorted((ROOT / "gallery").glob("[0-9][0-9]_*.py"))
IGNORED = re.compile(
    r"^# sphinx_gallery_start_ignore\n.*?^# sphinx_gallery_end_ignore\n",
    re.MULTILINE | re.DOTALL,
)
READER_FILES = [
    *TUTORIALS,
    ROOT / "gallery" / "GALLERY_HEADER.rst",
    *(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts),
    *(ROOT / "src" / "autograd_notes").glob("*.py"),
]
# "the Notes of keep_frozen" (a numpydoc section) is fine; "the notes" is not.
NOTES = re.compile(r"\b[Ss](tudy|ource) notes\b|\b[Tt]he notes\b|\bnotes'")


def visible(path: Path) -> str:
    """The script as the page shows it: without the hidden check blocks."""
    return IGNORED.sub("", path.read_text(encoding="utf-8"))


def test_the_reading_order_is_complete() -> None:
    numbers = [int(p.name[:2]) for p in TUTORIALS]
    assert numbers == list(range(1, len(TUTORIALS) + 1))
    assert len(TUTORIALS) >= 15


# About 400 lines, never more than this. No median rule: a target that most
# tutorials must stay under pushed pages to squeeze their code and text.
MOST_LINES = 450


def test_lengths() -> None:
    lengths = {p.name: len(p.read_text().splitlines()) for p in TUTORIALS}
    too_long = {name: n for name, n in lengths.items() if n > MOST_LINES}
    assert not too_long, f"over {MOST_LINES} lines: {too_long}"


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_title_is_a_question(path: Path) -> None:
    title = path.read_text().split('"""')[1].strip().splitlines()[0]
    assert title.endswith("?"), f"title is not a question: {title!r}"


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_ends_with_two_to_four_checked_exercises(path: Path) -> None:
    text = path.read_text()
    assert re.search(r"^# Exercises\n# -+\n", text, re.MULTILINE), "no Exercises"
    exercises = text[text.index("# Exercises\n") :]
    solutions = re.findall(
        r"^# \*\*Solution\*\*\n\n+# %%\n(.*?)(?=^# %%|\Z)",
        exercises,
        re.MULTILINE | re.DOTALL,
    )
    assert 2 <= len(solutions) <= 4, f"{len(solutions)} solutions"
    for number, code in enumerate(solutions, 1):
        assert "sphinx_gallery_start_ignore" in code, f"solution {number} unchecked"
        assert "assert" in code.split("sphinx_gallery_start_ignore", 1)[1]


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_no_test_scaffolding_in_visible_code(path: Path) -> None:
    shown = visible(path)
    assert "raise AssertionError" not in shown
    assert not re.search(r"^\s*except .*:\n(?:.*\n){0,4}?\s*else:", shown, re.M)


@pytest.mark.parametrize("path", READER_FILES, ids=lambda p: p.name)
def test_no_reference_to_notes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = NOTES.findall(text)
    allowed = 1 if path == ROOT / "docs" / "about.md" else 0  # where it came from
    assert len(found) <= allowed, f"{path.name} mentions the notes: {found}"


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_prints_no_timing(path: Path) -> None:
    code = "\n".join(
        line for line in visible(path).splitlines() if not line.startswith("#")
    )
    assert not re.search(r"perf_counter|time\.time\(|timeit", code)


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_sphinx_gallery_sees_every_hidden_block(path: Path) -> None:
    """A hidden block right under a text cell would be read as text."""
    # `nox -s tests` has sphinx-gallery; the compat environments do not.
    parser = pytest.importorskip("sphinx_gallery.py_source_parser")
    blocks = parser.split_code_and_text_blocks(str(path))[1]
    for block in blocks:
        if block.type == "text":
            assert "sphinx_gallery_" not in block.content, f"line {block.lineno}"
        else:
            parser.remove_ignore_blocks(block.content)  # raises if unmatched
