"""saved_memory side by side with TorchLens's memory figure (issue 31, item 6).

Printed, never asserted. For each model (written here and in bench_fold,
random weights, nothing downloaded), the bytes that the graph behind its
loss saved for backward, as

* the truth: an independent count, written here and not using our package:
  the forward runs under ``torch.autograd.graph.saved_tensors_hooks``, whose
  pack hook sees every tensor autograd saves; each distinct storage (device,
  address) is counted once, at its full size;
* ours: ``saved_memory(loss, modules=trace).total``, after a plain forward in
  ``track_modules`` (it must equal the truth to the byte: if not, that is
  printed loudly, as a bug of ours);
* TorchLens 2.x: ``trace.total_autograd_memory`` after ``torchlens.trace``.

The models: the GPT-2-small shape of bench_compare (smaller batch and
sequence, to keep it quick); the same with each block checkpointed
(``torch.utils.checkpoint``, non-reentrant); an ``nn.LSTM``; a ResNet-like
CNN whose ReLUs are in place.

Why TorchLens's figure differs is checked, not assumed: in TorchLens's own
process, the graph behind its traced loss is walked (again without our
package) and each node's saved tensors read; TorchLens's per-op
``autograd_memory`` is matched to the nodes by ``grad_fn_object_id``. The
nodes it never counted (made inside a call whose output is another node's),
the nodes it counted as 0 B though they save something (an in-place op's
saved result; a node under saved-tensor hooks, as in a checkpoint), and
what it counted twice (the same storage in two ops) are printed with their
bytes: the reason shown is what was found, per model.

Each tool runs in its own process (this file, ``--child``), stopped after
``AN_BENCH_TIMEOUT`` seconds (default 120), as bench_compare does.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_compare import TIMEOUT, report, run_child  # noqa: E402
from bench_fold import GPT  # noqa: E402

GPT_SHAPE = (2, 128)  # batch, sequence: the GPT-2-small shape, a smaller input
LSTM_SHAPE = (64, 8, 32, 64, 2)  # sequence, batch, input, hidden, layers
CNN_SHAPE = (8, 3, 32, 32)  # images
TOOLS = ("truth", "ours", "torchlens")


# -- the models --------------------------------------------------------------


class CheckpointedGPT(GPT):
    """GPT with each block recomputed in backward (non-reentrant checkpoint)."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1]))
        for block in self.h:
            x = checkpoint(block, x, use_reentrant=False)
        return self.lm_head(self.ln_f(x))


class Recurrent(nn.Module):
    """``nn.LSTM`` over a sequence, then a linear read-out of each step."""

    def __init__(self) -> None:
        super().__init__()
        _, _, inputs, hidden, layers = LSTM_SHAPE
        self.lstm = nn.LSTM(inputs, hidden, num_layers=layers)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out)


class Residual(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + x)


