"""Time forward + backward of ``MaskedLinear`` against its references.

Batch 256, 1024 -> 1024 features, float32 on the CPU, with torch's default
thread count. Four variants, all with an input that requires grad (a layer
in the middle of a network) and a fixed upstream gradient, plus one more
reference for prune mode:

* ``freeze``: ``MaskedLinear(mode="freeze")``;
* ``prune``: ``MaskedLinear(mode="prune")``;
* ``hook``: ``nn.Linear`` whose weight gradient is masked by a tensor hook,
  ``weight.register_hook(lambda g: g * M)``, the usual way to freeze entries;
* ``plain``: ``nn.Linear`` with no mask at all;
* ``wm``: plain autograd through ``F.linear(x, W * M, b)``, the reference for
  prune mode, which must also apply the mask in the forward pass.

Targets: freeze mode, which computes what the hook computes, within 1.10x
the hook (and 1.15x plain); prune mode within 1.05x ``wm``, its fair
reference. Prune against the hook or plain ``nn.Linear`` is printed for
information only: those do less work.

The variants run round-robin, one step each, so slow drift of the machine
hits all of them alike. Each ratio is printed twice: of the medians, and of
the minimums (min/min), which other processes on a busy machine disturb
least. The PASS/MISS verdict is the min/min one; nothing here asserts.

The script also records what each variant saves for backward (through
``torch.autograd.graph.saved_tensors_hooks``): the masked layer should save
nothing in floating point beyond the input and the weight, which is what
``nn.Linear`` saves, plus its bool mask. "Kept alive" counts the saved bytes
that are not a parameter, buffer or the input, i.e. the memory the graph
holds on its own until backward (``wm`` keeps its ``W * M``).
"""

from __future__ import annotations

import statistics
import time

import torch
from torch import Tensor, nn

from autograd_notes.masked_linear import MaskedLinear

BATCH, IN_FEATURES, OUT_FEATURES = 256, 1024, 1024
WARMUP, REPEATS = 10, 200
BUDGET_S = 40.0  # stop repeating early on a slow or busy machine
TARGET_VS_HOOK, TARGET_VS_PLAIN, TARGET_VS_WM = 1.10, 1.15, 1.05


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


class ForwardMasked(nn.Linear):
    """``nn.Linear`` that multiplies its weight by the mask on every call."""

    def __init__(self, mask: Tensor) -> None:
        super().__init__(IN_FEATURES, OUT_FEATURES)
        self.register_buffer("mask", mask)

    def forward(self, input: Tensor) -> Tensor:
        return nn.functional.linear(input, self.weight * self.mask, self.bias)


def make_variants(mask: Tensor) -> dict[str, nn.Module]:
    torch.manual_seed(0)
    plain = nn.Linear(IN_FEATURES, OUT_FEATURES)
    hook = nn.Linear(IN_FEATURES, OUT_FEATURES)
    hook.load_state_dict(plain.state_dict())
    hook.weight.register_hook(lambda g: g * mask)
    wm = ForwardMasked(mask)
    wm.load_state_dict(plain.state_dict(), strict=False)
    return {
        "freeze": MaskedLinear.from_linear(plain, mask, mode="freeze"),
        "prune": MaskedLinear.from_linear(plain, mask, mode="prune"),
        "hook": hook,
        "plain": plain,
        "wm": wm,
    }


def step(layer: nn.Module, x: Tensor, grad: Tensor) -> None:
    """One forward + backward, with fresh (not accumulated) gradients."""
    for p in layer.parameters():
        p.grad = None
    x.grad = None
    layer(x).backward(grad)


def time_round_robin(
    variants: dict[str, nn.Module], x: Tensor, grad: Tensor
) -> dict[str, list[float]]:
    """Seconds per step of each variant, the variants taking turns."""
    for _ in range(WARMUP):
        for layer in variants.values():
            step(layer, x, grad)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    deadline = time.perf_counter() + BUDGET_S
    for _ in range(REPEATS):
        if time.perf_counter() > deadline:
            break
        for name, layer in variants.items():
            start = time.perf_counter()
            step(layer, x, grad)
            samples[name].append(time.perf_counter() - start)
    return samples


