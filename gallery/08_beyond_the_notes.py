"""
What else can autograd do, beyond ``backward()``?
=================================================

The source notes stop at leaves, ``grad_fn``, ``detach`` and ``backward``.
This script goes four steps further, each one checked by running it:
gradients of gradients, hooks (and the exact order in which they fire),
the tensors a graph saves for backward, and anomaly mode for finding where a
``nan`` gradient comes from.
"""

# %%
# Gradients of gradients: ``create_graph=True``
# ---------------------------------------------
# ``torch.autograd.grad`` returns the gradient as a tensor. Normally that
# tensor is a plain result with no history, so you cannot differentiate it
# again:
import warnings

import torch
from torch import nn

from autograd_notes.graph import format_graph

_ = torch.manual_seed(0)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(dy_dx,) = torch.autograd.grad((x**3).sum(), x)
print(f"dy/dx = {dy_dx}, requires_grad={dy_dx.requires_grad}")
try:
    torch.autograd.grad(dy_dx.sum(), x)
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a RuntimeError")

assert torch.equal(dy_dx, 3 * x.detach() ** 2)
assert dy_dx.grad_fn is None
assert "does not require grad and does not have a grad_fn" in message

# %%
# With ``create_graph=True``, autograd *records the backward computation
# itself*, so the gradient gets a ``grad_fn`` and can be differentiated like
# any other tensor. For :math:`y = x^3` the first derivative is
# :math:`3x^2` and the second :math:`6x`:
(dy_dx,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
(d2y_dx2,) = torch.autograd.grad(dy_dx.sum(), x)
print(f"dy/dx     = {dy_dx}")
print(f"d2y/dx2   = {d2y_dx2}")

assert torch.equal(dy_dx, 3 * x.detach() ** 2)
assert dy_dx.grad_fn is not None
assert torch.equal(d2y_dx2, 6 * x.detach())
# sphinx_gallery_start_ignore
hessian = torch.autograd.functional.hessian(lambda t: (t**3).sum(), x.detach())
assert torch.allclose(d2y_dx2, hessian @ torch.ones(3))  # a Hessian-vector product
# sphinx_gallery_end_ignore

# %%
# Summing ``dy_dx`` before the second ``grad`` is fine here because each
# :math:`y_i` depends on :math:`x_i` only; in general the second call gives
# a Hessian-vector product, just as the first gives a vector-Jacobian product
# (tutorial :ref:`sphx_glr_tutorials_04_backward_of_non_scalars.py`).
#
# ``backward(create_graph=True)`` works too, but it stores a gradient *with*
# a graph in ``x.grad``, which links the parameter to its own gradient.
# PyTorch warns about the reference cycle and recommends ``autograd.grad``:
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (x**3).sum().backward(create_graph=True)
for w in caught:
    print(f"{w.category.__name__}: {str(w.message).split('. ')[0]}.")
print("x.grad =", x.grad)

assert len(caught) == 1
assert caught[0].category is UserWarning
assert "create a reference cycle" in str(caught[0].message)
assert "recommend using autograd.grad" in str(caught[0].message)
assert x.grad.grad_fn is not None
x.grad = None

# %%
# Hooks on tensors
# ----------------
# ``t.register_hook(fn)`` calls ``fn(grad)`` whenever the gradient with
# respect to ``t`` has been computed. If ``fn`` returns a tensor, that tensor
# **replaces** the gradient. On a leaf this changes what lands in ``.grad``;
# here the hook clips it to ``[-1, 1]``:
w = torch.tensor([0.5, -2.0, 3.0], requires_grad=True)
handle = w.register_hook(lambda grad: grad.clamp(-1.0, 1.0))
(w**2).sum().backward()  # the true gradient is 2 * w
print("clipped w.grad:", w.grad)

assert torch.equal(w.grad, (2 * w.detach()).clamp(-1.0, 1.0))

# %%
# ``register_hook`` returns a handle; ``handle.remove()`` takes the hook off.
handle.remove()
w.grad = None
(w**2).sum().backward()
print("without the hook:", w.grad)

assert torch.equal(w.grad, 2 * w.detach())

# %%
# On a non-leaf, the replaced gradient is what flows on towards the leaves.
# Scaling the gradient at ``h`` scales everything upstream of it, while a
# branch that does not pass through ``h`` is unaffected:
w.grad = None
h = w * 3
h.register_hook(lambda grad: grad * 10)
(h.sum() + w.sum()).backward()
print("w.grad:", w.grad, "= 10 * 3 (through h) + 1 (direct)")

assert torch.equal(w.grad, torch.full((3,), 31.0))

# %%
# Hooks on nodes
# --------------
# The nodes of the graph (``grad_fn`` objects, see
# :ref:`sphx_glr_tutorials_02_grad_fn_and_the_graph.py`) take hooks too.
# ``node.register_prehook(fn)`` calls ``fn(grad_outputs)`` *before* the node
# runs, with the gradients with respect to the node's forward outputs;
# ``node.register_hook(fn)`` calls ``fn(grad_inputs, grad_outputs)`` *after*
# it, adding the gradients it computed for the forward inputs. (The names
# follow the forward pass: ``grad_inputs`` are what the node *produces* in
# backward.) Both receive tuples, and may return a tuple to replace them.
u = torch.tensor([1.0, 2.0], requires_grad=True)
v = torch.tensor([3.0, 4.0], requires_grad=True)
prod = u * v
seen = {}
prod.grad_fn.register_prehook(lambda grad_outputs: seen.update(pre=grad_outputs))
prod.grad_fn.register_hook(lambda grad_inputs, _: seen.update(post=grad_inputs))
prod.sum().backward()
print(f"{prod.grad_fn.name()} received  {seen['pre']}")
print(f"{prod.grad_fn.name()} produced  {seen['post']}")

assert len(seen["pre"]) == 1
assert torch.equal(seen["pre"][0], torch.ones(2))
assert torch.equal(seen["post"][0], v.detach())  # d(u*v)/du = v
assert torch.equal(seen["post"][1], u.detach())  # d(u*v)/dv = u
# sphinx_gallery_start_ignore
# Returning a tuple replaces: the prehook doubles, the hook zeroes the v part.
_u = u.detach().clone().requires_grad_()
_v = v.detach().clone().requires_grad_()
_prod = _u * _v
_prod.grad_fn.register_prehook(lambda g_out: (g_out[0] * 2,))
_prod.grad_fn.register_hook(lambda g_in, _: (g_in[0], torch.zeros_like(g_in[1])))
_prod.sum().backward()
assert torch.equal(_u.grad, 2 * v.detach())
assert torch.equal(_v.grad, torch.zeros(2))
# sphinx_gallery_end_ignore

# %%
# A hook after accumulation
# -------------------------
# A leaf's tensor hook sees the gradient *of this backward pass*, before it
# is added to ``.grad``. ``register_post_accumulate_grad_hook(fn)`` runs
# *after* the addition and receives the leaf itself, so it sees the final
# ``.grad``; it is meant for things like updating a parameter as soon as its
# gradient is ready. It exists on leaves only:
p = torch.tensor([1.0, 2.0], requires_grad=True)
p.grad = torch.tensor([100.0, 100.0])  # left over from an earlier backward
p.register_hook(lambda grad: print("tensor hook sees    ", grad))
p.register_post_accumulate_grad_hook(lambda t: print("post-accumulate sees", t.grad))
(p * 5).sum().backward()

try:
    (p * 5).register_post_accumulate_grad_hook(lambda leaf: None)
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a RuntimeError")

assert torch.equal(p.grad, torch.tensor([105.0, 105.0]))
assert "cannot be registered on non-leaf tensors" in message
# sphinx_gallery_start_ignore
# The same run, recording what each hook sees instead of printing it.
_p, _seen = torch.tensor([1.0, 2.0], requires_grad=True), []
_p.grad = torch.tensor([100.0, 100.0])
_p.register_hook(lambda grad: _seen.append(grad.tolist()))
_p.register_post_accumulate_grad_hook(lambda t: _seen.append(t.grad.tolist()))
(_p * 5).sum().backward()
assert _seen == [[5.0, 5.0], [105.0, 105.0]]
# sphinx_gallery_end_ignore

# %%
# In which order do the hooks fire?
# ---------------------------------
# Now all kinds at once, on a three-node graph
# ``x -> h = x * 3 -> loss = h.sum()``. The leaf ``x`` has its own node in
# the graph, ``AccumulateGrad``, which takes node hooks like any other.
# Every hook appends an event; the tensor hook on ``h`` also doubles the
# gradient, so we can see which hooks come after it. The hooks are
# registered in a deliberately scrambled order.
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * 3
loss = h.sum()
sum_node, mul_node = loss.grad_fn, h.grad_fn
acc_node = mul_node.next_functions[0][0]
print(format_graph(loss, names={"x": x, "h": h, "loss": loss}))

events = []


def record(name, grads=None):
    """Append (name, first gradient value) and return nothing (no change)."""
    events.append((name, None if grads is None else grads[0].tolist()))


x.register_post_accumulate_grad_hook(
    lambda leaf: record("x post-accumulate-grad hook", (leaf.grad,))
)
acc_node.register_hook(lambda g_in, g_out: record("AccumulateGrad node hook", g_out))
mul_node.register_hook(lambda g_in, g_out: record("MulBackward0 node hook", g_in))
x.register_hook(lambda grad: record("x tensor hook", (grad,)))
mul_node.register_prehook(lambda g_out: record("MulBackward0 node prehook", g_out))
h.register_hook(lambda grad: (record("h tensor hook", (grad,)), grad * 2)[1])  # doubles
acc_node.register_prehook(lambda g_out: record("AccumulateGrad node prehook", g_out))
sum_node.register_hook(lambda g_in, g_out: record("SumBackward0 node hook", g_in))
sum_node.register_prehook(lambda g_out: record("SumBackward0 node prehook", g_out))
h.register_hook(lambda grad: record("h second tensor hook", (grad,)))

loss.backward()
for i, (name, value) in enumerate(events, start=1):
    print(f"{i:2}. {name:30} gradient {value}")

assert [name for name, _ in events] == [
    "SumBackward0 node prehook",
    "SumBackward0 node hook",
    "h tensor hook",
    "h second tensor hook",
    "MulBackward0 node prehook",
    "MulBackward0 node hook",
    "x tensor hook",
    "AccumulateGrad node prehook",
    "x post-accumulate-grad hook",
    "AccumulateGrad node hook",
]
# sphinx_gallery_start_ignore
values = dict(events)
assert values["h tensor hook"] == [1.0, 1.0, 1.0]
assert values["h second tensor hook"] == [2.0, 2.0, 2.0]  # sees the doubled gradient
assert values["MulBackward0 node prehook"] == [2.0, 2.0, 2.0]
assert values["MulBackward0 node hook"] == [6.0, 6.0, 6.0]
assert values["x post-accumulate-grad hook"] == [6.0, 6.0, 6.0]
# sphinx_gallery_end_ignore
assert torch.equal(x.grad, torch.full((3,), 6.0))

# %%
# The order follows the graph, node by node from the root to the leaves, and
# not the order of registration. At each node:
#
# 1. the tensor hooks of the tensor the node produced (``h`` for
#    ``MulBackward0``, the leaf ``x`` for ``AccumulateGrad``), in the order
#    they were registered, each seeing what the previous one returned;
# 2. the node's prehooks, seeing the gradient as modified by the tensor
#    hooks;
# 3. the node itself runs (for ``AccumulateGrad``: the addition into
#    ``.grad``, followed by the post-accumulate-grad hooks);
# 4. the node's hooks, seeing what it produced.
#
# The picture shows the same run as a timeline:
try:
    import matplotlib.pyplot as plt
except ImportError:  # matplotlib is an optional extra
    plt = None

if plt is not None:
    lanes = ["SumBackward0\n(loss)", "MulBackward0\n(h)", "AccumulateGrad\n(x)"]
    lane_of = {"Sum": 0, "h ": 1, "Mul": 1, "x ": 2, "Acc": 2}
    kinds = {
        "tensor hook": ("#e69f00", "o"),
        "node prehook": ("#56b4e9", ">"),
        "node hook": ("#0072b2", "s"),
        "post-accumulate-grad hook": ("#009e73", "D"),
    }
    fig, ax = plt.subplots(figsize=(9.0, 3.6), layout="constrained")

    def lane_for(name):
        return next(lane for prefix, lane in lane_of.items() if name.startswith(prefix))

    fired = [name for name, _ in events]
    for i, name in enumerate(fired, start=1):
        color, marker = next(style for k, style in kinds.items() if name.endswith(k))
        ax.scatter(i, lane_for(name), s=140, color=color, marker=marker, zorder=3)
        ax.annotate(
            str(i),
            (i, lane_for(name)),
            xytext=(0, 11),
            textcoords="offset points",
            ha="center",
            fontsize=9,
        )
        if name.endswith("node prehook"):  # the node runs right after its prehooks
            ax.scatter(i + 0.5, lane_for(name), s=60, color="#777777", marker="*")
    steps = range(1, len(fired) + 1)
    ax.plot(steps, [lane_for(n) for n in fired], color="#999999", lw=1, zorder=1)
    for kind, (color, marker) in kinds.items():
        ax.scatter([], [], color=color, marker=marker, label=kind)
    ax.scatter([], [], color="#777777", marker="*", label="node runs")
    ax.set_yticks(range(len(lanes)), lanes)
    ax.set_ylim(len(lanes) - 0.4, -0.6)
    ax.set_xticks(range(1, len(events) + 1))
    ax.set_xlabel("order of firing during one loss.backward()")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncols=5, frameon=False)
    ax.grid(axis="x", color="#eeeeee")

