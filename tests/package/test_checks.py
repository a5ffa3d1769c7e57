"""The argument checks every module shares (autograd_notes._checks)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from autograd_notes import _checks


def test_one_format_names_function_argument_expected_and_actual() -> None:
    assert _checks.arg_error("f", "x", "an int", "str") == (
        "f() argument 'x' must be an int, not str"
    )
    assert _checks.arg_error("f", "m", "have shape (2,)", (3,)) == (
        "f() argument 'm' must have shape (2,), not (3,)"
    )


def test_type_name_tells_numpy_bool_from_bool() -> None:
    assert _checks.type_name(True) == "bool"
    assert _checks.type_name(np.bool_(True)) in ("numpy.bool", "numpy.bool_")


def test_check_bool_refuses_truthy_values() -> None:
    _checks.check_bool(False, "f", "flag")
    with pytest.raises(
        TypeError, match=r"^f\(\) argument 'flag' must be a bool, not int$"
    ):
        _checks.check_bool(1, "f", "flag")


def test_check_tensor_refuses_non_tensors_and_other_layouts() -> None:
    t = torch.ones(2)
    assert _checks.check_tensor(t, "f", "t") is t
    with pytest.raises(TypeError, match=r"'t' must be a torch.Tensor, not list"):
        _checks.check_tensor([1.0], "f", "t")
    with pytest.raises(
        TypeError, match=r"dense \(strided\) tensor, not a tensor of layout"
    ):
        _checks.check_tensor(t.to_sparse(), "f", "t")


def test_check_depth_takes_none_or_an_int_of_1_or_more() -> None:
    for fine in (None, 1, 7):
        _checks.check_depth(fine, "f")
    with pytest.raises(ValueError, match=r"^f\(\) argument 'depth' must be at least 1"):
        _checks.check_depth(0, "f")
    for wrong in (1.5, "a", True):
        with pytest.raises(TypeError, match="must be an int or None, not "):
            _checks.check_depth(wrong, "f")


def test_check_has_data_refuses_meta_tensors() -> None:
    _checks.check_has_data(torch.ones(1), "f", "t")
    with pytest.raises(ValueError, match="not on the meta device"):
        _checks.check_has_data(torch.ones(1, device="meta"), "f", "t")


def test_check_torch_names_the_version_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    _checks.check_torch("f", "")
    monkeypatch.setattr(torch, "__version__", "2.9.1")
    with pytest.raises(
        RuntimeError, match=r"f\(\) with x needs torch >= 2\.13; this is torch 2\.9\.1"
    ):
        _checks.check_torch("f", " with x")


def test_the_floor_is_pyprojects() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[2]
    deps = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert f"torch>={_checks.TORCH_FLOOR}" in deps["dependencies"]
