"""
How do I see or change a gradient while backward runs?
======================================================

``backward()`` keeps the gradients of intermediate tensors to itself and
writes only the leaves' ``.grad``. Hooks let you step in while it runs: read
the gradient of any tensor, replace it before it flows on, act on a
parameter as soon as its gradient is ready, or watch a whole module. After
this tutorial you can pick the right kind of hook, remove it again, and
predict the order in which hooks fire.
"""

# %%
# See a gradient: ``register_hook``
# ---------------------------------
# ``h`` below is an intermediate result, so after ``backward()`` its
# ``.grad`` stays ``None``. ``h.register_hook(fn)`` calls ``fn(grad)`` with
# the gradient of the loss with respect to ``h`` as soon as backward has
# computed it. Unlike ``h.retain_grad()``
# (:ref:`sphx_glr_tutorials_03_grad_fn_and_the_graph.py`), the hook stores nothing
# itself: what happens to the gradient is up to ``fn``. Here
# :math:`\partial L / \partial h = 2h`:
import torch
from torch import nn

from autograd_notes import expect_error, expect_warning, format_graph

_ = torch.manual_seed(0)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * 3
seen = []
h.register_hook(seen.append)  # seen.append(grad) returns None: grad unchanged
(h**2).sum().backward()
print("gradient reaching h:", seen[0])
print("x.grad:             ", x.grad)
# sphinx_gallery_start_ignore
assert (seen[0].tolist(), x.grad.tolist()) == ([6, 12, 18], [18, 36, 54])
import warnings
from contextlib import redirect_stdout

with warnings.catch_warnings(record=True):
    warnings.simplefilter("always")
    assert h.grad is None
# sphinx_gallery_end_ignore

# %%
# Change a gradient: return a tensor
# ----------------------------------
# If ``fn`` returns a tensor, that tensor **replaces** the gradient. On a leaf
# this changes what lands in ``.grad``; this hook clips it to ``[-1, 1]``.
# ``register_hook`` returns a handle, and ``handle.remove()`` takes the hook
# off again:
w = torch.tensor([0.5, -2.0, 3.0], requires_grad=True)
handle = w.register_hook(lambda grad: grad.clamp(-1.0, 1.0))
(w**2).sum().backward()  # the true gradient is 2 * w = [1, -4, 6]
clipped, w.grad = w.grad, None
handle.remove()
(w**2).sum().backward()
print("with the hook:", clipped)
print("hook removed: ", w.grad)
# sphinx_gallery_start_ignore
assert torch.equal(clipped, torch.tensor([1.0, -1.0, 1.0]))
assert torch.equal(w.grad, torch.tensor([1.0, -4.0, 6.0]))
# sphinx_gallery_end_ignore

# %%
# Common mistake: changing the gradient in place
# ----------------------------------------------
# The tensor a hook receives may be shared with other parts of the graph.
# In ``(a + b) ** 2`` the addition hands *the same* gradient tensor to ``a``
# and to ``b``, so a hook on ``a`` that multiplies it in place also changes
# the gradient of ``b``, whose true gradient is :math:`2(a + b) = 4` (first
# line). The fix, returning a new tensor, spares ``b`` (second line):
for hook in (lambda grad: grad.mul_(10), lambda grad: grad * 10):
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    a.register_hook(hook)
    ((a + b) ** 2).sum().backward()
    print("a.grad:", a.grad, " b.grad:", b.grad)
    # sphinx_gallery_start_ignore
    assert torch.equal(a.grad, torch.full((2,), 40.0))
    _g = torch.ones(1)
    assert b.grad[0].item() == (40.0 if hook(_g) is _g else 4.0)  # in place?
    # sphinx_gallery_end_ignore

# %%
# On an intermediate tensor, the replaced gradient is what flows on towards
# the leaves. Scaling the gradient at ``h`` by 10 scales everything upstream
# of ``h``, while a branch that does not pass through ``h`` is unaffected:
w = torch.tensor([0.5, -2.0, 3.0], requires_grad=True)
h = w * 3
h.register_hook(lambda grad: grad * 10)
(h.sum() + w.sum()).backward()
print("w.grad:", w.grad, "= 10 * 3 (through h) + 1 (directly)")
# sphinx_gallery_start_ignore
assert torch.equal(w.grad, torch.full((3,), 31.0))
from autograd_notes import register_grad_mask

_p, _m = nn.Parameter(torch.ones(2, 2)), torch.tensor([[True, False], [True, True]])
register_grad_mask(_p, _m)
(_p * 2).sum().backward()
torch.optim.SGD([_p], lr=0.1, weight_decay=0.1).step()
assert (_p.grad[~_m].item(), _p[~_m].item() < 1) == (0, True)  # moved anyway
# sphinx_gallery_end_ignore

