"""Long runs of nodes in ``to_html``'s page: found, and stored compactly.

A graph can have a million nodes outside any module (untraced, or a chain
inside one module call). The page shows such a stretch as one box of nodes
that opens, as a fold of many calls does, into at most 50 boxes of nodes
per level, down to the nodes (``view.js`` makes those boxes). What the page
stores per node are small integers (table indices, offsets to inputs),
written by :func:`pack`: evenly spaced pieces, or a pattern repeated (a
chain of ``sin`` and ``* 1.5`` is one pattern of two nodes, repeated), its
values written as one character each where they are small.
"""

from __future__ import annotations

from collections import Counter
from string import ascii_letters, digits
from typing import Any

from autograd_notes.view import View
from autograd_notes.words import Words, kinds_clause

# Characters for the values 0, 1, ...: none that JSON or <script> escapes.
ALPHABET = digits + ascii_letters + "!#$%&()*+,-./:;=?@[]^_`{|}~"
_DIGIT = {c: v for v, c in enumerate(ALPHABET)}
_BLOCK = 256  # values read at once where no pattern repeats
_PERIOD = 256  # the longest pattern looked for
_TRIES = 8  # patterns tried at one place, shortest first
_SHORT = 1_000  # shorter lists are written as before (evenly spaced pieces)
MIN_STRETCH = 50  # more top-level entries in a row than this: one box


def steps(
    values: list[int], *, limit: int | None = None
) -> list[int] | dict[str, list[int]]:
    """``values``, or ``{"s": [first, step, count, ...]}``: evenly spaced pieces.

    The pieces are taken when they are shorter (the calls of a fold link to
    the call before: one piece, after the first call's link from outside),
    and ``limit`` numbers at most, if given.
    """
    pieces: list[int] = []
    i, n = 0, len(values)
    most = n if limit is None else min(n, limit)
    while i < n and len(pieces) < most:
        step = values[i + 1] - values[i] if i + 1 < n else 0
        end = i + 1
        while end < n and values[end] - values[end - 1] == step:
            end += 1
        if end - i == 2 and end < n:  # two apart: the second may start a piece
            step, end = 0, i + 1
        pieces += [values[i], step, end - i]
        i = end
    return {"s": pieces} if i >= n and len(pieces) < most else values


def _written(pattern: list[int]) -> str | list[int]:
    """A pattern as one character per value, where every value has one."""
    if all(0 <= v < len(ALPHABET) for v in pattern):
        return "".join(ALPHABET[v] for v in pattern)
    return pattern


def _extent(values: list[int], i: int, period: int) -> int:
    """How many values from ``i`` on repeat the ``period`` values before them.

    Compared in chunks that double, then halve: each value is read about
    twice.
    """
    n, ok, grow = len(values), period, period
    while True:
        grow = min(grow, n - i - ok)
        if grow <= 0:
            return ok
        start = i + ok
        if (
            values[start : start + grow]
            != values[start - period : start + grow - period]
        ):
            break
        ok, grow = ok + grow, 2 * grow
    while grow > 1:  # the first value that differs is in the next ``grow``
        half, start = grow // 2, i + ok
        if (
            values[start : start + half]
            == values[start - period : start + half - period]
        ):
            ok, grow = ok + half, grow - half
        else:
            grow = half
    return ok


def _repeats(values: list[int]) -> list[tuple[str | list[int], int]]:
    """``(pattern, times)``: the values as patterns, each repeated."""
    pieces: list[tuple[str | list[int], int]] = []
    literal: list[int] = []
    i, n = 0, len(values)
    while i < n:
        first, found, at = values[i], 0, i
        end = min(i + _PERIOD, (n + i) // 2) + 1
        for _ in range(_TRIES):  # periods after which the first value comes back
            try:
                at = values.index(first, at + 1, end)
            except ValueError:
                break
            times = _extent(values, i, at - i) // (at - i)
            if times >= 4 and times * (at - i) >= _BLOCK // 4:
                found = at - i
                break
        if not found:
            literal += values[i : i + _BLOCK]
            i += _BLOCK
            continue
        if literal:
            pieces.append((_written(literal), 1))
            literal = []
        pieces.append((_written(values[i : i + found]), times))
        i += times * found
    if literal:
        pieces.append((_written(literal), 1))
    return pieces


def pack(values: list[int]) -> list[int] | dict[str, list[Any]]:
    """``values`` as :func:`steps` writes them, or as repeated patterns, if shorter.

    ``{"r": [pattern, times, ...]}``: a pattern is a list of ints, or a
    string of one :data:`ALPHABET` character per value.
    """
    if len(values) < _SHORT:
        return steps(values)
    found = steps(values, limit=len(values) // 16)
    if isinstance(found, dict):
        return found
    pieces = _repeats(values)
    # a character is one byte, a number in a list two at least
    size = sum(len(p) if isinstance(p, str) else 2 * len(p) for p, _ in pieces)
    if size >= 2 * len(values):
        return values
    return {"r": [part for piece in pieces for part in piece]}


def unpack(data: list[int] | dict[str, list[Any]]) -> list[int]:
    """The values :func:`pack` (or :func:`steps`) wrote."""
    if isinstance(data, list):
        return data
    if "s" in data:
        s: list[int] = data["s"]
        return [
            s[i] + k * s[i + 1] for i in range(0, len(s), 3) for k in range(s[i + 2])
        ]
    out: list[int] = []
    pieces = data["r"]
    for pattern, times in zip(pieces[::2], pieces[1::2], strict=True):
        values = [_DIGIT[c] for c in pattern] if isinstance(pattern, str) else pattern
        out += values * times
    return out


def by_slot(flat: list[int], degrees: list[int]) -> list[list[int]]:
    """Node ``n``'s ``degrees[n]`` values of ``flat`` dealt out: first ones, second ...

    Where each node has one value at most, ``[flat]``. Apart, each is
    regular more often (a chain's links to the node after, a shared input's).
    """
    widest = max(degrees, default=0)
    if widest <= 1:
        return [flat]
    columns: list[list[int]] = [[] for _ in range(widest)]
    at = 0
    for degree in degrees:
        for k in range(degree):
            columns[k].append(flat[at + k])
        at += degree
    return columns


def stretches(view: View) -> list[range]:
    """The top-level entries, each alone or, outside modules, in long stretches.

    More than :data:`MIN_STRETCH` entries in a row with no group (nodes, or
    runs of one kind) are one stretch; every other entry is a range of one.
    """
    found: list[range] = []
    group, n = view.group, len(view.first)
    e = 0
    while e < n:
        end = e + 1
        while group[e] is None and end < n and group[end] is None:
            end += 1
        if end - e > MIN_STRETCH:
            found.append(range(e, end))
        else:
            found.extend(range(k, k + 1) for k in range(e, end))
        e = end
    return found


def summary(kinds: list[str], members: list[int] | range) -> Words:
    """``SinBackward0 ×500,000, MulBackward0 ×500,000``: the commonest kinds."""
    return [kinds_clause(Counter(map(kinds.__getitem__, members)))]
