"""Tests for :mod:`autograd_notes.masked_linear`.

Two modes are checked against independent references:

* freeze: ``nn.Linear`` (or ``F.linear``) whose weight gradient is multiplied
  by the mask afterwards, or by a gradient hook;
* prune: ``F.linear`` with the weight ``W * M``, differentiated by autograd.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import math
import re
from types import SimpleNamespace
from typing import Any, Literal

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor, nn
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError
from torch.nn import functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from autograd_notes.masked_linear import (
    MaskedLinear,
    MaskedLinearFunction,
    masked_linear,
)

from .helpers import docstrings

# Not ``import autograd_notes.masked_linear as ...``: the package attribute of
# that name is the re-exported function, which shadows the module.
MODULE = importlib.import_module("autograd_notes.masked_linear")
Mode = Literal["freeze", "prune"]
MODES: tuple[Mode, ...] = ("freeze", "prune")
IN, OUT = 5, 4
# Input shapes: one sample, a batch, and extra leading batch dims.
INPUT_SHAPES = [(IN,), (3, IN), (2, 3, IN)]

# torch.compile's Dynamo instantiates torch.autograd.Function internally and
# silences the resulting DeprecationWarning with catch_warnings(record=True),
# which does not override an "error" filter; ignore exactly that warning.
IGNORE_DYNAMO_CTX_WARNING = pytest.mark.filterwarnings(
    "ignore:.*should not be instantiated:DeprecationWarning"
)


def make(
    shape: tuple[int, ...] = (3, IN),
    out: int = OUT,
    *,
    bias: bool = True,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> tuple[Tensor, Tensor, Tensor | None, Tensor]:
    """A leaf input, weight, optional bias (all requiring grad) and bool mask."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=dtype).requires_grad_()
    w = torch.randn(out, shape[-1], generator=g, dtype=dtype).requires_grad_()
    b = torch.randn(out, generator=g, dtype=dtype).requires_grad_() if bias else None
    m = torch.rand(out, shape[-1], generator=g) < 0.5
    m[0, 0], m[0, 1] = True, False  # both kinds of entry, whatever the seed
    return x, w, b, m


def fixed_mask(seed: int = 0) -> Tensor:
    """A reproducible (OUT, IN) bool mask with both kinds of entry."""
    return make(seed=seed)[3]


def grads(*tensors: Tensor | None) -> list[Tensor | None]:
    return [None if t is None else t.grad for t in tensors]


def message(func: str, arg: str, rest: str) -> str:
    """A regex matching the start of the house-style message."""
    return "^" + re.escape(f"{func}() argument '{arg}' must {rest}")


# --------------------------------------------------------------------------
# gradcheck / gradgradcheck


