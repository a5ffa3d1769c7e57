"""The one layout rule: autograd_notes.layout, draw_graph's networkx rule, the page.

``EXAMPLES`` are shared with the browser suite, which holds the page's
script (``_html/layout.js``) to the same answers.
"""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from autograd_notes import to_html, track_modules
from autograd_notes.drawing import _layers as drawing_layers
from autograd_notes.layout import layers

# name: (out, the rows layers() gives); root 0 in each.
EXAMPLES: dict[str, tuple[list[list[int]], list[int]]] = {
    "one box": ([[]], [0]),
    "chain": ([[1], [2], []], [0, 1, 2]),
    "longest path wins": ([[1, 3], [2], [3], []], [0, 1, 2, 3]),
    "leaves at the bottom": ([[1, 2], [3], [], []], [0, 1, 2, 2]),
    "two sources": ([[2], [2], [3], []], [0, 0, 1, 2]),
    "diamond": ([[1, 2], [3], [3], []], [0, 1, 1, 2]),
    "a module used twice (cycle)": ([[1], [2], [1, 3], []], [0, 1, 2, 3]),
    "a cycle back to the root": ([[1], [0, 2], []], [0, 1, 2]),
    "a box the root misses, in a cycle": ([[1], [2], [1], [2]], [0, 1, 2, 2]),
    "a self-link and a repeated link": ([[0, 1, 1], []], [0, 1]),
}


# Graphs of 1 to 12 boxes, each linking to up to 4 (cycles and self-links too).
GRAPHS = st.integers(1, 12).flatmap(
    lambda boxes: st.lists(
        st.lists(st.integers(0, boxes - 1), max_size=4),
        min_size=boxes,
        max_size=boxes,
    )
)


def _by_row(rows: list[int]) -> dict[int, list[int]]:
    placed: dict[int, list[int]] = {}
    for box, row in enumerate(rows):
        placed.setdefault(row, []).append(box)
    return placed


@pytest.mark.parametrize("name", EXAMPLES)
def test_layers_gives_each_example_its_rows(name: str) -> None:
    out, rows = EXAMPLES[name]
    assert layers(out) == rows


@pytest.mark.parametrize("name", EXAMPLES)
def test_draw_graph_lays_out_each_example_the_same(name: str) -> None:
    out, rows = EXAMPLES[name]
    assert drawing_layers(out) == _by_row(rows)


@given(GRAPHS)
def test_layers_agrees_with_draw_graph_on_random_graphs(out: list[list[int]]) -> None:
    assert _by_row(layers(out)) == drawing_layers(out)


@given(GRAPHS)
def test_without_a_cycle_every_link_points_down(out: list[list[int]]) -> None:
    dag = [[t for t in targets if t > b] for b, targets in enumerate(out)]
    rows = layers(dag)
    assert all(rows[t] > rows[b] for b, targets in enumerate(dag) for t in targets)
    bottom = max(rows)
    assert all(rows[b] == bottom for b, targets in enumerate(dag) if not targets)


def test_the_static_svg_lays_out_a_module_used_twice_as_the_rule_says() -> None:
    torch.manual_seed(0)
    shared = torch.nn.Linear(3, 3)
    model = torch.nn.Sequential(shared, torch.nn.Tanh(), shared)
    with track_modules(model) as trace:
        loss = model(torch.randn(2, 3)).sum()
    page = to_html(loss, modules=trace)
    # the top level: the sum, module 0 (= 2, called twice: a cycle with 1), 1
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", page.svg)
    tops = re.findall(r'<rect x="[^"]*" y="([^"]*)"', page.svg)
    row_of = dict(zip(texts, map(float, tops), strict=True))
    rows = sorted(set(row_of.values()))
    assert [rows.index(row_of[t]) for t in texts] == [0, 1, 2]
    assert texts[0].startswith("[0] ")
    assert texts[1].startswith("[1] 0")


def test_bad_arguments_are_named() -> None:
    with pytest.raises(TypeError, match="argument 'out' must be a sequence"):
        layers(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="argument 'out' must be lists of box"):
        layers([[1]])
    with pytest.raises(TypeError, match="argument 'root' must be an int"):
        layers([[]], root="0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="argument 'root' must be a box index"):
        layers([[]], root=1)
