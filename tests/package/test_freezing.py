"""Tests for :mod:`autograd_notes.freezing`.

Besides the usual checks, this file pins down two facts the docs rely on:

* Masking the weight in the forward pass (``apply_mask``) gives the same
  gradient as masking the gradient (``W.grad * M``) only when the loss is
  linear in the layer's output, or the masked-out weights are zero.
* A gradient mask alone keeps masked-out entries frozen for some optimizers
  and not for others (the optimizer matrix below); ``keep_frozen`` makes them
  bit-identical for all of them.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import math
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor, nn
from torch.nn.utils import parametrize

from autograd_notes.freezing import (
    FrozenReport,
    apply_mask,
    frozen_report,
    keep_frozen,
    parametrize_mask,
    register_grad_mask,
)
from autograd_notes.masks import random_mask

from .helpers import docstrings

MODULE = importlib.import_module("autograd_notes.freezing")
META = torch.device("meta")
MASK = torch.ones(2, 3, dtype=torch.bool)
# Small tensors and no example database: the tests stay fast and write
# nothing into the working tree.
PROPERTY = settings(max_examples=60, deadline=None, database=None)

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
seeds = st.integers(0, 2**31 - 1)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# -- apply_mask: forward masking and its gradient -----------------------------------


@PROPERTY
@given(
    batch=st.integers(1, 4),
    n_out=st.integers(1, 4),
    n_in=st.integers(1, 4),
    seed=seeds,
    float_mask=st.booleans(),
)
def test_apply_mask_gradient_equals_masked_gradient_for_a_linear_loss(
    batch: int, n_out: int, n_in: int, seed: int, float_mask: bool
) -> None:
    g = _gen(seed)
    w0 = torch.randn(n_out, n_in, generator=g)
    x = torch.randn(batch, n_in, generator=g)
    c = torch.randn(batch, n_out, generator=g)  # loss = sum(c * out) is linear
    mask = torch.rand(n_out, n_in, generator=g) < 0.5
    mask_arg = mask.to(torch.float32) if float_mask else mask

    w_masked = w0.clone().requires_grad_()
    (c * (x @ apply_mask(w_masked, mask_arg).T)).sum().backward()
    w_plain = w0.clone().requires_grad_()
    (c * (x @ w_plain.T)).sum().backward()

    assert w_masked.grad is not None
    assert w_plain.grad is not None
    assert torch.equal(w_masked.grad, w_plain.grad * mask)
    assert torch.equal(w_masked, w0)  # apply_mask did not write into the weight


@PROPERTY
@given(n_out=st.integers(1, 4), n_in=st.integers(1, 4), seed=seeds)
def test_register_grad_mask_equals_masked_gradient_for_any_loss(
    n_out: int, n_in: int, seed: int
) -> None:
    g = _gen(seed)
    w0 = torch.randn(n_out, n_in, generator=g)
    x = torch.randn(3, n_in, generator=g)
    mask = torch.rand(n_out, n_in, generator=g) < 0.5

    w_hooked = w0.clone().requires_grad_()
    register_grad_mask(w_hooked, mask)
    ((x @ w_hooked.T) ** 2).sum().backward()
    w_plain = w0.clone().requires_grad_()
    ((x @ w_plain.T) ** 2).sum().backward()

    assert w_hooked.grad is not None
    assert w_plain.grad is not None
    assert torch.equal(w_hooked.grad, w_plain.grad * mask)


def test_forward_and_gradient_masking_differ_for_a_nonlinear_loss() -> None:
    """A documented fact, not a bug.

    With ``loss = ((x @ W.T) ** 2).sum()`` the gradient for a kept entry
    depends on the layer's output, and that output includes the masked-out
    weights when only the gradient is masked, but not when the forward pass
    is. The two agree again once the masked-out weights are zero.
    """
    g = _gen(0)
    w0 = torch.randn(3, 4, generator=g)
    x = torch.randn(5, 4, generator=g)
    mask = torch.tensor(
        [
            [True, False, True, True],
            [False, True, True, False],
            [True, True, False, True],
        ]
    )

    def grads(w_start: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        w_forward = w_start.clone().requires_grad_()
        ((x @ apply_mask(w_forward, mask).T) ** 2).sum().backward()
        w_plain = w_start.clone().requires_grad_()
        ((x @ w_plain.T) ** 2).sum().backward()
        assert w_forward.grad is not None
        assert w_plain.grad is not None
        return w_forward.grad, w_plain.grad * mask

    forward_masked, gradient_masked = grads(w0)
    assert not torch.allclose(forward_masked, gradient_masked)
    # Both are zero outside the mask; the kept entries are what differ.
    assert not forward_masked[~mask].any()
    assert not gradient_masked[~mask].any()

    forward_masked, gradient_masked = grads(torch.where(mask, w0, 0.0))
    assert torch.allclose(forward_masked, gradient_masked)


def test_apply_mask_zeroes_non_finite_masked_entries() -> None:
    w = torch.tensor([1.0, math.inf, math.nan])
    out = apply_mask(w, torch.tensor([True, False, False]))
    assert torch.equal(out, torch.tensor([1.0, 0.0, 0.0]))
    assert out.dtype == w.dtype


# -- parametrize_mask -------------------------------------------------------------


def _linear(seed: int = 0) -> torch.nn.Linear:
    layer = torch.nn.Linear(4, 3)
    g = _gen(seed)
    with torch.no_grad():
        layer.weight.copy_(torch.randn(3, 4, generator=g))
        layer.bias.copy_(torch.randn(3, generator=g))
    return layer


def test_parametrize_mask_makes_weight_the_masked_view() -> None:
    layer = _linear()
    original_values = layer.weight.detach().clone()
    mask = random_mask((3, 4), generator=_gen(1))
    assert parametrize_mask(layer, "weight", mask) is layer

    assert parametrize.is_parametrized(layer, "weight")
    original = layer.parametrizations.weight.original
    assert torch.equal(original, original_values)  # masked entries are kept
    assert torch.equal(layer.weight, torch.where(mask, original_values, 0.0))

    x = torch.randn(2, 4, generator=_gen(2))
    layer(x).pow(2).sum().backward()
    assert original.grad is not None
    assert not original.grad[~mask].any()
    assert original.grad[mask].ne(0).all()


def test_parametrize_mask_stores_the_mask_as_a_bool_buffer() -> None:
    layer = _linear()
    mask = random_mask((3, 4), generator=_gen(1))
    parametrize_mask(layer, "weight", mask.float())

    state = layer.state_dict()
    assert "parametrizations.weight.0.mask" in state
    stored = state["parametrizations.weight.0.mask"]
    assert stored.dtype == torch.bool
    assert torch.equal(stored, mask)

    layer.to(torch.float64)
    assert layer.parametrizations.weight.original.dtype == torch.float64
    assert layer.weight.dtype == torch.float64
    assert layer.parametrizations.weight[0].mask.dtype == torch.bool
    assert torch.equal(layer.parametrizations.weight[0].mask, mask)

    # The caller's mask was copied, not kept.
    mask.fill_(True)
    assert not torch.equal(layer.parametrizations.weight[0].mask, mask)

    # The state dict round-trips into another masked layer.
    other = _linear(seed=5).to(torch.float64)
    parametrize_mask(other, "weight", torch.ones(3, 4, dtype=torch.bool))
    other.load_state_dict(layer.state_dict())
    assert torch.equal(other.weight, layer.weight)


_MASK_KEY = "parametrizations.weight.0.mask"


def _snapshot(module: nn.Module) -> dict[str, tuple[Tensor, Tensor]]:
    """Each state-dict entry: the object itself and a copy of its values."""
    state = module.state_dict(keep_vars=True)
    return {key: (value, value.detach().clone()) for key, value in state.items()}


def _assert_unchanged(module: nn.Module, snapshot: dict[str, Any]) -> None:
    state = module.state_dict(keep_vars=True)
    assert state.keys() == snapshot.keys()
    for key, (obj, values) in snapshot.items():
        assert state[key] is obj, key
        assert state[key].dtype == values.dtype, key
        assert torch.equal(state[key], values), key


@pytest.mark.parametrize("assign", [False, True])
@pytest.mark.parametrize(
    ("saved", "bad"),
    [
        (torch.full((3, 4), 0.5), "hold only 0 and 1 (as a float mask), not 0.5"),
        (
            torch.full((3, 4), 2.0).double(),
            "hold only 0 and 1 (as a float mask), not 2",
        ),
        (torch.ones(3, 4, dtype=torch.int64), "be a bool or floating 0/1 tensor"),
        (torch.ones(4, 3, dtype=torch.bool), "have shape (3, 4) like 'self.paramet"),
        ([[True] * 4] * 3, "be a torch.Tensor, not list"),
    ],
)
def test_parametrize_mask_refuses_a_bad_saved_mask_and_loads_nothing(
    saved: object, bad: str, assign: bool
) -> None:
    """Issue 24, case 8: a 0.5-filled saved mask loaded as all True."""
    layer = parametrize_mask(
        _linear(), "weight", random_mask((3, 4), generator=_gen(1))
    )
    snapshot = _snapshot(layer)
    state: dict[str, Any] = {
        k: torch.zeros_like(v) for k, v in layer.state_dict().items()
    }
    state[_MASK_KEY] = saved
    with pytest.raises(RuntimeError) as info:
        layer.load_state_dict(state, assign=assign)
    message = str(info.value)
    assert (
        f"load_state_dict() argument 'state_dict[\"{_MASK_KEY}\"]' must {bad}"
        in message
    )
    assert message.count("argument") == 1  # one error, not one per check
    _assert_unchanged(layer, snapshot)  # not even the bias or original loaded
    assert state[_MASK_KEY] is saved  # the caller's dict is untouched


@pytest.mark.parametrize("assign", [False, True])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_parametrize_mask_loads_a_float_0_1_saved_mask_as_bool(
    dtype: torch.dtype, assign: bool
) -> None:
    layer = parametrize_mask(_linear(), "weight", torch.ones(3, 4, dtype=torch.bool))
    mask = random_mask((3, 4), generator=_gen(2))
    state = dict(layer.state_dict())
    saved = mask.to(dtype)
    state[_MASK_KEY] = saved
    layer.load_state_dict(state, assign=assign)
    loaded = layer.parametrizations.weight[0].mask
    assert loaded.dtype == torch.bool
    assert torch.equal(loaded, mask)
    assert torch.equal(saved, mask.to(dtype))  # the caller's tensor is unchanged
    assert torch.equal(
        layer.weight, torch.where(mask, layer.parametrizations.weight.original, 0.0)
    )


def test_parametrize_mask_checks_a_saved_mask_in_a_parent_and_on_its_own() -> None:
    """Through a parent module, after deepcopy, and into the parametrization."""
    layer = parametrize_mask(_linear(), "weight", torch.ones(3, 4, dtype=torch.bool))
    model = nn.Sequential(nn.Tanh(), layer)
    snapshot = _snapshot(layer)
    state = {k: torch.zeros_like(v) for k, v in model.state_dict().items()}
    state[f"1.{_MASK_KEY}"] = torch.full((3, 4), 0.5)
    with pytest.raises(RuntimeError, match=r"'state_dict\[\"1\.parametrizations"):
        model.load_state_dict(state, strict=False)
    _assert_unchanged(layer, snapshot)

    twin = copy.deepcopy(layer)
    state = {**twin.state_dict(), _MASK_KEY: torch.full((3, 4), 0.5)}
    with pytest.raises(RuntimeError, match="must hold only 0 and 1"):
        twin.load_state_dict(state)

    steps = layer.parametrizations.weight
    state = {**steps.state_dict(), "0.mask": torch.full((3, 4), 0.5)}
    with pytest.raises(RuntimeError, match=r"'state_dict\[\"0\.mask\"\]' must hold"):
        steps.load_state_dict(state)
    _assert_unchanged(layer, snapshot)


def test_parametrize_mask_does_not_stop_weight_decay() -> None:
    """Zero gradient is not frozen: decay still moves ``original``."""
    layer = _linear()
    mask = random_mask((3, 4), generator=_gen(1))
    parametrize_mask(layer, "weight", mask)
    original = layer.parametrizations.weight.original
    before = original.detach().clone()
    opt = torch.optim.AdamW(layer.parameters(), lr=0.01)
    x = torch.randn(8, 4, generator=_gen(3))
    for _ in range(5):
        opt.zero_grad()
        layer(x).pow(2).mean().backward()
        opt.step()
    assert not frozen_report(before, original, mask).frozen

    keep_frozen(opt, original, mask)
    before = original.detach().clone()
    for _ in range(5):
        opt.zero_grad()
        layer(x).pow(2).mean().backward()
        opt.step()
    assert frozen_report(before, original, mask).frozen


# -- register_grad_mask -----------------------------------------------------------


def test_register_grad_mask_never_modifies_the_incoming_gradient() -> None:
    w = torch.ones(2, 3, requires_grad=True)
    seen: list[torch.Tensor] = []
    w.register_hook(lambda grad: seen.append(grad))  # runs before the mask hook
    mask = torch.tensor([[True, False, True], [False, True, False]])
    register_grad_mask(w, mask)
    (5 * w).sum().backward()
    assert torch.equal(seen[0], torch.full((2, 3), 5.0))
    assert w.grad is not None
    assert torch.equal(w.grad, 5.0 * mask)


def test_register_grad_mask_copies_the_mask_and_can_be_removed() -> None:
    w = torch.ones(2, requires_grad=True)
    mask = torch.tensor([True, False])
    handle = register_grad_mask(w, mask)
    mask.fill_(True)  # no effect: the hook holds a copy
    w.sum().backward()
    assert w.grad is not None
    assert torch.equal(w.grad, torch.tensor([1.0, 0.0]))
    handle.remove()
    w.grad = None
    w.sum().backward()
    assert torch.equal(w.grad, torch.tensor([1.0, 1.0]))


# -- frozen_report ----------------------------------------------------------------


def test_frozen_report_counts_and_is_nan_aware() -> None:
    before = torch.tensor([1.0, math.nan, 0.0, 2.0, 3.0, 4.0])
    after = torch.tensor([1.0, math.nan, -0.0, 2.5, 3.0, math.nan])
    inside = torch.tensor([False, False, False, True, True, True])
    before_copy, after_copy = before.clone(), after.clone()

    report = frozen_report(before, after, inside)

    assert report == FrozenReport(
        total_outside=3,
        moved_outside=0,
        max_abs_change_outside=0.0,
        total_inside=3,
        moved_inside=2,
    )
    assert report.frozen
    assert str(report) == (
        "frozen: 0/3 outside the mask moved (max |change| 0), 2/3 inside moved"
    )
    assert torch.equal(before.nan_to_num(), before_copy.nan_to_num())
    assert torch.equal(after.nan_to_num(), after_copy.nan_to_num())

    moved = frozen_report(before, after, ~inside)
    assert not moved.frozen
    assert moved.moved_outside == 2
    assert moved.max_abs_change_outside == math.inf  # a value became nan
    assert str(moved).startswith("NOT frozen: 2/3 outside the mask moved")


def test_frozen_report_accepts_a_parameter_and_is_immutable() -> None:
    w = torch.nn.Parameter(torch.ones(2, 2))
    report = frozen_report(w.detach().clone(), w, torch.ones(2, 2, dtype=torch.bool))
    assert report.frozen
    assert report.total_outside == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.moved_outside = 3


# -- the optimizer matrix --------------------------------------------------------

OPTIMIZERS: dict[str, Callable[[list[torch.Tensor]], torch.optim.Optimizer]] = {
    "SGD": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "SGD momentum=0.9": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "SGD weight_decay=0.1": lambda ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.1),
    "Adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
    "AdamW": lambda ps: torch.optim.AdamW(ps, lr=0.01),  # weight_decay=0.01
}

# Measured: with the gradient mask in place from the first step, masked-out
# entries get a gradient of exactly 0, and momentum/Adam state stays exactly 0,
# so their update is 0 (Adam: 0 / (sqrt(0) + eps) = 0). Weight decay, coupled
# (SGD) or decoupled (AdamW), moves them anyway.
FROZEN_WITHOUT_FIX_FROM_STEP_0 = {
    "SGD": True,
    "SGD momentum=0.9": True,
    "SGD weight_decay=0.1": False,
    "Adam": True,
    "AdamW": False,
}
# Measured: after 10 unmasked steps the optimizer state is not 0 any more, so
# momentum and Adam keep moving masked-out entries. Plain SGD has no state.
FROZEN_WITHOUT_FIX_MID_TRAINING = {
    "SGD": True,
    "SGD momentum=0.9": False,
    "SGD weight_decay=0.1": False,
    "Adam": False,
    "AdamW": False,
}


class _Setup:
    """A two-layer model whose first weight is trained only inside a mask."""

    def __init__(self, optimizer: str) -> None:
        g = _gen(0)
        self.model = torch.nn.Sequential(
            torch.nn.Linear(5, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2)
        )
        with torch.no_grad():
            for p in self.model.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
        self.x = torch.randn(16, 5, generator=g)
        self.y = torch.randn(16, 2, generator=g)
        self.weight: torch.nn.Parameter = self.model[0].weight
        self.mask = random_mask(self.weight.shape, p=0.5, generator=g)
        self.optimizer = OPTIMIZERS[optimizer](list(self.model.parameters()))

    def steps(self, n: int) -> None:
        for _ in range(n):
            self.optimizer.zero_grad()
            loss = (self.model(self.x) - self.y).pow(2).mean()
            loss.backward()
            self.optimizer.step()

    def train_masked(self, *, warmup: int, fix: bool) -> FrozenReport:
        self.steps(warmup)
        register_grad_mask(self.weight, self.mask)
        if fix:
            keep_frozen(self.optimizer, self.weight, self.mask)
        before = self.weight.detach().clone()
        self.steps(100)
        if fix:
            assert torch.equal(self.weight[~self.mask], before[~self.mask])
        return frozen_report(before, self.weight, self.mask)


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_gradient_mask_alone_from_step_0(optimizer: str) -> None:
    setup = _Setup(optimizer)
    report = setup.train_masked(warmup=0, fix=False)
    assert report.frozen is FROZEN_WITHOUT_FIX_FROM_STEP_0[optimizer], str(report)
    assert report.moved_inside == report.total_inside > 0  # it did train
    if not report.frozen:
        assert report.moved_outside == report.total_outside


@pytest.mark.parametrize("optimizer", ["SGD momentum=0.9", "Adam"])
def test_optimizer_state_outside_the_mask_stays_zero_from_step_0(
    optimizer: str,
) -> None:
    setup = _Setup(optimizer)
    setup.train_masked(warmup=0, fix=False)
    state = setup.optimizer.state[setup.weight]
    keys = (
        ["momentum_buffer"]
        if optimizer.startswith("SGD")
        else ["exp_avg", "exp_avg_sq"]
    )
    for key in keys:
        assert not state[key][~setup.mask].any(), key
        assert state[key][setup.mask].ne(0).any(), key


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_gradient_mask_alone_mid_training(optimizer: str) -> None:
    setup = _Setup(optimizer)
    report = setup.train_masked(warmup=10, fix=False)
    assert report.frozen is FROZEN_WITHOUT_FIX_MID_TRAINING[optimizer], str(report)
    assert report.moved_inside > 0


@pytest.mark.parametrize("warmup", [0, 10])
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_keep_frozen_makes_every_optimizer_bit_identical(
    optimizer: str, warmup: int
) -> None:
    setup = _Setup(optimizer)
    report = setup.train_masked(warmup=warmup, fix=True)
    assert report.frozen, str(report)
    assert report.max_abs_change_outside == 0.0
    assert report.moved_inside == report.total_inside > 0


def test_keep_frozen_works_without_a_gradient_mask_and_can_be_removed() -> None:
    setup = _Setup("AdamW")
    weight, mask = setup.weight, setup.mask
    handle = keep_frozen(setup.optimizer, weight, mask)
    before = weight.detach().clone()
    setup.steps(20)
    assert frozen_report(before, weight, mask).frozen
    handle.remove()
    setup.steps(1)
    assert not frozen_report(before, weight, mask).frozen


# -- apply_mask keeps the weight's dtype ------------------------------------------


@pytest.mark.parametrize(
    ("weight", "expected"),
    [
        (torch.tensor([3, -4, 5]), torch.tensor([3, 0, 5])),
        (torch.tensor([7, 8, 9], dtype=torch.uint8), torch.tensor([7, 0, 9]).byte()),
        (torch.tensor([True, True, False]), torch.tensor([True, False, False])),
        (torch.tensor([1.5, 2.5, 3.5]).half(), torch.tensor([1.5, 0.0, 3.5]).half()),
        (torch.tensor([1.0, 2.0, 3.0]).double(), torch.tensor([1.0, 0, 3.0]).double()),
        (torch.tensor([2**62 + 1, 1, 3]), torch.tensor([2**62 + 1, 0, 3])),
    ],
)
def test_apply_mask_returns_the_weight_dtype(weight: Tensor, expected: Tensor) -> None:
    mask = torch.tensor([True, False, True])
    out = apply_mask(weight, mask)
    assert out.dtype == weight.dtype
    assert torch.equal(out, expected)


def test_parametrized_int_buffer_free_masking_keeps_dtype_too() -> None:
    """The parametrization shares apply_mask's dtype-preserving zero."""
    layer = nn.Linear(2, 2).double()
    parametrize_mask(layer, "weight", torch.tensor([[True, False], [False, True]]))
    assert layer.weight.dtype == torch.float64


