"""Tests for autograd_notes.saved: saved values, read without running user code."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import pytest
import torch
from torch.func import grad, vmap
from torch.utils.checkpoint import checkpoint

from autograd_notes import ModuleTrace, draw_graph, format_graph, to_dot
from autograd_notes.saved import saved_items, saved_shapes, saved_values

from .helpers import ABAB_TREE, Double, Stack, dot_structure


def test_format_node_root_and_scalar_saved_value() -> None:
    x = torch.ones(3, requires_grad=True)
    mul = (x * 2).grad_fn
    # With a Python number, MulBackward0 saves it as a 0-dim tensor, and does
    # not save self at all (it is only needed for the other input's grad).
    assert format_graph(mul, names={"x": x}, show_saved=True) == (
        "[0] MulBackward0\n"
        "    _saved_other: tensor of shape (), int64, value 2\n"
        "    _saved_self: None\n"
        "[1] AccumulateGrad  x: leaf tensor, shape (3,), float32, requires_grad=True"
    )


def test_format_shows_saved_tensors_then_freed_ones(
    abab: dict[str, torch.Tensor],
) -> None:
    before = format_graph(abab["y"], names=abab, show_saved=True)
    assert "│      _saved_other: tensor of shape (2,), float32" in before
    assert "│      _saved_self: tensor of shape (2,), float32" in before
    assert "    _saved_alpha: 1" in before
    assert "freed" not in before
    abab["y"].backward()
    after = format_graph(abab["y"], names=abab, show_saved=True)
    assert "│      _saved_other: <freed by backward>" in after
    assert "│      _saved_self: <freed by backward>" in after
    # Everything else prints as before: only the freed values changed.
    changed = [
        (old, new)
        for old, new in zip(before.split("\n"), after.split("\n"), strict=True)
        if old != new
    ]
    assert [old.split(":")[0] for old, _ in changed] == [
        "│      _saved_other",
        "│      _saved_self",
    ]
    assert format_graph(abab["y"], names=abab) == ABAB_TREE


def test_format_custom_function_lists_saved_tensors() -> None:
    x = torch.ones(3, requires_grad=True)
    y = Double.apply(x).sum()
    expected = (
        "[0] SumBackward0\n"
        "    _saved_self_sym_sizes: (3,)\n"
        "[1] DoubleBackward (custom autograd.Function)\n"
        "    saved_tensors: {}\n"
        "[2] AccumulateGrad  x: leaf tensor, shape (3,), float32, requires_grad=True"
    )
    saved = "(tensor of shape (3,),)"
    assert format_graph(y, names={"x": x}, show_saved=True) == expected.format(saved)
    y.backward()
    freed = format_graph(y, names={"x": x}, show_saved=True)
    assert freed == expected.format("<freed by backward>")


def test_to_dot_saved_values_and_freed_ones(abab: dict[str, torch.Tensor]) -> None:
    nodes, _ = dot_structure(to_dot(abab["y"], show_saved=True))
    assert nodes["n2"][0] == (
        "MulBackward0\\n_saved_other: tensor of shape (2,), float32"
        "\\n_saved_self: tensor of shape (2,), float32"
    )
    abab["y"].backward()
    nodes, _ = dot_structure(to_dot(abab["y"], show_saved=True))
    assert nodes["n2"][0] == (
        "MulBackward0\\n_saved_other: <freed by backward>"
        "\\n_saved_self: <freed by backward>"
    )


def test_show_saved_works_inside_vmap_of_grad() -> None:
    seen: list[str] = []

    def f(t: torch.Tensor) -> torch.Tensor:
        s = t.sum()
        out = s * s  # MulBackward0 saves two 0-dim batched tensors
        seen.append(format_graph(out, show_saved=True))
        return out

    grads = vmap(grad(f))(torch.ones(2, 3))
    assert torch.equal(grads, torch.full((2, 3), 6.0))
    assert "    _saved_other: tensor of shape (), float32" in seen[0]
    assert "value" not in seen[0]


def test_show_saved_never_runs_unpack_hooks() -> None:
    calls: list[str] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        calls.append("pack")
        return t

    def unpack(t: torch.Tensor) -> torch.Tensor:
        calls.append("unpack")
        return t

    x = torch.ones(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x.exp() * x).sum()
    packs = calls.count("pack")
    text = format_graph(y, show_saved=True)
    to_dot(y, show_saved=True)
    assert calls == ["pack"] * packs  # nothing unpacked
    assert "_saved_self: <not unpacked: saved_tensors_hooks>" in text
    y.backward()
    assert calls.count("unpack") == packs  # backward unpacks each, once
    assert torch.allclose(x.grad, (x.detach() + 1) * x.detach().exp())
    assert "_saved_self: <freed by backward>" in format_graph(y, show_saved=True)


def test_show_saved_does_not_rerun_a_checkpointed_forward() -> None:
    runs: list[int] = []

    def body(t: torch.Tensor) -> torch.Tensor:
        runs.append(1)
        return t.sin() * t

    x = torch.ones(3, requires_grad=True)
    y = checkpoint(body, x, use_reentrant=False).sum()
    assert len(runs) == 1
    text = format_graph(y, show_saved=True)
    draw_graph(y, show_saved=True)
    plt.close("all")
    assert len(runs) == 1
    assert "<not unpacked: recomputed by checkpoint in backward>" in text
    y.backward()
    assert len(runs) == 2  # backward recomputes once, as without show_saved
    assert torch.allclose(
        x.grad, torch.cos(x.detach()) * x.detach() + torch.sin(x.detach())
    )


def test_show_saved_of_a_custom_function_with_hooks() -> None:
    x = torch.ones(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = Double.apply(x).sum()
    assert "saved_tensors: (<not unpacked: saved_tensors_hooks>,)" in format_graph(
        y, show_saved=True
    )


def test_no_output_contains_a_memory_address() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)
    )
    x = torch.randn(5, 3)
    loss = (Double.apply(model(x)) ** 2).mean()
    names = {**dict(model.named_parameters()), "loss": loss, "model": model}
    texts = [
        format_graph(loss, names=names, show_saved=True, show_retained=True),
        to_dot(loss, names=names, show_saved=True),
    ]
    loss.backward()
    texts.append(format_graph(loss, names=names, show_saved=True))
    for text in texts:
        assert "0x" not in text
        assert " at 0x" not in text
        assert "object at" not in text


def test_no_address_in_grouped_or_collapsed_output(
    traced: tuple[Stack, ModuleTrace, torch.Tensor],
) -> None:
    _, trace, loss = traced
    for text in (
        format_graph(loss, modules=trace, show_saved=True),
        format_graph(loss, modules=trace, depth=2, show_saved=True),
        to_dot(loss, modules=trace, depth=1, show_saved=True),
    ):
        assert not re.search(r"0x[0-9a-f]{6,}", text)


@pytest.mark.parametrize("node", [None, "MulBackward0", torch.ones(1)])
def test_saved_values_names_its_argument(node: object) -> None:
    with pytest.raises(
        TypeError, match=r"^saved_values\(\) argument 'node' must be a torch\.autograd"
    ):
        saved_values(node)  # type: ignore[arg-type]


def test_saved_shapes_tell_calls_apart_and_run_no_unpack_hook() -> None:
    x = torch.ones(2, 3, requires_grad=True)
    a, b = x.sin(), x.sin()
    other = torch.ones(3, requires_grad=True).sin()
    assert a.grad_fn is not None
    assert b.grad_fn is not None
    assert other.grad_fn is not None
    expected = ((torch.Size([2, 3]), torch.float32),)
    assert saved_shapes(a.grad_fn) == saved_shapes(b.grad_fn) == expected
    assert saved_shapes(other.grad_fn) == ((torch.Size([3]), torch.float32),)
    unpacked: list[int] = []

    def unpack(t: torch.Tensor) -> torch.Tensor:
        unpacked.append(1)
        return t

    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        hooked = x.sin()
    assert hooked.grad_fn is not None
    assert saved_shapes(hooked.grad_fn) == expected
    custom = Double.apply(x)
    assert custom.grad_fn is not None
    assert saved_shapes(custom.grad_fn) == expected
    assert unpacked == []
    a.sum().backward()
    assert saved_shapes(a.grad_fn) == ("<freed by backward>",)  # no shape to read
    with torch.autograd.graph.save_on_cpu():
        packed = x.sin()
    assert packed.grad_fn is not None
    cpu = torch.device("cpu")
    assert saved_shapes(packed.grad_fn) == ((cpu, (torch.Size([2, 3]), torch.float32,
                                                   cpu)),)  # fmt: skip
    recomputed = checkpoint(torch.sin, x, use_reentrant=False)
    assert saved_shapes(recomputed.grad_fn) == (
        ("recomputed", torch.Size([2, 3]), torch.float32, cpu),
    )
    unknown = checkpoint(torch.sin, x, use_reentrant=False, determinism_check="none")
    assert saved_shapes(unknown.grad_fn) == (
        "<not unpacked: recomputed by checkpoint in backward>",
    )
    with torch.autograd.graph.saved_tensors_hooks(lambda t: object(), unpack):
        opaque = x.sin()
    assert saved_shapes(opaque.grad_fn) == ("<not unpacked: saved_tensors_hooks>",)
    assert unpacked == []


class KeepsOnCtx(torch.autograd.Function):
    """Saves ``x`` for backward and keeps ``x * 2`` and a list on ``ctx``."""

    @staticmethod
    def forward(
        ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor
    ) -> torch.Tensor:
        ctx.save_for_backward(x)
        ctx.doubled = x * 2  # type: ignore[attr-defined]
        ctx.pair = [x, 1]  # type: ignore[attr-defined]
        return x * 3

    @staticmethod
    def backward(
        ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor
    ) -> torch.Tensor:
        return grad * 3


def test_saved_items_reads_each_saved_value_and_where_it_is_held() -> None:
    x = torch.ones(2, 3, requires_grad=True)
    product = x * x
    assert product.grad_fn is not None
    items = saved_items(product.grad_fn)
    assert [(item.label, item.held_by, item.freed) for item in items] == [
        ("_saved_other", None, False),
        ("_saved_self", None, False),
    ]
    assert all(item.data is x for item in items)
    kept = KeepsOnCtx.apply(x)
    labels = [item.label for item in saved_items(kept.grad_fn)]
    assert labels == ["saved_tensors[0]", "ctx.doubled", "ctx.pair[0]"]
    with torch.autograd.graph.save_on_cpu():
        packed = x.sin()
    (item,) = saved_items(packed.grad_fn)
    assert item.held_by == "hooks"
    assert not item.freed
    recomputed = checkpoint(torch.sin, x, use_reentrant=False)
    (item,) = saved_items(recomputed.grad_fn)
    assert item.held_by == "checkpoint"
    alone = x.exp()  # saves its result, a "_saved_result"
    alone.sum().backward()
    assert [(i.label, i.freed) for i in saved_items(alone.grad_fn)] == [
        ("_saved_result", True)
    ]
    kept.sum().backward()
    (freed, *on_ctx) = saved_items(kept.grad_fn)
    assert (freed.label, freed.raw, freed.freed) == ("saved_tensors", None, True)
    assert [item.label for item in on_ctx] == ["ctx.doubled", "ctx.pair[0]"]


def test_a_list_of_saved_tensors_is_read_entry_by_entry() -> None:
    x = torch.arange(6.0, requires_grad=True)
    rows = torch.tensor([0, 1])
    columns = torch.tensor([2, 2])
    picked = x.view(2, 3)[rows, columns]  # IndexBackward0 saves the index tensors
    node = picked.grad_fn
    assert node is not None
    items = saved_items(node)
    assert [item.label for item in items] == [
        "_saved_indices[0]",
        "_saved_indices[1]",
    ]
    assert items[0].data is rows
    assert items[1].data is columns
    text = "tensor of shape (2,), int64"
    assert saved_values(node) == [
        ("_saved_indices", f"[{text}, {text}]"),
        ("_saved_self_sym_sizes", "(2, 3)"),  # not a tensor: read as it is
    ]
    assert saved_shapes(node) == ((torch.Size([2]), torch.int64),) * 2
