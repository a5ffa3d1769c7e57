"""How tensors and the names a caller gives them read, in every output.

Names come from a ``names`` mapping and are matched by identity
(:func:`index_names`); every text is made printable (:func:`visible`), so a
node always takes one line and no name can break DOT. No output contains a
memory address.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name


class Names(NamedTuple):
    """Names from a ``names`` mapping, looked up by object identity."""

    leaves: dict[int, str]  # id(leaf tensor) -> name; `names` keeps them alive
    outputs: dict[Node, list[tuple[str, bool]]]  # grad_fn -> [(name, retains)]


def index_names(names: object, func: str) -> Names:
    """Index the tensors in ``names``; everything that is not a tensor is skipped.

    A tensor listed under several names keeps the first one, so ``locals()``
    with an alias still gives one label per tensor.
    """
    found = Names({}, {})
    if names is None:
        return found
    if not isinstance(names, Mapping):
        expected = (
            "a mapping of name to tensor (for example "
            "dict(model.named_parameters()) or locals())"
        )
        raise TypeError(arg_error(func, "names", expected, type_name(names)))
    seen: set[int] = set()
    for name, value in names.items():
        if not isinstance(value, torch.Tensor) or id(value) in seen:
            continue
        if not isinstance(name, str):
            raise TypeError(arg_error(func, "names", "have str keys", type_name(name)))
        seen.add(id(value))
        grad_fn = value.grad_fn
        if grad_fn is None:
            found.leaves[id(value)] = name
        else:
            entry = (name, bool(value.retains_grad))
            found.outputs.setdefault(grad_fn, []).append(entry)
    return found


def visible(text: str) -> str:
    """``text`` with every unprintable character as an escape (``\\n``, ``\\x00``).

    Keeps each node on one line of text and makes any name safe in DOT.
    """
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def dtype(t: torch.Tensor) -> str:
    """``float32``."""
    return str(t.dtype).removeprefix("torch.")


def shape(t: torch.Tensor) -> str:
    """``(2, 3)``, or ``nested (2 tensors)`` for a strided nested tensor."""
    if t.is_nested and t.layout == torch.strided:  # it has no single shape
        count = t.size(0)
        return f"nested ({count} tensor{'' if count == 1 else 's'})"
    return str(tuple(t.shape))


def leaf_text(t: torch.Tensor, names: Names) -> str:
    """``a: leaf tensor, shape (2,), float32, requires_grad=True``."""
    name = names.leaves.get(id(t))
    kind = "leaf parameter" if isinstance(t, torch.nn.Parameter) else "leaf tensor"
    label = f"{visible(name)}: {kind}" if name is not None else kind
    return f"{label}, shape {shape(t)}, {dtype(t)}, requires_grad={t.requires_grad}"


def no_graph_text(t: torch.Tensor, names: Names) -> str:
    """The one line that describes a tensor without a ``grad_fn``."""
    text = leaf_text(t, names)
    return text if t.requires_grad else f"{text} (no graph)"


def short_leaf(t: torch.Tensor, names: Names, sep: str = "\n") -> str:
    """``a``, ``sep``, ``(2,) float32``: the compact leaf label of pictures."""
    name = names.leaves.get(id(t))
    label = visible(name) if name is not None else "leaf"
    return f"{label}{sep}{shape(t)} {dtype(t)}"


def outputs_text(node: Node, names: Names, show_retained: bool) -> str:
    """``grad_fn of y`` for named tensors whose grad_fn is ``node``."""
    entries = names.outputs.get(node)
    if not entries:
        return ""
    marked = [
        visible(name) + (" [retains grad]" if show_retained and retains else "")
        for name, retains in entries
    ]
    return "grad_fn of " + ", ".join(marked)


def format_bytes(count: int) -> str:
    """``512 B``, ``1.5 KiB``, ``779.0 MiB``: a count of bytes, binary units.

    >>> format_bytes(512), format_bytes(3 << 19)
    ('512 B', '1.5 MiB')
    """
    if abs(count) < 1024:
        return f"{count:,} B"
    units = iter(("KiB", "MiB", "GiB", "TiB"))
    unit = next(units)
    value = count / 1024
    while abs(value) >= 1024 and unit != "TiB":
        value /= 1024
        unit = next(units)
    return f"{value:,.1f} {unit}"
