"""Tests for :mod:`autograd_notes.masks`.

Besides the usual checks, this file pins down two facts the docs rely on:

* Masking the weight in the forward pass (``apply_mask``) gives the same
  gradient as masking the gradient (``W.grad * M``) only when the loss is
  linear in the layer's output, or the masked-out weights are zero.
* A gradient mask alone keeps masked-out entries frozen for some optimizers
  and not for others (the optimizer matrix below); ``keep_frozen`` makes them
  bit-identical for all of them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from torch.nn.utils import parametrize

from autograd_notes.masks import (
    FrozenReport,
    apply_mask,
    check_mask,
    frozen_report,
    keep_frozen,
    mask_from_condition,
    mask_from_indices,
    parametrize_mask,
    random_mask,
    register_grad_mask,
)

# Small tensors and no example database: the tests stay fast and write
# nothing into the working tree.
PROPERTY = settings(max_examples=60, deadline=None, database=None)

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
seeds = st.integers(0, 2**31 - 1)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# -- check_mask -------------------------------------------------------------------


@PROPERTY
@given(
    shape=shapes,
    seed=seeds,
    dtype=st.sampled_from(
        [torch.bool, torch.float16, torch.bfloat16, torch.float32, torch.float64]
    ),
)
def test_check_mask_accepts_matching_bool_and_binary_float_masks(
    shape: tuple[int, ...], seed: int, dtype: torch.dtype
) -> None:
    g = _gen(seed)
    weight = torch.randn(shape, generator=g)
    expected = torch.rand(shape, generator=g) < 0.5
    candidate = expected.to(dtype)
    candidate_copy = candidate.clone()
    weight_copy = weight.clone()

    result = check_mask(candidate, weight)

    assert result.dtype == torch.bool
    assert result.shape == weight.shape
    assert torch.equal(result, expected)
    if dtype == torch.bool:
        assert result is candidate
    else:
        assert result.data_ptr() != candidate.data_ptr() or candidate.numel() == 0
    assert torch.equal(candidate, candidate_copy)
    assert torch.equal(weight, weight_copy)


@PROPERTY
@given(weight_shape=shapes, mask_shape=shapes, name=st.sampled_from(["mask", "keep"]))
def test_check_mask_rejects_wrong_shape_naming_argument_and_both_shapes(
    weight_shape: tuple[int, ...], mask_shape: tuple[int, ...], name: str
) -> None:
    assume(weight_shape != mask_shape)
    mask = torch.ones(mask_shape, dtype=torch.bool)
    with pytest.raises(ValueError, match="shape") as info:
        check_mask(mask, torch.zeros(weight_shape), name=name)
    assert str(info.value) == (
        f"check_mask() argument '{name}' must have shape {weight_shape} like "
        f"'weight', not {mask_shape}"
    )
    assert torch.equal(mask, torch.ones(mask_shape, dtype=torch.bool))


@PROPERTY
@given(
    shape=nonempty_shapes,
    seed=seeds,
    bad=st.floats(width=32).filter(lambda v: v not in (0.0, 1.0)),
    dtype=st.sampled_from([torch.float32, torch.float64]),
)
def test_check_mask_rejects_floats_other_than_zero_and_one(
    shape: tuple[int, ...], seed: int, bad: float, dtype: torch.dtype
) -> None:
    g = _gen(seed)
    mask = (torch.rand(shape, generator=g) < 0.5).to(dtype)
    flat_index = int(torch.randint(mask.numel(), (), generator=g))
    mask.view(-1)[flat_index] = bad
    mask_copy = mask.clone()
    with pytest.raises(
        ValueError,
        match=r"^check_mask\(\) argument 'mask' must hold only 0 and 1 "
        r"\(as a float mask\), not ",
    ):
        check_mask(mask, torch.zeros(shape))
    assert torch.equal(mask.nan_to_num(), mask_copy.nan_to_num())


@PROPERTY
@given(
    shape=shapes,
    dtype=st.sampled_from([torch.uint8, torch.int8, torch.int32, torch.int64]),
)
def test_check_mask_rejects_integer_dtypes(
    shape: tuple[int, ...], dtype: torch.dtype
) -> None:
    mask = torch.ones(shape, dtype=dtype)
    with pytest.raises(TypeError) as info:
        check_mask(mask, torch.zeros(shape))
    assert str(info.value) == (
        "check_mask() argument 'mask' must be a bool or floating 0/1 tensor, "
        f"not {dtype}"
    )


@PROPERTY
@given(
    value=st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=5),
        st.lists(st.integers(0, 1), max_size=4),
    )
)
def test_check_mask_rejects_non_tensors(value: object) -> None:
    with pytest.raises(TypeError) as info:
        check_mask(value, torch.zeros(2))
    assert str(info.value) == (
        "check_mask() argument 'mask' must be a torch.Tensor, "
        f"not {type(value).__name__}"
    )


def test_check_mask_rejects_other_device_and_non_tensor_weight() -> None:
    meta_mask = torch.ones(2, 3, dtype=torch.bool, device="meta")
    with pytest.raises(
        ValueError,
        match=r"^check_mask\(\) argument 'mask' must be on the device of 'weight' "
        r"\(cpu\), not meta$",
    ):
        check_mask(meta_mask, torch.zeros(2, 3))
    with pytest.raises(TypeError, match=r"^check_mask\(\) argument 'weight' must be"):
        check_mask(torch.ones(2, dtype=torch.bool), [0.0, 0.0])


# -- building masks ---------------------------------------------------------------


def test_random_mask_is_reproducible_with_a_seeded_generator() -> None:
    first = random_mask((5, 7), p=0.3, generator=_gen(123))
    second = random_mask((5, 7), p=0.3, generator=_gen(123))
    assert first.dtype == torch.bool
    assert first.shape == (5, 7)
    assert torch.equal(first, second)


@pytest.mark.parametrize("shape", [3, (3,), [2, 3], torch.Size([2, 0, 4]), ()])
def test_random_mask_accepts_shape_forms(shape: Any) -> None:
    mask = random_mask(shape, generator=_gen(0))
    expected = (shape,) if isinstance(shape, int) else tuple(shape)
    assert tuple(mask.shape) == expected


def test_random_mask_extremes_and_frequency() -> None:
    assert not random_mask((50, 50), p=0.0, generator=_gen(1)).any()
    assert random_mask((50, 50), p=1.0, generator=_gen(1)).all()
    assert random_mask((50, 50), p=1).all()  # an int p is fine
    fraction = random_mask((200, 200), p=0.3, generator=_gen(2)).float().mean()
    assert abs(float(fraction) - 0.3) < 0.01


def test_random_mask_device() -> None:
    assert random_mask(4, generator=_gen(0)).device.type == "cpu"
    assert random_mask(4, device="meta").device.type == "meta"


@PROPERTY
@given(
    n_rows=st.integers(0, 5),
    n_cols=st.integers(0, 5),
    data=st.data(),
)
def test_mask_from_indices_selects_the_row_column_product(
    n_rows: int, n_cols: int, data: st.DataObject
) -> None:
    def index_lists(size: int) -> st.SearchStrategy[list[int] | None]:
        if size == 0:
            return st.one_of(st.none(), st.just([]))
        return st.one_of(st.none(), st.lists(st.integers(0, size - 1), max_size=6))

    rows = data.draw(index_lists(n_rows))
    cols = data.draw(index_lists(n_cols))
    as_tensor = data.draw(st.booleans())
    rows_arg = torch.tensor(rows, dtype=torch.long) if as_tensor and rows else rows
    mask = mask_from_indices((n_rows, n_cols), rows=rows_arg, cols=cols)

    assert mask.dtype == torch.bool
    assert mask.shape == (n_rows, n_cols)
    for i in range(n_rows):
        for j in range(n_cols):
            expected = (rows is None or i in rows) and (cols is None or j in cols)
            assert bool(mask[i, j]) == expected


def test_mask_from_indices_keeps_some_input_columns_of_a_linear_weight() -> None:
    layer = torch.nn.Linear(5, 3)
    mask = mask_from_indices(layer.weight.shape, cols=[1, 3, 3])
    assert mask.sum().item() == 2 * 3
    assert mask[:, [1, 3]].all()
    assert not mask[:, [0, 2, 4]].any()
    assert not mask_from_indices((2, 2), rows=[]).any()


def test_mask_from_condition_returns_a_detached_copy() -> None:
    w = torch.tensor([[0.5, -0.05], [0.0, -0.3]], requires_grad=True)
    condition = w.abs() > 0.1
    mask = mask_from_condition(condition)
    assert torch.equal(mask, condition)
    assert mask.grad_fn is None
    assert not mask.requires_grad
    mask[0, 0] = False
    assert bool(condition[0, 0])


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


# -- bad input, for every public function -------------------------------------------


def _bad_inputs() -> list[Any]:
    w = torch.zeros(2, 3)
    leaf = torch.zeros(2, 3, requires_grad=True)
    ok = torch.ones(2, 3, dtype=torch.bool)
    wrong = torch.ones(3, 2, dtype=torch.bool)
    nested = torch.nested.nested_tensor([w, w], layout=torch.jagged)
    optimizer = torch.optim.SGD([leaf], lr=0.1)
    meta_leaf = torch.nn.Parameter(torch.zeros(2, 3, device="meta"))
    meta_optimizer = torch.optim.SGD([meta_leaf], lr=0.1)
    rm, mi, mc = "random_mask", "mask_from_indices", "mask_from_condition"
    cm, am, pm = "check_mask", "apply_mask", "parametrize_mask"
    rg, fr, kf = "register_grad_mask", "frozen_report", "keep_frozen"
    shape_23 = "have shape (2, 3) like 'weight', not (3, 2)"
    cases: list[tuple[str, str, Callable[[], object], type[Exception], str]] = [
        (
            rm,
            "shape",
            lambda: random_mask("23"),
            TypeError,
            "be an int or a sequence of ints, not str",
        ),
        (
            rm,
            "shape",
            lambda: random_mask(2.0),
            TypeError,
            "be an int or a sequence of ints, not float",
        ),
        (
            rm,
            "shape",
            lambda: random_mask(True),
            TypeError,
            "be an int or a sequence of ints, not bool",
        ),
        (
            rm,
            "shape",
            lambda: random_mask((2, 1.5)),
            TypeError,
            "be a sequence of ints, not float at shape[1]",
        ),
        (
            rm,
            "shape",
            lambda: random_mask((2, True)),
            TypeError,
            "be a sequence of ints, not bool at shape[1]",
        ),
        (
            rm,
            "shape",
            lambda: random_mask((2, -1)),
            ValueError,
            "be non-negative sizes, not (2, -1)",
        ),
        (
            rm,
            "shape",
            lambda: random_mask(2**63),
            ValueError,
            "be sizes whose product is below 2**63",
        ),
        (
            rm,
            "shape",
            lambda: random_mask((2**32, 2**32)),
            ValueError,
            "be sizes whose product",
        ),
        (rm, "p", lambda: random_mask(3, p=1.5), ValueError, "lie in [0, 1], not 1.5"),
        (
            rm,
            "p",
            lambda: random_mask(3, p=-0.1),
            ValueError,
            "lie in [0, 1], not -0.1",
        ),
        (
            rm,
            "p",
            lambda: random_mask(3, p=math.nan),
            ValueError,
            "lie in [0, 1], not nan",
        ),
        (
            rm,
            "p",
            lambda: random_mask(3, p=Fraction(3, 2)),
            ValueError,
            "lie in [0, 1], not 3/2",
        ),
        (
            rm,
            "p",
            lambda: random_mask(3, p="0.5"),
            TypeError,
            "be a real number, not str",
        ),
        (
            rm,
            "p",
            lambda: random_mask(3, p=True),
            TypeError,
            "be a real number, not bool",
        ),
        (
            rm,
            "p",
            lambda: random_mask(3, p=Decimal("0.5")),
            TypeError,
            "be a real number, not Decimal",
        ),
        (
            rm,
            "p",
            lambda: random_mask(3, p=torch.tensor(0.5)),
            TypeError,
            "be a real number, not Tensor",
        ),
        (
            rm,
            "generator",
            lambda: random_mask(3, generator=0),
            TypeError,
            "be a torch.Generator or None, not int",
        ),
        (
            rm,
            "device",
            lambda: random_mask(3, device="gpu0"),
            ValueError,
            "be a device such as 'cpu'",
        ),
        (
            rm,
            "device",
            lambda: random_mask(3, device=0.0),
            TypeError,
            "be a torch.device, str or None, not float",
        ),
        (
            rm,
            "device",
            lambda: random_mask(3, generator=torch.Generator(), device="meta"),
            ValueError,
            "be the generator's device (cpu), not meta",
        ),
        (
            mi,
            "shape",
            lambda: mask_from_indices((2, 3, 4)),
            ValueError,
            "be two-dimensional, not (2, 3, 4)",
        ),
        (
            mi,
            "shape",
            lambda: mask_from_indices(5),
            ValueError,
            "be two-dimensional, not (5,)",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=[0, 2]),
            IndexError,
            "be indices in 0..1, not 2 at rows[1]",
        ),
        (
            mi,
            "cols",
            lambda: mask_from_indices((2, 3), cols=[-1]),
            IndexError,
            "be indices in 0..2, not -1 at cols[0]",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((0, 3), rows=[0]),
            IndexError,
            "be empty (the size is 0), not 0 at rows[0]",
        ),
        (
            mi,
            "cols",
            lambda: mask_from_indices((2, 3), cols=torch.tensor([5])),
            IndexError,
            "be indices in 0..2, not 5 at cols[0]",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=1),
            TypeError,
            "be a sequence of ints or a 1-D integer tensor, not int",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows="01"),
            TypeError,
            "be a sequence of ints or a 1-D integer tensor, not str",
        ),
        (
            mi,
            "cols",
            lambda: mask_from_indices((2, 3), cols=[0.0]),
            TypeError,
            "be a sequence of ints, not float at cols[0]",
        ),
        (
            mi,
            "cols",
            lambda: mask_from_indices((2, 3), cols=[True]),
            TypeError,
            "be a sequence of ints, not bool at cols[0]",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=torch.tensor([0.0])),
            TypeError,
            "be a sequence of ints or a 1-D integer tensor, not a torch.float32 tensor",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=[torch.tensor(0.0)]),
            TypeError,
            "be a sequence of ints, not a torch.float32 tensor of shape () at rows[0]",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=[torch.tensor([0, 1])]),
            TypeError,
            "be a sequence of ints, not a torch.int64 tensor of shape (2,) at rows[0]",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=[torch.tensor(True)]),
            TypeError,
            "be a sequence of ints, not a torch.bool tensor",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=torch.tensor([[0]])),
            ValueError,
            "be a sequence of ints or a 1-D integer tensor, not a tensor of "
            "shape (1, 1)",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=torch.tensor(0)),
            ValueError,
            "be a sequence of ints or a 1-D integer tensor, not a tensor of shape ()",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=torch.tensor([0], device="meta")),
            ValueError,
            "be on a device that holds values",
        ),
        (
            mc,
            "condition",
            lambda: mask_from_condition(w),
            TypeError,
            "be a bool tensor (compare first, e.g. w.abs() > 0.1), not torch.float32",
        ),
        (
            mc,
            "condition",
            lambda: mask_from_condition(w.long()),
            TypeError,
            "be a bool tensor",
        ),
        (
            mc,
            "condition",
            lambda: mask_from_condition([True]),
            TypeError,
            "be a torch.Tensor, not list",
        ),
        (
            mc,
            "condition",
            lambda: mask_from_condition(nested),
            TypeError,
            "be a dense (strided) tensor, not a nested tensor",
        ),
        (cm, "mask", lambda: check_mask(wrong, w), ValueError, shape_23),
        (
            cm,
            "mask",
            lambda: check_mask(ok[0], w),
            ValueError,
            "have shape (2, 3) like 'weight', not (3,)",
        ),
        (
            cm,
            "weight",
            lambda: check_mask(ok, "w"),
            TypeError,
            "be a torch.Tensor, not str",
        ),
        (cm, "name", lambda: check_mask(ok, w, name=1), TypeError, "be a str, not int"),
        (
            cm,
            "mask",
            lambda: check_mask(nested, w),
            TypeError,
            "be a dense (strided) tensor, not a nested tensor",
        ),
        (
            cm,
            "mask",
            lambda: check_mask(ok.to_sparse(), w),
            TypeError,
            "be a dense (strided) tensor, not a tensor of layout torch.sparse_coo",
        ),
        (
            cm,
            "mask",
            lambda: check_mask(ok.float().to("meta"), w.to("meta")),
            TypeError,
            "be a bool tensor on the meta device",
        ),
        (am, "mask", lambda: apply_mask(w, wrong), ValueError, shape_23),
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
            "be the name of a tensor attribute of the Linear, not 'weights'",
        ),
        (
            pm,
            "name",
            lambda: parametrize_mask(torch.nn.Linear(3, 2, bias=False), "bias", ok[0]),
            AttributeError,
            "be the name of a tensor attribute of the Linear, not 'bias'",
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
    import autograd_notes.masks as masks

    covered = {param.id.rsplit("-", 1)[0] for param in _bad_inputs()}
    functions = {name for name in masks.__all__ if name != "FrozenReport"}
    assert functions <= covered


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


def test_random_mask_takes_an_integer_scalar_as_a_shape_like_an_int() -> None:
    numpy = pytest.importorskip("numpy")
    g = torch.Generator
    assert torch.equal(
        random_mask(numpy.int64(3), generator=g().manual_seed(0)),
        random_mask(3, generator=g().manual_seed(0)),
    )
    with pytest.raises(TypeError, match=r"argument 'shape' must be an int or a seq"):
        random_mask(numpy.float64(3))


# Backends this torch cannot use (CPU-only wheels have neither).
_MISSING = [kind for kind in ("cuda", "xpu") if not getattr(torch, kind).is_available()]


@pytest.mark.parametrize("device", [*_MISSING, *(f"{k}:1" for k in _MISSING)])
def test_random_mask_names_a_device_this_torch_cannot_use(device: str) -> None:
    for where in (device, torch.device(device)):
        with pytest.raises(
            ValueError, match=r"argument 'device' must be a device this torch can use"
        ):
            random_mask(3, device=where)