# -- frozen_report sees every change of a 64-bit integer ---------------------------


@pytest.mark.parametrize("dtype", [torch.int64, torch.uint64])
@pytest.mark.parametrize("base", [2**53, 2**60 + 7, 2**63 - 2])
def test_frozen_report_sees_a_change_of_one_above_2_53(
    dtype: torch.dtype, base: int
) -> None:
    before = torch.tensor([base, base, 5, 6], dtype=dtype)
    after = torch.tensor([base + 1, base, 5, 7], dtype=dtype)
    mask = torch.tensor([False, False, True, True])
    report = frozen_report(before, after, mask)
    assert report.moved_outside == 1
    assert report.max_abs_change_outside == 1.0
    assert report.moved_inside == 1
    assert not report.frozen


def test_frozen_report_64_bit_extremes_do_not_overflow() -> None:
    before = torch.tensor([-(2**63), 2**63 - 1])
    after = torch.tensor([2**63 - 1, -(2**63)])
    report = frozen_report(before, after, torch.tensor([False, False]))
    assert report.moved_outside == 2
    assert report.max_abs_change_outside == float(2**64 - 1)
    top = torch.tensor([2**64 - 1], dtype=torch.uint64)
    bottom = torch.tensor([0], dtype=torch.uint64)
    report = frozen_report(top, bottom, torch.tensor([False]))
    assert report.max_abs_change_outside == float(2**64 - 1)


