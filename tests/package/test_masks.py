"""Tests for :mod:`autograd_notes.masks`: building and checking masks.

Every bad argument, for every public function, gets an error in the one
format, ``"{func}() argument '{name}' must be {expected}, not {actual}"``.
"""

from __future__ import annotations

import importlib
import math
import re
import warnings
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from autograd_notes.masks import (
    check_mask,
    mask_from_condition,
    mask_from_indices,
    random_mask,
)

from .helpers import docstrings

MODULE = importlib.import_module("autograd_notes.masks")
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


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"rows": [-1]}, "argument 'rows' must be indices in 0..4611686018427387903"),
        ({"cols": [0.5]}, "argument 'cols' must be a sequence of ints"),
        ({"rows": [0], "device": "gpu0"}, "argument 'device' must be a device"),
    ],
)
def test_mask_from_indices_checks_every_argument_before_allocating(
    kwargs: dict[str, Any], error: str
) -> None:
    """Rows of 2**62 entries cannot be allocated: the argument error must come
    first (the rows and columns were checked after allocating them)."""
    with pytest.raises((TypeError, ValueError, IndexError)) as info:
        mask_from_indices((2**62, 1), **kwargs)
    assert error in str(info.value)


def test_mask_from_condition_returns_a_detached_copy() -> None:
    w = torch.tensor([[0.5, -0.05], [0.0, -0.3]], requires_grad=True)
    condition = w.abs() > 0.1
    mask = mask_from_condition(condition)
    assert torch.equal(mask, condition)
    assert mask.grad_fn is None
    assert not mask.requires_grad
    mask[0, 0] = False
    assert bool(condition[0, 0])


@pytest.mark.parametrize("p", [Fraction(1, 2), 0.5, 1 / 2])
def test_random_mask_accepts_any_real_p(p: Any) -> None:
    """A Fraction is a real number: accepted, the same as the float."""
    got = random_mask((4, 5), p=p, generator=torch.Generator().manual_seed(3))
    want = random_mask((4, 5), p=0.5, generator=torch.Generator().manual_seed(3))
    assert torch.equal(got, want)
    got = random_mask(
        (4, 5), p=numpy.float32(0.5), generator=torch.Generator().manual_seed(3)
    )
    assert torch.equal(got, want)
    assert random_mask(3, p=Fraction(1)).all()


def test_random_mask_takes_an_integer_scalar_as_a_shape_like_an_int() -> None:
    g = torch.Generator
    assert torch.equal(
        random_mask(numpy.int64(3), generator=g().manual_seed(0)),
        random_mask(3, generator=g().manual_seed(0)),
    )
    with pytest.raises(TypeError, match=r"argument 'shape' must be an int or a seq"):
        random_mask(numpy.float64(3))


@pytest.mark.parametrize(
    "device", ["cpu", "cpu:0", "cpu:1", torch.device("cpu", 0), torch.device("cpu")]
)
def test_random_mask_takes_a_cpu_generator_with_any_spelling_of_the_cpu(
    device: Any,
) -> None:
    """Issue 24: "cpu:0" was refused with a CPU generator; torch.rand takes it."""
    got = random_mask((3, 5), generator=_gen(4), device=device)
    want = torch.rand((3, 5), generator=_gen(4), device=device) < 0.5
    assert got.device == want.device == torch.device("cpu")
    assert torch.equal(got, want)


@pytest.mark.parametrize(
    "shape",
    [numpy.array(3), torch.tensor(3), torch.tensor([3]), (torch.tensor(2), 3)],
    ids=["array-0d", "tensor-0d", "tensor-1-element", "tuple-with-tensor"],
)
def test_random_mask_takes_the_integer_scalars_torch_rand_takes(shape: Any) -> None:
    assert random_mask(shape).shape == torch.rand(shape).shape


@pytest.mark.parametrize(
    ("shape", "actual"),
    [
        (numpy.array([2, 2]), "a numpy.ndarray of shape (2,)"),
        (numpy.array([2.0]), "a numpy.ndarray of shape (1,)"),
        (torch.tensor([2, 2]), "a torch.int64 tensor of shape (2,)"),
        (torch.tensor(2.0), "a torch.float32 tensor of shape ()"),
        (torch.tensor(True), "a torch.bool tensor of shape ()"),
        (torch.tensor(2, device="meta"), "a torch.int64 tensor of shape ()"),
    ],
    ids=["array", "float-array", "tensor", "float-tensor", "bool-tensor", "meta"],
)
def test_random_mask_refuses_an_array_of_sizes_as_a_whole(
    shape: Any, actual: str
) -> None:
    """Issue 24: ``random_mask(np.array([2, 2]))`` blamed "shape[0]". Like
    torch.rand, which refuses each of these (raw, for the bool and meta ones)."""
    with pytest.raises((TypeError, RuntimeError)):
        torch.rand(shape)
    with pytest.raises(TypeError) as info:
        random_mask(shape)
    assert str(info.value) == (
        "random_mask() argument 'shape' must be an int or a sequence of ints (for "
        f"an array of sizes, pass tuple(shape.tolist())), not {actual}"
    )