# %%
# What the graph saves for backward
# ---------------------------------
# Many backward formulas need values from the forward pass: the derivative of
# :math:`u \cdot v` with respect to :math:`u` is :math:`v`, that of
# :math:`e^x` is :math:`e^x` itself. Each node keeps what it needs as
# ``_saved_*`` attributes. ``MulBackward0`` saved both factors, the very
# tensors ``u`` and ``v``; ``ExpBackward0`` saved its own output:
prod = u * v
expo = u.exp()
print("MulBackward0._saved_self  is u:", prod.grad_fn._saved_self is u)
print("MulBackward0._saved_other is v:", prod.grad_fn._saved_other is v)
same = torch.equal(expo.grad_fn._saved_result, expo)
print("ExpBackward0._saved_result equals the output:", same)

assert prod.grad_fn._saved_self is u
assert prod.grad_fn._saved_other is v
assert torch.equal(expo.grad_fn._saved_result, expo)

# %%
# ``backward()`` frees these saved tensors as soon as it has used them (unless
# ``retain_graph=True``), which is why a second backward through the same
# graph fails (tutorial :ref:`sphx_glr_tutorials_05_several_losses.py`).
# Reading them afterwards raises the same error:
prod.sum().backward()
try:
    prod.grad_fn._saved_self
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message.split(' (')[0]}")
else:
    raise AssertionError("expected a RuntimeError")