@pytest.mark.parametrize(
    "dtype", [torch.bool, torch.int8, torch.uint8, torch.int32, torch.bfloat16]
)
def test_frozen_report_other_dtypes(dtype: torch.dtype) -> None:
    before = torch.tensor([0, 1, 0, 1]).to(dtype)
    after = torch.tensor([1, 1, 0, 0]).to(dtype)
    report = frozen_report(before, after, torch.tensor([False, False, True, True]))
    assert (report.moved_outside, report.moved_inside) == (1, 1)
    assert report.max_abs_change_outside == 1.0


def test_keep_frozen_rejects_a_meta_parameter_before_registering() -> None:
    param = nn.Parameter(torch.zeros(2, 3, device=META))
    optimizer = torch.optim.SGD([param], lr=0.1)
    with pytest.raises(
        ValueError,
        match=r"^keep_frozen\(\) argument 'param' must be on a device that holds",
    ):
        keep_frozen(optimizer, param, MASK.to(META))
    assert not optimizer._optimizer_step_pre_hooks
    assert not optimizer._optimizer_step_post_hooks


# -- keep_frozen after module.double() ----------------------------------------------


@pytest.mark.parametrize("cast", ["double", "half", "float-after-half"])
def test_keep_frozen_follows_a_cast_of_the_module(cast: str) -> None:
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    mask = torch.rand(3, 4) < 0.5
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.5)
    keep_frozen(optimizer, model.weight, mask)
    registered = model.weight.detach()[~mask].clone()
    if cast == "double":
        model.double()
    elif cast == "half":
        model.half()
    else:
        model.half()
        model.float()
    trained = model.weight.detach()[mask].clone()
    x = torch.randn(5, 4, dtype=model.weight.dtype)
    for _ in range(3):
        optimizer.zero_grad()
        model(x).square().sum().backward()
        optimizer.step()
    weight = model.weight.detach()
    # The registration values in the new dtype, bit for bit (a narrower
    # dtype rounds them exactly as the cast did).
    assert torch.equal(weight[~mask], registered.to(weight.dtype))
    assert (weight[mask] != trained).all()  # the rest did train


