"""One test per defect reported in "The package under stress" (masks part).

Each test reproduces an input that used to be silently wrong or to fail with
an unclear error, and pins the fixed behaviour: a right result, or an error
in the package's one format,
``"{func}() argument '{name}' must be {expected}, not {actual}"``.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from fractions import Fraction
from typing import Any

import pytest
import torch
from torch import Tensor, nn

from autograd_notes.masked_linear import (
    MaskedLinear,
    MaskedLinearFunction,
    masked_linear,
)
from autograd_notes.masks import (
    apply_mask,
    check_mask,
    frozen_report,
    keep_frozen,
    mask_from_indices,
    random_mask,
    register_grad_mask,
)

masks_module = importlib.import_module("autograd_notes.masks")
# Not ``import autograd_notes.masked_linear as ...``: the package attribute of
# that name is the re-exported function, which shadows the module.
masked_linear_module = importlib.import_module("autograd_notes.masked_linear")
META = torch.device("meta")
MODES = ("freeze", "prune")


def message(func: str, arg: str, rest: str) -> str:
    """A regex matching the start of the house-style message."""
    return "^" + re.escape(f"{func}() argument '{arg}' must {rest}")


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
    from autograd_notes.masks import parametrize_mask

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


# -- MaskedLinear.load_state_dict validates the mask and the mode -------------------


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
            "hold only 0 and 1 in a float mask at 'mask', not 0.5",
        ),
        (
            torch.full((2, 3), 7),
            "hold a bool (or floating 0/1) mask tensor at 'mask', not torch.int64",
        ),
        (torch.ones(3, 2, dtype=torch.bool), "hold a mask of shape (2, 3) at 'mask'"),
        (
            [[True] * 3] * 2,
            "hold a bool (or floating 0/1) mask tensor at 'mask', not list",
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
    expected = f"MaskedLinear.load_state_dict() argument 'state_dict' must {rest}"
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
        "MaskedLinear.load_state_dict() argument 'state_dict' must hold "
        f"{{'mode': '{loading}'}} like this layer at '_extra_state', not "
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


# -- errors that did not name the argument, or misled -------------------------------


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
            lambda: random_mask(2**63),
            ValueError,
            "random_mask",
            "shape",
            "be sizes whose product is below 2**63, not (9223372036854775808,)",
        ),
        (
            lambda: mask_from_indices((2, 3), rows=torch.tensor([0.0, 1.0])),
            TypeError,
            "mask_from_indices",
            "rows",
            "be a sequence of ints or a 1-D integer tensor, not a torch.float32 tensor",
        ),
        (
            lambda: mask_from_indices((2, 3), cols=[torch.tensor(1.0)]),
            TypeError,
            "mask_from_indices",
            "cols",
            "be a sequence of ints, not a torch.float32 tensor of shape () at cols[0]",
        ),
        (
            lambda: check_mask(MASK.float().to(META), torch.zeros(2, 3, device=META)),
            TypeError,
            "check_mask",
            "mask",
            "be a bool tensor on the meta device",
        ),
        (
            lambda: frozen_report(
                torch.zeros(2, device=META),
                torch.zeros(2, device=META),
                torch.ones(2, dtype=torch.bool, device=META),
            ),
            ValueError,
            "frozen_report",
            "before",
            "be on a device that holds values (this function reads them), "
            "not on the meta device",
        ),
        (
            lambda: frozen_report(
                torch.zeros(2),
                torch.zeros(2),
                torch.ones(2, dtype=torch.bool, device=META),
            ),
            ValueError,
            "frozen_report",
            "mask",
            "be on the device of 'before' (cpu), not meta",
        ),
        (
            lambda: check_mask(
                torch.nested.nested_tensor([torch.ones(3)] * 2, layout=torch.jagged),
                torch.zeros(2, 3),
            ),
            TypeError,
            "check_mask",
            "mask",
            "be a dense (strided) tensor, not a nested tensor (layout torch.jagged)",
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


def test_keep_frozen_rejects_a_meta_parameter_before_registering() -> None:
    param = nn.Parameter(torch.zeros(2, 3, device=META))
    optimizer = torch.optim.SGD([param], lr=0.1)
    with pytest.raises(
        ValueError,
        match=message("keep_frozen", "param", "be on a device that holds values"),
    ):
        keep_frozen(optimizer, param, MASK.to(META))
    assert not optimizer._optimizer_step_pre_hooks
    assert not optimizer._optimizer_step_post_hooks


@pytest.mark.parametrize("p", [Fraction(1, 2), 0.5, 1 / 2])
def test_random_mask_accepts_any_real_p(p: Any) -> None:
    """A Fraction is a real number: accepted, the same as the float."""
    got = random_mask((4, 5), p=p, generator=torch.Generator().manual_seed(3))
    want = random_mask((4, 5), p=0.5, generator=torch.Generator().manual_seed(3))
    assert torch.equal(got, want)
    numpy = pytest.importorskip("numpy")
    got = random_mask(
        (4, 5), p=numpy.float32(0.5), generator=torch.Generator().manual_seed(3)
    )
    assert torch.equal(got, want)
    assert random_mask(3, p=Fraction(1)).all()


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


# -- MaskedLinearFunction.apply: order and checks ----------------------------------


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


# -- docstrings -------------------------------------------------------------------


def _docstrings(module: Any) -> dict[str, str]:
    found = {module.__name__: inspect.getdoc(module) or ""}
    for name in module.__all__:
        obj = getattr(module, name)
        found[name] = inspect.getdoc(obj) or ""
        for attr, member in vars(obj).items() if isinstance(obj, type) else []:
            doc = getattr(member, "__doc__", None)
            if isinstance(doc, str) and not attr.startswith("__"):
                found[f"{name}.{attr}"] = doc
    return found


@pytest.mark.parametrize("module", [masks_module, masked_linear_module])
def test_no_docstring_mentions_notes(module: Any) -> None:
    for where, doc in _docstrings(module).items():
        assert not re.search(r"\bnotes\b", doc, re.IGNORECASE), where
        assert "order and number" not in doc, where


def test_the_weight_decay_warning_is_stated_once() -> None:
    docs = {
        **_docstrings(masks_module),
        **{f"ml.{k}": v for k, v in _docstrings(masked_linear_module).items()},
    }
    stating = [where for where, doc in docs.items() if "whatever its gradient" in doc]
    assert stating == ["autograd_notes.masks"]
    linking = [
        where for where, doc in docs.items() if "zero-gradient-is-not-frozen" in doc
    ]
    assert len(linking) >= 4


# -- the two backward paths of MaskedLinearFunction agree bit for bit ---------------


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
        assert torch.equal(got.nan_to_num(), want.detach().nan_to_num())
        assert torch.equal(got.isnan(), want.detach().isnan())


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