# %%
# This is how :func:`~autograd_notes.register_grad_mask` zeroes the gradient
# of part of a weight. That alone does not keep those entries still: weight
# decay and momentum move them anyway
# (:ref:`sphx_glr_tutorials_08_training_part_of_a_weight.py`).
#
# Common mistake: registering the hook inside the training loop
# -------------------------------------------------------------
# A hook stays on its tensor until it is removed. Registering it on a
# parameter at every step adds one more hook each time, and they all run, so
# a hook meant to double the gradient doubles it once, then twice, then
# three times:
p = torch.tensor([1.0, 1.0], requires_grad=True)
for step in range(3):
    p.register_hook(lambda grad: grad * 2)  # wrong: a new hook every step
    p.grad = None
    (p * 1.0).sum().backward()
    print(f"step {step}: p.grad = {p.grad}")
# sphinx_gallery_start_ignore
assert torch.equal(p.grad, torch.full((2,), 8.0))
# sphinx_gallery_end_ignore

# %%
# The fix: register the hook once, before the loop (or keep the handle and
# call ``handle.remove()`` when the step is done).
#
# Hooks on the nodes of the graph
# -------------------------------
# The nodes of the backward graph (``grad_fn`` objects, see
# :ref:`sphx_glr_tutorials_03_grad_fn_and_the_graph.py`) take hooks too.
# ``node.register_prehook(fn)`` calls ``fn(grad_outputs)`` *before* the node
# runs, with the gradients with respect to the node's forward outputs.
# ``node.register_hook(fn)`` calls ``fn(grad_inputs, grad_outputs)`` *after*
# it, with the gradients it computed for the node's forward inputs. Both
# receive tuples, and may return a tuple to replace them.
u = torch.tensor([1.0, 2.0], requires_grad=True)
v = torch.tensor([3.0, 4.0], requires_grad=True)
prod = u * v
seen = {}
prod.grad_fn.register_prehook(lambda grad_outputs: seen.update(pre=grad_outputs))
prod.grad_fn.register_hook(lambda grad_inputs, _: seen.update(post=grad_inputs))
prod.sum().backward()
print(prod.grad_fn.name(), "receives", seen["pre"])
print(prod.grad_fn.name(), "produces", seen["post"])
# sphinx_gallery_start_ignore
assert len(seen["pre"]) == 1
assert torch.equal(seen["pre"][0], torch.ones(2))
assert torch.equal(seen["post"][0], v.detach())  # d(u*v)/du = v
assert torch.equal(seen["post"][1], u.detach())  # d(u*v)/dv = u
# Returning a tuple replaces: the prehook doubles, the hook zeroes the v part.
u.grad = v.grad = None
prod = u * v
prod.grad_fn.register_prehook(lambda g_out: (g_out[0] * 2,))
prod.grad_fn.register_hook(lambda g_in, _: (g_in[0], torch.zeros_like(g_in[1])))
prod.sum().backward()
assert torch.equal(u.grad, 2 * v.detach())
assert torch.equal(v.grad, torch.zeros(2))
# sphinx_gallery_end_ignore

# %%
# The names follow the forward pass: ``grad_outputs`` arrive from the loss's
# side, ``grad_inputs`` are what the node *produces* for ``u`` and ``v``
# (:math:`\partial (uv)/\partial u = v` and
# :math:`\partial (uv)/\partial v = u`).
#
# A hook after ``.grad`` is updated
# ---------------------------------
# A leaf's tensor hook sees the gradient *of this backward pass*, before it
# is added to ``.grad``. ``register_post_accumulate_grad_hook(fn)`` runs
# *after* the addition and receives the leaf itself, so it sees the final
# ``.grad``: the moment to act on a parameter whose gradient is complete.
p = torch.tensor([1.0, 2.0], requires_grad=True)
p.grad = torch.tensor([100.0, 100.0])  # left over from an earlier backward
seen = []
p.register_hook(lambda grad: seen.append(grad.tolist()))
p.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
(p * 5).sum().backward()
print("tensor hook saw         ", seen[0])
print("post-accumulate hook saw", seen[1])
# sphinx_gallery_start_ignore
assert seen == [[5.0, 5.0], [105.0, 105.0]]
assert torch.equal(p.grad, torch.tensor([105.0, 105.0]))
# sphinx_gallery_end_ignore

