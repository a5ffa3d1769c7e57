"""A beginner reads the tutorials in order: nothing may lean on a later one.

Read as the page shows it (hidden check blocks removed), tutorial NN may
refer to a later tutorial only through an explicit pointer written
"later, in <reference>"; its "What next" section may link NN+1 as well, and
it must link NN+1 first. A package helper is explained in the prose of the
tutorial whose code first uses it, before that use. A few ideas that have a
tutorial of their own (the version counter, hooks, ...) appear earlier only
after a "later, in" pointer to that tutorial (the "What next" section, which
only looks ahead, is not checked for them). Every tutorial ends with
"Exercises", then "What next".
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = sorted((ROOT / "gallery").glob("[0-9][0-9]_*.py"))
NUMBER = {p: int(p.name[:2]) for p in TUTORIALS}
IGNORED = re.compile(
    r"^[ \t]*# sphinx_gallery_start_ignore\n.*?^[ \t]*# sphinx_gallery_end_ignore\n",
    re.MULTILINE | re.DOTALL,
)
# One reference to a tutorial, as a unit: a role whose target names it, a
# bare label or file name, "tutorial NN" or an arrow "→NN".
ROLE = re.compile(r":(?:ref|doc):`[^`]*`")
TARGET = re.compile(r"(?:sphx_glr_tutorials_|tutorials/|\b)(\d\d)_[a-z0-9_]+")
BARE = re.compile(
    r"sphx_glr_tutorials_(\d\d)_\w+|\b(\d\d)_[a-z0-9_]+\.(?:py|html|ipynb)\b"
    r"|\b[Tt]utorials? (\d\d)\b|→ ?(\d\d)\b"
)
POINTER = re.compile(r"\b[Ll]ater, in ?\(?$")
# Ideas that one tutorial teaches, found in code or prose before it.
IDEAS = {
    "the version counter": (5, r"\._version\b|version counter"),
    "hooks": (11, r"register_\w*hook|\bhooks?\b"),
    "create_graph": (13, r"\bcreate_graph\b"),
    "torch.func": (14, r"\btorch\.func\b|\bvmap\b|\bjac(?:rev|fwd)\b"),
}


def helpers() -> list[str]:
    """The public names of the package, read from its ``__all__``."""
    tree = ast.parse((ROOT / "src" / "autograd_notes" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "__all__":
            names = ast.literal_eval(node.value)
            return [n for n in names if not n.startswith("_")]
    raise AssertionError("no __all__")


@dataclass
class Page:
    """A tutorial as the reader sees it: the text, and where its code is."""

    text: str  # visible source with the "# " of text cells removed
    prose: list[tuple[int, str]]  # (offset in text, a text cell or docstring)
    code: list[tuple[int, str]]  # (offset in text, a code line, no comment)


def read(path: Path) -> Page:
    source = IGNORED.sub("", path.read_text(encoding="utf-8"))
    _, docstring, body = source.split('"""', 2)
    text, prose, code = docstring, [(0, docstring)], []
    in_text = False
    for line in body.splitlines():
        if line.startswith("# %%"):
            in_text = True
            prose.append((len(text), ""))
            continue
        in_text = in_text and line.startswith("#")
        if in_text:
            words = line[2:] if line.startswith("# ") else line[1:]
            prose[-1] = (prose[-1][0], prose[-1][1] + words + "\n")
            text += words + "\n"
            continue
        if not line.lstrip().startswith("#"):
            code.append((len(text), line.split("  #")[0]))
        text += line + "\n"
    return Page(text, prose, code)


def references(text: str) -> list[tuple[int, int]]:
    """(offset, tutorial number) of each reference to a tutorial."""
    found, taken = [], []
    for role in ROLE.finditer(text):
        target = TARGET.search(role.group())
        if target:
            found.append((role.start(), int(target.group(1))))
        taken.append(role.span())
    for bare in BARE.finditer(text):
        if not any(start <= bare.start() < end for start, end in taken):
            number = next(g for g in bare.groups() if g)
            found.append((bare.start(), int(number)))
    return sorted(found)


def is_pointer(text: str, offset: int) -> bool:
    before = " ".join(text[max(0, offset - 40) : offset].split())
    return bool(POINTER.search(before))


