"""
What does backward keep alive, and how do I trade compute for memory?
======================================================================

Between the forward pass and ``backward()``, the graph holds on to the
tensors its backward formulas need; that memory, not the parameters, is what
usually runs out when a model grows. This tutorial measures what each
operation saves, shows a common way to keep graphs alive by accident, and
trades memory for compute with activation checkpointing and ``save_on_cpu``.
"""

# %%
# Each operation saves what its derivative needs
# ----------------------------------------------
# The derivative of :math:`a \cdot b` with respect to :math:`a` is :math:`b`,
# that of :math:`e^a` is :math:`e^a` itself, that of :math:`a + b` is 1.
# So ``a * b`` must keep both inputs, ``a.exp()`` its output, and ``a + b``
# nothing. Inside ``torch.autograd.graph.saved_tensors_hooks(pack, unpack)``
# every tensor a node saves passes through ``pack``; a ``pack`` that only
# records the tensor lets us list what is saved, and how many bytes:
import torch
from torch import nn
from torch.autograd.graph import save_on_cpu, saved_tensors_hooks
from torch.utils.checkpoint import checkpoint

from autograd_notes import expect_error, walk_graph

_ = torch.manual_seed(0)


def saved_by(compute):
    """Run ``compute()`` and return its result and the tensors it saved."""
    saved = []

    def pack(t):
        saved.append(t)
        return t  # keep the tensor itself: only watch

    with saved_tensors_hooks(pack, lambda t: t):
        result = compute()
    return result, saved


a = torch.randn(1000, requires_grad=True)
b = torch.randn(1000, requires_grad=True)
cases = {
    "a + b": lambda: a + b,
    "a * b": lambda: a * b,
    "a.exp()": lambda: a.exp(),
    "a.sin()": lambda: a.sin(),
    "a.relu()": lambda: a.relu(),
    "a.sum()": lambda: a.sum(),
}
# sphinx_gallery_start_ignore
_expected = [[], ["b", "a"], ["output"], ["a"], ["output"], []]
_expected = dict(zip(cases, _expected, strict=True))
# sphinx_gallery_end_ignore
for name, compute in cases.items():
    out, saved = saved_by(compute)
    what = [("a" if t is a else "b" if t is b else "output") for t in saved]
    nbytes = sum(t.nbytes for t in saved)
    print(f"{name:9} saves {', '.join(what) or 'nothing':13} {nbytes:5} bytes")
    # sphinx_gallery_start_ignore
    assert what == _expected[name], (name, what)
    assert all(t is out for t in saved if not (t is a or t is b))
    # sphinx_gallery_end_ignore

# %%
# ``sin`` needs its input (:math:`\cos a`), ``relu`` only its output (where
# it is positive), ``sum`` only the input's shape. A saved tensor is the
# tensor itself, not a copy: it costs memory because it is kept alive. Nodes
# expose it as ``_saved_*`` attributes, and ``backward()`` frees it once used:
prod = a * b
print("prod.grad_fn._saved_self is a:", prod.grad_fn._saved_self is a)
# sphinx_gallery_start_ignore
assert prod.grad_fn._saved_other is b
# sphinx_gallery_end_ignore
prod.sum().backward()
with expect_error(RuntimeError, "backward through the graph a second time"):
    prod.grad_fn._saved_self

# %%
# Common mistake: a running total that keeps every graph
# -------------------------------------------------------
# A graph and its saved tensors live while a tensor refers to them. An
# evaluation loop that forgets ``torch.no_grad()`` and adds each batch's loss to
# a total builds one graph per batch, all held by ``total`` (the package's
# ``walk_graph`` lists the nodes): memory grows with the batches. The fix: no
# graph where no gradient is needed, a Python number for the log.
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
batches = [(torch.randn(16, 32), torch.randn(16, 1)) for _ in range(10)]

total = 0.0
for inputs, targets in batches:
    total = total + nn.functional.mse_loss(model(inputs), targets)