# %%
# Only a leaf has a ``.grad`` to accumulate into, so only a leaf takes this
# hook:
with expect_error(RuntimeError, "non-leaf"):
    (p * 5).register_post_accumulate_grad_hook(lambda t: None)

# %%
# In which order do hooks fire?
# -----------------------------
# All kinds at once, on the graph of ``loss = (x * 3).sum()``. The leaf ``x``
# has its own node, ``AccumulateGrad``, which takes node hooks like any
# other. Each hook records an event; the first tensor hook on ``h`` also
# doubles the gradient, so we see who comes after it. The hooks are
# registered in a deliberately scrambled order.
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * 3
loss = h.sum()
sum_node, mul_node = loss.grad_fn, h.grad_fn
acc_node = mul_node.next_functions[0][0]
print(format_graph(loss, names={"x": x, "h": h, "loss": loss}))

events = []


def record(name, grad):
    events.append(f"{name:28} sees {grad.tolist()}")


def double(grad):
    record("h tensor hook (doubles)", grad)
    return grad * 2


x.register_post_accumulate_grad_hook(lambda t: record("x post-accumulate hook", t.grad))
acc_node.register_hook(lambda g_in, g_out: record("AccumulateGrad hook", g_out[0]))
mul_node.register_hook(lambda g_in, g_out: record("MulBackward0 hook", g_in[0]))
x.register_hook(lambda grad: record("x tensor hook", grad))
mul_node.register_prehook(lambda g_out: record("MulBackward0 prehook", g_out[0]))
h.register_hook(double)
acc_node.register_prehook(lambda g_out: record("AccumulateGrad prehook", g_out[0]))
sum_node.register_hook(lambda g_in, g_out: record("SumBackward0 hook", g_in[0]))
sum_node.register_prehook(lambda g_out: record("SumBackward0 prehook", g_out[0]))
h.register_hook(lambda grad: record("h second tensor hook", grad))
# sphinx_gallery_start_ignore
_got = []
acc_node.register_hook(lambda g_in, g_out: _got.append(g_in))
# sphinx_gallery_end_ignore
loss.backward()
for i, event in enumerate(events, start=1):
    print(f"{i:2}. {event}")
# sphinx_gallery_start_ignore
assert [e.split(" sees ")[0].strip() for e in events] == [
    "SumBackward0 prehook",
    "SumBackward0 hook",
    "h tensor hook (doubles)",
    "h second tensor hook",
    "MulBackward0 prehook",
    "MulBackward0 hook",
    "x tensor hook",
    "AccumulateGrad prehook",
    "x post-accumulate hook",
    "AccumulateGrad hook",
]
assert events[3].endswith("[2.0, 2.0, 2.0]")  # after the doubling hook
assert events[5].endswith("[6.0, 6.0, 6.0]")
assert torch.equal(x.grad, torch.full((3,), 6.0))
assert _got == [()]
# sphinx_gallery_end_ignore

# %%
# The order follows the graph, node by node from the loss to the leaves, not
# the order of registration. At each node:
#
# 1. the tensor hooks of the tensor the node belongs to (``h`` for
#    ``MulBackward0``, the leaf ``x`` for ``AccumulateGrad``), in the order
#    they were registered, each seeing what the previous one returned;
# 2. the node's prehooks, seeing the gradient as the tensor hooks left it;
# 3. the node itself (for ``AccumulateGrad``: the addition into ``.grad``,
#    then the post-accumulate hooks);
# 4. the node's hooks, seeing what it produced (``AccumulateGrad`` produces
#    nothing: its hooks get an empty ``grad_inputs``, so ours recorded
#    ``grad_outputs``).

# %%
# Hooks on a module
# -----------------
# A module's forward makes many nodes, so ``nn.Module`` has backward hooks
# in its own terms. ``register_full_backward_hook(fn)`` calls
# ``fn(module, grad_input, grad_output)`` once the gradients with respect to
# the module's *inputs* are computed: one in ``grad_input`` per positional
# tensor input, one in ``grad_output`` per output. Parameters are not
# inputs; their gradients go to ``.grad`` as usual. Returning a tuple
# replaces ``grad_input``, what flows on to the inputs; flipping its sign
# makes a *gradient reversal* layer (used in domain adaptation). The
# parameters' gradients are computed already and do not change. A
# ``register_full_backward_pre_hook(fn)`` calls ``fn(module, grad_output)``
# *before* the module's backward; a tuple it returns replaces
# ``grad_output``, so the parameters' gradients change too:
layer = nn.Linear(3, 2)
x = torch.randn(4, 3, requires_grad=True)
seen = []
layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
layer.register_full_backward_hook(lambda m, g_in, g_out: (-g_in[0],))
layer(x).sum().backward()
grad_input, grad_output = seen[0]
print("x:", tuple(x.shape), " grad_input[0]:", tuple(grad_input[0].shape))
print("x.grad is -grad_input[0]:", torch.equal(x.grad, -grad_input[0]))
print("bias.grad:", layer.bias.grad, "(4 rows, unchanged)")
scaled = nn.Linear(3, 2)
scaled.register_full_backward_pre_hook(lambda m, g_out: (g_out[0] * 10,))
scaled(x).sum().backward()
print("bias.grad:", scaled.bias.grad, "(pre-hook: 10 times 4 rows)")
# sphinx_gallery_start_ignore
assert [len(grad_input), len(grad_output)] == [1, 1]
assert torch.equal(grad_input[0], torch.ones(4, 2) @ layer.weight.detach())
assert (layer.bias.grad.tolist(), scaled.bias.grad.tolist()) == ([4, 4], [40, 40])
# sphinx_gallery_end_ignore

