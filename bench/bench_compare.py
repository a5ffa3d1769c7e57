"""to_html side by side with torchviz and TorchLens (issue 25, item 7).

Printed as ratios, never asserted. On the same two models, written here
(bench_fold's; nothing downloaded):

1. the GPT-2-small shape (12 blocks, 768 wide, random weights), batch 4,
   sequence 256, its cross-entropy loss;
2. an ``LSTMCell`` stepped ``AN_BENCH_STEPS`` times (default 70,000: 1.05M
   nodes), the sum of its last state.

For each: the Python time to produce the output and its size, for

* ours: ``to_html(loss, modules=trace)``, the whole self-contained page
  (targets 0.5 s / 250 KB and 15 s / 2 MB);
* torchviz: ``make_dot(loss).source``, DOT text (it recurses: on a deep
  graph the RecursionError and the time it took are printed);
* TorchLens 2.x: ``torchlens.visualization.draw_backward(trace)``, after its
  own capture (``torchlens.trace`` of the forward, then
  ``trace.log_backward(loss)``, timed apart). It renders with Graphviz's
  ``dot``; without that binary it stops after writing its DOT source, so
  what is timed is everything but the layout, and the size is the DOT's.

Each tool runs in a process of its own (this file, ``--child``), stopped
after ``AN_BENCH_TIMEOUT`` seconds (default 120) of measuring: that is
printed as "> 120 s (stopped)". The model is built, and run forward for
ours and torchviz, before the clock starts; TorchLens's capture is its own
forward and backward, so it is timed, next to our forward in
``track_modules``.

Then in Chromium (Debian's, driven by Playwright as the browser tests do),
our saved page opened from a ``file://`` URL: first paint (the frame in which
the first box is drawn, and the browser's first-contentful-paint) and one
expand (a click on the first fold or module, until the new boxes are drawn),
medians of ``AN_BENCH_RUNS`` loads (default 3); targets 1 s and 200 ms. Every
request the page makes but its own file is counted (must be 0).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
TIMEOUT = float(os.environ.get("AN_BENCH_TIMEOUT", "120"))
STEPS = int(os.environ.get("AN_BENCH_STEPS", "70000"))
RUNS = int(os.environ.get("AN_BENCH_RUNS", "3"))
GPT_SHAPE = (4, 256)  # batch, sequence
TOOLS = ("ours", "torchviz", "torchlens")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


# -- one tool, one model, in a child process ---------------------------------


class Loss(nn.Module):
    """The model and its loss as one module: TorchLens traces what a module
    returns, and ``log_backward`` needs the loss among its outputs."""

    def __init__(self, model: nn.Module, kind: str) -> None:
        super().__init__()
        self.model, self.kind = model, kind

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "lstm":
            return self.model(x).sum()  # type: ignore[no-any-return]
        logits = self.model(x)
        return nn.functional.cross_entropy(logits.flatten(0, 1), x.flatten())


def build(kind: str) -> tuple[nn.Module, torch.Tensor]:
    sys.path.insert(0, str(HERE))
    from bench_fold import GPT, Recurrent

    torch.manual_seed(0)
    if kind == "gpt":
        return Loss(GPT(), kind), torch.randint(0, 50257, GPT_SHAPE)
    return Loss(Recurrent(STEPS), kind), torch.randn(STEPS, 1, 4)


def report(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def timed(func: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


def timed_cpu(func: Callable[[], Any]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (a busy machine stretches the first)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    func()
    return time.perf_counter() - start, time.process_time() - start_cpu


def child(tool: str, kind: str, out: Path) -> None:
    model, x = build(kind)
    if tool == "ours":
        from autograd_notes import track_modules, walk_graph

        start = time.perf_counter()
        with track_modules(model.model) as trace:  # the model, not its loss
            loss = model(x)
        report(forward=time.perf_counter() - start, nodes=len(walk_graph(loss)))
        report(ready=True)
        from autograd_notes import to_html

        runs = [timed_cpu(lambda: to_html(loss, modules=trace))]
        to_html(loss, modules=trace).save(out)
        if kind == "gpt":  # a median of three on the small graph
            runs += [timed_cpu(lambda: to_html(loss, modules=trace)) for _ in range(2)]
        seconds = statistics.median(wall for wall, _ in runs)
        cpu = statistics.median(cpu for _, cpu in runs)
        report(seconds=seconds, cpu=cpu, size=out.stat().st_size)
    elif tool == "torchviz":
        loss = model(x)
        report(ready=True)
        from torchviz import make_dot

        start = time.perf_counter()
        try:
            source = make_dot(loss).source
        except RecursionError as error:
            report(
                seconds=time.perf_counter() - start, error=f"RecursionError: {error}"
            )
            return
        seconds = time.perf_counter() - start
        if kind == "gpt":  # a median of three, as ours
            more = [timed(lambda: make_dot(loss).source)[0] for _ in range(2)]
            seconds = statistics.median([seconds, *more])
        report(seconds=seconds, size=len(source.encode()))
    else:
        report(ready=True)
        torchlens_child(model, x, out)


def torchlens_child(model: nn.Module, x: torch.Tensor, out: Path) -> None:
    import torchlens as tl

    def capture() -> Any:
        options = tl.options.CaptureOptions(layers_to_save="output")
        trace = tl.trace(model, x, capture=options)
        trace.log_backward(trace[trace.output_layers[0]].out)
        return trace

    seconds, trace = timed(capture)
    report(capture=seconds)
    stem = out.with_suffix("")
    visual = tl.options.VisualizationOptions(
        container_path=str(stem), save_only=True, file_format="svg"
    )
    start = time.perf_counter()
    note = "rendered SVG"
    try:
        tl.visualization.draw_backward(trace, visualization=visual)
        seconds, path = time.perf_counter() - start, stem.with_suffix(".svg")
    except Exception as error:  # no Graphviz: stopped after writing its DOT
        seconds, path = time.perf_counter() - start, stem
        if type(error).__name__ != "GraphvizUnavailableError" or not path.exists():
            raise
        note = "DOT source, not rendered (GraphvizUnavailableError: no `dot`)"
    report(seconds=seconds, size=path.stat().st_size, what=note)


# -- the parent: run the children, print the table ---------------------------


def run_child(
    tool: str, kind: str, out: Path, script: str = __file__
) -> dict[str, Any]:
    """What a child (``script --child tool kind out``) reported; ``stopped``
    if it measured for over TIMEOUT s."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    args = [sys.executable, script, "--child", tool, kind, str(out)]
    log = out.with_suffix(".stderr")
    with log.open("w") as errors:
        proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=errors, text=True, env=env
        )
    assert proc.stdout is not None
    fields: dict[str, Any] = {}
    for line in proc.stdout:  # building the model is not timed
        if line.startswith("{"):
            fields.update(json.loads(line))
        if fields.get("ready"):
            break
    try:
        rest, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, _ = proc.communicate()
        fields["stopped"] = True
    for line in rest.splitlines():
        if line.startswith("{"):
            fields.update(json.loads(line))
    if proc.returncode and not fields.get("stopped"):
        lines = log.read_text().strip().splitlines() or [f"exit {proc.returncode}"]
        fields["error"] = lines[-1]
    return fields