assert "backward through the graph a second time" in message

# %%
# Intercepting saved tensors: ``saved_tensors_hooks``
# ---------------------------------------------------
# Saved tensors occupy memory from the forward pass until backward frees
# them. Inside
# ``torch.autograd.graph.saved_tensors_hooks(pack, unpack)``, every tensor a
# node saves is passed to ``pack`` and whatever ``pack`` returns is stored
# instead; ``unpack`` turns it back into a tensor when backward needs it.
# A ``pack`` that only takes notes lists what a small MLP saves:
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
batch = torch.randn(32, 8)
saved = []


def note_down(t: torch.Tensor) -> torch.Tensor:
    saved.append(t)
    return t  # keep the tensor itself: nothing changes but the notes


with torch.autograd.graph.saved_tensors_hooks(note_down, lambda t: t):
    out = model(batch).pow(2).mean()
made_by = {
    None: "the input batch",
    "TanhBackward0": "Tanh",
    "TBackward0": "Linear 2: weight.t()",
    "AddmmBackward0": "Linear 2 (the output)",
}
for t in saved:
    origin = made_by[t.grad_fn.name() if t.grad_fn is not None else None]
    print(f"saved: {origin:22} shape {tuple(t.shape)!s:9} {t.nbytes:5} bytes")
print(f"total: {sum(t.nbytes for t in saved)} bytes in {len(saved)} pack calls")

