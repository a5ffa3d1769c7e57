"""Tests for autograd_notes.memory: the bytes saved for backward."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
import pytest
import torch
from torch.utils._pytree import tree_map
from torch.utils.checkpoint import checkpoint

from autograd_notes import ModuleTrace, saved_memory, track_modules, walk_graph
from autograd_notes.labels import format_bytes
from autograd_notes.memory import SavedMemory

from .gpt_model import GPT, gpt_loss
from .helpers import BAD_DEPTHS, superscript_model


def traced_gpt(**kwargs: Any) -> tuple[GPT, ModuleTrace, torch.Tensor]:
    torch.manual_seed(0)
    model = GPT(**kwargs)
    with track_modules(model) as trace:
        loss, _ = gpt_loss(model)
    return model, trace, loss


def independent_count(model: GPT) -> dict[tuple[str, int], tuple[int, str]]:
    """Every storage saved in a second, identical forward, seen by a pack hook:
    ``(device, address) -> (bytes, kind)``, kind from the model's state."""
    state = {p.untyped_storage().data_ptr(): "parameter" for p in model.parameters()}
    state |= {b.untyped_storage().data_ptr(): "buffer" for b in model.buffers()}
    seen: dict[tuple[str, int], tuple[int, str]] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        kind = state.get(storage.data_ptr(), "activation")
        seen[str(t.device), storage.data_ptr()] = (storage.nbytes(), kind)
        return t  # held by the graph: no address is reused meanwhile

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        gpt_loss(model)
    return seen


def test_the_total_matches_an_independent_count_of_every_saved_storage() -> None:
    """A GPT-2-shaped model: ``.total`` is every saved storage once, within 0.1 %
    (pack hooks do not see a Python number wrapped as a 0-dim tensor, which
    the report counts: 8 bytes per division by a float here)."""
    model, trace, loss = traced_gpt(blocks=3)
    report = saved_memory(loss, modules=trace)
    seen = independent_count(model)
    expected = sum(nbytes for nbytes, _ in seen.values())
    assert report.total >= expected
    assert abs(report.total - expected) <= 0.001 * expected
    by_kind = {
        kind: sum(b for b, found in seen.values() if found == kind)
        for kind in ("parameter", "buffer")
    }
    assert report.parameters == by_kind["parameter"]
    assert report.buffers == by_kind["buffer"] == 3 * 16 * 16  # the causal masks
    assert report.activations == report.total - report.parameters - report.buffers


def test_nodes_add_up_to_the_total_and_modules_to_their_nodes() -> None:
    _, trace, loss = traced_gpt(blocks=2)
    report = saved_memory(loss, modules=trace)
    assert sum(row.total for row in report.nodes) == report.total
    nodes = walk_graph(loss)
    paths = [trace.path_of(node) for node in nodes]
    totals = {row.index: row.total for row in report.nodes}
    for row in report.modules:
        if row.path is None:
            inside = [i for i, p in enumerate(paths) if p is None]
        else:
            prefix = row.path + "."
            inside = [
                i
                for i, p in enumerate(paths)
                if p is not None and (row.path in ("", p) or p.startswith(prefix))
            ]
        assert row.nodes == len(inside), row.path
        assert row.total == sum(totals.get(i, 0) for i in inside), row.path
    model_row, outside = report.module(""), report.module(None)
    assert model_row is not None
    assert outside is not None
    assert model_row.total + outside.total == report.total
    h0 = report.module("h.0")
    assert h0 is not None
    assert h0.total > 0
    children = ["h.0.ln_1", "h.0.attn", "h.0.ln_2", "h.0.mlp"]
    assert h0.total == sum(report.module(c).total for c in children)  # type: ignore[union-attr]


def test_the_calls_of_a_repeated_module_add_up_to_its_row() -> None:
    torch.manual_seed(0)
    cell = torch.nn.Sequential(torch.nn.LSTMCell(3, 4))
    x = torch.randn(5, 2, 3)
    state = (torch.zeros(2, 4), torch.zeros(2, 4))
    with track_modules(cell) as trace:
        for step in x:
            state = cell[0](step, state)
    report = saved_memory(state[0].sum(), modules=trace)
    calls = [row for row in report.calls if row.path == "0"]
    assert [row.call for row in calls] == [0, 1, 2, 3, 4]
    row = report.module("0")
    assert row is not None
    assert row.calls == 5
    assert sum(c.total for c in calls) == row.total > 0
    assert sum(c.nodes for c in calls) <= row.nodes  # its leaves: no call made them
    lines = {line.split()[0]: line for line in str(report).splitlines()[4:7]}
    low = format_bytes(min(c.total for c in calls))
    high = format_bytes(max(c.total for c in calls))
    assert lines["0"].endswith(f"  5, {low} to {high} per call")
    assert lines["(outside"].endswith(" B")  # no calls: made by no call