class ResNetLike(nn.Module):
    """A stem, four residual blocks at two widths, pooled, a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1, bias=False),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
        )
        self.layer1 = nn.Sequential(Residual(32), Residual(32))
        self.down = nn.Conv2d(32, 64, 3, stride=2, padding=1, bias=False)
        self.layer2 = nn.Sequential(Residual(64), Residual(64))
        self.head = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer2(self.down(self.layer1(self.stem(x))))
        return self.head(x.mean((2, 3)))


class Loss(nn.Module):
    """The model and its loss as one module (TorchLens traces what a module
    returns): cross-entropy for the GPTs and the CNN, a mean square else."""

    def __init__(self, model: nn.Module, kind: str) -> None:
        super().__init__()
        self.model, self.kind = model, kind

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.model(x)
        if self.kind in ("gpt", "checkpointed"):
            return nn.functional.cross_entropy(out.flatten(0, 1), x.flatten())
        if self.kind == "cnn":
            return nn.functional.cross_entropy(out, torch.arange(len(out)) % 10)
        return out.square().mean()


MODELS = {
    "gpt": f"GPT-2-small shape, batch {GPT_SHAPE[0]}, sequence {GPT_SHAPE[1]}",
    "checkpointed": "the same, each block checkpointed",
    "lstm": "nn.LSTM({2}, {3}, num_layers={4}), sequence {0}, batch {1}".format(
        *LSTM_SHAPE
    ),
    "cnn": "ResNet-like CNN, in-place ReLU, {0} images {2}x{3}".format(*CNN_SHAPE),
}


def build(kind: str) -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    if kind in ("gpt", "checkpointed"):
        model = GPT() if kind == "gpt" else CheckpointedGPT()
        return Loss(model, kind), torch.randint(0, 50257, GPT_SHAPE)
    if kind == "lstm":
        return Loss(Recurrent(), kind), torch.randn(*LSTM_SHAPE[:3])
    return Loss(ResNetLike(), kind), torch.randn(*CNN_SHAPE)


# -- the independent count ---------------------------------------------------


def storage_key(tensor: torch.Tensor) -> tuple[str, int, int]:
    storage = tensor.untyped_storage()
    return str(tensor.device), storage.data_ptr(), storage.nbytes()


def truth_child(model: nn.Module, x: torch.Tensor) -> None:
    """Every tensor autograd saves passes the pack hook: count each storage once.

    The hooks hand the tensor back unchanged (the graph is as without them);
    ``kept`` keeps every storage seen alive, so no address is reused for a
    later one while counting.
    """
    seen: dict[tuple[str, int], int] = {}
    kept: list[torch.Tensor] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        device, address, nbytes = storage_key(tensor)
        if (device, address) not in seen:
            seen[device, address] = nbytes
            kept.append(tensor)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        loss = model(x)
    report(total=sum(seen.values()), storages=len(seen), loss=float(loss.detach()))


# -- ours --------------------------------------------------------------------


def ours_child(model: nn.Module, x: torch.Tensor) -> None:
    from autograd_notes import saved_memory, track_modules

    with track_modules(model.model) as trace:
        loss = model(x)
    memory = saved_memory(loss, modules=trace)
    report(total=memory.total, storages=len(memory.storages), loss=float(loss.detach()))


# -- TorchLens, and why its figure differs -----------------------------------


def graph_nodes(root: Any) -> list[Any]:
    """Every node of the graph behind ``root``, each once (a plain walk)."""
    seen, stack, nodes = {id(root)}, [root], []
    while stack:
        node = stack.pop()
        nodes.append(node)
        for parent, _ in node.next_functions:
            if parent is not None and id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    return nodes


def raw_saved(node: Any) -> list[Any]:
    """The ``SavedTensor`` objects of ``node`` (reading them runs no hook)."""
    found = []
    for name in dir(node):
        if name.startswith("_raw_saved_"):
            raw = getattr(node, name)
            for item in raw if isinstance(raw, list) else [raw]:
                if isinstance(item, torch._C._autograd.SavedTensor):
                    found.append(item)
    return found


def hooked(node: Any) -> bool:
    """Whether saved-tensor hooks packed ``node``'s saves (as a checkpoint
    does): then a SavedTensor refuses hooks of its own. Only asked after
    TorchLens measured; the identity hooks it may set change nothing."""
    packed = False
    for item in raw_saved(node):
        try:
            item.register_hooks(lambda t: t, lambda t: t)
        except RuntimeError as error:  # else: a saved None
            packed = packed or "already been set" in str(error)
    return packed


def saved_storages(node: Any) -> dict[tuple[str, int], int]:
    """The storages ``node`` saved (device, address -> bytes), each once.
    Not for a ``hooked`` node: reading its saves would run the unpack hook."""
    found: dict[tuple[str, int], int] = {}
    for name in dir(node):
        if not name.startswith("_saved_"):
            continue
        try:
            values = getattr(node, name)
        except RuntimeError:  # freed
            continue
        for value in values if isinstance(values, tuple | list) else [values]:
            if isinstance(value, torch.Tensor) and value.layout == torch.strided:
                device, address, nbytes = storage_key(value)
                found[device, address] = nbytes
    return found


def torchlens_child(model: nn.Module, x: torch.Tensor) -> None:
    import torchlens as tl
    from torch.utils import checkpoint as checkpoint_module

    frame_inputs: dict[tuple[str, int], int] = {}  # what checkpoints keep
    frame = checkpoint_module._CheckpointFrame
    save_inputs = frame.save_inputs

    def recording(self: Any, *args: Any) -> None:
        for arg in args:
            if isinstance(arg, torch.Tensor):
                device, address, nbytes = storage_key(arg)
                frame_inputs[device, address] = nbytes
        save_inputs(self, *args)

    frame.save_inputs = recording  # type: ignore[method-assign]
    options = tl.options.CaptureOptions(layers_to_save="output")
    trace = tl.trace(model, x, capture=options)
    loss = trace[trace.output_layers[0]].out
    total = trace.total_autograd_memory
    report(total=None if total is None else int(total), loss=float(loss.detach()))
    report(**why(trace, loss, frame_inputs))


def why(
    trace: Any, loss: torch.Tensor, frame_inputs: dict[tuple[str, int], int]
) -> dict[str, Any]:
    """What TorchLens counted, storage by storage, against a walk of its graph.

    TorchLens's per-op ``autograd_memory`` is matched to the graph's nodes
    by ``grad_fn_object_id``. A storage that the walk finds is ``counted``
    if a node TorchLens gave bytes to saved it; else it is lost, ``missed``
    where no node that saved it has an op (made inside a call whose output is
    another node), ``zero`` where TorchLens gave its node 0 B. ``frames``:
    what checkpoint frames keep (no node holds it); ``hooked``: nodes whose
    saves hooks packed (a checkpoint's: not kept, not read). By node class:
    ``[nodes, bytes]``; ``outputs``: the class of each counted node that
    takes a missed node's output (the call's output node).
    """
    counted: dict[int, int] = collections.defaultdict(int)  # node id -> bytes
    for op in trace.ops:
        node_id = getattr(op, "grad_fn_object_id", None)
        memory = getattr(op, "autograd_memory", None)
        if node_id is not None and memory is not None:
            counted[node_id] += int(memory)
    nodes = graph_nodes(loss.grad_fn)
    savers: dict[tuple[str, int], list[Any]] = collections.defaultdict(list)
    sizes: dict[tuple[str, int], int] = {}
    hooked_nodes: collections.Counter[str] = collections.Counter()
    for node in nodes:
        if hooked(node):
            hooked_nodes[type(node).__name__] += 1
            continue
        for key, size in saved_storages(node).items():
            savers[key].append(node)
            sizes[key] = size
    lost: dict[str, dict[str, list[int]]] = {"missed": {}, "zero": {}}
    lost_nodes: dict[str, set[int]] = collections.defaultdict(set)
    kept = 0
    for key, size in sizes.items():
        if any(counted.get(id(node), 0) > 0 for node in savers[key]):
            kept += size
            continue
        zero = [node for node in savers[key] if id(node) in counted]
        reason = "zero" if zero else "missed"
        name = "/".join(sorted({type(node).__name__ for node in zero or savers[key]}))
        entry = lost[reason].setdefault(name, [0, 0])
        lost_nodes[name].update(id(node) for node in zero or savers[key])
        entry[0] = len(lost_nodes[name])
        entry[1] += size
    missed = set().union(*(lost_nodes[name] for name in lost["missed"]))
    outputs = sorted(
        {
            type(node).__name__
            for node in nodes
            if id(node) in counted
            for parent, _ in node.next_functions
            if id(parent) in missed
        }
    )
    frames = {k: v for k, v in frame_inputs.items() if k not in sizes}
    return {
        "nodes": len(nodes),
        "ops_with_a_node": sum(id(node) in counted for node in nodes),
        "walked": sum(sizes.values()) + sum(frames.values()),
        "kept": kept,
        "frames": [len(frames), sum(frames.values())],
        "hooked": dict(hooked_nodes),
        "outputs": outputs,
        **lost,
    }


def child(tool: str, kind: str) -> None:
    model, x = build(kind)
    report(ready=True)
    {"truth": truth_child, "ours": ours_child, "torchlens": torchlens_child}[tool](
        model, x
    )


# -- the parent: the table ---------------------------------------------------


def megabytes(fields: dict[str, Any]) -> str:
    if fields.get("total") is not None:
        return f"{fields['total'] / 1e6:.3f} MB"
    if fields.get("stopped"):
        return f"> {TIMEOUT:g} s (stopped)"
    return "failed" if "error" in fields else "—"


def size_text(size: int) -> str:
    return f"{size / 1e6:.3f} MB" if size >= 100_000 else f"{size:,} B"


def kinds_text(found: dict[str, list[int]]) -> str:
    """``{node class: [nodes, bytes]}``, largest first, five at most."""
    ranked = sorted(found.items(), key=lambda item: -item[1][1])
    shown = [f"{name} x{n} {size_text(size)}" for name, (n, size) in ranked[:5]]
    more = [f"{len(ranked) - 5} more kinds"] if len(ranked) > 5 else []
    return ", ".join(shown + more)


def reason_lines(truth: int, lens: dict[str, Any]) -> list[str]:
    """Why TorchLens's figure differs: what the walk of its graph found."""
    lines = [
        f"{lens['ops_with_a_node']} of its graph's {lens['nodes']} nodes are the "
        f"output node of an op TorchLens logged; walked, the graph (and the "
        f"checkpoint frames) save {size_text(lens['walked'])}"
        + ("" if lens["walked"] == truth else " (!= the truth: walk incomplete)")
    ]
    if lens["missed"]:
        size = sum(size for _, size in lens["missed"].values())
        lines.append(
            f"{size / truth:6.1%} of the truth is saved only by nodes it never "
            f"reads, made inside a call whose output node is another "
            f"({', '.join(lens['outputs'])}): {kinds_text(lens['missed'])}"
        )
    if lens["zero"]:
        size = sum(size for _, size in lens["zero"].values())
        lines.append(f"{size / truth:6.1%} of the truth is saved only by nodes it "
                     f"counts as 0 B: {kinds_text(lens['zero'])}")  # fmt: skip
    count, size = lens["frames"]
    if count:
        lines.append(f"{size / truth:6.1%} of the truth is kept by {count} "
                     "checkpoint frames (the blocks' inputs), in no node: not "
                     "counted")  # fmt: skip
    if lens["hooked"]:
        lines.append(
            f"{sum(lens['hooked'].values())} nodes of the checkpointed blocks "
            "have their saves packed by the checkpoint's hooks (recomputed in "
            "backward, not kept): neither the truth nor TorchLens counts them"
        )
    extra = lens["total"] - lens["kept"]
    if extra:
        lines.append(f"{extra:+,} B ({extra / truth:+.2%} of the truth): the rest, "
                     "as it counts a tensor by its view's size, not its storage's, "
                     "once per op that saved it")  # fmt: skip
    return lines