origins = [t.grad_fn.name() if t.grad_fn is not None else None for t in saved]
assert origins == [
    None,
    "TanhBackward0",
    "TanhBackward0",
    "TBackward0",
    "AddmmBackward0",
]
assert saved[0] is batch
assert saved[1].data_ptr() == saved[2].data_ptr()

# %%
# Each layer saved what its backward formula needs: the first ``Linear``
# keeps its input (the batch) for its weight gradient; ``Tanh`` keeps its
# output, because :math:`\tanh' = 1 - \tanh^2`; the second ``Linear``
# keeps its input for its weight gradient and its (transposed) weight for the
# gradient of its input; ``pow`` keeps its input. The output of ``Tanh``
# appears twice: ``pack`` is called once per *save*, not once per distinct
# tensor, and both entries share the same memory. The first ``Linear``
# saves no weight: its input, the batch, does not require grad, so the
# gradient with respect to that input is never computed.
#
# A ``pack`` that returns something else changes what is kept. Storing saved
# tensors in half precision halves their memory, at the price of a slightly
# different gradient:
xs = torch.linspace(-2.0, 2.0, 1000, requires_grad=True)
packed_dtypes, bytes_before, bytes_after = [], [], []


def to_half(t: torch.Tensor) -> torch.Tensor:
    half = t.to(torch.float16)
    packed_dtypes.append(t.dtype)
    bytes_before.append(t.nbytes)
    bytes_after.append(half.nbytes)
    return half