def saved_for_backward(layer: nn.Module, x: Tensor) -> list[tuple[str, int, bool]]:
    """``(description, bytes, new)`` of each tensor the forward saves for backward.

    ``new`` is ``True`` for a tensor that is not (a view of) a parameter, a
    buffer or the input: memory that the graph alone keeps alive.
    """
    saved: list[tuple[str, int, bool]] = []
    owned = {x.untyped_storage().data_ptr()}
    owned |= {t.untyped_storage().data_ptr() for t in layer.parameters()}
    owned |= {t.untyped_storage().data_ptr() for t in layer.buffers()}

    def pack(t: Tensor) -> Tensor:
        desc = f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}"
        new = t.untyped_storage().data_ptr() not in owned
        saved.append((desc, t.numel() * t.element_size(), new))
        return t

    def unpack(t: Tensor) -> Tensor:
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        layer(x)
    return saved


def report_ratio(
    name: str,
    ref: str,
    target: float | None,
    median: dict[str, float],
    best: dict[str, float],
) -> None:
    ratio, best_ratio = median[name] / median[ref], best[name] / best[ref]
    goal = "(no target)" if target is None else f"target <= {target:.2f}"
    ok = "" if target is None else verdict(best_ratio <= target)
    print(f"  {name}/{ref:<6} {ratio:6.3f} {best_ratio:8.3f}   {goal:<16} {ok}")


def main() -> None:
    print(
        f"== MaskedLinear forward+backward: batch {BATCH}, "
        f"{IN_FEATURES}->{OUT_FEATURES}, float32 CPU, "
        f"{torch.get_num_threads()} threads"
    )
    generator = torch.Generator().manual_seed(0)
    mask = torch.rand(OUT_FEATURES, IN_FEATURES, generator=generator) < 0.5
    x = torch.randn(BATCH, IN_FEATURES, generator=generator, requires_grad=True)
    grad = torch.randn(BATCH, OUT_FEATURES, generator=generator)
    variants = make_variants(mask)

    samples = time_round_robin(variants, x, grad)
    median = {name: statistics.median(values) for name, values in samples.items()}
    best = {name: min(values) for name, values in samples.items()}
    print(f"  {len(samples['plain'])} steps each   median      min")
    for name in variants:
        print(f"  {name:<7} {median[name] * 1e3:14.3f} ms {best[name] * 1e3:8.3f} ms")
    print("  ratio          median  min/min   (verdict on min/min)")
    report_ratio("freeze", "hook", TARGET_VS_HOOK, median, best)
    report_ratio("freeze", "plain", TARGET_VS_PLAIN, median, best)
    report_ratio("prune", "wm", TARGET_VS_WM, median, best)
    report_ratio("prune", "hook", None, median, best)
    report_ratio("prune", "plain", None, median, best)

    print("\n== Saved for backward          saved  kept alive")
    plain_bytes = sum(size for _, size, _ in saved_for_backward(variants["plain"], x))
    alive = {}
    for name, layer in variants.items():
        saved = saved_for_backward(layer, x)
        total = sum(size for _, size, _ in saved)
        alive[name] = sum(size for _, size, new in saved if new)
        listing = ", ".join(desc for desc, _, _ in saved)
        mib = f"{total / 2**20:6.2f} MiB {alive[name] / 2**20:6.2f} MiB"
        print(f"  {name:<7} {mib}  {listing}")
        if name in ("freeze", "prune"):
            floats = sum(size for desc, size, _ in saved if not desc.startswith("bool"))
            ok = floats <= plain_bytes
            print(f"          float bytes <= nn.Linear's: {verdict(ok)}")
    spared = (alive["wm"] - alive["prune"]) / 2**20
    print(f"  prune keeps {spared:.2f} MiB less alive until backward than wm")
    print("  (hook also keeps its mask alive in the hook's closure, not counted)")


if __name__ == "__main__":
    main()
