"""The API reference shows how a custom ``torch.autograd.Function`` is called.

A Function subclass is never instantiated: it is called as
``Function.apply(*forward's inputs)``. Python's signatures say neither:
the class reads ``(*args, **kwargs)`` (``Function.__init__``), and ``apply``
the same. :func:`function_call_form` (``autodoc-process-signature``) gives
the class no parameters and ``apply`` the parameters of ``forward`` (its
``ctx`` dropped for a ``forward`` of the old style, which takes one).
"""

from __future__ import annotations

import inspect
from typing import Any

from sphinx.application import Sphinx
from sphinx.util.inspect import stringify_signature


def _function_class(obj: Any) -> type | None:
    """``obj`` if it is a Function subclass, else None (torch imported late)."""
    from torch.autograd import Function

    if inspect.isclass(obj) and issubclass(obj, Function) and obj is not Function:
        return obj
    return None


def apply_signature(function: type) -> inspect.Signature:
    """The signature of ``function.apply``: ``forward``'s, without ``ctx``
    when ``forward`` takes one (no ``setup_context``), with no annotations."""
    from torch.autograd import Function

    sig = inspect.signature(function.forward)
    params = list(sig.parameters.values())
    if function.setup_context is Function.setup_context:  # forward(ctx, ...)
        params = params[1:]
    return sig.replace(
        parameters=[p.replace(annotation=p.empty) for p in params],
        return_annotation=sig.empty,
    )


def function_call_form(
    app: Sphinx,
    what: str,
    name: str,
    obj: Any,
    options: Any,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str, str] | None:
    """A Function subclass: no parameters; its ``apply``: ``forward``'s."""
    if what == "class" and _function_class(obj):
        return "", ""
    if what == "method" and name.rsplit(".", 1)[-1] == "apply":
        owner = getattr(obj, "__self__", None)  # a bound class method
        if (function := _function_class(owner)) is not None:
            return stringify_signature(apply_signature(function)), ""
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("autodoc-process-signature", function_call_form)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