def to_float(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.float32)


with torch.autograd.graph.saved_tensors_hooks(to_half, to_float):
    approx_loss = (torch.tanh(xs) * xs.exp()).square().sum()
(approx,) = torch.autograd.grad(approx_loss, xs)
(exact,) = torch.autograd.grad((torch.tanh(xs) * xs.exp()).square().sum(), xs)
rel_err = ((approx - exact).abs().max() / exact.abs().max()).item()
before, after = sum(bytes_before), sum(bytes_after)
print(f"{len(packed_dtypes)} tensors packed: {before} bytes -> {after} bytes")
print(f"largest gradient error, relative to the largest gradient: {rel_err:.1e}")

assert 2 * after == before

assert len(packed_dtypes) > 0
assert packed_dtypes == [torch.float32] * len(packed_dtypes)
assert not torch.equal(approx, exact)
assert rel_err < 1e-2
# sphinx_gallery_start_ignore
import torch.utils.checkpoint

assert callable(torch.autograd.graph.save_on_cpu)
_kept = []
with torch.autograd.graph.saved_tensors_hooks(
    lambda t: _kept.append(t) or t, lambda t: t
):
    torch.utils.checkpoint.checkpoint(
        lambda t: t.sin().exp().tanh(), xs, use_reentrant=False
    )
assert len(_kept) == 1  # only the block's input, not its three intermediates
assert _kept[0] is xs
# sphinx_gallery_end_ignore

# %%
# PyTorch ships ready-made variants, such as
# ``torch.autograd.graph.save_on_cpu`` (move saved tensors to CPU memory
# during the forward pass and back to the GPU for backward) and activation
# checkpointing in ``torch.utils.checkpoint``, which keeps only the inputs of
# a checkpointed block and recomputes the rest during backward. See
# https://docs.pytorch.org/docs/stable/autograd.html#saved-tensors-hooks.
#
# Finding where a ``nan`` gradient comes from: anomaly mode
# ---------------------------------------------------------
# A classic trap: to avoid :math:`\sqrt{x}` at :math:`x \le 0` one writes
# ``torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))``. The forward
# pass is clean, but the gradient at ``0`` is ``nan``. (A hook records the
# gradient that reaches the output of ``sqrt``.)
x = torch.tensor([0.0, 1.0, 4.0], requires_grad=True)
root = torch.sqrt(x)
reaching_sqrt = []
root.register_hook(lambda grad: reaching_sqrt.append(grad))
y = torch.where(x > 0, root, torch.zeros_like(x))
print("forward:                 ", y)
y.sum().backward()
print("gradient reaching sqrt:  ", reaching_sqrt[0])
print("gradient of x:           ", x.grad)