# Backends this torch cannot use (CPU-only wheels have neither).
_MISSING = [kind for kind in ("cuda", "xpu") if not getattr(torch, kind).is_available()]


@pytest.mark.parametrize("device", [*_MISSING, *(f"{k}:1" for k in _MISSING)])
def test_random_mask_names_a_device_this_torch_cannot_use(device: str) -> None:
    for where in (device, torch.device(device)):
        with pytest.raises(
            ValueError, match=r"argument 'device' must be a device this torch can use"
        ):
            random_mask(3, device=where)


# -- bad input, for every public function -------------------------------------------


def _quantized_indices() -> torch.Tensor:
    """``[0, 1]`` quantized (torch warns that quantization is deprecated)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "torch.quantize_per_tensor", UserWarning)
        return torch.quantize_per_tensor(torch.tensor([0.0, 1.0]), 1.0, 0, torch.quint8)


def _bad_inputs() -> list[Any]:
    w = torch.zeros(2, 3)
    ok = torch.ones(2, 3, dtype=torch.bool)
    wrong = torch.ones(3, 2, dtype=torch.bool)
    nested = torch.nested.nested_tensor([w, w], layout=torch.jagged)
    rm, mi, mc = "random_mask", "mask_from_indices", "mask_from_condition"
    cm = "check_mask"
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
        (
            rm,
            "shape",
            lambda: random_mask((torch.tensor(2.0), 3)),
            TypeError,
            "be a sequence of ints, not a torch.float32 tensor of shape () at shape[0]",
        ),
        (
            rm,
            "shape",
            lambda: random_mask([2, torch.tensor(True)]),
            TypeError,
            "be a sequence of ints, not a torch.bool tensor of shape () at shape[1]",
        ),
        (
            mi,
            "shape",
            lambda: mask_from_indices(numpy.array([2, 3])),
            TypeError,
            "be an int or a sequence of ints (for an array of sizes, pass "
            "tuple(shape.tolist())), not a numpy.ndarray of shape (2,)",
        ),
        (
            mi,
            "rows",
            lambda: mask_from_indices((2, 3), rows=_quantized_indices()),
            TypeError,
            "be a sequence of ints or a 1-D integer tensor, not a torch.quint8 tensor",
        ),
        (
            mi,
            "cols",
            lambda: mask_from_indices((2, 3), cols=numpy.array([0, 1])),
            TypeError,
            "be a sequence of ints or a 1-D integer tensor, not a numpy.ndarray of "
            "shape (2,)",
        ),
        (
            mi,
            "cols",
            lambda: mask_from_indices((2, 3), cols=torch.tensor([0]).to_sparse()),
            TypeError,
            "be a dense (strided) tensor, not a tensor of layout torch.sparse_coo",
        ),
        (
            mi,
            "device",
            lambda: mask_from_indices((2, 3), device=1.5),
            TypeError,
            "be a torch.device, str or None, not float",
        ),
        (
            cm,
            "mask",
            lambda: check_mask(ok.to(torch.int8), w),
            TypeError,
            "be a bool or floating 0/1 tensor, not torch.int8",
        ),
        (
            cm,
            "mask",
            lambda: check_mask(torch.ones(3, dtype=torch.bool).expand(2, 3), w[:1]),
            ValueError,
            "have shape (1, 3) like 'weight', not (2, 3)",
        ),
        (
            cm,
            "weight",
            lambda: check_mask(ok, w.to_sparse()),
            TypeError,
            "be a dense (strided) tensor, not a tensor of layout torch.sparse_coo",
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
        (
            "random_mask",
            "shape",
            lambda: random_mask(2**63),
            ValueError,
            "be sizes whose product is below 2**63, not (9223372036854775808,)",
        ),
        (
            "mask_from_indices",
            "rows",
            lambda: mask_from_indices((2, 3), rows=torch.tensor([0.0, 1.0])),
            TypeError,
            "be a sequence of ints or a 1-D integer tensor, not a torch.float32 tensor",
        ),
        (
            "mask_from_indices",
            "cols",
            lambda: mask_from_indices((2, 3), cols=[torch.tensor(1.0)]),
            TypeError,
            "be a sequence of ints, not a torch.float32 tensor of shape () at cols[0]",
        ),
        (
            "check_mask",
            "mask",
            lambda: check_mask(ok.float().to("meta"), torch.zeros(2, 3, device="meta")),
            TypeError,
            "be a bool tensor on the meta device",
        ),
        (
            "check_mask",
            "mask",
            lambda: check_mask(
                torch.nested.nested_tensor([torch.ones(3)] * 2, layout=torch.jagged),
                torch.zeros(2, 3),
            ),
            TypeError,
            "be a dense (strided) tensor, not a nested tensor (layout torch.jagged)",
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
