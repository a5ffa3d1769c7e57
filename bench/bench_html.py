"""to_html: Python time and page size (issue 25, item 7), printed, never asserted.

1. The GPT-2-small shape of bench_fold (12 blocks, 768 wide, random weights):
   targets 0.5 s and 250 KB.
2. An ``LSTMCell`` stepped ``AN_BENCH_STEPS`` times (default 70,000: 1.05M
   nodes): targets 15 s and 2 MB. Each next to format_graph at depth 1 on
   the same graph, as a ratio.

Chromium figures (first paint, expand) are not measured here.
"""

from __future__ import annotations

import os

import torch
from bench_fold import GPT, Recurrent, median_seconds, verdict
from torch import nn

from autograd_notes import format_graph, free_graph, to_html, track_modules, walk_graph


def measure(
    name: str, loss: torch.Tensor, trace: object, limits: tuple[float, int]
) -> None:
    nodes = len(walk_graph(loss))
    page = to_html(loss, modules=trace)  # type: ignore[arg-type]
    size = len(page.html.encode("utf-8"))
    html_s, _ = median_seconds(lambda: to_html(loss, modules=trace), repeats=1)  # type: ignore[arg-type]
    text_s, _ = median_seconds(
        lambda: format_graph(loss, modules=trace, depth=1),
        repeats=1,  # type: ignore[arg-type]
    )
    print(f"\n{name} ({nodes:,} nodes)")
    print(f"  to_html {html_s:6.2f} s   ({html_s / text_s:4.1f}x format_graph depth 1)"
          f"   target <= {limits[0]:g} s   {verdict(html_s <= limits[0])}")  # fmt: skip
    fits = verdict(size <= limits[1])
    print(f"  page    {size / 1e3:8.1f} KB   ({size / nodes:5.1f} B per node)"
          f"   target <= {limits[1] / 1e3:g} KB   {fits}")  # fmt: skip


def main() -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average {load}")
    torch.manual_seed(0)
    model = GPT()
    tokens = torch.randint(0, 50257, (1, 128))
    with track_modules(model) as trace:
        logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten())
    measure("GPT-2-small shape, batch 1, sequence 128", loss, trace, (0.5, 250_000))
    del loss, logits
    steps = int(os.environ.get("AN_BENCH_STEPS", "70000"))
    cell = Recurrent(steps)
    with track_modules(cell) as trace:
        holder = [cell(torch.randn(steps, 1, 4)).sum()]
    measure(f"LSTMCell x {steps:,}", holder[0], trace, (15.0, 2_000_000))
    free_graph(holder.pop())


if __name__ == "__main__":
    main()