_ROUND_TRIP = {
    "SGD": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
    "Adam": lambda ps: torch.optim.Adam(ps, lr=0.1, weight_decay=0.1),
    "AdamW": lambda ps: torch.optim.AdamW(ps, lr=0.1, weight_decay=0.5),
}


@pytest.fixture(params=["data", "swap", "overwrite"])
def conversion(request: pytest.FixtureRequest) -> Iterator[str]:
    """How Module._apply converts a parameter: ``.data`` swapped (torch's
    default), ``torch.utils.swap_tensors`` (the object keeps its identity), or
    a new Parameter object."""
    future = torch.__future__
    saved = (
        future.get_swap_module_params_on_conversion(),
        future.get_overwrite_module_params_on_conversion(),
    )
    future.set_swap_module_params_on_conversion(request.param == "swap")
    future.set_overwrite_module_params_on_conversion(request.param == "overwrite")
    try:
        yield request.param
    finally:
        future.set_swap_module_params_on_conversion(saved[0])
        future.set_overwrite_module_params_on_conversion(saved[1])


@pytest.mark.parametrize("there", [torch.float16, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("optimizer", list(_ROUND_TRIP))
def test_keep_frozen_survives_cast_round_trips_with_steps_between(
    optimizer: str, there: torch.dtype, conversion: str
) -> None:
    """Issue 24, case 9: after half() and a step, float() then a step moved
    every frozen entry and raised a dtype mismatch from the post-hook."""
    g = _gen(0)
    model = nn.Linear(4, 3)
    mask = random_mask((3, 4), generator=g)
    opt = _ROUND_TRIP[optimizer](list(model.parameters()))
    param = model.weight  # the one the optimizer (and keep_frozen) holds
    keep_frozen(opt, param, mask)
    registered = param.detach()[~mask].clone()
    start = param.detach().clone()
    x = torch.randn(5, 4, generator=g)

    def cast(*args: Any, **kwargs: Any) -> None:
        model.to(*args, **kwargs)
        if optimizer != "SGD":
            # Torch's Adam needs its state in the parameter's dtype, and casts
            # it only in load_state_dict; SGD mixes dtypes on its own.
            opt.load_state_dict(opt.state_dict())

    def step() -> None:
        opt.zero_grad()
        model(x.to(model.weight.dtype)).square().sum().backward()
        opt.step()  # raised before the fix
        kept = param.detach()[~mask]
        assert torch.equal(kept, registered.to(kept.dtype))

    step()
    cast(there)
    step()
    step()
    cast(torch.float32)
    step()
    cast(device="cpu")  # a no-op move
    step()
    cast(there)
    cast(torch.float32)  # straight back, without a step
    step()
    assert param.dtype == torch.float32
    if conversion == "overwrite":
        # A new Parameter for the module: the optimizer, and keep_frozen with
        # it, still hold the old one, which no longer trains (torch's rule).
        assert model.weight is not param
        assert not any(p is model.weight for p in opt.param_groups[0]["params"])
    else:
        assert model.weight is param
        assert (param.detach()[mask] != start[mask]).all()  # the rest trained


def test_keep_frozen_cast_round_trip_of_the_issue() -> None:
    """The issue's exact sequence, with SGD and a double() trip too."""
    for there in ("half", "double"):
        torch.manual_seed(0)
        lin = nn.Linear(4, 3)
        mask = torch.rand(3, 4) < 0.5
        opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
        keep_frozen(opt, lin.weight, mask)
        registered = lin.weight.detach().clone()
        x = torch.randn(5, 4)
        for cast in ("float", there, "float"):
            getattr(lin, cast)()
            opt.zero_grad()
            lin(x.to(lin.weight.dtype)).sum().backward()
            opt.step()
        assert torch.equal(lin.weight.detach()[~mask], registered[~mask])


def test_keep_frozen_raises_before_the_step_when_the_shape_changed() -> None:
    param = nn.Parameter(torch.ones(2, 3))
    optimizer = torch.optim.SGD([param], lr=1.0)
    keep_frozen(optimizer, param, MASK)
    with torch.no_grad():
        param.data = torch.ones(3, 3)
    param.grad = torch.ones(3, 3)
    with pytest.raises(
        RuntimeError,
        match=r"^keep_frozen\(\) was registered for a parameter of shape \(2, 3\), "
        r"which now has shape \(3, 3\)",
    ):
        optimizer.step()
    assert torch.equal(param.detach(), torch.ones(3, 3))  # the step did not run


def test_keep_frozen_handle_removes_both_hooks() -> None:
    param = nn.Parameter(torch.ones(2, 3))
    optimizer = torch.optim.SGD([param], lr=1.0)
    handle = keep_frozen(optimizer, param, MASK & False)
    assert len(optimizer._optimizer_step_pre_hooks) == 1
    assert len(optimizer._optimizer_step_post_hooks) == 1
    handle.remove()
    assert not optimizer._optimizer_step_pre_hooks
    assert not optimizer._optimizer_step_post_hooks
    with keep_frozen(optimizer, param, MASK):
        pass  # a handle is also a context manager
    assert not optimizer._optimizer_step_post_hooks


# -- register_grad_mask with sparse gradients --------------------------------------


def test_register_grad_mask_masks_a_sparse_gradient() -> None:
    torch.manual_seed(0)
    embedding = nn.Embedding(5, 3, sparse=True)
    mask = torch.rand(5, 3) < 0.5
    register_grad_mask(embedding.weight, mask)
    dense = nn.Embedding(5, 3)
    dense.load_state_dict(embedding.state_dict())
    dense.weight.register_hook(lambda g: g * mask)
    tokens = torch.tensor([1, 2, 1, 4])
    embedding(tokens).square().sum().backward()
    dense(tokens).square().sum().backward()
    grad = embedding.weight.grad
    assert grad is not None
    assert grad.layout == torch.sparse_coo
    assert torch.equal(grad.to_dense(), dense.weight.grad)
    # The sparse optimizers accept it.
    torch.optim.SparseAdam([embedding.weight]).step()


def test_register_grad_mask_sparse_gradient_zeroes_inf_outside() -> None:
    weight = torch.zeros(3, 2, requires_grad=True)
    register_grad_mask(weight, torch.tensor([[True, False]] * 3))
    grad = torch.sparse_coo_tensor(
        torch.tensor([[0, 0, 2]]),
        torch.tensor([[1.0, math.inf]] * 3),
        (3, 2),
        check_invariants=True,
    )
    weight.backward(grad)
    assert weight.grad is not None
    assert torch.equal(
        weight.grad.to_dense(), torch.tensor([[2.0, 0.0], [0, 0], [1, 0]])
    )


def test_failed_keep_frozen_registers_nothing() -> None:
    leaf = torch.nn.Parameter(torch.ones(2, 2))
    optimizer = torch.optim.SGD([leaf], lr=1.0)
    with pytest.raises(ValueError, match="shape"):
        keep_frozen(optimizer, leaf, torch.ones(3, dtype=torch.bool))
    leaf.grad = torch.ones(2, 2)
    optimizer.step()
    assert torch.equal(leaf.detach(), torch.zeros(2, 2))


def test_frozen_report_infinite_change_is_inf() -> None:
    before = torch.zeros(3)
    after = torch.tensor([0.0, float("inf"), 0.0])
    mask = torch.tensor([True, False, True])
    report = frozen_report(before, after, mask)
    assert report.max_abs_change_outside == math.inf
    assert not report.frozen


# -- bad input, for every public function -------------------------------------------


def _quantized(tensor: Tensor) -> Tensor:
    """``tensor`` quantized to qint8 (torch warns that quantization is deprecated)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "torch.quantize_per_tensor", UserWarning)
        return torch.quantize_per_tensor(tensor, 0.1, 0, torch.qint8)


def _quantized_linear() -> nn.Linear:
    layer = nn.Linear(3, 2)
    layer.register_buffer("q", _quantized(torch.zeros(2, 3)))
    return layer


def _plain_attribute() -> nn.Linear:
    layer = nn.Linear(3, 2)
    layer.extra = torch.zeros(2, 3)
    return layer


def _quantized_optimizer() -> tuple[torch.optim.Optimizer, Tensor]:
    param = _quantized(torch.zeros(2, 3))
    return torch.optim.SGD([param], lr=0.1), param


def _bad_inputs() -> list[Any]:
    w = torch.zeros(2, 3)
    leaf = torch.zeros(2, 3, requires_grad=True)
    ok = torch.ones(2, 3, dtype=torch.bool)
    wrong = torch.ones(3, 2, dtype=torch.bool)
    optimizer = torch.optim.SGD([leaf], lr=0.1)
    meta_leaf = torch.nn.Parameter(torch.zeros(2, 3, device="meta"))
    meta_optimizer = torch.optim.SGD([meta_leaf], lr=0.1)
    am, pm = "apply_mask", "parametrize_mask"
    rg, fr, kf = "register_grad_mask", "frozen_report", "keep_frozen"
    shape_23 = "have shape (2, 3) like 'weight', not (3, 2)"
    quantized = "be a tensor that is not quantized (call .dequantize() first), not "
    quantized += "a quantized tensor (torch.qint8)"
    cases: list[tuple[str, str, Callable[[], object], type[Exception], str]] = [
        (am, "mask", lambda: apply_mask(w, wrong), ValueError, shape_23),
        (
            am,
            "weight",
            lambda: apply_mask(_quantized(w), ok),
            TypeError,
            quantized,
        ),
        (
            am,
            "mask",
            lambda: apply_mask(w, _quantized(ok.float())),
            TypeError,
            "be a bool or floating 0/1 tensor, not torch.qint8",
        ),
        (am, "weight", lambda: apply_mask("w", ok), TypeError, "be a torch.Tensor"),
        (
            am,
            "weight",
            lambda: apply_mask(w.to_sparse(), ok),
            TypeError,
            "be a dense (strided) tensor, not a tensor of layout torch.sparse_coo",
        ),
        (
            pm,
            "name",
            lambda: parametrize_mask(_quantized_linear(), "q", ok),
            TypeError,
            "be the name of a tensor that is not quantized, not 'q' (a quantized "
            "torch.qint8 tensor)",
        ),
        (
            pm,
            "name",
            lambda: parametrize_mask(_plain_attribute(), "extra", ok),
            AttributeError,
            "be the name of a parameter or buffer of the Linear, not 'extra' (a "
            "tensor, but not a registered parameter or buffer)",
        ),
        (
            pm,
            "mask",
            lambda: parametrize_mask(torch.nn.Linear(3, 2), "weight", ok.to("meta")),
            ValueError,
            "be on the device of 'module.weight' (cpu), not meta",
        ),
        (
            fr,
            "before",
            lambda: frozen_report(_quantized(w), _quantized(w), ok),
            TypeError,
            quantized,
        ),
        (
            fr,
            "after",
            lambda: frozen_report(w, _quantized(w), ok),
            TypeError,
            quantized,
        ),
        (
            fr,
            "mask",
            lambda: frozen_report(w, w, _quantized(ok.float())),
            TypeError,
            "be a bool or floating 0/1 tensor, not torch.qint8",
        ),
        (
            kf,
            "param",
            lambda: keep_frozen(*_quantized_optimizer(), ok),
            TypeError,
            quantized,
        ),
        (
            am,
            "mask",
            lambda: apply_mask(w, ok.int()),
            TypeError,
            "be a bool or floating 0/1 tensor, not torch.int32",
        ),
        (
            am,
            "mask",
            lambda: apply_mask(w, ok * 0.5),
            ValueError,
            "hold only 0 and 1 (as a float mask), not 0.5 (torch.float32)",
        ),
        (
            am,
            "mask",
            lambda: apply_mask(w, [[1, 0, 1]] * 2),
            TypeError,
            "be a torch.Tensor, not list",
        ),
        (
            pm,
            "module",
            lambda: parametrize_mask(w, "weight", ok),
            TypeError,
            "be a torch.nn.Module, not Tensor",
        ),
        (
            pm,
            "name",
            lambda: parametrize_mask(torch.nn.Linear(3, 2), 0, ok),
            TypeError,
            "be a str, not int",
        ),
        (
            pm,
            "name",
            lambda: parametrize_mask(torch.nn.Linear(3, 2), "weights", ok),
            AttributeError,
            "be the name of a parameter or buffer of the Linear, not 'weights' (no "
            "such attribute)",
        ),
        (
            pm,
            "name",
            lambda: parametrize_mask(torch.nn.Linear(3, 2, bias=False), "bias", ok[0]),
            AttributeError,
            "be the name of a parameter or buffer of the Linear, not 'bias' (NoneType)",
        ),
        (
            pm,
            "mask",
            lambda: parametrize_mask(torch.nn.Linear(3, 2), "weight", wrong),
            ValueError,
            "have shape (2, 3) like 'module.weight', not (3, 2)",
        ),
        (
            rg,
            "param",
            lambda: register_grad_mask(w, ok),
            ValueError,
            "be a tensor that requires grad",
        ),
        (
            rg,
            "param",
            lambda: register_grad_mask(leaf * 2, ok),
            ValueError,
            "be a leaf tensor such as an nn.Parameter (only leaves accumulate "
            ".grad), not the result of an operation (MulBackward0)",
        ),
        (
            rg,
            "mask",
            lambda: register_grad_mask(leaf, wrong),
            ValueError,
            "have shape (2, 3) like 'param', not (3, 2)",
        ),
        (
            rg,
            "param",
            lambda: register_grad_mask([0.0], ok),
            TypeError,
            "be a torch.Tensor, not list",
        ),
        (
            fr,
            "after",
            lambda: frozen_report(w, w.tolist(), ok),
            TypeError,
            "be a torch.Tensor, not list",
        ),
        (
            fr,
            "after",
            lambda: frozen_report(w, w.T, ok),
            ValueError,
            "have the same shape as 'before' (2, 3), not (3, 2)",
        ),
        (
            fr,
            "after",
            lambda: frozen_report(w, w.double(), ok),
            TypeError,
            "be of the same dtype as 'before' (torch.float32), not torch.float64",
        ),
        (
            fr,
            "before",
            lambda: frozen_report(w.cfloat(), w.cfloat(), ok),
            TypeError,
            "be a real tensor, not torch.complex64",
        ),
        (
            fr,
            "mask",
            lambda: frozen_report(w, w, wrong),
            ValueError,
            "have shape (2, 3) like 'before', not (3, 2)",
        ),
        (
            fr,
            "after",
            lambda: frozen_report(w, w.to("meta"), ok),
            ValueError,
            "be on the same device as 'before' (cpu), not meta",
        ),
        (
            fr,
            "before",
            lambda: frozen_report(w.to("meta"), w.to("meta"), ok.to("meta")),
            ValueError,
            "be on a device that holds values (this function reads them), "
            "not on the meta device",
        ),
        (
            fr,
            "mask",
            lambda: frozen_report(w, w, ok.to("meta")),
            ValueError,
            "be on the device of 'before' (cpu), not meta",
        ),
        (
            kf,
            "optimizer",
            lambda: keep_frozen("sgd", leaf, ok),
            TypeError,
            "be a torch.optim.Optimizer, not str",
        ),
        (
            kf,
            "param",
            lambda: keep_frozen(optimizer, w, ok),
            ValueError,
            "be a tensor in the optimizer's param_groups",
        ),
        (
            kf,
            "param",
            lambda: keep_frozen(optimizer, leaf.detach(), ok),
            ValueError,
            "be a tensor in the optimizer's param_groups",
        ),
        (
            kf,
            "param",
            lambda: keep_frozen(optimizer, None, ok),
            TypeError,
            "be a torch.Tensor, not NoneType",
        ),
        (
            kf,
            "mask",
            lambda: keep_frozen(optimizer, leaf, wrong),
            ValueError,
            "have shape (2, 3) like 'param', not (3, 2)",
        ),
        (
            kf,
            "param",
            lambda: keep_frozen(meta_optimizer, meta_leaf, ok.to("meta")),
            ValueError,
            "be on a device that holds values",
        ),
        (
            kf,
            "mask",
            lambda: keep_frozen(optimizer, leaf, ok.to("meta")),
            ValueError,
            "be on the device of 'param' (cpu), not meta",
        ),
        (
            "frozen_report",
            "before",
            lambda: frozen_report(
                torch.zeros(2, device="meta"),
                torch.zeros(2, device="meta"),
                torch.ones(2, dtype=torch.bool, device="meta"),
            ),
            ValueError,
            "be on a device that holds values (this function reads them), "
            "not on the meta device",
        ),
        (
            "frozen_report",
            "mask",
            lambda: frozen_report(
                torch.zeros(2),
                torch.zeros(2),
                torch.ones(2, dtype=torch.bool, device="meta"),
            ),
            ValueError,
            "be on the device of 'before' (cpu), not meta",
        ),
    ]
    return [pytest.param(*case, id=f"{case[0]}-{i}") for i, case in enumerate(cases)]


@pytest.mark.parametrize(("func", "arg", "call", "error", "rest"), _bad_inputs())
def test_bad_input_raises_a_clear_error(
    func: str, arg: str, call: Callable[[], object], error: type[Exception], rest: str
) -> None:
    """Every message reads "{func}() argument '{arg}' must {rest}..."."""
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(f"{func}() argument '{arg}' must {rest}")


def test_every_public_function_has_a_bad_input_case() -> None:
    covered = {param.id.rsplit("-", 1)[0] for param in _bad_inputs()}
    functions = {name for name in MODULE.__all__ if name != "FrozenReport"}
    assert functions <= covered


# -- docstrings -------------------------------------------------------------------


def test_no_docstring_mentions_notes() -> None:
    for where, doc in docstrings(MODULE).items():
        assert not re.search(r"\bnotes\b", doc, re.IGNORECASE), where
        assert "order and number" not in doc, where


def test_the_weight_decay_warning_is_stated_once() -> None:
    docs: dict[str, str] = {}
    for name in ("masks", "freezing", "masked_linear"):
        module = importlib.import_module(f"autograd_notes.{name}")
        docs |= {f"{name}:{k}": v for k, v in docstrings(module).items()}
    stating = [where for where, doc in docs.items() if "whatever its gradient" in doc]
    assert stating == ["freezing:autograd_notes.freezing"]
    linking = [
        where for where, doc in docs.items() if "zero-gradient-is-not-frozen" in doc
    ]
    assert len(linking) >= 4