@pytest.mark.parametrize("shape", INPUT_SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_prune_gradcheck_and_gradgradcheck(shape: tuple[int, ...], bias: bool) -> None:
    x, w, b, m = make(shape, bias=bias)
    inputs = (x, w) if b is None else (x, w, b)

    def f(x: Tensor, w: Tensor, *b: Tensor) -> Tensor:
        return masked_linear(x, w, m, *b, mode="prune")

    assert gradcheck(f, inputs)
    assert gradgradcheck(f, inputs)


@pytest.mark.parametrize("shape", INPUT_SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_freeze_gradcheck_on_input_and_bias(shape: tuple[int, ...], bias: bool) -> None:
    x, w, b, m = make(shape, bias=bias)  # w requires grad, but is not checked
    inputs = (x,) if b is None else (x, b)

    def f(x: Tensor, *b: Tensor) -> Tensor:
        return masked_linear(x, w, m, *b, mode="freeze")

    assert gradcheck(f, inputs)
    assert gradgradcheck(f, inputs)


@pytest.mark.parametrize("shape", INPUT_SHAPES)
def test_freeze_gradcheck_rejects_the_weight(shape: tuple[int, ...]) -> None:
    """Freeze mode's weight gradient is not the derivative, by construction."""
    x, w, b, m = make(shape)

    def f(w: Tensor) -> Tensor:
        return masked_linear(x, w, m, b, mode="freeze")

    assert not gradcheck(f, (w,), raise_exception=False)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(f, (w,))
    # With a full mask nothing is frozen, and the gradient is exact again.
    full = torch.ones_like(m)
    assert gradcheck(lambda w: masked_linear(x, w, full, b, mode="freeze"), (w,))


def test_freeze_gradgradcheck_rejects_the_weight() -> None:
    """Second-order gradients reaching the weight are masked too.

    ``backward`` computes ``grad_input = g @ W``, which depends on every entry
    of ``W``; in freeze mode the entries outside the mask are constants, so
    gradgradcheck's finite differences over the whole weight disagree, as
    gradcheck's do. (The old double backward let them through.)
    """
    x, w, b, m = make((2, 3, IN))
    assert b is not None

    def f(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
        return masked_linear(x, w, m, b, mode="freeze")

    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(f, (x, w, b))
    full = torch.ones_like(m)
    assert gradgradcheck(lambda x, w, b: masked_linear(x, w, full, b), (x, w, b))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", INPUT_SHAPES)
def test_gradgradcheck_with_the_entries_outside_the_mask_constant(
    mode: Mode, shape: tuple[int, ...]
) -> None:
    """Both modes are exact to the second order in the input, the bias and
    the weight entries inside the mask, the entries outside being constants
    (they are in freeze mode, and act as zeros in prune mode)."""
    x, w, b, m = make(shape)
    assert b is not None
    outside = w.detach().clone()

    def f(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
        return masked_linear(x, torch.where(m, w, outside), m, b, mode=mode)

    assert gradcheck(f, (x, w, b))
    assert gradgradcheck(f, (x, w, b))


# --------------------------------------------------------------------------
# Values against references


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", INPUT_SHAPES)
def test_masked_out_entries_get_exactly_zero_grad(
    mode: Mode, shape: tuple[int, ...]
) -> None:
    x, w, b, m = make(shape)
    masked_linear(x, w, m, b, mode=mode).square().sum().backward()
    assert w.grad is not None
    assert torch.equal(w.grad[~m], torch.zeros_like(w.grad[~m]))
    assert bool((w.grad[m] != 0).all())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", INPUT_SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_matches_plain_linear_reference(
    mode: Mode, shape: tuple[int, ...], bias: bool
) -> None:
    """freeze: F.linear with the whole W, weight gradient times M.
    prune: F.linear with W * M, every gradient exact."""
    x, w, b, m = make(shape, bias=bias)
    out = masked_linear(x, w, m, b, mode=mode)
    upstream = torch.randn_like(out)
    out.backward(upstream)

    rx, rw = x.detach().requires_grad_(), w.detach().requires_grad_()
    rb = None if b is None else b.detach().requires_grad_()
    ref = F.linear(rx, rw if mode == "freeze" else rw * m, rb)
    ref.backward(upstream)

    torch.testing.assert_close(out, ref)
    assert rw.grad is not None
    want = grads(rx, rw, rb)
    if mode == "freeze":
        want[1] = rw.grad * m
    for got, expected in zip(grads(x, w, b), want, strict=True):
        torch.testing.assert_close(got, expected)


def test_float_mask_is_accepted_and_left_unchanged() -> None:
    x, w, b, m = make()
    fm = m.to(torch.float64)
    before = fm.clone()
    torch.testing.assert_close(
        masked_linear(x, w, fm, b, mode="prune"),
        masked_linear(x, w, m, b, mode="prune"),
    )
    assert torch.equal(fm, before)


def test_empty_batch() -> None:
    x, w, b, m = make((0, IN))
    out = masked_linear(x, w, m, b)
    assert out.shape == (0, OUT)
    out.sum().backward()
    assert w.grad is not None
    assert torch.equal(w.grad, torch.zeros_like(w))


batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2)


@settings(max_examples=30, deadline=None)
@given(
    batch=batch_shapes,
    in_features=st.integers(1, 6),
    out_features=st.integers(1, 6),
    bias=st.booleans(),
    mode=st.sampled_from(MODES),
    seed=st.integers(0, 2**31 - 1),
)
def test_module_matches_linear_with_reference_masking(
    batch: list[int],
    in_features: int,
    out_features: int,
    bias: bool,
    mode: Mode,
    seed: int,
) -> None:
    """freeze == nn.Linear + gradient hook; prune == nn.Linear on W * M."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(out_features, in_features, generator=g) < 0.5
    ref = nn.Linear(in_features, out_features, bias=bias, dtype=torch.float64)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64))
    layer = MaskedLinear.from_linear(ref, mask, mode=mode)
    x = torch.randn(*batch, in_features, generator=g, dtype=torch.float64)
    upstream = torch.randn(*batch, out_features, generator=g, dtype=torch.float64)

    x_layer = x.clone().requires_grad_()
    out = layer(x_layer)
    out.backward(upstream)

    x_ref = x.clone().requires_grad_()
    if mode == "freeze":
        ref.weight.register_hook(lambda grad: grad * mask)
        expected = ref(x_ref)
    else:
        expected = F.linear(x_ref, ref.weight * mask, ref.bias)
    expected.backward(upstream)

    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(x_layer.grad, x_ref.grad)
    torch.testing.assert_close(layer.weight.grad, ref.weight.grad)
    if bias:
        assert layer.bias is not None
        assert ref.bias is not None
        torch.testing.assert_close(layer.bias.grad, ref.bias.grad)


# --------------------------------------------------------------------------
# Double backward: gradient penalties, meta-learning


def reference_linear(
    x: Tensor, w: Tensor, m: Tensor, b: Tensor | None, mode: str
) -> Tensor:
    """What each mode means, by plain autograd: the weight entries outside
    the mask are constants (freeze) or zeros (prune)."""
    outside = w.detach() if mode == "freeze" else torch.zeros((), dtype=w.dtype)
    return F.linear(x, torch.where(m, w, outside), b)


def penalised_grads(layer: Any, x: Tensor, w: Tensor, b: Tensor) -> tuple[Tensor, ...]:
    """Gradients of a loss plus penalties on its own input, weight and bias
    gradients: every second-order path through ``backward``."""
    loss = layer(x, w, b).tanh().sum()
    gx, gw, gb = torch.autograd.grad(loss, (x, w, b), create_graph=True)
    total = loss + gx.pow(2).sum() + gw.pow(2).sum() + gb.sin().sum()
    return torch.autograd.grad(total, (x, w, b))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", INPUT_SHAPES)
def test_double_backward_matches_the_reference(
    mode: Mode, shape: tuple[int, ...]
) -> None:
    x, w, b, m = make(shape)
    assert b is not None
    got = penalised_grads(lambda x, w, b: masked_linear(x, w, m, b, mode=mode), x, w, b)
    want = penalised_grads(lambda x, w, b: reference_linear(x, w, m, b, mode), x, w, b)
    torch.testing.assert_close(got, want)
    assert torch.equal(got[1][~m], torch.zeros_like(got[1][~m]))


def penalty_step(layer: nn.Module, x: Tensor) -> Tensor:
    """One SGD step on a loss with a WGAN-GP-style input-gradient penalty.

    Returns the weight gradient the step used.
    """
    x = x.clone().requires_grad_()
    out = layer(x)
    (grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    loss = out.mean() + 10 * (grad_x.norm(dim=-1) - 1).pow(2).mean()
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    weight = layer.weight
    assert isinstance(weight, Tensor)
    assert weight.grad is not None
    return weight.grad


def test_the_gradient_penalty_of_the_issue_leaves_frozen_entries_at_zero() -> None:
    x, w, _, m = make()
    grad_x = torch.autograd.grad(masked_linear(x, w, m).sum(), x, create_graph=True)[0]
    grad_x.pow(2).sum().backward()
    assert w.grad is not None
    assert torch.equal(w.grad[~m], torch.zeros_like(w.grad[~m]))
    assert bool((w.grad[m] != 0).any())


def test_a_gradient_penalty_step_moves_no_frozen_entry() -> None:
    """``MaskedLinear`` in both modes: exact zeros outside, as prune mode."""
    torch.manual_seed(0)
    linear = nn.Linear(IN, OUT, dtype=torch.float64)
    m = fixed_mask()
    x = torch.randn(6, IN, dtype=torch.float64)
    layers = {mode: MaskedLinear.from_linear(linear, m, mode=mode) for mode in MODES}
    got = {mode: penalty_step(layer, x) for mode, layer in layers.items()}
    assert torch.equal(got["freeze"][~m], torch.zeros_like(got["freeze"][~m]))
    assert torch.equal(got["freeze"][~m], got["prune"][~m])
    assert bool((got["freeze"][m] != 0).any())
    for layer in layers.values():
        assert torch.equal(layer.weight.detach()[~m], linear.weight.detach()[~m])


@pytest.mark.parametrize("mode", MODES)
def test_func_grad_of_a_gradient_penalty(mode: Mode) -> None:
    x, w, b, m = make()
    x, w0 = x.detach(), w.detach()

    def penalty(w: Tensor, layer: Any = masked_linear) -> Tensor:
        def loss(x: Tensor) -> Tensor:
            return layer(x, w, m, b, mode=mode).tanh().sum()

        return torch.func.grad(loss)(x).pow(2).sum()

    got = torch.func.grad(penalty)(w0)
    assert torch.equal(got[~m], torch.zeros_like(got[~m]))
    want = torch.func.grad(lambda w: penalty(w, reference_linear_kw))(w0)
    torch.testing.assert_close(got, want)
    batched = torch.func.vmap(torch.func.grad(penalty))(torch.stack([w0, 2 * w0]))
    torch.testing.assert_close(batched[0], got)
    assert torch.equal(batched[:, ~m], torch.zeros_like(batched[:, ~m]))


def reference_linear_kw(
    x: Tensor, w: Tensor, m: Tensor, b: Tensor | None, *, mode: str
) -> Tensor:
    return reference_linear(x, w, m, b, mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_second_order_weight_gradient_is_exactly_zero_outside_for_inf_and_nan(
    mode: Mode,
) -> None:
    """An ``inf``/``nan`` weight entry outside the mask: in freeze mode the
    penalty's gradient is ``inf``/``nan`` in its columns, yet exactly 0
    outside the mask; in prune mode the entries act as zeros."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, 3, generator=g, dtype=torch.float64)
    m = torch.tensor([[True, False, True], [False, True, True]])
    w[~m] = torch.tensor([math.inf, math.nan], dtype=torch.float64)
    w.requires_grad_()
    out = masked_linear(x, w, m, mode=mode)
    (grad_x,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    grad_x.pow(2).sum().backward()
    assert w.grad is not None
    assert torch.equal(w.grad[~m], torch.zeros(2, dtype=torch.float64))
    if mode == "prune":
        assert bool(w.grad.isfinite().all())
    else:
        assert not bool(w.grad[m].isfinite().all())  # the values did reach W


# --------------------------------------------------------------------------
# needs_input_grad, saved tensors, the backward contract


def run_backward(
    needs: tuple[bool, bool, bool], mode: Mode = "freeze"
) -> tuple[Any, ...]:
    """Call ``backward`` directly with a context that needs exactly ``needs``."""
    x, w, _, m = make((2, 3, IN))
    ctx = SimpleNamespace(
        saved_tensors=(x if needs[1] else None, w if needs[0] else None, m),
        needs_input_grad=(needs[0], needs[1], False, needs[2], False),
        mode=mode,
    )
    grad_output = torch.randn(2, 3, OUT, dtype=torch.float64)
    result: tuple[Any, ...] = MaskedLinearFunction.backward(ctx, grad_output)
    return result


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("needs", list(itertools.product([False, True], repeat=3)))
def test_backward_computes_only_needed_grads(
    mode: Mode, needs: tuple[bool, bool, bool]
) -> None:
    result = run_backward(needs, mode)
    assert len(result) == 5  # one per forward input: input, weight, mask, bias, mode
    assert result[2] is None
    assert result[4] is None
    shapes = [(2, 3, IN), (OUT, IN), (OUT,)]
    for need, grad, shape in zip(needs, result[:2] + result[3:4], shapes, strict=True):
        assert (grad is not None) == need
        if grad is not None:
            assert grad.shape == shape


def saved_during_forward(fn: Any) -> list[tuple[tuple[int, ...], torch.dtype, int]]:
    """(shape, dtype, data_ptr) of every tensor saved for backward by ``fn()``."""
    saved: list[tuple[tuple[int, ...], torch.dtype, int]] = []

    def pack(t: Tensor) -> Tensor:
        saved.append((tuple(t.shape), t.dtype, t.data_ptr()))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return saved


@pytest.mark.parametrize("mode", MODES)
def test_saves_only_input_weight_and_bool_mask(mode: Mode) -> None:
    x, w, b, m = make((2, 3, IN))
    saved = saved_during_forward(lambda: masked_linear(x, w, m, b, mode=mode))
    assert saved == [
        ((2, 3, IN), torch.float64, x.data_ptr()),  # the input itself, no copy
        ((OUT, IN), torch.float64, w.data_ptr()),  # the weight itself, no copy
        ((OUT, IN), torch.bool, m.data_ptr()),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_saves_less_when_fewer_grads_are_needed(mode: Mode) -> None:
    x, w, b, m = make((3, IN))
    # The input needs no grad: the weight (only used for grad_input) is not saved.
    x.requires_grad_(False)
    saved = saved_during_forward(lambda: masked_linear(x, w, m, b, mode=mode))
    assert [dtype for _, dtype, _ in saved] == [torch.float64, torch.bool]
    assert saved[0][2] == x.data_ptr()
    # The weight needs no grad: the input (only used for grad_weight) is not saved.
    x.requires_grad_(True)
    w.requires_grad_(False)
    saved = saved_during_forward(lambda: masked_linear(x, w, m, b, mode=mode))
    assert [dtype for _, dtype, _ in saved] == [torch.float64, torch.bool]
    assert saved[0][2] == w.data_ptr()


@pytest.mark.parametrize("mode", MODES)
def test_input_without_grad_gets_no_grad(mode: Mode) -> None:
    x, w, b, m = make((3, IN))
    x.requires_grad_(False)
    out = masked_linear(x, w, m, b, mode=mode)
    seen: list[tuple[Tensor | None, ...]] = []
    assert out.grad_fn is not None
    out.grad_fn.register_hook(lambda grad_inputs, _: seen.append(grad_inputs))
    out.sum().backward()
    assert x.grad is None
    assert seen[0][0] is None  # nothing flowed towards the input
    # One slot per tensor input: input, weight, mask, bias (the mode is no tensor).
    assert [g is not None for g in seen[0]] == [False, True, False, True]


def test_no_grad_needed_builds_no_graph() -> None:
    x, w, b, m = make()
    with torch.no_grad():
        out = masked_linear(x, w, m, b)
    assert out.grad_fn is None
    assert not out.requires_grad


# --------------------------------------------------------------------------
# vmap and torch.compile


@pytest.mark.parametrize("mode", MODES)
def test_vmap_over_inputs_matches_loop(mode: Mode) -> None:
    xs, w, b, m = make((6, 2, IN))
    xs = xs.detach()
    batched = torch.func.vmap(lambda x: masked_linear(x, w, m, b, mode=mode))(xs)
    looped = torch.stack([masked_linear(x, w, m, b, mode=mode) for x in xs])
    torch.testing.assert_close(batched, looped)


@pytest.mark.parametrize("mode", MODES)
def test_vmap_per_sample_weight_grads_match_loop(mode: Mode) -> None:
    """vmap(grad(...)) also runs ``backward`` under vmap."""
    xs, w, b, m = make((6, IN))
    xs, w0 = xs.detach(), w.detach()

    def loss(w: Tensor, x: Tensor) -> Tensor:
        return masked_linear(x, w, m, b, mode=mode).tanh().sum()

    per_sample = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(w0, xs)
    looped = [torch.autograd.grad(loss(w, x), w)[0] for x in xs]
    torch.testing.assert_close(per_sample, torch.stack(looped))
    assert torch.equal(per_sample[:, ~m], torch.zeros_like(per_sample[:, ~m]))


@pytest.mark.parametrize("mode", MODES)
def test_vmap_over_masks_matches_loop(mode: Mode) -> None:
    x, w, b, _ = make((3, IN))
    x, w0 = x.detach(), w.detach()
    masks = torch.rand(4, OUT, IN, generator=torch.Generator().manual_seed(1)) < 0.5

    def loss(w: Tensor, m: Tensor) -> Tensor:
        return masked_linear(x, w, m, b, mode=mode).tanh().sum()

    batched = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(w0, masks)
    looped = [torch.autograd.grad(loss(w, m), w)[0] for m in masks]
    torch.testing.assert_close(batched, torch.stack(looped))


@IGNORE_DYNAMO_CTX_WARNING
@pytest.mark.parametrize("mode", MODES)
def test_compile_fullgraph_matches_eager(mode: Mode) -> None:
    """Dynamo captures the Function with no graph break, forward and backward.

    ``aot_eager`` runs the captured forward and backward graphs through
    AOTAutograd without generating code, which keeps this test to a couple
    of seconds; Inductor's C++ code generation is independent of this module.
    """
    x, w, b, m = make((2, 3, IN), dtype=torch.float32)
    assert b is not None

    def loss(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
        return masked_linear(x, w, m, b, mode=mode).tanh().sum()

    torch._dynamo.reset()
    try:
        compiled = torch.compile(loss, fullgraph=True, backend="aot_eager")
        out = compiled(x, w, b)
        got = (out, *torch.autograd.grad(out, (x, w, b)))  # the compiled backward
    finally:
        torch._dynamo.reset()
    out = loss(x, w, b)
    want = (out, *torch.autograd.grad(out, (x, w, b)))
    assert "CompiledFunction" in type(got[0].grad_fn).__name__
    torch.testing.assert_close(got, want)
    assert torch.equal(got[2][~m], torch.zeros_like(got[2][~m]))


@IGNORE_DYNAMO_CTX_WARNING
def test_compile_fullgraph_module() -> None:
    torch.manual_seed(0)
    layer = MaskedLinear(IN, OUT, fixed_mask())
    x = torch.randn(3, IN)
    torch._dynamo.reset()
    try:
        compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
        compiled(x).sum().backward()
        compiled_grad = layer.weight.grad
        layer.weight.grad = None
        layer(x).sum().backward()
    finally:
        torch._dynamo.reset()
    torch.testing.assert_close(compiled_grad, layer.weight.grad)


# --------------------------------------------------------------------------
# Bad inputs: masked_linear and MaskedLinearFunction

META = torch.device("meta")


def bad_call_cases() -> list[Any]:
    x, w, b, m = make()
    x, w, b = x.detach(), w.detach(), None if b is None else b.detach()
    assert b is not None
    jagged = torch.nested.nested_tensor(
        [
            torch.randn(2, IN, dtype=torch.float64),
            torch.randn(3, IN, dtype=torch.float64),
        ],
        layout=torch.jagged,
    )
    cases = [
        (
            "mode",
            (x, w, m, b),
            {"mode": "prun"},
            ValueError,
            "mode",
            "be 'freeze' or 'prune', not 'prun'",
        ),
        (
            "mode type",
            (x, w, m, b),
            {"mode": ["prune"]},
            ValueError,
            "mode",
            "be 'freeze' or 'prune', not ['prune']",
        ),
        (
            "input type",
            ([[1.0] * IN], w, m, b),
            {},
            TypeError,
            "input",
            "be a torch.Tensor, not list",
        ),
        (
            "input jagged",
            (jagged, w, m, b),
            {},
            TypeError,
            "input",
            "be a dense (strided) tensor, not a nested tensor (layout torch.jagged)",
        ),
        (
            "input sparse",
            (x.to_sparse(), w, m, b),
            {},
            TypeError,
            "input",
            "be a dense (strided) tensor, not a tensor of layout torch.sparse_coo",
        ),
        (
            "weight type",
            (x, w.tolist(), m, b),
            {},
            TypeError,
            "weight",
            "be a torch.Tensor, not list",
        ),
        (
            "weight 1-d",
            (x, w[0], m, b),
            {},
            ValueError,
            "weight",
            "be 2-D, of shape (out_features, in_features), not shape (5,)",
        ),
        (
            "weight int",
            (x, w.long(), m, b),
            {},
            TypeError,
            "weight",
            "be a floating-point tensor, not torch.int64",
        ),
        (
            "mask type",
            (x, w, m.tolist(), b),
            {},
            TypeError,
            "mask",
            "be a torch.Tensor, not list",
        ),
        (
            "mask shape",
            (x, w, m.T, b),
            {},
            ValueError,
            "mask",
            "have shape (4, 5) like 'weight', not (5, 4)",
        ),
        (
            "mask row",
            (x, w, m[0], b),
            {},
            ValueError,
            "mask",
            "have shape (4, 5) like 'weight', not (5,)",
        ),
        (
            "mask dtype",
            (x, w, m.int(), b),
            {},
            TypeError,
            "mask",
            "be a bool or floating 0/1 tensor, not torch.int32",
        ),
        (
            "mask values",
            (x, w, m * 0.5, b),
            {},
            ValueError,
            "mask",
            "hold only 0 and 1 (as a float mask), not 0.5",
        ),
        (
            "mask device",
            (x, w, m.to(META), b),
            {},
            ValueError,
            "mask",
            "be on the device of 'weight' (cpu), not meta",
        ),
        (
            "input size",
            (x[:, :3], w, m, b),
            {},
            ValueError,
            "input",
            "have last dimension in_features=5 like 'weight', not shape (3, 3)",
        ),
        (
            "input 0-d",
            (x[0, 0], w, m, b),
            {},
            ValueError,
            "input",
            "have last dimension in_features=5 like 'weight', not shape ()",
        ),
        (
            "bias shape",
            (x, w, m, b[:3]),
            {},
            ValueError,
            "bias",
            "have shape (out_features,) = (4,) like 'weight', not (3,)",
        ),
        (
            "bias type",
            (x, w, m, b.tolist()),
            {},
            TypeError,
            "bias",
            "be a torch.Tensor, not list",
        ),
        (
            "input dtype",
            (x.float(), w, m, b),
            {},
            TypeError,
            "input",
            "be of the dtype of 'weight' (torch.float64), not torch.float32",
        ),
        (
            "bias dtype",
            (x, w, m, b.float()),
            {},
            TypeError,
            "bias",
            "be of the dtype of 'weight' (torch.float64), not torch.float32",
        ),
        (
            "input device",
            (x.to(META), w, m, b),
            {},
            ValueError,
            "input",
            "be on the device of 'weight' (cpu), not meta",
        ),
        (
            "bias device",
            (x, w, m, b.to(META)),
            {},
            ValueError,
            "bias",
            "be on the device of 'weight' (cpu), not meta",
        ),
    ]
    return [pytest.param(*case[1:], id=case[0]) for case in cases]


@pytest.mark.parametrize(("args", "kwargs", "error", "arg", "rest"), bad_call_cases())
def test_masked_linear_rejects_bad_arguments(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    error: type[Exception],
    arg: str,
    rest: str,
) -> None:
    with pytest.raises(error) as info:
        masked_linear(*args, **kwargs)
    assert str(info.value).startswith(f"masked_linear() argument '{arg}' must {rest}")


@pytest.mark.parametrize(("args", "kwargs", "error", "arg", "rest"), bad_call_cases())
def test_function_apply_rejects_bad_arguments_like_masked_linear(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    error: type[Exception],
    arg: str,
    rest: str,
) -> None:
    """``apply(input, weight, mask, bias, mode)`` checks as much as masked_linear."""
    x, w, m, b = args
    mode = kwargs.get("mode", "prune")
    if arg == "mask" and isinstance(m, Tensor) and m.dtype != torch.bool:
        error = TypeError  # apply takes bool masks only, not float 0/1 ones
        rest = "be a bool tensor (masked_linear() also takes a float 0/1 mask)"
    with pytest.raises(error) as info:
        MaskedLinearFunction.apply(x, w, m, b, mode)
    message = f"MaskedLinearFunction.apply() argument '{arg}' must {rest}"
    assert str(info.value).startswith(message)


# --------------------------------------------------------------------------
# MaskedLinear


def test_init_matches_nn_linear() -> None:
    mask = fixed_mask()
    torch.manual_seed(123)
    layer = MaskedLinear(IN, OUT, mask)
    torch.manual_seed(123)
    ref = nn.Linear(IN, OUT)
    assert torch.equal(layer.weight, ref.weight)
    assert layer.bias is not None
    assert torch.equal(layer.bias, ref.bias)


def test_mask_is_a_bool_buffer_copy() -> None:
    mask = fixed_mask().float()
    layer = MaskedLinear(IN, OUT, mask)
    assert layer.mask.dtype == torch.bool
    assert torch.equal(layer.mask, mask.bool())
    assert "mask" in dict(layer.named_buffers())
    assert "mask" in layer.state_dict()
    assert all(p is not layer.mask for p in layer.parameters())

    bool_mask = mask.bool()
    layer = MaskedLinear(IN, OUT, bool_mask)
    assert layer.mask.data_ptr() != bool_mask.data_ptr()  # no aliasing
    layer.mask.fill_(False)
    assert bool(bool_mask.any())


def test_dtype_casts_keep_the_mask_bool_and_to_moves_it() -> None:
    layer = MaskedLinear(IN, OUT, fixed_mask())
    layer.to(torch.float64)
    assert layer.weight.dtype == torch.float64
    assert layer.mask.dtype == torch.bool
    layer.half()
    assert layer.mask.dtype == torch.bool
    layer.to(META)
    assert layer.mask.device == META
    assert layer.mask.dtype == torch.bool
    assert layer.weight.device == META


def test_state_dict_round_trip_restores_mask() -> None:
    source = MaskedLinear(IN, OUT, fixed_mask(), mode="prune")
    target = MaskedLinear(IN, OUT, torch.ones(OUT, IN, dtype=torch.bool), mode="prune")
    target.load_state_dict(source.state_dict())
    assert torch.equal(target.mask, source.mask)
    assert torch.equal(target.weight, source.weight)


@pytest.mark.parametrize("assign", [False, True])
def test_a_float_0_1_mask_loads_as_bool_without_touching_the_dict(
    assign: bool,
) -> None:
    source = MaskedLinear(IN, OUT, fixed_mask())
    state = source.state_dict()
    float_mask = source.mask.float()
    state["mask"] = float_mask
    target = MaskedLinear(IN, OUT, torch.ones(OUT, IN, dtype=torch.bool))
    target.load_state_dict(state, assign=assign)
    assert target.mask.dtype == torch.bool
    assert torch.equal(target.mask, source.mask)
    assert state["mask"] is float_mask
    assert float_mask.dtype == torch.float32


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bias", [True, False])
def test_module_forward_matches_functional(mode: Mode, bias: bool) -> None:
    layer = MaskedLinear(IN, OUT, fixed_mask(), bias=bias, mode=mode)
    assert (layer.bias is None) == (not bias)
    x = torch.randn(2, 3, IN)
    want = masked_linear(x, layer.weight, layer.mask, layer.bias, mode=mode)
    torch.testing.assert_close(layer(x), want)


def test_freeze_training_step_leaves_frozen_entries_alone() -> None:
    torch.manual_seed(0)
    mask = fixed_mask()
    layer = MaskedLinear(IN, OUT, mask)
    before = layer.weight.detach().clone()
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        optimizer.zero_grad()
        layer(torch.randn(8, IN)).square().mean().backward()
        optimizer.step()
    after = layer.weight.detach()
    assert torch.equal(after[~mask], before[~mask])
    assert bool((after[mask] != before[mask]).all())


def test_extra_repr() -> None:
    mask = torch.zeros(8, 8, dtype=torch.bool)
    mask.view(-1)[:37] = True
    layer = MaskedLinear(8, 8, mask, bias=False, mode="prune")
    assert repr(layer) == (
        "MaskedLinear(in_features=8, out_features=8, bias=False, mode='prune', "
        "trainable=37/64)"
    )
    assert "trainable=?/64" in repr(layer.to(META))


@pytest.mark.parametrize(
    ("mask", "kwargs", "error", "match"),
    [
        pytest.param(
            torch.ones(IN, OUT, dtype=torch.bool),
            {},
            ValueError,
            r"^MaskedLinear\(\) argument 'mask' must have shape "
            r"\(out_features, in_features\) = \(4, 5\), not \(5, 4\)$",
            id="shape",
        ),
        pytest.param(
            torch.ones(OUT, IN, dtype=torch.int64),
            {},
            TypeError,
            r"^MaskedLinear\(\) argument 'mask' must be a bool or floating 0/1 "
            r"tensor, not torch\.int64$",
            id="dtype",
        ),
        pytest.param(
            torch.ones(OUT, IN, device=META), {}, ValueError, "device", id="device"
        ),
        pytest.param(
            [[True] * IN] * OUT,
            {},
            TypeError,
            r"^MaskedLinear\(\) argument 'mask' must be a torch\.Tensor, not list$",
            id="list",
        ),
        pytest.param(
            torch.ones(OUT, IN), {"mode": "frozen"}, ValueError, "mode", id="mode"
        ),
    ],
)
def test_constructor_rejects_bad_arguments(
    mask: Any, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        MaskedLinear(IN, OUT, mask, **kwargs)


class Factories(TorchDispatchMode):
    """Records the shape of every ``torch.empty`` (how parameters are made)."""

    def __init__(self) -> None:
        super().__init__()
        self.shapes: list[tuple[int, ...]] = []

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        if func.overloadpacket in (torch.ops.aten.empty, torch.ops.aten.empty_strided):
            self.shapes.append(tuple(args[0]))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    ("mask", "error", "rest"),
    [
        (torch.ones(OUT, IN, dtype=torch.int64), TypeError, "be a bool or floating"),
        (torch.full((OUT, IN), 0.5), ValueError, "hold only 0 and 1"),
        (torch.ones(OUT, IN, device=META), ValueError, "be on the device of"),
    ],
    ids=["dtype", "values", "device"],
)
def test_constructor_checks_the_mask_before_allocating_parameters(
    mask: Tensor, error: type[Exception], rest: str
) -> None:
    with Factories() as factories, pytest.raises(error) as info:
        MaskedLinear(IN, OUT, mask)
    assert str(info.value).startswith(f"MaskedLinear() argument 'mask' must {rest}")
    assert (OUT, IN) not in factories.shapes
    assert (OUT,) not in factories.shapes


def test_a_dtype_nn_init_cannot_fill_is_refused_before_allocating() -> None:
    """float8 is floating point, but ``nn.init`` cannot draw it (on the CPU,
    in torch 2.13): that used to be torch's raw NotImplementedError from
    ``reset_parameters``, after allocating the parameters."""
    dtype = torch.float8_e4m3fn
    try:
        torch.empty(0, dtype=dtype).uniform_()
    except NotImplementedError:
        fillable = False
    else:  # a torch that can fill it
        fillable = True
    if fillable:
        assert MaskedLinear(IN, OUT, fixed_mask(), dtype=dtype).weight.dtype == dtype
        return
    want = f"be a torch.dtype that torch.nn.init can fill here, or None, not {dtype} ("
    with (
        Factories() as factories,
        pytest.raises(TypeError, match=message("MaskedLinear", "dtype", want)),
    ):
        MaskedLinear(IN, OUT, fixed_mask(), dtype=dtype)
    assert (OUT, IN) not in factories.shapes


def test_from_linear_with_a_non_floating_weight_names_linear() -> None:
    """It used to blame the 'dtype' argument, which the caller never passed."""
    linear = nn.Linear(IN, OUT)
    linear.weight = nn.Parameter(torch.ones(OUT, IN, dtype=torch.int64), False)
    with pytest.raises(
        TypeError,
        match=message(
            "MaskedLinear.from_linear",
            "linear",
            "be a torch.nn.Linear with a floating-point weight, not a Linear "
            "with a torch.int64 weight",
        ),
    ):
        MaskedLinear.from_linear(linear, fixed_mask())


def test_constructor_on_another_device_needs_the_mask_there() -> None:
    mask = torch.ones(OUT, IN, dtype=torch.bool)
    with pytest.raises(ValueError, match="device"):
        MaskedLinear(IN, OUT, mask, device=META)
    layer = MaskedLinear(IN, OUT, mask.to(META), device=META, dtype=torch.float16)
    assert layer.weight.dtype == torch.float16
    assert layer.mask.device == META


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bias", [True, False])
def test_from_linear_copies(mode: Mode, bias: bool) -> None:
    torch.manual_seed(0)
    linear = nn.Linear(IN, OUT, bias=bias, dtype=torch.float64)
    original = {k: v.clone() for k, v in linear.state_dict().items()}
    mask = fixed_mask()
    layer = MaskedLinear.from_linear(linear, mask, mode=mode)
    assert layer.mode == mode
    assert layer.weight.dtype == torch.float64
    assert torch.equal(layer.weight, linear.weight)
    assert layer.weight.data_ptr() != linear.weight.data_ptr()
    assert (layer.bias is None) == (not bias)
    if layer.bias is not None:
        assert linear.bias is not None
        assert torch.equal(layer.bias, linear.bias)
        assert layer.bias.data_ptr() != linear.bias.data_ptr()
    # Training the new layer leaves the given module untouched.
    layer(torch.randn(3, IN, dtype=torch.float64)).sum().backward()
    with torch.no_grad():
        for p in layer.parameters():
            p.sub_(p.grad if p.grad is not None else 0)
    for key, value in linear.state_dict().items():
        assert torch.equal(value, original[key])
    assert linear.weight.grad is None


def test_from_linear_rejects_bad_mask() -> None:
    linear = nn.Linear(IN, OUT)
    with pytest.raises(
        ValueError,
        match=r"^MaskedLinear\(\) argument 'mask' must have shape "
        r"\(out_features, in_features\) = \(4, 5\), not \(4, 4\)$",
    ):
        MaskedLinear.from_linear(linear, torch.ones(OUT, OUT, dtype=torch.bool))
    with pytest.raises(ValueError, match="mode"):
        MaskedLinear.from_linear(linear, torch.ones(OUT, IN), mode="both")  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# load_state_dict validates the mask and the mode


def _layer(mode: str = "freeze") -> MaskedLinear:
    torch.manual_seed(0)
    mask = torch.tensor([[True, False, True], [False, True, True]])
    return MaskedLinear(3, 2, mask, mode=mode)  # type: ignore[arg-type]


def _snapshot(layer: nn.Module) -> dict[str, Tensor]:
    return {
        k: v.clone() for k, v in layer.state_dict().items() if isinstance(v, Tensor)
    }


@pytest.mark.parametrize(
    ("mask", "rest"),
    [
        (
            torch.full((2, 3), 0.5),
            "hold only 0 and 1 (as a float mask), not 0.5 (torch.float32)",
        ),
        (
            torch.full((2, 3), 7),
            "be a bool or floating 0/1 tensor, not torch.int64",
        ),
        (
            torch.ones(3, 2, dtype=torch.bool),
            "have shape (2, 3) like 'self.mask', not (3, 2)",
        ),
        (
            [[True] * 3] * 2,
            "be a torch.Tensor, not list",
        ),
    ],
)
def test_load_state_dict_rejects_a_bad_mask_and_loads_nothing(
    mask: Any, rest: str
) -> None:
    layer = _layer()
    state = _layer().state_dict()
    with torch.no_grad():
        state["weight"] = state["weight"] + 1
    state["mask"] = mask
    before = _snapshot(layer)
    with pytest.raises(RuntimeError) as info:
        layer.load_state_dict(state)
    func = "MaskedLinear.load_state_dict"
    expected = f"{func}() argument 'state_dict[\"mask\"]' must {rest}"
    assert expected in str(info.value)
    after = _snapshot(layer)
    assert all(torch.equal(before[k], after[k]) for k in before)  # nothing loaded


def test_load_state_dict_accepts_a_float_0_1_mask() -> None:
    layer = _layer()
    state = layer.state_dict()
    state["mask"] = torch.tensor([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    layer.load_state_dict(state)
    assert layer.mask.dtype == torch.bool
    assert torch.equal(layer.mask, state["mask"].bool())


@pytest.mark.parametrize(
    ("saved", "loading"), [("prune", "freeze"), ("freeze", "prune")]
)
def test_mode_is_saved_and_a_mismatch_is_a_clear_error(
    saved: str, loading: str
) -> None:
    state = _layer(saved).state_dict()
    assert state["_extra_state"] == {"mode": saved}
    target = _layer(loading)
    before = _snapshot(target)
    with torch.no_grad():
        state["weight"] = state["weight"] + 1
    with pytest.raises(RuntimeError) as info:
        target.load_state_dict(state)
    assert (
        "MaskedLinear.load_state_dict() argument 'state_dict[\"_extra_state\"]' "
        f"must be {{'mode': '{loading}'}} like this layer, not "
        f"{{'mode': '{saved}'}} (load it into a layer built with mode='{saved}')"
    ) in str(info.value)
    assert target.mode == loading
    after = _snapshot(target)
    assert all(torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("mode", MODES)
def test_state_dict_round_trips_through_torch_save(mode: str, tmp_path: Any) -> None:
    source = _layer(mode)
    path = tmp_path / "layer.pt"
    torch.save(source.state_dict(), path)
    target = MaskedLinear(3, 2, torch.ones(2, 3, dtype=torch.bool), mode=mode)  # type: ignore[arg-type]
    target.load_state_dict(torch.load(path, weights_only=True))
    assert torch.equal(target.mask, source.mask)
    assert torch.equal(target.weight, source.weight)


def test_load_state_dict_takes_a_mask_saved_on_another_device() -> None:
    """``load_state_dict`` copies across devices: the mask check allows that."""
    target = _layer().to(META)
    target.load_state_dict(_layer().state_dict(), assign=True)
    assert torch.equal(target.mask, _layer().mask)
    with pytest.raises(RuntimeError, match=r"have shape \(2, 3\) like 'self.mask'"):
        target.load_state_dict({**_layer().state_dict(), "mask": MASK.T})


def test_a_state_dict_without_mode_needs_strict_false() -> None:
    """An old checkpoint (no ``_extra_state``) is reported, not guessed."""
    state = _layer("prune").state_dict()
    del state["_extra_state"]
    target = _layer("prune")
    with pytest.raises(RuntimeError, match=r"Missing key.*_extra_state"):
        target.load_state_dict(state)
    result = target.load_state_dict(state, strict=False)
    assert result.missing_keys == ["_extra_state"]


@pytest.mark.parametrize(
    "state",
    [{"mode": "prune"}, {"mode": "frozen"}, "freeze", {"mode": "freeze", "x": 1}],
)
def test_set_extra_state_checks_the_mode(state: Any) -> None:
    with pytest.raises(
        ValueError,
        match=message(
            "MaskedLinear.set_extra_state",
            "state",
            "be {'mode': 'freeze'} like this layer",
        ),
    ):
        _layer("freeze").set_extra_state(state)


def test_mode_assignment_is_checked() -> None:
    layer = _layer()
    layer.mode = "prune"
    assert layer.state_dict()["_extra_state"] == {"mode": "prune"}
    with pytest.raises(
        ValueError,
        match=message(
            "MaskedLinear.mode", "mode", "be 'freeze' or 'prune', not 'frozen'"
        ),
    ):
        layer.mode = "frozen"  # type: ignore[assignment]
    assert layer.mode == "prune"


# --------------------------------------------------------------------------
# errors that did not name the argument, or misled

MASK = torch.ones(2, 3, dtype=torch.bool)


@pytest.mark.parametrize(
    ("call", "error", "func", "arg", "rest"),
    [
        (
            lambda: MaskedLinear(3.0, 2, MASK),
            TypeError,
            "MaskedLinear",
            "in_features",
            "be an int, not float",
        ),
        (
            lambda: MaskedLinear(True, 2, MASK),
            TypeError,
            "MaskedLinear",
            "in_features",
            "be an int, not bool",
        ),
        (
            lambda: MaskedLinear(3, False, MASK),
            TypeError,
            "MaskedLinear",
            "out_features",
            "be an int, not bool",
        ),
        (
            lambda: MaskedLinear(3, -2, MASK),
            ValueError,
            "MaskedLinear",
            "out_features",
            "be non-negative, not -2",
        ),
        (
            lambda: MaskedLinear(3, 2, MASK, bias=1),
            TypeError,
            "MaskedLinear",
            "bias",
            "be a bool, not int",
        ),
        (
            lambda: MaskedLinear(3, 2, MASK, dtype=torch.long),
            TypeError,
            "MaskedLinear",
            "dtype",
            "be a floating-point torch.dtype or None, not torch.int64",
        ),
        (
            lambda: MaskedLinear(3, 2, MASK, dtype="float32"),
            TypeError,
            "MaskedLinear",
            "dtype",
            "be a floating-point torch.dtype or None, not str",
        ),
        (
            lambda: MaskedLinear(3, 2, MASK, device="gpu"),
            ValueError,
            "MaskedLinear",
            "device",
            "be a device such as 'cpu' or 'cuda:0', not 'gpu'",
        ),
        (
            lambda: MaskedLinear.from_linear(None, MASK),
            TypeError,
            "MaskedLinear.from_linear",
            "linear",
            "be a torch.nn.Linear, not NoneType",
        ),
        (
            lambda: MaskedLinear.from_linear(nn.Conv1d(3, 2, 1), MASK),
            TypeError,
            "MaskedLinear.from_linear",
            "linear",
            "be a torch.nn.Linear, not Conv1d",
        ),
        (
            lambda: MaskedLinear.from_linear(nn.LazyLinear(2), MASK),
            TypeError,
            "MaskedLinear.from_linear",
            "linear",
            "be an initialised torch.nn.Linear (call it once first), "
            "not an uninitialised LazyLinear",
        ),
        (
            lambda: MaskedLinear(
                3,
                2,
                torch.nested.nested_tensor([torch.ones(3)] * 2, layout=torch.jagged),
            ),
            TypeError,
            "MaskedLinear",
            "mask",
            "be a dense (strided) tensor, not a nested tensor",
        ),
        (
            lambda: masked_linear(
                torch.nested.nested_tensor(
                    [torch.ones(1, 3), torch.ones(4, 3)], layout=torch.jagged
                ),
                torch.zeros(2, 3),
                MASK,
            ),
            TypeError,
            "masked_linear",
            "input",
            "be a dense (strided) tensor, not a nested tensor (layout torch.jagged)",
        ),
    ],
)
def test_errors_name_the_argument(
    call: Any, error: type[Exception], func: str, arg: str, rest: str
) -> None:
    with pytest.raises(error, match=message(func, arg, rest)):
        call()


@pytest.mark.parametrize("mode", MODES)
def test_apply_takes_the_argument_order_of_masked_linear(mode: str) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, generator=g)
    w = torch.randn(2, 4, generator=g)
    b = torch.randn(2, generator=g)
    m = torch.rand(2, 4, generator=g) < 0.5
    via_apply = MaskedLinearFunction.apply(x, w, m, b, mode)
    torch.testing.assert_close(via_apply, masked_linear(x, w, m, b, mode=mode))  # type: ignore[arg-type]
    assert list(inspect.signature(MaskedLinearFunction.forward).parameters) == [
        "input",
        "weight",
        "mask",
        "bias",
        "mode",
    ]
    assert list(inspect.signature(masked_linear).parameters)[:4] == [
        "input",
        "weight",
        "mask",
        "bias",
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(4,), (1, 4), (2, 1), (1,)])
def test_apply_does_not_broadcast_a_mask(mode: str, shape: tuple[int, ...]) -> None:
    x = torch.randn(3, 4)
    w = torch.randn(2, 4, requires_grad=True)
    mask = torch.ones(shape, dtype=torch.bool)
    with pytest.raises(
        ValueError,
        match=message(
            "MaskedLinearFunction.apply",
            "mask",
            f"have shape (2, 4) like 'weight', not {shape}",
        ),
    ):
        MaskedLinearFunction.apply(x, w, mask, None, mode)


def test_apply_rejects_the_old_argument_order() -> None:
    """The old order ``(input, weight, bias, mask, mode)`` fails clearly."""
    x, w, b = torch.randn(3, 4), torch.randn(2, 4), torch.randn(2)
    m = torch.ones(2, 4, dtype=torch.bool)
    with pytest.raises(
        TypeError,
        match=message("MaskedLinearFunction.apply", "mask", "be a bool tensor"),
    ):
        MaskedLinearFunction.apply(x, w, b, m, "freeze")


# -- nothing a user passes is modified ------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_masked_linear_modifies_no_argument(mode: str) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, generator=g, requires_grad=True)
    w = torch.randn(2, 4, generator=g, requires_grad=True)
    b = torch.randn(2, generator=g, requires_grad=True)
    m = (torch.rand(2, 4, generator=g) < 0.5).float()
    copies = [t.detach().clone() for t in (x, w, b, m)]
    masked_linear(x, w, m, b, mode=mode).square().sum().backward()  # type: ignore[arg-type]
    for original, copy in zip((x, w, b, m), copies, strict=True):
        assert torch.equal(original.detach(), copy)
        assert original._version == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("create_graph", [False, True])
def test_a_weight_with_the_lazy_negative_bit_acts_as_its_values(
    mode: Mode, create_graph: bool
) -> None:
    """``z.conj().imag`` is real with ``is_neg()``: prune mode used to raise
    "view is not supported for tensors with negative bit set"."""
    x, _, b, m = make()
    z = torch.randn(OUT, IN, dtype=torch.complex128, generator=torch.Generator())
    before = z.clone()
    w = z.conj().imag.requires_grad_()
    assert w.is_neg()
    plain = w.detach().resolve_neg().requires_grad_()
    results = []
    for weight in (w, plain):
        out = masked_linear(x, weight, m, b, mode=mode)
        inputs = (x, weight, b)
        results.append(
            (out, *torch.autograd.grad(out.sum(), inputs, create_graph=create_graph))
        )
    for got, want in zip(*results, strict=True):
        assert torch.equal(got, want)
    assert torch.equal(z, before)
    assert w.is_neg()


# --------------------------------------------------------------------------
# the two backward paths agree bit for bit; vmap


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("needs_input", [True, False])
def test_in_place_and_out_of_place_backward_agree(mode: str, needs_input: bool) -> None:
    """``backward`` reuses its buffers unless it builds a graph; same values."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 6, generator=g, requires_grad=needs_input)
    w = torch.randn(5, 6, generator=g, requires_grad=True)
    b = torch.randn(5, generator=g, requires_grad=True)
    m = torch.rand(5, 6, generator=g) < 0.5
    w.data[~m] = torch.tensor([math.inf, -math.inf, math.nan]).repeat(12)[: (~m).sum()]
    upstream = torch.randn(2, 3, 5, generator=g)
    inputs = (x, w, b) if needs_input else (w, b)

    def run(create_graph: bool) -> tuple[Tensor, ...]:
        out = MaskedLinearFunction.apply(x, w, m, b, mode)
        return torch.autograd.grad(out, inputs, upstream, create_graph=create_graph)

    fast, graph = run(False), run(True)
    for got, want in zip(fast, graph, strict=True):
        torch.testing.assert_close(got, want.detach(), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64]
)
def test_the_fast_masking_is_torch_where_bit_for_bit(dtype: torch.dtype) -> None:
    """The AND of the bits that forward and backward use without autograd."""
    from autograd_notes.freezing import zero_outside
    from autograd_notes.masked_linear import _keep_inside

    special = [1.5, -0.0, math.inf, -math.inf, math.nan, -2.0]
    t = torch.tensor(special * 2).to(dtype)
    m = torch.tensor([True] * 6 + [False] * 6)
    word = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    want = zero_outside(t, m).view(word)
    assert torch.equal(_keep_inside(t, m).view(word), want)
    assert torch.equal(_keep_inside(t.clone(), m, in_place=True).view(word), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("create_graph", [False, True])
def test_the_weight_gradient_is_exactly_zero_outside_even_for_inf_and_nan(
    mode: str, create_graph: bool
) -> None:
    """Masking gives exact zeros like ``apply_mask``, never ``inf * 0 = nan``.

    ``g.T @ x`` is ``inf`` and ``nan`` in the columns outside the mask; both
    backward paths (in place, and the graph-building one) give 0 there.
    """
    x = torch.tensor([[1.0, math.inf, math.nan], [2.0, 1.0, 1.0]])
    w = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))
    w.requires_grad_()
    m = torch.tensor([[True, False, False], [True, False, False]])
    out = masked_linear(x, w, m, mode=mode)  # type: ignore[arg-type]
    (grad,) = torch.autograd.grad(
        out, w, torch.ones_like(out), create_graph=create_graph
    )
    assert torch.equal(grad, torch.tensor([[3.0, 0.0, 0.0], [3.0, 0.0, 0.0]]))


@pytest.mark.parametrize("create_graph", [False, True])
def test_prune_treats_an_inf_or_nan_weight_outside_the_mask_as_zero(
    create_graph: bool,
) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, generator=g, requires_grad=True)
    w = torch.randn(2, 3, generator=g)
    m = torch.tensor([[True, False, True], [False, True, True]])
    w[~m] = torch.tensor([math.inf, math.nan])
    w.requires_grad_()
    out = masked_linear(x, w, m, mode="prune")
    want = F.linear(x.detach(), torch.where(m, w.detach(), 0.0))
    assert torch.equal(out.detach(), want)
    (grad_x,) = torch.autograd.grad(
        out, x, torch.ones_like(out), create_graph=create_graph
    )
    assert grad_x.isfinite().all()
    torch.testing.assert_close(
        grad_x, torch.where(m, w.detach(), 0.0).sum(0).expand(4, 3)
    )


@pytest.mark.parametrize("mode", MODES)
def test_vmap_over_weights_with_one_mask(mode: str) -> None:
    g = torch.Generator().manual_seed(2)
    x = torch.randn(3, 4, generator=g)
    ws = torch.randn(5, 2, 4, generator=g)
    m = torch.rand(2, 4, generator=g) < 0.5
    batched = torch.func.vmap(lambda w: masked_linear(x, w, m, mode=mode))(ws)  # type: ignore[arg-type]
    looped = torch.stack([masked_linear(x, w, m, mode=mode) for w in ws])  # type: ignore[arg-type]
    torch.testing.assert_close(batched, looped)


def test_vmap_over_float_masks_is_a_clear_error() -> None:
    x, w = torch.randn(3, 5), torch.randn(4, 5)
    masks = (torch.rand(2, 4, 5) < 0.5).float()
    with pytest.raises(
        TypeError, match=message("masked_linear", "mask", "be a bool tensor here")
    ):
        torch.func.vmap(lambda m: masked_linear(x, w, m, mode="prune"))(masks)
    batched = torch.func.vmap(lambda m: masked_linear(x, w, m, mode="prune"))(
        masks.bool()
    )
    assert batched.shape == (2, 3, 4)


# --------------------------------------------------------------------------
# docstrings


def test_no_docstring_mentions_notes() -> None:
    for where, doc in docstrings(MODULE).items():
        assert not re.search(r"\bnotes\b", doc, re.IGNORECASE), where
        assert "order and number" not in doc, where