print(f"total is a tensor with {len(walk_graph(total))} graph nodes behind it")
# sphinx_gallery_start_ignore
_relus = [n for n in walk_graph(total) if n.name() == "ReluBackward0"]
assert len(_relus) == len(batches)  # one graph per batch
assert all(n._saved_result.shape == (16, 64) for n in _relus)  # activations held
# sphinx_gallery_end_ignore

total = 0.0  # the fix
with torch.no_grad():
    for inputs, targets in batches:
        total += nn.functional.mse_loss(model(inputs), targets).item()
print(f"total = {total:.4f}, a {type(total).__name__}")

# sphinx_gallery_start_ignore
assert isinstance(total, float)
# sphinx_gallery_end_ignore

# %%
# Saved bytes per module: ``saved_memory``
# ----------------------------------------
# A stack of four MLP blocks, each ``Linear(256, 1024) -> ReLU ->
# Linear(1024, 256)``, on a batch of 64 (each block also counts how often its
# forward runs: we need that below). A hook sees tensors one by one;
# :func:`~autograd_notes.saved_memory` reads what every node of the graph
# saved, without running anything. It counts each storage once, however many
# nodes saved it, and lists the parameters apart from the *activations*:
# the parameters live in the model anyway. With the trace of
# :func:`~autograd_notes.track_modules` (from
# :ref:`tutorial 03 <sphx_glr_tutorials_03_grad_fn_and_the_graph.py>`), it
# adds the bytes up per module:

from autograd_notes import diff_graphs, saved_memory, track_modules


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 256)]
        self.mlp = nn.Sequential(*layers)
        self.runs = 0

    def forward(self, h):
        self.runs += 1
        return self.mlp(h)


blocks = nn.Sequential(*[Block() for _ in range(4)])
x = torch.randn(64, 256)
with track_modules(blocks) as trace:
    loss = blocks(x).pow(2).mean()
memory = saved_memory(loss, modules=trace)
print(memory.table(depth=1))
print(f"total: {memory.total:,} bytes")
# sphinx_gallery_start_ignore
_block_io = 64 * 256 * 4  # one (64, 256) float32 tensor
_hidden = 64 * 1024 * 4  # one (64, 1024) float32 tensor
_weight = 256 * 1024 * 4
assert memory.activations == 5 * _block_io + 4 * _hidden
assert memory.total == memory.activations + memory.parameters
assert (memory.parameters, memory.buffers) == (7 * _weight, 0)
assert len(memory.storages) == 16
for _i in range(4):
    assert memory.module(str(_i)).activations == _block_io + _hidden
    assert memory.module(f"{_i}.mlp.1").activations == _hidden
    assert memory.module(f"{_i}.mlp.2").activations == 0
assert memory.module(None).activations == _block_io  # pow, outside
_hidden_rows = [r for r in memory.storages if r.nbytes == _hidden]
assert [r.saves for r in _hidden_rows] == [2, 2, 2, 2]  # ReLU and Linear
_names = {r.name for r in memory.storages if r.kind == "parameter"}
assert len(_names) == 7
assert "0.mlp.0.weight" not in _names
assert all(name.endswith(".weight") for name in _names)
# sphinx_gallery_end_ignore

# %%
# Each block keeps 320 KiB of activations: its input (64 KiB) and its hidden
# activation (256 KiB), which ``ReLU`` and the second ``Linear`` both saved
# but which counts once. The ``pow`` of the loss, outside the model, keeps
# the model's output. The 7 MiB of parameters are seven weights: a linear
# layer keeps its weight to send the gradient to its input, except the
# first one, whose input is the data. They cost nothing extra.
#
# Checkpointing: save less, compute twice
# ---------------------------------------
# ``checkpoint(block, h, use_reentrant=False)`` runs ``block`` without
# keeping what its nodes save, and runs its forward again when backward
# reaches it. Checkpoint block 1 only, and compare the two graphs with
# :func:`~autograd_notes.diff_graphs`: it matches nodes by module, call and
# kind, and compares the saved bytes per module.