def measure(kind: str, folder: Path) -> dict[str, dict[str, Any]]:
    """What each tool reported on model ``kind``, each in its own process."""
    return {
        tool: run_child(tool, kind, folder / f"{kind}-{tool}.out", script=__file__)
        for tool in TOOLS
    }


def table_row(*cells: str) -> None:
    widths = (50, 14, 14, 24, 12)
    first, *rest = zip(cells, widths, strict=True)
    line = f"{first[0]:<{first[1]}}" + "".join(f"{c:>{w}}" for c, w in rest)
    print(f"  {line}".rstrip())


def main() -> None:
    import tempfile

    print(f"torch {torch.__version__}; each tool in its own process, stopped after "
          f"{TIMEOUT:g} s; truth: distinct storages seen by a pack hook")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        results = {kind: measure(kind, Path(tmp)) for kind in MODELS}
    print()
    table_row("bytes saved for backward", "pack-hook", "ours", "TorchLens",
              "TorchLens/")  # fmt: skip
    table_row("", "(truth)", "saved_memory", "total_autograd_memory", "truth")
    bugs = []
    for kind, fields in results.items():
        truth, ours, lens = (fields[tool] for tool in TOOLS)
        share = ""
        if truth.get("total") and lens.get("total") is not None:
            share = f"{lens['total'] / truth['total']:.3f}"
        table_row(MODELS[kind], megabytes(truth), megabytes(ours), megabytes(lens),
                  share)  # fmt: skip
        if truth.get("total") is None or ours.get("total") != truth.get("total"):
            bugs.append(
                f"  !!! BUG (ours): {MODELS[kind]}: saved_memory().total "
                f"{ours.get('total')} != the pack-hook count {truth.get('total')} "
                f"{ours.get('error', '')}{truth.get('error', '')} !!!"
            )
    print()
    print("\n".join(bugs) if bugs else "  ours == the pack-hook count, to the byte, "
          "on every model")  # fmt: skip
    for kind, fields in results.items():
        truth, lens = fields["truth"], fields["torchlens"]
        print(f"\n  why TorchLens differs: {MODELS[kind]}")
        if not truth.get("total") or "kept" not in lens:
            error = lens.get("error") or truth.get("error") or "stopped"
            print(f"    not measured: {error[:120]}")
            continue
        for line in reason_lines(truth["total"], lens):
            print(f"    {line}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3])
    else:
        main()
