"""A million nodes, any graph (issue 31, item 2): printed, never asserted.

Five graphs of ``AN_BENCH_NODES`` nodes (default 1,000,000):

1. untraced, a chain of alternating ``sin`` and ``* 1.5`` from one leaf;
2. the same chain made inside one module's call (``track_modules``): a
   module with a huge chain inside that repeats nothing;
3. branching: ``y = y + x.sin()`` again and again, ``x`` a shared leaf;
4. a balanced binary tree of adds over ``x * 1.0`` leaves' products;
5. a chain of no period: ``sin``, ``cos``, ``exp``, ``tanh`` or ``* 0.5``,
   each step chosen by ``random.Random(0)``.

For each, in CPU seconds (``time.process_time``), as ratios to
``walk_graph`` of the same graph: ``saved_memory`` (target at most 3x),
``diff_graphs`` of it and a second graph of the same shape (at most 8x)
and ``to_html`` (at most 5x); the page's size (at most 2 MB); then each
page's first paint in Debian's Chromium (at most 1 s; ``bench_compare``'s
Playwright helper, which also times one expand).

Next to them, the *floor* of an exact count: the walk, then, for each value
a node saved, its raw ``SavedTensor``, the tensor behind it and its
storage's device, address and size, read the fastest way (a class's nodes
at once, no checks, no bookkeeping, ``gc`` paused). ``saved_memory`` cannot
cost less, so a target below the floor cannot be met through PyTorch's
Python API: the floor says how far off the target is and why.
"""

from __future__ import annotations

import gc
import os
import random
import tempfile
import time
from collections.abc import Callable
from operator import attrgetter, methodcaller
from pathlib import Path

import torch
from bench_compare import in_chromium, verdict
from torch import nn

from autograd_notes import (
    diff_graphs,
    free_graph,
    saved_memory,
    to_html,
    track_modules,
    walk_graph,
)

NODES = int(os.environ.get("AN_BENCH_NODES", "1000000"))
TARGETS = {"saved_memory": 3.0, "diff_graphs": 8.0, "to_html": 5.0}
PAGE_LIMIT = 2_000_000


def chain(x: torch.Tensor, steps: int) -> torch.Tensor:
    y = x
    for _ in range(steps):
        y = y.sin()
        y = y * 1.5
    return y


class Chain(nn.Module):
    """One call, ``steps`` steps of ``sin`` and ``* 1.5``: no repeated call."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = steps
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return chain(x * self.scale, self.steps)


def shared(x: torch.Tensor, steps: int) -> torch.Tensor:
    y = x
    for _ in range(steps):
        y = y + x.sin()
    return y


def tree(x: torch.Tensor, nodes: int) -> torch.Tensor:
    """Adds, pairwise, of ``x * 1.0`` products: about ``nodes`` nodes."""
    level = [x * 1.0 for _ in range(nodes // 2)]
    while len(level) > 1:
        pairs = zip(level[::2], level[1::2], strict=False)
        level = [a + b for a, b in pairs] + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def random_chain(x: torch.Tensor, steps: int) -> torch.Tensor:
    """``steps`` steps, each kind chosen by ``random.Random(0)``: no pattern."""
    pick = random.Random(0)
    kinds = (torch.sin, torch.cos, torch.exp, torch.tanh, lambda t: t * 0.5)
    y = x
    for _ in range(steps):
        y = pick.choice(kinds)(y)
    return y


def read_floor(root: torch.Tensor) -> int:
    """The least an exact count does: walk, then read what each node saved.

    Returns the number of saved values read (a storage's device, address
    and size each, as ``saved_memory`` keys a storage).
    """
    gc.disable()
    try:
        by_class: dict[type, list[object]] = {}
        for node in walk_graph(root):
            by_class.setdefault(type(node), []).append(node)
        keys: list[tuple[torch.device, int, int]] = []
        for kind, members in by_class.items():
            for attr in (a for a in dir(kind) if a.startswith("_raw_saved_")):
                raws = map(attrgetter(attr), members)
                datas = [d for d in map(attrgetter("data"), raws) if d is not None]
                storages = list(map(methodcaller("untyped_storage"), datas))
                keys.extend(
                    zip(
                        map(attrgetter("device"), datas),
                        map(methodcaller("data_ptr"), storages),
                        map(methodcaller("nbytes"), storages),
                        strict=True,
                    )
                )
        return len(keys)
    finally:
        gc.enable()


def cpu_seconds(func: Callable[[], object]) -> tuple[float, object]:
    gc.collect()
    start = time.process_time()
    result = func()
    return time.process_time() - start, result


def build(shape: str) -> tuple[torch.Tensor, object]:
    """The root of a graph of about NODES nodes, and its trace (or None)."""
    x = torch.ones(1, requires_grad=True)
    if shape == "chain":
        return chain(x, NODES // 2), None
    if shape == "module":
        model = Chain(NODES // 2 - 1)
        with track_modules(model) as trace:
            y = model(torch.ones(1))
        return y, trace
    if shape == "tree":
        return tree(x, NODES), None
    if shape == "random":
        return random_chain(x, NODES), None
    return shared(x, NODES // 2), None


def measure(name: str, shape: str, folder: Path) -> Path:
    root, trace = build(shape)
    other, other_trace = build(shape)
    walk_s = min(cpu_seconds(lambda: walk_graph(root))[0] for _ in range(2))
    nodes = len(walk_graph(root))
    floor_s, values = cpu_seconds(lambda: read_floor(root))
    memory_s, _ = cpu_seconds(lambda: saved_memory(root, trace))  # type: ignore[arg-type]
    diff_s, diff = cpu_seconds(
        lambda: diff_graphs(root, other, trace, other_trace)  # type: ignore[arg-type]
    )
    html_s, page = cpu_seconds(lambda: to_html(root, modules=trace))  # type: ignore[arg-type]
    path = page.save(folder / f"{shape}.html")  # type: ignore[attr-defined]
    size = path.stat().st_size
    print(f"\n{name} ({nodes:,} nodes)")
    print(f"  walk_graph     {walk_s:6.2f} s CPU")
    floor = f"the walk and {values:,} saved values read: no exact count is cheaper"
    print(f"  floor          {floor_s:6.2f} s CPU  {floor_s / walk_s:5.1f}x walk"
          f"   ({floor})")  # fmt: skip
    for label, seconds in (
        ("saved_memory", memory_s),
        ("diff_graphs", diff_s),
        ("to_html", html_s),
    ):
        ratio, target = seconds / walk_s, TARGETS[label]
        print(f"  {label:<13}  {seconds:6.2f} s CPU  {ratio:5.1f}x walk"
              f"   target <= {target:g}x   {verdict(ratio <= target)}")  # fmt: skip
    print(f"  page           {size / 1e6:6.2f} MB   target <= 2 MB   "
          f"{verdict(size <= PAGE_LIMIT)}")  # fmt: skip
    del diff, page
    free_graph(other)
    free_graph(root)
    return path


def main() -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average {load}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pages = [
            (name, measure(name, shape, folder))
            for name, shape in (
                ("untraced chain of sin and * 1.5", "chain"),
                ("the chain inside one module call", "module"),
                ("y = y + x.sin(), x shared", "shared"),
                ("balanced binary tree of adds", "tree"),
                ("chain of random kinds (Random(0))", "random"),
            )
        ]
        in_chromium(pages)


if __name__ == "__main__":
    main()
