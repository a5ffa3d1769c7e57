"""Benchmark folding repeated module calls (``autograd_notes.fold``).

Run it as ``python bench/bench_fold.py`` (``bench/run.py`` runs it too). It
prints what it measures and asserts nothing:

1. An ``nn.LSTMCell`` stepped 70,000 times (a learned start state, so every
   step has one structure): about 1.05M nodes. ``format_graph(...,
   depth=1)`` must show them as one fold ``cell × 70,000``; its time is
   printed against the walk alone and against ``fold=False``. Target: the
   folded print takes at most 4x the walk (the walk of a 1M-node graph is a
   few seconds, so folding is a few seconds more).
2. A GPT-2-small-shaped model (12 blocks, width 768, 12 heads, random
   weights; batch 1, sequence 128): entries at depth 1, 2 and 3, folded and
   not. Target: at most 12 entries at depth 1, the blocks one fold ``× 12``.

Times are medians of three runs, each after ``gc.collect()``; targets are
judged on wall-clock time, CPU time is printed beside it.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable

import torch
from torch import nn

from autograd_notes import format_graph, free_graph, track_modules, walk_graph


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def median_seconds(func: Callable[[], object], repeats: int = 3) -> tuple[float, float]:
    """Median wall-clock and CPU (``process_time``) seconds: a busy machine
    stretches the first, the second is what the code itself cost."""
    wall, cpu = [], []
    for _ in range(repeats):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        func()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


class Recurrent(nn.Module):
    """An ``LSTMCell`` stepped ``steps`` times from a learned start state."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.cell = nn.LSTMCell(4, 4)
        self.start = nn.Parameter(torch.zeros(2, 1, 4))
        self.steps = steps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, c = self.start[0], self.start[1]
        for t in range(self.steps):
            h, c = self.cell(x[t], (h, c))
        return h


def lstm_cell(steps: int = 70_000) -> None:
    torch.manual_seed(0)
    model = Recurrent(steps)
    with track_modules(model) as trace:
        holder = [model(torch.randn(steps, 1, 4)).sum()]
    nodes = len(walk_graph(holder[0]))  # the first walk marks the nodes
    print(f"\nLSTMCell x {steps:,} ({nodes:,} nodes), format_graph at depth=1")
    walk = median_seconds(lambda: walk_graph(holder[0]))
    plain = median_seconds(
        lambda: format_graph(holder[0], modules=trace, depth=1, fold=False)
    )
    folded = median_seconds(lambda: format_graph(holder[0], modules=trace, depth=1))
    text = format_graph(holder[0], modules=trace, depth=1)
    one = f"[1] cell × {steps:,}  (fold: calls 0–{steps - 1:,} of cell" in text
    print(f"  {'':22}{'wall':>8}  {'(cpu)':>8}")
    for name, (wall, cpu) in (
        ("walk_graph alone", walk),
        ("fold=False", plain),
        ("folded", folded),
    ):
        print(f"  {name:22}{wall:6.2f} s  ({cpu:5.2f} s)")
    ratio = folded[0] / plain[0]
    print(f"  folded / fold=False   {ratio:5.2f}x ({folded[1] / plain[1]:.2f}x cpu)"
          f"   target <= 2x   {verdict(ratio <= 2)}")  # fmt: skip
    print(f"  {len(text.splitlines())} lines; one fold of {steps:,} calls: "
          f"{verdict(one)}")  # fmt: skip
    free_graph(holder.pop())


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(width)
        self.c_attn = nn.Linear(width, 3 * width)
        self.attn_proj = nn.Linear(width, width)
        self.ln_2 = nn.LayerNorm(width)
        self.c_fc = nn.Linear(width, 4 * width)
        self.act = nn.GELU(approximate="tanh")
        self.mlp_proj = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, width = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(width, dim=2)
        q, k, v = (
            t.view(batch, seq, self.heads, width // self.heads).transpose(1, 2)
            for t in (q, k, v)
        )
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).reshape(batch, seq, width))
        return x + self.mlp_proj(self.act(self.c_fc(self.ln_2(x))))


class GPT(nn.Module):
    def __init__(self, vocab: int = 50257, width: int = 768, layers: int = 12) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(1024, width)
        self.h = nn.ModuleList(Block(width, 12) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1]))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def gpt2_small(batch: int = 1, seq: int = 128) -> None:
    torch.manual_seed(0)
    model = GPT()
    tokens = torch.randint(0, 50257, (batch, seq))
    with track_modules(model) as trace:
        logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten())
    nodes = len(walk_graph(loss))
    print(f"\nGPT-2-small shape, batch {batch}, sequence {seq} ({nodes:,} nodes):")
    print("  entries folded / fold=False, time of the folded print")
    for depth in (1, 2, 3):
        folded = format_graph(loss, modules=trace, depth=depth)
        plain = format_graph(loss, modules=trace, depth=depth, fold=False)
        seconds, _ = median_seconds(
            lambda d=depth: format_graph(loss, modules=trace, depth=d)
        )
        shown, unfolded = len(folded.splitlines()), len(plain.splitlines())
        row = f"  depth {depth}: {shown:3} / {unfolded:3}   {seconds * 1e3:6.1f} ms"
        if depth == 1:
            ok = len(folded.splitlines()) <= 12 and "h.0–h.11 × 12" in folded
            row += f"   target <= 12 entries, blocks one fold × 12   {verdict(ok)}"
        print(row)


def main() -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average {load}")
    gpt2_small()
    lstm_cell()


if __name__ == "__main__":
    main()