assert not y.isnan().any()
assert x.grad.isnan().tolist() == [True, False, False]
assert torch.equal(reaching_sqrt[0], torch.tensor([0.0, 1.0, 1.0]))

# %%
# ``torch.where`` sends a zero gradient to the branch it did not pick, but
# ``sqrt`` was still computed at ``0``, and its backward multiplies that zero
# by :math:`1 / (2\sqrt{0}) = \infty`, which gives ``nan``. In a big model
# nothing tells you *which* operation did it. Anomaly mode does: inside
# ``torch.autograd.detect_anomaly()`` (or after
# ``torch.autograd.set_detect_anomaly(True)``) backward checks every node's
# output and raises at the first ``nan``. It also warns with the traceback of
# the forward call that created the node; that traceback contains file paths,
# so here we print only its first line.
x.grad = None
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autograd.detect_anomaly():
        y = torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))
        try:
            y.sum().backward()
        except RuntimeError as err:
            message = str(err)
            print(f"RuntimeError: {message}")
        else:
            raise AssertionError("expected a RuntimeError")
enabled_warning, error_warning = caught
print(f"{enabled_warning.category.__name__}: {enabled_warning.message}")
first_sentence = str(error_warning.message).split(". ")[0]
print(f"{error_warning.category.__name__}: {first_sentence}. [traceback omitted]")

assert "Function 'SqrtBackward0' returned nan values in its 0th output" in message
assert [w.category for w in caught] == [UserWarning, UserWarning]
assert "Anomaly Detection has been enabled" in str(caught[0].message)
assert "increase the runtime" in str(caught[0].message)
assert "Error detected in SqrtBackward0" in str(caught[1].message)
assert "Traceback of forward call" in str(caught[1].message)
# sphinx_gallery_start_ignore
# The traceback lives in the node's metadata (not printed: it holds file paths),
# and set_detect_anomaly(True) behaves like the context manager.
with warnings.catch_warnings(record=True) as caught_again:
    warnings.simplefilter("always")
    with torch.autograd.detect_anomaly():
        assert "traceback_" in torch.sqrt(x).grad_fn.metadata
    torch.autograd.set_detect_anomaly(True)
    try:
        torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x)).sum().backward()
    except RuntimeError as err:
        message = str(err)
    else:
        raise AssertionError("expected a RuntimeError")
    finally:
        torch.autograd.set_detect_anomaly(False)
assert "SqrtBackward0" in message
assert "traceback_" not in torch.sqrt(x).grad_fn.metadata
assert any("Error detected in SqrtBackward0" in str(w.message) for w in caught_again)
# sphinx_gallery_end_ignore

# %%
# The culprit is ``SqrtBackward0``. Anomaly mode slows everything down (it
# stores the forward traceback of every node, in ``grad_fn.metadata``), so
# switch it on only while hunting a bug. The fix is to keep the unsafe input
# away from ``sqrt`` *before* it runs, so that both branches have finite
# gradients:
x.grad = None
safe_x = torch.where(x > 0, x, torch.ones_like(x))
y = torch.where(x > 0, torch.sqrt(safe_x), torch.zeros_like(x))
y.sum().backward()
print("forward: ", y)
print("gradient:", x.grad)

assert not x.grad.isnan().any()
assert torch.allclose(x.grad, torch.tensor([0.0, 0.5, 0.25]))

# %%
# Summary
# -------
# * ``torch.autograd.grad(..., create_graph=True)`` returns gradients that
#   can be differentiated again: second derivatives, Hessian-vector products,
#   gradient penalties.
# * Tensor hooks (``register_hook``) see and may replace the gradient of a
#   tensor; node hooks (``grad_fn.register_prehook`` / ``register_hook``) see
#   what a node receives and produces; ``register_post_accumulate_grad_hook``
#   sees a leaf's final ``.grad``. They fire node by node from the root, in
#   the order measured above.
# * Nodes keep ``_saved_*`` tensors for backward and free them during it;
#   ``saved_tensors_hooks`` lets you inspect, compress or move them.
# * ``torch.autograd.detect_anomaly()`` names the node whose backward first
#   produced a ``nan``.
#
# See also the :doc:`/explanations/glossary` and the how-to
# :doc:`/how-to/inspect-the-graph`.
