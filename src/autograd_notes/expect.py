"""Show an expected error or warning, and fail loudly when it does not come.

Tutorials teach by showing what goes wrong. These two context managers print
the error or warning a block produces, so the reader sees PyTorch's own
message, and raise :class:`AssertionError` when the block does *not* produce
it, so a page that describes a failure can never silently stop failing.

>>> import torch
>>> with expect_error(RuntimeError, "does not require grad"):
...     torch.zeros(2).sum().backward()
RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from autograd_notes._checks import arg_error, type_name

__all__ = ["expect_error", "expect_warning"]

# torch appends where in its C++ sources a warning came from: a path of the
# machine that built the wheel, noise for a reader.
_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\s*$")


def _shown(message: str) -> str:
    return _TRIGGERED.sub("", message)


def _check_args(func: str, category: object, match: object) -> re.Pattern[str]:
    """Check the arguments before the block runs; return the compiled pattern."""
    if not isinstance(match, str):
        expected = "a str (a regular expression)"
        raise TypeError(arg_error(func, "match", expected, type_name(match)))
    base = Exception if func == "expect_error" else Warning
    if not (isinstance(category, type) and issubclass(category, base)):
        expected = f"a subclass of {base.__name__}"
        raise TypeError(arg_error(func, "category", expected, repr(category)))
    try:
        return re.compile(match)
    except (re.error, RecursionError, OverflowError) as error:
        # RecursionError: groups nested too deeply for re's parser;
        # OverflowError: a repeat count or pattern too large to compile.
        reason = str(error)
        if not isinstance(error, re.error):
            reason = f"{type(error).__name__}: {reason}"
        shown = match if len(match) <= 60 else f"{match[:57]}..."
        expected = "a valid regular expression"
        raise ValueError(
            arg_error(func, "match", expected, f"{shown!r} ({reason})")
        ) from None


@contextmanager
def expect_error(category: type[BaseException], match: str) -> Iterator[None]:
    """Run a block that must raise ``category`` with a message matching ``match``.

    Prints ``Name: message`` and swallows the error. Raises
    :class:`AssertionError` if the block raises nothing or a message that
    ``re.search(match, message)`` rejects; an error of another type passes
    through untouched. A ``match`` that is not a valid regular expression is
    refused before the block runs.

    >>> with expect_error(ZeroDivisionError, "division by zero"):
    ...     1 / 0
    ZeroDivisionError: division by zero
    """
    pattern = _check_args("expect_error", category, match)
    try:
        yield
    except category as error:
        message = str(error)
        if not pattern.search(message):
            raise AssertionError(
                f"expected {category.__name__} matching {match!r}, got: {message!r}"
            ) from error
        print(f"{type(error).__name__}: {_shown(message)}")
    else:
        raise AssertionError(f"expected {category.__name__}, but nothing was raised")


@contextmanager
def expect_warning(category: type[Warning], match: str) -> Iterator[None]:
    """Run a block that must warn with ``category`` and a message matching ``match``.

    Prints each matching warning as ``Name: message`` (without torch's
    "Triggered internally at <path>" suffix). Raises
    :class:`AssertionError` if none matches. Other warnings are re-emitted
    after the block, even when it raises, so a strict build still sees them.

    >>> import warnings
    >>> with expect_warning(UserWarning, "careful"):
    ...     warnings.warn("be careful", UserWarning, stacklevel=1)
    UserWarning: be careful
    """
    pattern = _check_args("expect_warning", category, match)
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        # Also when the block raised: the other warnings are not lost.
        found = False
        for record in caught:
            message = str(record.message)
            if issubclass(record.category, category) and pattern.search(message):
                print(f"{record.category.__name__}: {_shown(message)}")
                found = True
            else:
                warnings.warn_explicit(
                    record.message, record.category, record.filename, record.lineno
                )
    if not found:
        raise AssertionError(
            f"expected {category.__name__} matching {match!r}, "
            f"got {[str(r.message) for r in caught]!r}"
        )