def one_checkpointed(h):
    h = blocks[0](h)
    h = checkpoint(blocks[1], h, use_reentrant=False)
    return blocks[3](blocks[2](h))


with track_modules(blocks) as trace_ckpt:
    loss_ckpt = one_checkpointed(x).pow(2).mean()
diff = diff_graphs(loss, loss_ckpt, trace, trace_ckpt)
print(diff.table(depth=1))
for gone in saved_memory(loss_ckpt, modules=trace_ckpt).not_counted:
    print(f"not counted: [{gone.node}] {gone.attribute}, {gone.reason}")
# sphinx_gallery_start_ignore
assert (diff.nodes_before, diff.nodes_after) == (38, 38)
assert (diff.added, diff.removed) == (0, 0)
_row = {row.path: row for row in diff.modules}
from autograd_notes.labels import format_bytes

# what checkpoint keeps on a CPU besides the input: torch.get_rng_state()
_rng_state = torch.get_rng_state().nbytes
assert _rng_state == 5056  # the figure the text gives
assert _row["1"].bytes_before == _block_io + _hidden + 2 * _weight
assert _row["1"].bytes_after == _block_io + _rng_state
assert format_bytes(_row["1"].bytes_before) == "2.3 MiB"
assert format_bytes(_row["1"].bytes_after) == "68.9 KiB"
assert format_bytes(_block_io) == "64.0 KiB"
for _path in ("0", "2", "3", None):
    assert _row[_path].change == 0, _path
_memory = saved_memory(loss_ckpt, modules=trace_ckpt)
_nodes = walk_graph(loss_ckpt)
_attributes = sorted(_item.attribute for _item in _memory.not_counted)
assert _attributes == ["_saved_mat1"] * 2 + ["_saved_mat2"] * 2 + ["_saved_result"]
for _item in _memory.not_counted:
    assert _item.reason == "recomputed by checkpoint"
    assert trace_ckpt.path_of(_nodes[_item.node]).startswith("1.mlp.")
assert _memory.module("1").activations == _block_io + _rng_state
assert _memory.module("1").parameters == 0
_states = [r for r in _memory.storages if r.dtype == "uint8"]  # the RNG state
assert [(r.nbytes, r.shape) for r in _states] == [(_rng_state, (_rng_state,))]
assert _states[0].kind == "activation"
assert trace_ckpt.path_of(_nodes[_states[0].node]).startswith("1.mlp.")
# preserve_rng_state=False: checkpoint keeps the input only
with track_modules(blocks) as _trace_no_rng:
    _h = checkpoint(
        blocks[1], blocks[0](x), use_reentrant=False, preserve_rng_state=False
    )
    _loss_no_rng = blocks[3](blocks[2](_h)).pow(2).mean()
_no_rng = saved_memory(_loss_no_rng, modules=_trace_no_rng)
assert _no_rng.module("1").activations == _block_io
assert not [r for r in _no_rng.storages if r.dtype == "uint8"]
_params = list(blocks[1].parameters())
_want = torch.autograd.grad(loss, _params, retain_graph=True)
_got = torch.autograd.grad(_loss_no_rng, _params)
assert all(torch.equal(w, g) for w, g in zip(_want, _got, strict=True))
_before = torch.get_rng_state()
_ = blocks[1](x)
assert torch.equal(torch.get_rng_state(), _before)  # block 1 uses no random numbers
del _h, _loss_no_rng, _no_rng, _trace_no_rng, _want, _got, _before
# sphinx_gallery_end_ignore