def test_a_storage_saved_by_several_nodes_counts_once_at_the_first() -> None:
    x = torch.ones(4, requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its result
    z = (y * y).sum()  # MulBackward0 saves y twice more
    report = saved_memory(z)
    assert report.total == 16
    (storage,) = report.storages
    assert storage.saves == 3
    exp, mul = (
        walk_graph(z).index(fn) for fn in (y.grad_fn, z.grad_fn.next_functions[0][0])
    )
    assert storage.node == exp
    rows = {row.index: row for row in report.nodes}
    assert rows[exp].total == 16
    assert rows[exp].shared == 0
    assert rows[mul].total == 0
    assert rows[mul].shared == 16


def test_views_count_their_whole_storage_once() -> None:
    """Views at other offsets have other ``data_ptr()``s but one storage."""
    x = torch.ones(10, requires_grad=True)
    y = x.exp()
    loss = y[2:].sin().sum() + y[:5].cos().sum()
    report = saved_memory(loss)
    assert report.total == report.activations == 40
    assert len(report.storages) == 1
    assert report.storages[0].saves == 3


def test_storages_that_overlap_count_their_union() -> None:
    """Two storages over one buffer (``torch.from_numpy`` of an array and of
    a slice of it): the bytes they share count once."""
    array = np.arange(10, dtype=np.float32)
    whole, tail = torch.from_numpy(array), torch.from_numpy(array[4:])
    w = torch.ones(10, requires_grad=True)
    loss = (w * whole).sum() + (w[4:] * tail).sum()  # each Mul saves its other
    assert whole.untyped_storage().data_ptr() != tail.untyped_storage().data_ptr()
    report = saved_memory(loss)
    assert report.total == 40
    assert len(report.storages) == 1
    assert report.storages[0].saves == 2


def test_values_held_by_hooks_are_listed_not_counted_and_never_unpacked() -> None:
    unpacked = []
    x = torch.ones(8, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(
        lambda t: t.clone(), lambda t: unpacked.append(t) or t
    ):
        y = x.exp().sin()
    loss = (y * 3.0).sum()
    report = saved_memory(loss)
    assert unpacked == []
    assert report.total == 8  # only the wrapped 3.0, saved outside the hooks
    assert [(n.attribute, n.reason) for n in report.not_counted] == [
        ("_saved_self", "held by saved_tensors_hooks"),
        ("_saved_result", "held by saved_tensors_hooks"),
    ]
    assert "not counted: 2 saved values (held by saved_tensors_hooks: 2)" in str(report)


def test_checkpointed_values_are_not_counted_nor_recomputed() -> None:
    """What a checkpoint recomputes is listed, not counted, and no forward runs
    again; the block's input, which the checkpoint keeps, is counted."""
    torch.manual_seed(0)
    model = GPT(blocks=2, checkpointed=True)
    runs: list[int] = []
    model.h[0].register_forward_pre_hook(lambda *_: runs.append(1))
    with track_modules(model) as trace:
        loss, _ = gpt_loss(model)
    report = saved_memory(loss, modules=trace)
    assert len(runs) == 1  # nothing recomputed
    assert {item.reason for item in report.not_counted} == {"recomputed by checkpoint"}
    held = 2 * 16 * 32 * 4  # each block's input (batch, seq, width), float32
    held += torch.get_rng_state().nbytes  # and the RNG state the rerun restores
    for block in ("h.0", "h.1"):
        row = report.module(block)
        assert row is not None
        assert held <= row.total < held + 64  # and a wrapped 0-dim scale


@pytest.mark.parametrize("preserve", [True, False])
def test_both_checkpoints_count_the_rng_state_they_keep(preserve: bool) -> None:
    """Reentrant or not, a checkpoint keeps its input and, with
    ``preserve_rng_state=True``, the CPU RNG state: both are counted alike."""
    block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh())
    x = torch.ones(2, 4).tanh().requires_grad_()  # an activation, not a leaf
    rng = torch.get_rng_state().nbytes if preserve else 0
    reports = []
    for reentrant in (True, False):
        y = checkpoint(
            block, x, use_reentrant=reentrant, preserve_rng_state=preserve
        ).sum()
        reports.append(saved_memory(y))
    plain, hooked = reports
    assert plain.total == hooked.total == 2 * 4 * 4 + rng  # the input, the state
    states = [s for s in hooked.storages if s.dtype == "uint8"]
    assert [s.nbytes for s in states] == ([rng] if preserve else [])
    assert {item.reason for item in hooked.not_counted} == {"recomputed by checkpoint"}
    assert plain.not_counted == []


def test_module_names_that_look_like_digits_sort_as_names() -> None:
    trace, loss = superscript_model(torch.nn.Tanh())
    report = saved_memory(loss, modules=trace)
    rows = [line.split()[0] for line in report.table(depth=1).split("\n")[5:-1]]
    assert rows == ["2", "10", "²"]  # numbers in order, then names


@pytest.mark.parametrize("hidden", ["checkpoint inputs", "checkpoint RNG state"])
def test_checkpoint_values_out_of_reach_are_said_so(
    monkeypatch: pytest.MonkeyPatch, hidden: str
) -> None:
    """A torch that keeps a checkpoint's inputs, or its RNG state, where they
    cannot be read: the report says it cannot tell, rather than count nothing
    silently."""
    frame = torch.utils.checkpoint._CheckpointFrame
    if hidden == "checkpoint inputs":

        def save_inputs(self: Any, *args: object) -> None:
            del self.saved_args  # kept under a name this package does not know
            self.elsewhere = args

        monkeypatch.setattr(frame, "save_inputs", save_inputs)
    else:
        init = frame.__init__

        def hide_state(self: Any, recompute_fn: Any, *args: Any) -> None:
            # the state stays in recompute_fn's closure, behind a partial
            init(self, functools.partial(recompute_fn), *args)

        monkeypatch.setattr(frame, "__init__", hide_state)
    torch.manual_seed(0)
    model = GPT(blocks=1, checkpointed=True)
    with track_modules(model) as trace:
        loss, _ = gpt_loss(model)
    report = saved_memory(loss, modules=trace)
    found = [n for n in report.not_counted if n.attribute == hidden]
    assert [n.reason for n in found] == [
        "kept by checkpoint where this torch hides it (cannot tell)"
    ]
    if hidden == "checkpoint RNG state":  # the inputs are still counted
        assert not [s for s in report.storages if s.dtype == "uint8"]
        hidden_inputs = [
            n for n in report.not_counted if n.attribute == "checkpoint inputs"
        ]
        assert hidden_inputs == []


def test_a_graph_on_the_meta_device_holds_nothing() -> None:
    x = torch.ones(3, device="meta", requires_grad=True)
    report = saved_memory(x.exp().sum())
    assert report.total == 0
    assert [n.reason for n in report.not_counted] == ["on the meta device (no data)"]


def test_after_backward_nothing_is_left() -> None:
    x = torch.ones(3, requires_grad=True)
    loss = x.exp().sum()
    loss.backward(retain_graph=True)
    assert saved_memory(loss).total == 12
    loss.backward()
    report = saved_memory(loss)
    assert report.total == 0
    assert not report.not_counted


def test_a_custom_function_counts_its_saved_tensors_and_ctx_tensors() -> None:
    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: torch.Tensor) -> torch.Tensor:
            ctx.save_for_backward(a)
            ctx.extra = [torch.zeros(5), 3]
            return a * 2

        @staticmethod
        def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
            return grad * 2

    x = torch.ones(4, requires_grad=True)
    report = saved_memory(Keep.apply(x).sum())
    assert report.total == 16 + 20
    assert report.parameters == 16  # x is a leaf that gets a gradient