# %%
# Common mistake: the old ``register_backward_hook``
# ---------------------------------------------------
# ``register_backward_hook``, without "full", is deprecated. It hooks only
# the *last* node of the forward, so its ``grad_input`` is that node's: for
# ``Linear`` then ``ReLU``, the gradient at ReLU's input, shaped like the
# Linear's output and not like ``x``. It warns when the forward runs, not
# when you register it:
model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
model.register_backward_hook(lambda m, gi, go: seen.append((gi, go)))
with expect_warning(FutureWarning, "non-full backward hook"):
    out = model(x)
out.sum().backward()
print("old grad_input[0]:", tuple(seen[-1][0][0].shape))
# sphinx_gallery_start_ignore
with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always")
    nn.Linear(1, 1).register_backward_hook(print)  # registering: no warning
assert [_caught, "deprecated" in model.register_backward_hook.__doc__] == [[], True]
assert torch.equal(seen[-1][0][0], (model[0](x) > 0).float())
with redirect_stdout(None), expect_error(RuntimeError, "both regular"):
    model.register_full_backward_hook(lambda m, gi, go: None)
# sphinx_gallery_end_ignore

# %%
# The fix: ``register_full_backward_hook`` (a module cannot take both).
#
# Common mistake: in-place operations next to a hooked module
# ------------------------------------------------------------
# The full hooks pass the module's inputs and outputs through an identity
# ``BackwardHookFunction`` whose outputs are views, so changing them in
# place is refused, be it ``nn.ReLU(inplace=True)`` or ``out.add_(1)``:
relu = nn.ReLU(inplace=True)
relu.register_full_backward_hook(lambda m, gi, go: None)
with expect_error(RuntimeError, "BackwardHookFunction is a view"):
    relu(x * 1)
# sphinx_gallery_start_ignore
with redirect_stdout(None), expect_error(RuntimeError, "is a view"):
    layer(x).add_(1)
layer(x).clone().add_(1).sum().backward()  # the fix works
# sphinx_gallery_end_ignore

# %%
# The fix: ``nn.ReLU()`` without ``inplace``, or ``.clone()`` the output
# before changing it in place.
#
# Exercises
# ---------
#
# **1. Write.** Record the norm of each parameter's gradient of an
# ``nn.Linear(4, 2)`` during backward, with one hook per parameter, without
# reading ``.grad``.
#
# **Solution**

# %%
layer = nn.Linear(4, 2)
norms = {}
for name, param in layer.named_parameters():
    param.register_hook(lambda grad, name=name: norms.update({name: grad.norm()}))
layer(torch.randn(8, 4)).pow(2).mean().backward()
for name, norm in norms.items():
    print(f"{name}: {norm:.4f}")
# sphinx_gallery_start_ignore
assert norms == {n: p.grad.norm() for n, p in layer.named_parameters()}
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** ``h.retain_grad()`` is called *before* a hook on ``h``
# that multiplies the gradient by 10. What is ``h.grad`` after
# ``h.sum().backward()``?
#
# **Solution**

# %%
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 3
h.retain_grad()
h.register_hook(lambda grad: grad * 10)
h.sum().backward()
print(h.grad)  # [10., 10.]: retain_grad() stores the gradient after all hooks
# sphinx_gallery_start_ignore
assert (h.grad.tolist(), x.grad.tolist()) == ([10, 10], [30, 30])
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_12_non_differentiable_points.py`: gradients where
# no derivative exists. Hooks on the tensors a node *saves* come later, in
# :ref:`sphx_glr_tutorials_15_memory_and_checkpointing.py`.