def seconds_text(fields: dict[str, Any], key: str = "seconds") -> str:
    if key in fields:
        return f"{fields[key]:.2f} s"
    if fields.get("stopped"):
        return f"> {TIMEOUT:g} s (stopped)"
    return "—"


def size_text(fields: dict[str, Any]) -> str:
    return f"{fields['size'] / 1e3:.1f} KB" if "size" in fields else "—"


def ratio(theirs: dict[str, Any], ours: dict[str, Any], key: str) -> str:
    if "error" in theirs:
        return ""
    if key in theirs and key in ours and ours[key]:
        return f"{theirs[key] / ours[key]:.1f}x"
    if key == "capture" and key in theirs and ours.get("forward"):
        return f"{theirs[key] / ours['forward']:.1f}x"
    base = ours.get("forward" if key == "capture" else "seconds")
    if theirs.get("stopped") and key != "size" and base:
        return f"> {TIMEOUT / base:.{0 if 10 * base <= TIMEOUT else 1}f}x"
    return ""


def row(
    label: str, secs: str, by: str, size: str, by_size: str, note: str = ""
) -> None:
    print(f"  {label:33}{secs:>18}{by:>14}{size:>13}{by_size:>14}   {note}".rstrip())


def compare(name: str, kind: str, folder: Path, limits: tuple[float, int]) -> Path:
    results = {
        tool: run_child(tool, kind, folder / f"{kind}-{tool}.html") for tool in TOOLS
    }
    ours, viz, lens = (results[tool] for tool in TOOLS)
    print(f"\n{name} ({ours.get('nodes', 0):,} nodes)")
    row("", "time", "theirs/ours", "size", "theirs/ours")
    fast = verdict(ours.get("seconds", 1e9) <= limits[0])
    small = verdict(ours.get("size", 1e12) <= limits[1])
    target = f"target <= {limits[0]:g} s {fast}, <= {limits[1] / 1e3:g} KB {small}"
    if "cpu" in ours:
        target = f"({ours['cpu']:.2f} s CPU)   {target}"
    row("ours: to_html (HTML page)", seconds_text(ours), "", size_text(ours), "",
        target)  # fmt: skip
    row("torchviz: make_dot(...).source", seconds_text(viz),
        ratio(viz, ours, "seconds"), size_text(viz), ratio(viz, ours, "size"),
        "DOT source")  # fmt: skip
    if "error" in viz:
        print(f"    torchviz failed after the time above: {viz['error'][:100]}")
    row("ours: forward in track_modules", seconds_text(ours, "forward"), "", "", "",
        "what to_html needs first: the model run, its modules recorded")  # fmt: skip
    row("TorchLens: trace + log_backward", seconds_text(lens, "capture"),
        ratio(lens, ours, "capture"), "", "",
        "its capture: the model run under its tracer, then backward "
        "(ratio: to our forward)")  # fmt: skip
    if "capture" in lens:
        row("TorchLens: draw_backward", seconds_text(lens),
            ratio(lens, ours, "seconds"), size_text(lens), ratio(lens, ours, "size"),
            lens.get("what", ""))  # fmt: skip
    else:
        row("TorchLens: draw_backward", "not reached", "", "—", "")
    if "error" in lens:
        print(f"    TorchLens failed: {lens['error'][:100]}")
    return folder / f"{kind}-ours.html"


