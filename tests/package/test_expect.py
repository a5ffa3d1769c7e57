"""expect_error and expect_warning fail whenever the expected thing does not come."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

from autograd_notes import expect_error, expect_warning


def test_expect_error_prints_the_message(capsys: pytest.CaptureFixture[str]) -> None:
    with expect_error(RuntimeError, "does not require grad"):
        torch.zeros(2).sum().backward()
    out = capsys.readouterr().out
    assert out.startswith("RuntimeError: element 0 of tensors does not require grad")


def test_expect_error_fails_when_nothing_is_raised() -> None:
    with (
        pytest.raises(AssertionError, match="nothing was raised"),
        expect_error(RuntimeError, "anything"),
    ):
        torch.ones(2, requires_grad=True).sum().backward()


def test_expect_error_fails_on_another_message() -> None:
    with (
        pytest.raises(AssertionError, match="matching 'leaf Variable'"),
        expect_error(ZeroDivisionError, "leaf Variable"),
    ):
        _ = 1 / 0


def test_expect_error_lets_another_type_through() -> None:
    with pytest.raises(KeyError), expect_error(ValueError, ""):
        raise KeyError("not a ValueError")


def test_expect_warning_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    y = torch.ones(2, requires_grad=True) * 2
    with expect_warning(UserWarning, "not a leaf Tensor"):
        _ = y.grad
    assert capsys.readouterr().out.startswith("UserWarning: The .grad attribute")


def test_expect_warning_drops_torchs_source_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    y = torch.ones(2, requires_grad=True) * 2
    with expect_warning(UserWarning, "not a leaf Tensor"):
        _ = y.grad
    out = capsys.readouterr().out
    assert "Triggered internally" not in out
    assert out.rstrip().endswith("for more information.")


def test_expect_warning_fails_when_nothing_warns() -> None:
    with (
        pytest.raises(AssertionError, match="expected UserWarning"),
        expect_warning(UserWarning, "not a leaf"),
    ):
        _ = torch.ones(2, requires_grad=True).grad


def test_expect_warning_re_emits_other_warnings() -> None:
    def both() -> None:
        warnings.warn("mine", UserWarning, stacklevel=1)
        warnings.warn("other", DeprecationWarning, stacklevel=1)

    with pytest.raises(DeprecationWarning, match="other"):  # noqa: SIM117
        with expect_warning(UserWarning, "mine"):
            both()


@pytest.mark.parametrize(
    ("func", "category", "match", "message"),
    [
        (
            expect_error,
            ValueError,
            3,
            "'match' must be a str (a regular expression), not int",
        ),
        (
            expect_error,
            int,
            "x",
            "'category' must be a subclass of Exception, not <class 'int'>",
        ),
        (
            expect_warning,
            ValueError,
            "x",
            "'category' must be a subclass of Warning, not <class 'ValueError'>",
        ),
        (
            expect_warning,
            "UserWarning",
            "x",
            "'category' must be a subclass of Warning, not 'UserWarning'",
        ),
    ],
)
def test_bad_arguments_are_named(
    func: Any, category: object, match: object, message: str
) -> None:
    """In the package's one format (``autograd_notes._checks.arg_error``)."""
    with pytest.raises(TypeError) as info, func(category, match):
        pass
    assert str(info.value) == f"{func.__name__}() argument {message}"


@pytest.mark.parametrize("func", [expect_error, expect_warning])
def test_an_invalid_pattern_is_refused_before_the_block_runs(
    func: Callable[[type[Any], str], Any],
) -> None:
    ran = []
    category = ValueError if func is expect_error else UserWarning
    with (
        pytest.raises(
            ValueError,
            match=rf"^{func.__name__}\(\) argument 'match' must be a valid regular "
            r"expression, not '\(' \(missing \)",
        ),
        func(category, "("),
    ):
        ran.append(True)
    assert ran == []


def _warn_then_fail() -> None:
    warnings.warn("another one", DeprecationWarning, stacklevel=1)
    raise KeyError("the block fails")


def test_expect_warning_keeps_other_warnings_when_the_block_raises() -> None:
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with pytest.raises(KeyError), expect_warning(UserWarning, "expected"):
            _warn_then_fail()
    assert [str(w.message) for w in outside] == ["another one"]


@pytest.mark.parametrize(
    ("match", "shown", "reason"),
    [
        ("(" * 2000 + ")" * 2000, "(" * 57 + "...", "RecursionError: maximum"),
        ("a{4294967296}", "a{4294967296}", "OverflowError: the repetition"),
    ],
    ids=["nested-too-deeply", "repeat-too-large"],
)
@pytest.mark.parametrize("func", [expect_error, expect_warning])
def test_a_pattern_re_cannot_compile_is_refused_like_an_invalid_one(
    func: Callable[[type[Any], str], Any], match: str, shown: str, reason: str
) -> None:
    """It raised re's own RecursionError or OverflowError, naming no argument."""
    category = ValueError if func is expect_error else UserWarning
    message = re.escape(
        f"{func.__name__}() argument 'match' must be a valid regular expression, "
        f"not {shown!r} ({reason}"
    )
    ran = []
    with pytest.raises(ValueError, match=f"^{message}"), func(category, match):
        ran.append(True)
    assert ran == []