# %%
# The graph is the same, 38 nodes: checkpointing changes what its nodes
# keep, not the graph. Block 1 went from 2.3 MiB to 68.9 KiB: what
# checkpoint keeps to recompute from. That is the block's input (64 KiB)
# and the state of the CPU's random number generator
# (``torch.get_rng_state()``, 5,056 bytes; for inputs on a GPU, also that
# GPU's generator state); ``saved_memory`` counts both as activations.
# Checkpoint keeps that state because ``preserve_rng_state=True`` is the
# default: the rerun starts from it, so it gets the same random numbers,
# such as dropout masks. A block that uses no random numbers, like this
# one, can pass ``preserve_rng_state=False``; then checkpoint keeps only
# the input.
#
# The five values the block's nodes saved (its input, its hidden activation
# twice and its two weights) are listed as not counted: backward will get
# them by running the block again. The input is not lost: it is counted
# once, as what checkpoint keeps.
#
# Checkpoint all four blocks, and count the forward runs:


def run(forward):
    for block in blocks:
        block.runs = 0
    blocks.zero_grad()
    loss = forward(x).pow(2).mean()
    saved = saved_memory(loss).activations
    loss.backward()
    grads = [p.grad.clone() for p in blocks.parameters()]
    return saved, [block.runs for block in blocks], grads


def checkpointed(h):
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h


plain_bytes, plain_runs, plain_grads = run(blocks)
ckpt_bytes, ckpt_runs, ckpt_grads = run(checkpointed)
print(f"no checkpoint: {plain_bytes:8} bytes, forward runs {plain_runs}")
print(f"checkpoint:    {ckpt_bytes:8} bytes, forward runs {ckpt_runs}")
pairs = zip(plain_grads, ckpt_grads, strict=True)
same = all(torch.equal(p, c) for p, c in pairs)
print("same gradients:", same)

# sphinx_gallery_start_ignore
assert plain_bytes == 5 * _block_io + 4 * _hidden
assert ckpt_bytes == 5 * _block_io + 4 * _rng_state  # one state per block
assert round(plain_bytes / ckpt_bytes) == 4  # "about four times fewer"
assert plain_runs == [1, 1, 1, 1]
assert ckpt_runs == [2, 2, 2, 2]
assert same
# sphinx_gallery_end_ignore

# %%
# Without checkpointing, each block keeps its input and its
# :math:`64 \times 1024` hidden activation. With
# ``checkpoint(block, h, use_reentrant=False)`` a block keeps only its input
# and the random number generator's state (for inputs on a GPU, also that
# GPU's). When backward reaches it, it runs
# its forward again: about four times fewer saved bytes for one extra
# forward per block. The gradients are identical: on a CPU the recomputation
# repeats the same arithmetic, and checkpoint restores the random state, so
# dropout masks repeat too.
#
# Count runs inside ``forward``, as ``Block`` does: a forward *hook* misses
# the second run, because checkpoint stops recomputing as soon as it has
# every tensor it needs. Our hooks see one tensor per checkpointed block, its
# input (before `pytorch#174327 <https://github.com/pytorch/pytorch/pull/174327>`_,
# in 2026, checkpoint also saved an empty placeholder tensor: two). The random
# number generator's state does not pass through them: checkpoint holds it
# itself.
_, saved = saved_by(lambda: checkpointed(x))
print("tensors packed by our hook:", len(saved), "for", len(blocks), "blocks")

# sphinx_gallery_start_ignore
assert len(saved) == len(blocks)
assert all(t.dtype == torch.float32 for t in saved)  # no RNG state among them
_hooked = []
blocks[0].register_forward_hook(lambda *args: _hooked.append(1))
checkpointed(x).sum().backward()
assert len(_hooked) == 1  # the recomputation did not reach the hook
with torch.utils.checkpoint.set_checkpoint_early_stop(False):
    checkpointed(x).sum().backward()
assert len(_hooked) == 3  # without early stop: forward and recomputation
_drop, _inp = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5)), torch.randn(4, 8)
_state = torch.get_rng_state()
_plain = torch.autograd.grad(_drop(_inp).sum(), _drop[0].weight)[0]
torch.set_rng_state(_state)
_ckpt = checkpoint(_drop, _inp, use_reentrant=False).sum()
assert torch.equal(torch.autograd.grad(_ckpt, _drop[0].weight)[0], _plain)
# preserve_rng_state=False: the rerun draws other dropout masks
torch.set_rng_state(_state)
_ckpt = checkpoint(_drop, _inp, use_reentrant=False, preserve_rng_state=False)
_other = torch.autograd.grad(_ckpt.sum(), _drop[0].weight)[0]
assert not torch.equal(_other, _plain)
# sphinx_gallery_end_ignore

