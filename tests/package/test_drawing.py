"""Tests for autograd_notes.drawing: boxes, layers, legend, and routed arrows.

draw_graph routes every arrow around the boxes it does not join. The
property: for random autograd graphs, no segment of an arrow (its line or its
head) touches a box other than the two it joins, every edge of the graph is
drawn once, and no two boxes overlap. Tutorial 03's graph, whose
``PowBackward0 -> w`` edge used to cross two boxes, is checked by name.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator
from itertools import pairwise

import matplotlib
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.path import Path

from autograd_notes import draw_graph, walk_graph

from .helpers import chain, lstm_loss

matplotlib.use("agg")
import matplotlib.pyplot as plt

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # left, bottom, right, top

UNARY = [torch.sin, torch.exp, torch.tanh, lambda t: t * 2, lambda t: t.pow(2)]
BINARY = [torch.add, torch.mul, torch.sub, lambda a, b: a * b + a]


@pytest.fixture(autouse=True)
def close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def segment_hits_rect(p: Point, q: Point, rect: Rect) -> bool:
    """Whether segment pq meets the closed rectangle (Liang-Barsky clipping)."""
    left, bottom, right, top = rect
    t0, t1 = 0.0, 1.0
    dx, dy = q[0] - p[0], q[1] - p[1]
    for step, room in (
        (-dx, p[0] - left),
        (dx, right - p[0]),
        (-dy, p[1] - bottom),
        (dy, top - p[1]),
    ):
        if step == 0:
            if room < 0:
                return False
            continue
        t = room / step
        if step < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def distance(point: Point, rect: Rect) -> float:
    left, bottom, right, top = rect
    dx = max(left - point[0], 0.0, point[0] - right)
    dy = max(bottom - point[1], 0.0, point[1] - top)
    return float((dx * dx + dy * dy) ** 0.5)


def drawn_boxes(fig: Figure) -> list[Rect]:
    """Every node box, in data coordinates, as it is drawn."""
    ax = fig.axes[0]
    fig.draw_without_rendering()
    to_data = ax.transData.inverted()
    rects = []
    for text in ax.texts:
        patch = text.get_bbox_patch()
        if text.get_text() and patch is not None:
            (x0, y0), (x1, y1) = to_data.transform(
                patch.get_window_extent().get_points()
            )
            rects.append((float(x0), float(y0), float(x1), float(y1)))
    return rects


def polylines(path: Path) -> list[list[Point]]:
    """The line and the head of an arrow, each as a list of points."""
    lines: list[list[Point]] = []
    for vertices, code in path.iter_segments(simplify=False, curves=False):
        point = (float(vertices[-2]), float(vertices[-1]))
        if code == Path.MOVETO:
            lines.append([point])
        elif code == Path.CLOSEPOLY:
            lines[-1].append(lines[-1][0])
        else:
            lines[-1].append(point)
    return lines


def crossings(fig: Figure) -> list[str]:
    """Each (arrow, box) pair where an arrow touches a box it does not join."""
    ax = fig.axes[0]
    rects = drawn_boxes(fig)
    labels = [t.get_text() for t in ax.texts if t.get_text()]
    found = []
    arrows = [p for p in ax.patches if p.get_gid() == "edge"]
    for arrow in arrows:
        line, *head = polylines(arrow.get_path())
        ends = {
            min(range(len(rects)), key=lambda r: distance(end, rects[r]))
            for end in (line[0], line[-1])
        }
        for points in [line, *head]:
            for p, q in pairwise(points):
                for r, rect in enumerate(rects):
                    if r not in ends and segment_hits_rect(p, q, rect):
                        found.append(f"{line[0]}->{line[-1]} crosses {labels[r]!r}")
    return found


def edge_count(root: torch.Tensor) -> int:
    """Distinct (node, input node) pairs of the graph behind ``root``."""
    return len(
        {
            (node, child)
            for node in walk_graph(root)
            for child, _ in node.next_functions
            if child is not None
        }
    )


def test_the_checker_sees_a_crossing() -> None:
    box = (0.0, 0.0, 1.0, 1.0)
    assert segment_hits_rect((-1.0, 0.5), (2.0, 0.5), box)
    assert segment_hits_rect((0.5, 2.0), (0.5, 0.9), box)
    assert not segment_hits_rect((-1.0, 1.5), (2.0, 1.2), box)
    assert not segment_hits_rect((1.1, -1.0), (1.1, 2.0), box)


@st.composite
def graphs(draw: st.DrawFn) -> torch.Tensor:
    """A random graph: leaves, unary and binary operations, one scalar root."""
    leaves = [
        torch.rand(3, requires_grad=True)
        for _ in range(draw(st.integers(min_value=1, max_value=4)))
    ]
    tensors = list(leaves)
    for _ in range(draw(st.integers(min_value=1, max_value=14))):
        if draw(st.booleans()):
            op = draw(st.sampled_from(UNARY))
            tensors.append(op(draw(st.sampled_from(tensors))))
        else:
            op2 = draw(st.sampled_from(BINARY))
            a, b = draw(st.sampled_from(tensors)), draw(st.sampled_from(tensors))
            tensors.append(op2(a, b))
    outputs = draw(st.lists(st.sampled_from(tensors), min_size=1, max_size=3))
    return sum((t.sum() for t in outputs), torch.zeros(()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.booleans())
def test_no_arrow_crosses_a_box(root: torch.Tensor, collapse: bool) -> None:
    fig = draw_graph(root, collapse=collapse)
    rects = drawn_boxes(fig)
    for i, a in enumerate(rects):  # the property means nothing if boxes overlap
        for b in rects[i + 1 :]:
            assert a[2] < b[0] or b[2] < a[0] or a[3] < b[1] or b[3] < a[1]
    if not collapse:
        arrows = [p for p in fig.axes[0].patches if p.get_gid() == "edge"]
        assert len(arrows) == edge_count(root)
    assert crossings(fig) == []
    plt.close(fig)


def test_tutorial_03_graph() -> None:
    """The edge PowBackward0 -> w skips two rows, between their boxes."""
    _ = torch.manual_seed(0)
    inputs, target = torch.randn(6, 3), torch.randn(6)
    w = torch.randn(3, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    pred = inputs @ w + b
    loss = ((pred - target) ** 2).mean() + 0.1 * (w**2).sum()
    fig = draw_graph(loss, names={"w": w, "b": b, "pred": pred})
    assert crossings(fig) == []
    assert len([p for p in fig.axes[0].patches if p.get_gid() == "edge"]) == 11
    description = fig.axes[0].get_label()
    assert description.startswith("Backward graph: 11 arrows")
    assert "Leaves: w, b." in description
    assert "Arrows into w: 2." in description


def test_a_graph_of_one_arrow_says_arrow() -> None:
    a = torch.ones(2, requires_grad=True)
    fig = draw_graph(a.sum(), names={"a": a})
    description = fig.axes[0].get_label()
    assert description.startswith("Backward graph: 1 arrow from the root"), description
    plt.close(fig)


def boxes(fig: Figure) -> list[tuple[str, float, str]]:
    """(label, y, fill colour) of each node box drawn."""
    found = []
    for text in fig.axes[0].texts:
        patch = text.get_bbox_patch()
        if text.get_text() and patch is not None:
            colour = "#{:02x}{:02x}{:02x}".format(
                *(round(255 * c) for c in patch.get_facecolor()[:3])
            )
            found.append((text.get_text(), text.get_position()[1], colour))
    return found


def test_draw_graph_draws_each_node_once_in_layers(
    abab: dict[str, torch.Tensor],
) -> None:
    fig = draw_graph(abab["y"], names=abab)
    assert isinstance(fig, Figure)
    drawn = boxes(fig)
    assert [label for label, _, _ in drawn] == [
        "SumBackward0\n(grad_fn of y)",
        "AddBackward0",
        "MulBackward0",
        "a\n(2,) float32",
        "b\n(2,) float32",
    ]
    ys = [y for _, y, _ in drawn]
    assert ys[0] > ys[1] > ys[2] > ys[3] == ys[4]  # root on top, leaves at the bottom
    colours = [colour for _, _, colour in drawn]
    assert colours[1] == colours[2]
    assert len({colours[0], colours[1], colours[3]}) == 3  # root, node, leaf differ
    assert colours[3] == colours[4]
    arrows = [p for p in fig.axes[0].patches if p.get_gid() == "edge"]
    assert len(arrows) == 5  # Sum->Add, Add->Mul, Add->a, Mul->a, Mul->b
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        "root",
        "backward node",
        "leaf (AccumulateGrad)",
    ]
    fig.savefig(io.BytesIO(), format="png")


def test_draw_graph_is_deterministic(abab: dict[str, torch.Tensor]) -> None:
    first = boxes(draw_graph(abab["y"], names=abab))
    second = boxes(draw_graph(abab["y"], names=abab))
    assert first == second


def test_draw_graph_into_given_axes(abab: dict[str, torch.Tensor]) -> None:
    fig, (left, right) = plt.subplots(1, 2)
    assert draw_graph(abab["y"], ax=right) is fig
    assert len(left.texts) == 0
    assert sum(1 for t in right.texts if t.get_text()) == 5


def test_draw_graph_of_a_tensor_without_graph(abab: dict[str, torch.Tensor]) -> None:
    fig = draw_graph(abab["a"], names=abab)
    assert [label for label, _, _ in boxes(fig)] == ["a\n(2,) float32"]


def test_draw_graph_refuses_large_graphs() -> None:
    with pytest.raises(
        ValueError, match=r"at most 200 nodes .* has 252 nodes; use format_graph"
    ):
        draw_graph(chain(251), collapse=False)
    assert plt.get_fignums() == []


def test_draw_graph_rejects_a_bad_ax(abab: dict[str, torch.Tensor]) -> None:
    with pytest.raises(
        TypeError, match=r"argument 'ax' must be a matplotlib Axes .* not str"
    ):
        draw_graph(abab["y"], ax="left")  # type: ignore[arg-type]


def test_draw_graph_without_networkx_says_what_to_install(
    abab: dict[str, torch.Tensor], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "networkx", None)
    with pytest.raises(ImportError, match=r"pip install matplotlib networkx"):
        draw_graph(abab["y"])


@pytest.mark.parametrize("name", ["price $5 and $6", "$$", r"$\alpha$"])
def test_draw_graph_draws_dollar_signs_literally(name: str) -> None:
    w = torch.ones(2, requires_grad=True)
    fig = draw_graph((w * w).sum(), names={name: w})  # "$$" raised ParseException
    texts = [t for t in fig.axes[0].texts if t.get_text()]
    assert texts[-1].get_text() == f"{name}\n(2,) float32"
    assert [t.get_parse_math() for t in texts] == [False] * 3  # no mathtext
    fig.savefig(io.BytesIO(), format="png")


def test_draw_graph_uses_no_tex_even_when_rcparams_ask(
    abab: dict[str, torch.Tensor],
) -> None:
    with plt.rc_context({"text.usetex": True}):
        fig = draw_graph(abab["y"], names={"a_b & 50%": abab["a"]})
        legend = fig.axes[0].get_legend()
        texts = [*fig.axes[0].texts, *legend.get_texts(), legend.get_title()]
        assert [t.get_usetex() for t in texts] == [False] * len(texts)
        fig.savefig(io.BytesIO(), format="png")


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda fig: fig.add_subplot(projection="3d"),
            TypeError,
            r"must be a 2-D matplotlib Axes \(projection 'rectilinear'\) or None, "
            r"not Axes3D \(projection '3d'\)",
        ),
        (
            lambda fig: fig.add_subplot(projection="polar"),
            TypeError,
            r"must be a 2-D .* not PolarAxes \(projection 'polar'\)",
        ),
        (
            lambda fig: fig.add_axes((0.0, 0.0, 0.0, 0.0)),
            ValueError,
            r"must be Axes of nonzero size, not 0 x 0 pixels",
        ),
        (
            lambda fig: fig.add_axes((0.1, 0.1, 0.5, 0.0)),
            ValueError,
            r"must be Axes of nonzero size, not \d+ x 0 pixels",
        ),
        (
            lambda fig: fig.add_subplot(yscale="log"),
            ValueError,
            r"must be Axes with linear scales, not x scale 'linear' and y scale 'log'",
        ),
    ],
    ids=["3d", "polar", "zero-size", "zero-height", "log-scale"],
)
def test_draw_graph_refuses_axes_it_cannot_draw_on(
    abab: dict[str, torch.Tensor],
    make: Callable[[Figure], Axes],
    error: type[Exception],
    message: str,
) -> None:
    ax = make(plt.figure())
    with pytest.raises(error, match=r"^draw_graph\(\) argument 'ax' " + message):
        draw_graph(abab["y"], ax=ax)
    assert len(ax.texts) == 0  # refused before drawing anything


def test_draw_graph_draws_a_folded_recurrent_model_it_refused_unfolded() -> None:
    trace, loss = lstm_loss(500, learned_start=False)
    with pytest.raises(ValueError, match="at most 200 nodes"):
        draw_graph(loss, modules=trace, fold=False)
    fig = draw_graph(loss, modules=trace)
    labels = [label for label, _, _ in boxes(fig)]
    assert labels[1].startswith("cell × 499\nfold: calls 1–499 of cell\n15 nodes each")
    assert len(labels) <= 21  # and the 4 parameters the first step shares
    assert "Modules: cell × 499." in fig.axes[0].get_label()  # the alt text
    fig = draw_graph(loss, modules=trace, depth=1)
    assert [label.split("\n")[0] for label, _, _ in boxes(fig)] == [
        "SumBackward0",
        "cell × 499",
        "cell",
    ]