def what_next(text: str) -> tuple[int, str]:
    match = re.search(r"^What next\n-+\n", text, re.MULTILINE)
    return (match.start(), text[match.start() :]) if match else (len(text), "")


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_no_reference_to_a_later_tutorial(path: Path) -> None:
    page, number = read(path), NUMBER[path]
    next_start, _ = what_next(page.text)
    bad = []
    for offset, target in references(page.text):
        allowed = target <= number or is_pointer(page.text, offset)
        allowed |= target == number + 1 and offset >= next_start
        if not allowed:
            line = page.text[:offset].count("\n") + 1
            bad.append(f"→{target:02d} at visible line {line}")
    assert not bad, f"{path.name} refers forward: {bad}"


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_ends_with_exercises_then_what_next(path: Path) -> None:
    page, number = read(path), NUMBER[path]
    headings = re.findall(r"^(\S[^\n]*)\n-{3,}\n", page.text, re.MULTILINE)
    assert headings[-2:] == ["Exercises", "What next"], headings[-3:]
    links = [t for _, t in references(what_next(page.text)[1]) if t > number]
    if number < max(NUMBER.values()):
        assert links[:1] == [number + 1], f"What next links {links}, not first NN+1"


@pytest.mark.parametrize("name", helpers())
def test_a_helper_is_explained_where_it_is_first_used(name: str) -> None:
    word = re.compile(rf"\b{re.escape(name)}\b")
    for path in TUTORIALS:
        page = read(path)
        uses = [at for at, line in page.code if word.search(line)]
        uses = [at for at in uses if not page.text[at:].startswith("from ")]
        if not uses:
            continue
        explained = [at for at, cell in page.prose if word.search(cell)]
        assert min(explained, default=uses[0] + 1) <= uses[0], (
            f"{path.name} uses {name} before its prose explains it"
        )
        return


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_an_idea_is_used_only_from_its_tutorial_or_after_a_pointer(
    path: Path,
) -> None:
    page, number = read(path), NUMBER[path]
    bad = []
    for idea, (home, pattern) in IDEAS.items():
        if number >= home:
            continue
        used = re.search(pattern, page.text[: what_next(page.text)[0]])
        if not used:
            continue
        pointers = [
            at
            for at, target in references(page.text)
            if target == home and is_pointer(page.text, at)
        ]
        # the pointer comes first, or in the same paragraph as the first use
        end = page.text.find("\n\n", used.start()) % (len(page.text) + 1)
        if not pointers or pointers[0] > end:
            line = page.text[: used.start()].count("\n") + 1
            bad.append(f"{idea} (visible line {line})")
    assert not bad, f"{path.name} uses before its tutorial: {bad}"


def test_the_checks_see_what_they_look_for() -> None:
    """The detectors find the forms the tutorials write (or would write)."""
    text = (
        "see :ref:`sphx_glr_tutorials_07_several_losses.py` and tutorial 13,"
        " (→11), later, in :ref:`tutorial 05 <sphx_glr_tutorials_05_x.py>`"
        " and ``12_non_differentiable_points.py``"
    )
    found = references(text)
    assert [n for _, n in found] == [7, 13, 11, 5, 12]
    assert [is_pointer(text, at) for at, _ in found] == [0, 0, 0, 1, 0]
    page = read(TUTORIALS[0])
    assert any("import torch" in line for _, line in page.code)
    assert "sphinx_gallery_start_ignore" not in page.text
    assert any("What next" in cell for _, cell in page.prose)


def test_the_index_runs_the_first_tutorial() -> None:
    """The landing page's terminal example starts where a beginner starts."""
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    commands = re.findall(r"^python (\S+\.py)$", index, re.MULTILINE)
    assert commands == [TUTORIALS[0].name]


def shown_cells(page: Path) -> list[tuple[int, str]]:
    """(line, source) of each code cell a MyST page shows with its input."""
    text = page.read_text(encoding="utf-8")
    cells = re.finditer(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, re.M | re.S)
    shown = []
    for cell in cells:
        body = cell.group(1)
        if re.search(r"^:tags: \[.*remove-(cell|input)", body, re.MULTILINE):
            continue
        lines = [x for x in body.splitlines() if not x.startswith(":")]
        code = "\n".join(lines)
        shown.append((text[: cell.start()].count("\n") + 1, code))
    return shown


def loads(trees: list[ast.AST]) -> set[str]:
    return {
        n.id
        for tree in trees
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def test_the_mental_model_shows_no_unused_scaffolding() -> None:
    """A shown assignment that no later shown code reads is there only for a
    hidden check: the reader sees a line that leads nowhere."""
    page = ROOT / "docs" / "explanations" / "mental-model.md"
    cells = [(line, ast.parse(code).body) for line, code in shown_cells(page)]
    unused = []
    for i, (line, body) in enumerate(cells):
        for j, statement in enumerate(body):
            if not isinstance(statement, ast.Assign):
                continue
            targets = {
                n.id
                for t in statement.targets
                for n in ast.walk(t)
                if isinstance(n, ast.Name)
            }
            later = body[j + 1 :] + [s for _, b in cells[i + 1 :] for s in b]
            if targets - {"_"} and not targets & loads(later):
                unused.append((line + statement.lineno, ast.unparse(statement)[:40]))
    assert not unused, unused
