"""Tests for autograd_notes.marks: custom Functions and double-backward nodes."""

from __future__ import annotations

import torch

from autograd_notes import draw_graph, format_graph, to_dot, walk_graph
from autograd_notes.marks import made_in_backward

from .helpers import Double, dot_structure, drawn_labels

CUSTOM = "custom autograd.Function"
BACKWARD = "made by a create_graph=True backward"


def test_a_custom_function_node_is_marked_in_every_renderer(
    close_figures: None,
) -> None:
    x = torch.ones(3, requires_grad=True)
    y = Double.apply(x).sum()
    assert format_graph(y).split("\n")[1] == f"[1] DoubleBackward ({CUSTOM})"
    nodes, _ = dot_structure(to_dot(y))
    assert nodes["n1"][0] == f"DoubleBackward\\n({CUSTOM})"
    assert drawn_labels(draw_graph(y))[1] == f"DoubleBackward\n({CUSTOM})"
    assert format_graph((x * 2).sum()).split("\n")[1] == "[1] MulBackward0"


def double_backward(anomaly: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` and the gradient of ``sum(sin(x) * x)``, a graph of its own."""
    x = torch.ones(3, requires_grad=True)
    with torch.autograd.set_detect_anomaly(anomaly):
        (grad,) = torch.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
    return x, grad


def test_nodes_of_a_create_graph_backward_are_marked_when_recorded() -> None:
    _, grad = double_backward(anomaly=True)
    lines = format_graph(grad).split("\n")
    assert lines[0] == f"[0] AddBackward0 ({BACKWARD})"
    # The forward's SinBackward0, reached from the new nodes, is not marked.
    (sin,) = [line for line in lines if "SinBackward0" in line]
    assert sin.endswith("SinBackward0")
    assert sum(BACKWARD in line for line in lines) == 5
    nodes, _ = dot_structure(to_dot(grad))
    assert nodes["n0"][0] == f"AddBackward0\\n({BACKWARD})"


def test_without_anomaly_mode_it_cannot_tell() -> None:
    _, grad = double_backward(anomaly=False)
    assert grad.grad_fn is not None
    assert made_in_backward(grad.grad_fn) is None
    assert BACKWARD not in format_graph(grad)
    _, grad = double_backward(anomaly=True)
    nodes = {type(node).__name__: node for node in walk_graph(grad)}
    assert made_in_backward(nodes["CosBackward0"]) is True  # made by the backward
    assert made_in_backward(nodes["SinBackward0"]) is False  # by the forward