# %%
# Moving saved tensors off the GPU: ``save_on_cpu``
# -------------------------------------------------
# ``torch.autograd.graph.save_on_cpu`` is a ready-made pair of hooks: ``pack``
# copies each saved tensor to CPU memory and remembers its device, ``unpack``
# copies it back for backward. On a GPU this frees GPU memory for two
# transfers per saved tensor; ``pin_memory=True`` uses page-locked memory so
# the transfers can run asynchronously. On a CPU, as here, it changes nothing:
# ``pack`` stores the tensor itself (a copy, with ``pin_memory=True``).
hooks = save_on_cpu(pin_memory=False)
h = torch.randn(64, 1024)
device, stored = hooks.pack_hook(h)
print("device remembered:", device, "| same tensor stored:", stored is h)
print("unpacked is the same tensor:", hooks.unpack_hook((device, stored)) is h)

with save_on_cpu(pin_memory=False):
    blocks.zero_grad()
    blocks(x).pow(2).mean().backward()
grads = [p.grad for p in blocks.parameters()]
same = all(torch.equal(p, q) for p, q in zip(grads, plain_grads, strict=True))
print("same gradients:", same)

# sphinx_gallery_start_ignore
assert isinstance(hooks, saved_tensors_hooks)
assert str(device) == "cpu"
assert stored is h
assert same
_device, _copy = save_on_cpu(pin_memory=True).pack_hook(h)
assert _copy is not h
assert torch.equal(_copy, h)
if torch.cuda.is_available():
    _hooks = save_on_cpu(pin_memory=True)
    _dev, _cpu = _hooks.pack_hook(torch.randn(4, device="cuda"))
    assert _dev.type == "cuda"
    assert _cpu.device.type == "cpu"
    assert _cpu.is_pinned()
    assert _hooks.unpack_hook((_dev, _cpu)).device.type == "cuda"
# sphinx_gallery_end_ignore

# %%
# ``save_on_cpu`` helps when GPU memory is the limit and there is spare host
# memory and transfer bandwidth; checkpointing helps when there is spare
# compute. Both can be combined, and both only change *where* or *whether*
# activations are kept, never the gradients.
#
# Exercises
# ---------
#
# **1. Predict.** What does ``a.tanh()`` save, its input or its output? How
# many bytes, for ``a`` of 1000 ``float32`` values?
#
# **Solution**

# %%
out, saved = saved_by(lambda: a.tanh())  # its derivative is 1 - tanh(a)**2
print("its output:", [t is out for t in saved], sum(t.nbytes for t in saved), "bytes")
# sphinx_gallery_start_ignore
assert [t is out for t in saved] == [True]
assert sum(t.nbytes for t in saved) == 4000
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** Checkpoint only the first two of the four blocks. How many
# times does each block's forward run, and how many activation bytes are
# saved?
#
# **Solution**

# %%
plain_blocks = blocks[2:]  # blocks 2 and 3 run as they are


def half_checkpointed(h):
    for block in blocks[:2]:
        h = checkpoint(block, h, use_reentrant=False)
    return plain_blocks(h)


half_bytes, half_runs, _ = run(half_checkpointed)
print(half_bytes, "bytes, forward runs", half_runs)
# 5 * 65536 + 2 * 262144 + 2 * 5056: five (64, 256) tensors, two hidden
# activations (blocks 2 and 3), two random states (blocks 0 and 1)
# sphinx_gallery_start_ignore
assert half_runs == [2, 2, 1, 1]
assert half_bytes == 5 * _block_io + 2 * _hidden + 2 * _rng_state
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_16_torch_compile_and_autograd.py` looks at what
# changes when ``torch.compile`` builds the backward graph ahead of time.
