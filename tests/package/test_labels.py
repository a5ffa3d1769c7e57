"""Tests for autograd_notes.labels: names matched by identity, printable labels."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest
import torch

from autograd_notes import draw_graph, format_graph, to_dot
from autograd_notes.labels import format_bytes

from .helpers import ABAB_TREE, dot_structure, function_named


@pytest.mark.parametrize("func", [format_graph, to_dot, draw_graph])
def test_names_must_be_a_mapping_with_str_keys(
    func: Callable[..., object], abab: dict[str, torch.Tensor]
) -> None:
    with pytest.raises(
        TypeError, match=r"argument 'names' must be a mapping.* not list"
    ):
        func(abab["y"], names=[("a", abab["a"])])
    with pytest.raises(TypeError, match="argument 'names' must have str keys, not int"):
        func(abab["y"], names={1: abab["a"]})


def test_format_takes_names_from_locals_ignoring_other_values(
    abab: dict[str, torch.Tensor],
) -> None:
    a, b, y = abab["a"], abab["b"], abab["y"]
    alias, count, label = a, 3, "not a tensor"
    namespace = {"a": a, "alias": alias, "b": b, "count": count, "label": label, "y": y}
    assert format_graph(y, names=namespace) == ABAB_TREE  # the first name wins


def test_format_without_names_uses_neutral_labels(
    abab: dict[str, torch.Tensor],
) -> None:
    lines = format_graph(abab["y"]).split("\n")
    assert lines[0] == "[0] SumBackward0"
    assert lines[3].endswith(
        "[3] AccumulateGrad  leaf tensor, shape (2,), float32, requires_grad=True"
    )


def test_format_names_parameters_of_a_module() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    loss = model(torch.ones(3, 2)).sum()
    text = format_graph(loss, names=dict(model.named_parameters()))
    assert text == (
        "[0] SumBackward0\n"
        "[1] AddmmBackward0\n"
        "├─ [2] AccumulateGrad  bias: leaf parameter, shape (1,), float32, "
        "requires_grad=True\n"
        "└─ [3] TBackward0\n"
        "   [4] AccumulateGrad  weight: leaf parameter, shape (1, 2), float32, "
        "requires_grad=True"
    )


def test_format_marks_retained_grads_only_when_asked() -> None:
    a = torch.ones(2, requires_grad=True)
    h = a * 3
    h.retain_grad()
    g = h * 2  # not retaining
    y = (g + h).sum()
    names = {"a": a, "h": h, "g": g, "y": y}
    plain = format_graph(y, names=names)
    marked = format_graph(y, names=names, show_retained=True)
    assert "[2] MulBackward0  (grad_fn of g)" in plain
    assert "(grad_fn of h)" in plain
    assert "retains" not in plain
    assert "(grad_fn of h [retains grad])" in marked
    assert "(grad_fn of g)" in marked
    assert marked.count("[retains grad]") == 1


def test_format_lists_every_output_of_a_multi_output_node() -> None:
    q, k = torch.ones(4, requires_grad=True).split(2)
    text = format_graph((q * k).sum(), names={"q": q, "k": k})
    assert "├─ [2] SplitBackward0  (grad_fn of q, k)" in text
    assert "└─ -> [2] SplitBackward0 (see above)" in text


def test_to_dot_escapes_awkward_names() -> None:
    x = torch.ones(2, requires_grad=True)
    name = 'say "hi"\\n'
    nodes, _ = dot_structure(to_dot(x.exp().sum(), names={name: x}))
    assert nodes["n2"][0] == 'AccumulateGrad\\nsay \\"hi\\"\\\\n: (2,) float32'


def test_to_dot_escapes_a_nul_in_a_name() -> None:
    x = torch.ones(2, requires_grad=True)
    source = to_dot(x.exp().sum(), names={"a\x00b": x})
    assert "\x00" not in source
    nodes, _ = dot_structure(source)
    assert nodes["n2"][0] == "AccumulateGrad\\na\\\\x00b: (2,) float32"


def test_to_dot_escapes_a_quote_in_a_function_class_name() -> None:
    x = torch.ones(2, requires_grad=True)
    y = function_named('Say"Hi').apply(x).sum()
    mark = "\\n(custom autograd.Function)"
    nodes, _ = dot_structure(to_dot(y))
    assert nodes["n1"][0] == 'Say\\"HiBackward' + mark
    nodes, _ = dot_structure(to_dot(y, collapse=False, show_saved=True))
    assert nodes["n1"][0] == 'Say\\"HiBackward' + mark


def test_a_newline_in_a_class_name_keeps_one_line_per_node() -> None:
    x = torch.ones(2, requires_grad=True)
    y = function_named("Two\nLines").apply(x).sum()
    text = format_graph(y, names={"x\ny": x})
    assert text.split("\n") == [
        "[0] SumBackward0",
        "[1] Two\\nLinesBackward (custom autograd.Function)",
        "[2] AccumulateGrad  x\\ny: leaf tensor, shape (2,), float32, "
        "requires_grad=True",
    ]
    nodes, _ = dot_structure(to_dot(y))
    assert nodes["n1"][0] == "Two\\\\nLinesBackward\\n(custom autograd.Function)"


def test_a_nested_tensor_leaf_is_described() -> None:
    with warnings.catch_warnings():  # strided nested tensors are a prototype
        warnings.simplefilter("ignore", UserWarning)
        nt = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    nt.requires_grad_()
    text = format_graph(nt * 2, show_saved=True)
    assert "leaf tensor, shape nested (2 tensors), float32" in text
    assert format_graph(nt).startswith("leaf tensor, shape nested (2 tensors)")
    assert "nested (2 tensors) float32" in to_dot(nt * 2)


def test_format_bytes() -> None:
    assert format_bytes(0) == "0 B"
    assert format_bytes(1023) == "1,023 B"
    assert format_bytes(1024) == "1.0 KiB"
    assert format_bytes(-2048) == "-2.0 KiB"
    assert format_bytes(779 << 20) == "779.0 MiB"
    assert format_bytes(3 << 40) == "3.0 TiB"