class Loud(torch.Tensor):
    """A subclass that records each ``__torch_function__`` call."""

    calls: ClassVar[list[object]] = []

    @classmethod
    def __torch_function__(
        cls, func: Any, types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        cls.calls.append(func)
        with torch._C.DisableTorchFunction():
            return func(*args, **(kwargs or {}))


class Wrapper(torch.Tensor):
    """A ``__torch_dispatch__`` subclass around a tensor: no storage of its own."""

    calls: ClassVar[list[object]] = []
    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> Wrapper:
        return torch.Tensor._make_wrapper_subclass(  # type: ignore[no-any-return]
            cls, inner.shape, dtype=inner.dtype, requires_grad=inner.requires_grad
        )

    def __init__(self, inner: torch.Tensor) -> None:
        self.inner = inner

    @classmethod
    def __torch_dispatch__(
        cls, func: Any, types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        cls.calls.append(func)
        unwrap = tree_map(lambda t: t.inner if isinstance(t, Wrapper) else t, args)
        out = func(*unwrap, **(kwargs or {}))
        return tree_map(lambda t: Wrapper(t) if isinstance(t, torch.Tensor) else t, out)


def test_a_subclass_is_counted_without_running_its_code() -> None:
    x = torch.ones(3).as_subclass(Loud).requires_grad_()
    loss = (x.exp() * 2.0).sum()
    Loud.calls.clear()
    report = saved_memory(loss)
    assert Loud.calls == []
    assert report.total == 12 + 8  # exp's result, the wrapped 2.0


def test_a_dispatch_subclass_is_listed_not_counted_and_runs_no_code() -> None:
    x = Wrapper(torch.ones(3)).requires_grad_()
    loss = (x * x).sum()
    Wrapper.calls.clear()
    report = saved_memory(loss)
    assert Wrapper.calls == []
    assert report.total == 0
    reason = "no storage to count (Wrapper, torch.strided)"
    assert [(n.attribute, n.reason) for n in report.not_counted] == [
        ("_saved_other", reason),
        ("_saved_self", reason),
    ]


def test_parameters_and_buffers_are_named_and_listed_apart() -> None:
    _, trace, loss = traced_gpt(blocks=1)
    report = saved_memory(loss, modules=trace)
    named = {(s.kind, s.name) for s in report.storages if s.kind != "activation"}
    assert ("parameter", "wte.weight") in named  # tied with lm_head: once
    assert ("parameter", "h.0.mlp.c_fc.weight") in named
    assert ("buffer", "h.0.attn.causal") in named
    assert all(s.name for s in report.storages if s.kind != "activation")
    assert all(not s.name for s in report.storages if s.kind == "activation")
    text = str(report)
    assert "parameters and buffers saved:" in text
    assert "  h.0.attn.causal  (16, 16) bool  256 B" in text
    short = report.table(depth=1).split("parameters and buffers saved:\n")[1]
    deeper = [s for s in report.storages if s.name.count(".") > 1]
    total = format_bytes(sum(s.nbytes for s in deeper))
    assert short.splitlines()[-1] == f"  and {len(deeper)} in deeper modules ({total})"
    assert "  wte.weight  (32, 100) float32  12.5 KiB" in short
    untraced = saved_memory(loss)  # leaves that get a gradient, without names
    assert untraced.total == report.total
    assert untraced.parameters == report.parameters
    assert untraced.buffers == 0
    assert not untraced.modules


def test_the_table_is_the_same_every_time_and_cut_at_a_depth() -> None:
    texts = []
    for _ in range(2):
        _, trace, loss = traced_gpt(blocks=2)
        texts.append(saved_memory(loss, modules=trace).table(depth=2))
    assert texts[0] == texts[1]
    lines = texts[0].splitlines()
    assert lines[0].startswith("saved: ")
    assert any(line.startswith("    h.1  ") for line in lines)
    assert not any(line.startswith("      h.1.") for line in lines)


def test_a_tensor_without_a_graph_saved_nothing() -> None:
    report = saved_memory(torch.ones(2))
    assert report == SavedMemory()
    assert report.total == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tensor": 3}, "argument 'tensor' must be a torch.Tensor or a torch"),
        (
            {"tensor": torch.ones(1), "modules": "trace"},
            "argument 'modules' must be a ModuleTrace (from track_modules()) or None",
        ),
    ],
)
def test_saved_memory_names_a_wrong_argument(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(TypeError) as raised:
        saved_memory(**kwargs)
    assert message in str(raised.value)


@pytest.mark.parametrize(("depth", "error", "message"), BAD_DEPTHS)
def test_table_refuses_a_depth_format_graph_refuses(
    depth: object, error: type[Exception], message: str
) -> None:
    report = saved_memory(torch.ones(2, requires_grad=True).exp().sum())
    full = report.table()
    with pytest.raises(
        error, match=rf"^SavedMemory\.table\(\) argument 'depth' must be {message}$"
    ):
        report.table(depth)  # type: ignore[arg-type]
    assert report.table(None) == full
    assert report.table(1)


@pytest.mark.parametrize("traced", [True, False])
def test_rows_made_on_first_use_match_a_report_built_from_them(traced: bool) -> None:
    """Totals and the table come from the columns, without making a row; the
    rows made later give an eager report with the same totals, table and rows."""
    _, trace, loss = traced_gpt(blocks=2)
    lazy = saved_memory(loss, modules=trace if traced else None)
    numbers = (lazy.total, lazy.activations, lazy.parameters, lazy.buffers)
    text = lazy.table(depth=1)
    assert lazy._nodes is None
    assert lazy._storages is None
    eager = SavedMemory(
        nodes=list(lazy.nodes),
        modules=list(lazy.modules),
        calls=list(lazy.calls),
        storages=list(lazy.storages),
        not_counted=list(lazy.not_counted),
    )
    assert (eager.total, eager.activations, eager.parameters, eager.buffers) == numbers
    assert eager.table(depth=1) == text == lazy.table(depth=1)
    assert str(eager) == str(lazy)
    assert eager == lazy
    assert repr(eager) == repr(lazy)
    assert sum(row.nbytes for row in lazy.storages) == numbers[0]
    assert sum(row.total for row in lazy.nodes) == numbers[0]
    assert lazy.nodes is lazy.nodes  # made once
    assert [r.index for r in lazy.nodes] == sorted({r.index for r in lazy.nodes})
