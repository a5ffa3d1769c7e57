"""Where each saved storage is counted, as columns (``autograd_notes.memory``).

One entry per storage counted, sorted by the node it is counted at (ties:
most bytes first, then shape, kind, name, saves), in plain lists: the
report's rows are made from them only when asked for. A storage saved once,
overlapping no other (nearly all of them), takes a short path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, itemgetter

import torch
from torch.autograd.graph import Node

from autograd_notes._storages import Key, Saves, Skipped
from autograd_notes._torch import sequence_nr

KINDS = ("activation", "parameter", "buffer")


@dataclass
class Columns:
    """The storages counted (entry ``j`` of each list is storage ``j``)."""

    kinds: list[int] = field(default_factory=list)  # index into KINDS
    names: list[str] = field(default_factory=list)  # parameter or buffer name
    nbytes: list[int] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)  # where it is counted
    saves: list[int] = field(default_factory=list)
    shapes: list[tuple[int, ...]] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    shared: dict[int, int] = field(default_factory=dict)  # node -> bytes
    skipped: list[Skipped] = field(default_factory=list)

    def sort(self, keys: list[Key]) -> None:
        """Order by node; the entries of one node by bytes (most first), the
        rest, then by storage (``keys``: each entry's first)."""
        nodes, nbytes = self.nodes, self.nbytes
        order = sorted(range(len(nodes)), key=nodes.__getitem__)
        if len(set(nodes)) < len(nodes):
            order.sort(
                key=lambda j: (
                    nodes[j], -nbytes[j], self.shapes[j], KINDS[self.kinds[j]],
                    self.names[j], self.saves[j], keys[j],
                )
            )  # fmt: skip
        if order != list(range(len(order))):
            for name in ("kinds", "names", "nbytes", "nodes", "saves", "shapes"):
                column = getattr(self, name)
                setattr(self, name, list(map(column.__getitem__, order)))
            self.dtypes = list(map(self.dtypes.__getitem__, order))
            self.devices = list(map(self.devices.__getitem__, order))

    def total(self, kind: int | None = None) -> int:
        """Bytes of every storage, or of those of kind ``KINDS[kind]``."""
        if kind is None:
            return sum(self.nbytes)
        return sum(b for b, k in zip(self.nbytes, self.kinds, strict=True) if k == kind)

    def per_node(self) -> dict[int, list[int]]:
        """Bytes per kind counted at each node that counts any."""
        counted: dict[int, list[int]] = {}
        for node, kind, size in zip(self.nodes, self.kinds, self.nbytes, strict=True):
            row = counted.get(node)
            if row is None:
                row = counted[node] = [0, 0, 0]
            row[kind] += size
        return counted


def count(nodes: list[Node], state: dict[tuple[str, int], tuple[str, str]]) -> Columns:
    """Read what ``nodes`` saved; each storage once, at the node made first."""
    found = Saves()
    found.read(nodes)
    alone, overlapping = found.groups()
    columns = Columns(skipped=found.skipped)
    saves = found.saves
    entries = list(map(saves.__getitem__, alone))
    single = [len(entry) == 1 for entry in entries]
    groups: list[tuple[list[Key], int]] = []
    if not all(single):  # saved by several nodes: one at a time
        groups = [([k], k[2]) for k, one in zip(alone, single, strict=True) if not one]
        alone = list(compress(alone, single))
        entries = list(compress(entries, single))
    firsts = list(map(itemgetter(0), entries))
    columns.nodes = list(map(itemgetter(0), firsts))
    tensors = list(map(itemgetter(1), firsts))
    columns.nbytes = list(map(itemgetter(2), alone))
    columns.devices = list(map(itemgetter(0), alone))
    columns.kinds = [0] * len(alone)
    columns.names = [""] * len(alone)
    columns.saves = [1] * len(alone)
    if state:
        where = dict(zip(map(itemgetter(0, 1), alone), range(len(alone)), strict=True))
        for key, (kind, name) in state.items():
            j = where.get(key)
            if j is not None:
                columns.kinds[j], columns.names[j] = KINDS.index(kind), name
    keys = list(alone)
    for members, size in [*groups, *overlapping]:
        tensors.append(_add_group(columns, nodes, state, saves, members, size))
        keys.append(members[0])
    columns.shapes = list(map(tuple, map(attrgetter("shape"), tensors)))
    dtypes = list(map(attrgetter("dtype"), tensors))
    texts = {d: str(d).removeprefix("torch.") for d in set(dtypes)}
    columns.dtypes = list(map(texts.__getitem__, dtypes))
    columns.sort(keys)
    return columns


def _add_group(
    columns: Columns,
    nodes: list[Node],
    state: dict[tuple[str, int], tuple[str, str]],
    saves: dict[Key, list[tuple[int, torch.Tensor]]],
    members: list[Key],
    size: int,
) -> torch.Tensor:
    """One storage saved several times, or storages that overlap: counted once.

    Returns the tensor saved at the node that counts it (for its shape).
    """
    found = [save for key in members for save in saves[key]]
    at, tensor = found[0]
    if len(found) > 1:  # the node made first in the forward counts it
        at, tensor = min(found, key=lambda s: (sequence_nr(nodes[s[0]]), s[0]))
        for j in {save[0] for save in found} - {at}:
            columns.shared[j] = columns.shared.get(j, 0) + size
    kind, name = "activation", ""
    if len(members) == 1:
        kind, name = state.get(members[0][:2], (kind, name))
    elif state:
        named = [state[k[:2]] for k in members if k[:2] in state]
        kind, name = min(named, key=lambda s: KINDS.index(s[0]), default=(kind, name))
    columns.kinds.append(KINDS.index(kind))
    columns.names.append(name)
    columns.nbytes.append(size)
    columns.nodes.append(at)
    columns.saves.append(len(found))
    columns.devices.append(members[0][0])
    return tensor
