"""Benchmark ``autograd_notes.to_dot`` against torchviz, and its scaling.

Run it as ``python bench/bench_graph.py`` (``bench/run.py`` runs it too). It
prints a table with PASS/MISS beside each target and asserts nothing:

1. ``to_dot`` against ``torchviz.make_dot(...).source`` on a balanced binary
   sum tree over 10,000 one-element parameters (9,999 ``AddBackward0`` plus
   10,000 ``AccumulateGrad`` nodes), both given the parameter names. Target:
   torchviz takes at least 5x as long.
2. ``to_dot(collapse=False)`` on chains ``y = y * 1.0001`` of 10k, 100k and
   1M steps. Target: each 10x more nodes costs at most 12x more time.
3. The collapsed text of the 1M chain (``format_graph``, two lines) against
   the walk alone (``walk_graph``). Target: under 1.5x.
4. Freeing a walked 1M chain (``_release``): the nodes the package still
   holds right after ``del`` (target: 0); the slowest ``format_graph`` of a
   2,000-step chain in the second after that ``del`` against the same on an
   idle package (target: at most 2x, so nothing stalls it); the ``del`` against
   dropping a chain no one walked (torch's own cost, printed, no target);
   and the first walk, which marks nodes for safe freeing, against a second
   one (target: at most 2x).
5. A measured fact, not a target: ``torchviz.make_dot`` recurses once per
   node, so a 1,000-step chain already raises ``RecursionError``.

Times are medians of several runs of ``time.perf_counter``, each after a
``gc.collect()`` so that no run pays for garbage left by the one before.
The whole script takes about a minute.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
import warnings
from collections.abc import Callable

import torch

from autograd_notes import (
    _release,
    format_graph,
    free_graph,
    to_dot,
    track_modules,
    walk_graph,
)

TREE_LEAVES = 10_000
CHAIN_SIZES = (10_000, 100_000, 1_000_000)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def median_seconds(func: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median wall-clock (``perf_counter``) and CPU (``process_time``) seconds.

    Targets are judged on wall-clock time. CPU time is printed beside it: on a
    busy machine the two differ, and CPU time shows what the code itself cost.
    """
    wall, cpu = [], []
    for _ in range(repeats):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        func()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def sum_tree(leaves: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """A balanced binary tree of ``+`` over ``leaves`` parameters."""
    params = {f"p{i}": torch.ones(1, requires_grad=True) for i in range(leaves)}
    level = list(params.values())
    while len(level) > 1:
        pairs = [level[i] + level[i + 1] for i in range(0, len(level) - 1, 2)]
        level = pairs + level[len(pairs) * 2 :]  # an odd one out moves up
    return level[0], params


def chain(steps: int) -> torch.Tensor:
    y = torch.ones(1, requires_grad=True)
    for _ in range(steps):
        y = y * 1.0001
    return y


def torchviz_source(root: torch.Tensor, params: dict[str, torch.Tensor]) -> str:
    import torchviz

    return str(torchviz.make_dot(root, params=params).source)


def compare_with_torchviz() -> None:
    root, params = sum_tree(TREE_LEAVES)
    nodes = len(walk_graph(root))
    print(
        f"\nto_dot vs torchviz.make_dot(...).source: balanced sum tree over "
        f"{TREE_LEAVES:,} parameters ({nodes:,} nodes), names given to both"
    )
    ours, ours_cpu = median_seconds(lambda: to_dot(root, names=params), repeats=9)
    theirs, theirs_cpu = median_seconds(
        lambda: torchviz_source(root, params), repeats=9
    )
    ratio = theirs / ours
    print(f"  {'':18}  {'wall':>9}  {'(cpu)':>9}")
    print(f"  torchviz.make_dot   {theirs * 1e3:6.1f} ms  ({theirs_cpu * 1e3:6.1f} ms)")
    print(f"  to_dot              {ours * 1e3:6.1f} ms  ({ours_cpu * 1e3:6.1f} ms)")
    print(
        f"  torchviz / to_dot   {ratio:6.2f}x   target >= 5x    {verdict(ratio >= 5)}"
    )


def scaling() -> None:
    print("\nto_dot(collapse=False) scaling on chains y = y * 1.0001")
    header = f"  {'nodes':>10}  {'wall':>10}  {'(cpu)':>11}  {'x per 10x':>9}"
    print(f"{header}   target <= 12x")
    previous = None
    for steps in CHAIN_SIZES:
        holder = [chain(steps)]
        to_dot(holder[0], collapse=False)  # first sight makes each node's object
        repeats = max(3, 300_000 // steps)  # more runs where runs are short
        seconds, cpu = median_seconds(
            lambda h=holder: to_dot(h[0], collapse=False), repeats
        )
        if steps == CHAIN_SIZES[-1]:
            collapsed_vs_walk(holder[0])
        free_graph(holder.pop())
        row = f"  {steps + 1:>10,}  {seconds * 1e3:7.1f} ms  ({cpu * 1e3:7.1f} ms)"
        if previous is not None:
            growth = seconds / previous
            row += f"  {growth:8.1f}x   {verdict(growth <= 12)}"
        print(row)
        previous = seconds


def collapsed_vs_walk(root: torch.Tensor) -> None:
    """The collapsed print of a 1M chain against the walk it starts with."""
    walk, _ = median_seconds(lambda: walk_graph(root), repeats=3)
    text, _ = median_seconds(lambda: format_graph(root), repeats=3)
    ratio = text / walk
    lines = format_graph(root).count("\n") + 1
    print(
        f"  (format_graph of the {len(walk_graph(root)):,}-node chain: {lines} "
        f"lines, {text * 1e3:.0f} ms; walk_graph alone {walk * 1e3:.0f} ms;\n"
        f"   ratio {ratio:.2f}x   target < 1.5x   {verdict(ratio < 1.5)})"
    )


def seconds(func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def slowest_in_a_second(func: Callable[[], object]) -> float:
    """The slowest of the calls to ``func`` made in one second (at least one)."""
    end = time.perf_counter() + 1.0
    slowest = seconds(func)
    while time.perf_counter() < end:
        slowest = max(slowest, seconds(func))
    return slowest


def freeing(steps: int = 1_000_000, small: int = 2_000, repeats: int = 3) -> None:
    """Drop a walked 1M chain: what stays held, and what the drop costs."""
    probe = [chain(small)]
    format_graph(probe[0])
    base = _release.held_count()  # the small chain's nodes, walked
    rows: dict[str, list[float]] = {}

    def timed(name: str, func: Callable[[], object]) -> None:
        rows.setdefault(name, []).append(seconds(func))

    def text() -> None:
        format_graph(probe[0])

    held = []
    for _ in range(repeats):
        gc.collect()
        rows.setdefault("idle", []).append(slowest_in_a_second(text))
        big = [chain(steps)]
        timed("first walk (marks)", lambda b=big: walk_graph(b[0]))
        timed("second walk", lambda b=big: walk_graph(b[0]))
        timed("del, walked", big.clear)
        held.append(_release.held_count() - base)
        rows.setdefault("after", []).append(slowest_in_a_second(text))
        plain = [chain(steps)]
        timed("del, never walked", plain.clear)
    t = {name: statistics.median(values) for name, values in rows.items()}
    print(f"\nfreeing a walked {steps:,}-step chain (medians of {repeats}, wall)")
    print(
        f"  nodes still held right after del   {max(held):>9,}   target 0   "
        f"{verdict(max(held) == 0)}"
    )
    stall = t["after"] / t["idle"]
    print(
        f"  format_graph of a {small:,}-step chain, slowest call in one second:\n"
        f"    idle package {t['idle'] * 1e3:.1f} ms, right after the del "
        f"{t['after'] * 1e3:.1f} ms   ratio {stall:.2f}x   target <= 2x   "
        f"{verdict(stall <= 2)}"
    )
    print(
        f"  del: walked {t['del, walked']:.2f} s, never walked "
        f"{t['del, never walked']:.2f} s (torch's own cost)   ratio "
        f"{t['del, walked'] / t['del, never walked']:.2f}x"
    )
    first = t["first walk (marks)"] / t["second walk"]
    print(
        f"  walk_graph: first (marks) {t['first walk (marks)']:.2f} s, second "
        f"{t['second walk']:.2f} s   ratio {first:.2f}x   target <= 2x   "
        f"{verdict(first <= 2)}"
    )
    free_graph(probe.pop())


def torchviz_on_a_chain(steps: int = 1_000) -> None:
    holder = [chain(steps)]
    try:
        torchviz_source(holder[0], {})
    except RecursionError:
        outcome = "raises RecursionError (it recurses once per node)"
    else:
        outcome = "works"
    print(f"\nmeasured: torchviz.make_dot on a {steps:,}-step chain {outcome};")
    lines = to_dot(holder[0]).count("\n") + 1
    print(f"          to_dot on the same chain returns {lines:,} lines of DOT")


class _Scale(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((2,), 1.0001))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.w


class _Loop(torch.nn.Module):
    """A model whose forward calls its child ``steps`` times."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = steps
        self.scale = _Scale()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.steps):
            x = self.scale(x) + x  # the model's own node points into the group
        return x


def grouping_by_module(steps: int = 200_000) -> None:
    """depth=1 against depth=None on a model that loops in its forward.

    Unfolded (``fold=False``): folded, both are one entry per fold
    (``bench_fold.py`` measures folding).
    """
    model = _Loop(steps)
    with track_modules(model) as trace:
        root = model(torch.ones(2)).sum()
    print(
        f"\nmodule grouping on a {steps:,}-step loop in forward "
        f"({len(walk_graph(root)):,} nodes), wall seconds"
    )
    print(f"  {'':14}  {'depth=None':>10}  {'depth=1':>8}  {'ratio':>6}   target <= 2x")
    for func in (format_graph, to_dot):
        plain, _ = median_seconds(
            lambda f=func: f(root, modules=trace, fold=False), repeats=3
        )
        grouped, _ = median_seconds(
            lambda f=func: f(root, modules=trace, depth=1, fold=False), repeats=3
        )
        ratio = grouped / plain
        print(
            f"  {func.__name__:14}  {plain:10.2f}  {grouped:8.2f}  {ratio:5.2f}x"
            f"   {verdict(ratio <= 2)}"
        )


def main() -> None:
    with warnings.catch_warnings():
        # torchviz imports distutils, which warns on import in Python 3.11.
        warnings.simplefilter("ignore", DeprecationWarning)
        import torchviz  # noqa: F401

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average {load}")
    compare_with_torchviz()
    scaling()
    grouping_by_module()
    freeing()
    torchviz_on_a_chain()


if __name__ == "__main__":
    main()