# -- Chromium ----------------------------------------------------------------

# Set before the page's own script: the time of the first frame with a box.
FIRST_BOX = """
(function () {
  function look() {
    if (!document.querySelector(".an-box")) return requestAnimationFrame(look);
    window.__firstBox = performance.now();
  }
  requestAnimationFrame(look);
})();
"""

# Click the first fold (else module) and wait for the frame with more boxes.
EXPAND = """
() => new Promise((done) => {
  var box = document.querySelector(".an-fold") || document.querySelector(".an-group");
  var count = function () { return document.querySelectorAll(".an-box").length; };
  if (!box) { done([-1, count(), count()]); return; }
  var before = count(), start = performance.now();
  box.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  function look() {
    if (count() === before) return requestAnimationFrame(look);
    requestAnimationFrame(function () {
      done([performance.now() - start, before, count()]);
    });
  }
  requestAnimationFrame(look);
})
"""


def in_chromium(pages: list[tuple[str, Path]]) -> None:
    print(f"\nChromium: our page from file://, medians of {RUNS} loads")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("  playwright is not installed: skipped")
        return
    sys.path.insert(0, str(HERE.parent))
    from browser_tests.webcheck import launch_chromium

    with sync_playwright() as playwright:
        try:
            browser = launch_chromium(playwright)
        except FileNotFoundError as error:  # no Debian Chromium here
            print(f"  skipped: {error}")
            return
        try:
            for name, path in pages:
                if not path.exists():
                    print(f"  {name}: no page (to_html failed above)")
                    continue
                try:
                    page_timings(browser, name, path)
                except Exception as error:  # e.g. no .an-box: view.js changed
                    print(f"  {name}: stopped, {type(error).__name__}: {error}")
        finally:
            browser.close()


def page_timings(browser: Any, name: str, path: Path) -> None:
    url = path.resolve().as_uri()
    first, fcp, expand, outside = [], [], [], []
    for _ in range(RUNS):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.add_init_script(FIRST_BOX)
        left: list[str] = []
        page.on(
            "request", lambda r, left=left: left.append(r.url) if r.url != url else None
        )
        page.goto(url, wait_until="load", timeout=TIMEOUT * 1000)
        page.wait_for_function(
            "window.__firstBox !== undefined", timeout=TIMEOUT * 1000
        )
        first.append(page.evaluate("window.__firstBox"))
        paints = page.evaluate(
            "performance.getEntriesByName('first-contentful-paint')"
            ".map(e => e.startTime)"
        )
        fcp.extend(paints[:1])
        ms, before, after = page.evaluate(EXPAND)
        expand.append(ms)
        outside.append(len(left))
        context.close()
    box, ms = statistics.median(first), statistics.median(expand)
    paint = statistics.median(fcp) if fcp else box  # the later one is judged
    print(f"  {name}")
    print(f"    first paint {max(box, paint):7.0f} ms   (first box in the frame at"
          f" {box:.0f} ms, first-contentful-paint {paint:.0f} ms)"
          f"   target <= 1000 ms   {verdict(max(box, paint) <= 1000)}")  # fmt: skip
    if ms < 0:
        print("    expand: nothing to open (no fold or module box)")
    else:
        print(f"    one expand  {ms:7.0f} ms   (a click on the first fold or module:"
              f" {before} -> {after} boxes)   target <= 200 ms   "
              f"{verdict(ms <= 200)}")  # fmt: skip
    print(f"    requests leaving the page: {max(outside)}   "
          f"{verdict(max(outside) == 0)}")  # fmt: skip


def main() -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average {load}")
    print(f"each tool in its own process, stopped after {TIMEOUT:g} s of measuring")
    batch, seq = GPT_SHAPE
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        gpt = compare(f"GPT-2-small shape, batch {batch}, sequence {seq}", "gpt",
                      folder, (0.5, 250_000))  # fmt: skip
        lstm = compare(f"LSTMCell x {STEPS:,}", "lstm", folder, (15.0, 2_000_000))
        in_chromium([("GPT-2-small shape", gpt), (f"LSTMCell x {STEPS:,}", lstm)])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
    else:
        main()
