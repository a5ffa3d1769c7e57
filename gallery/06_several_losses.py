"""
How do you backpropagate several losses through one shared graph?
=================================================================

A model with several heads computes several losses from one shared trunk.
Calling ``backward()`` once per loss fails on the second call unless you
keep the graph alive, and even then it repeats work. This script shows why,
what the gradients add up to, and the simpler way: sum the losses first.
"""

# %%
# Two losses from one computation
# -------------------------------
# The source notes use a tiny example: ``a`` goes through two operations,
# and two "heads" reduce the result in different ways.
#
# .. math::
#
#    c_i = 2 a_i^2, \qquad d = \tfrac{1}{4}\textstyle\sum_i c_i, \qquad
#    e = \textstyle\sum_i c_i .
#
# The part ``a -> b -> c`` is shared; ``d`` and ``e`` are the two heads.
import timeit

import torch
import torch.nn.functional as F
from torch import nn

from autograd_notes.graph import draw_graph, format_graph

_ = torch.manual_seed(0)

a = torch.rand(1, 4, requires_grad=True)
b = a**2
c = 2 * b
d = c.mean()
e = c.sum()
print(format_graph(d + e, names={"a": a, "b": b, "c": c, "d": d, "e": e}))

# sphinx_gallery_start_ignore
assert b.grad_fn._saved_self is a
assert b.grad_fn._saved_exponent == 2
assert d.grad_fn.next_functions[0][0] is e.grad_fn.next_functions[0][0]
_text = format_graph(d + e, names={"a": a, "b": b, "c": c, "d": d, "e": e})
assert "-> [2] MulBackward0 (see above)" in _text
# sphinx_gallery_end_ignore

# %%
# Both heads lead to the same ``MulBackward0`` node (the second time it is
# printed as a back-reference), and through it to the shared trunk:
try:
    fig = draw_graph(d + e, names={"a": a, "b": b, "c": c, "d": d, "e": e})
except ImportError as err:  # matplotlib and networkx are optional extras
    print(err)

# %%
# The second ``backward()`` fails
# -------------------------------
# Backpropagating ``d`` works. Backpropagating ``e`` afterwards fails, even
# though ``e`` itself was never backpropagated:
d.backward()
try:
    e.backward()
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message.split(')')[0]})")
else:
    raise AssertionError("expected a RuntimeError")

assert "backward through the graph a second time" in message

# %%
# The reason is in the shared part. To compute its local derivative, each
# node *saves* some tensors during the forward pass: ``PowBackward0``
# (for ``b = a**2``) needs ``a`` because :math:`\partial b / \partial a = 2a`.
# ``backward()`` frees those saved tensors as soon as it has used them, to
# release memory. ``d.backward()`` passed through the shared nodes, so their
# saved tensors are gone when ``e.backward()`` arrives. The ``_saved_*``
# attributes of a node show this directly:
try:
    b.grad_fn._saved_self
except RuntimeError as err:
    message = str(err)
    print(f"b.grad_fn._saved_self -> RuntimeError: {message.split(' (')[0]}")
else:
    raise AssertionError("expected a RuntimeError")

assert "backward through the graph a second time" in message

# %%
# ``retain_graph=True`` keeps the graph, and gradients add up
# -----------------------------------------------------------
# Passing ``retain_graph=True`` to the first call keeps the saved tensors, so
# the second call can use them. The last call may free the graph.
a.grad = None
b = a**2
c = 2 * b
d = c.mean()
e = c.sum()
d.backward(retain_graph=True)
grad_after_d = a.grad.clone()
e.backward()
print("after d.backward():", grad_after_d)
print("after e.backward():", a.grad)

# %%
# Each ``backward`` *adds* its gradient to ``a.grad``. By hand:
# :math:`\partial d / \partial a_i = \frac{1}{4} \cdot 4 a_i = a_i` and
# :math:`\partial e / \partial a_i = 4 a_i`, so the total is :math:`5 a_i`:
print("5 * a:             ", 5 * a.detach())

assert torch.allclose(grad_after_d, a.detach())
assert torch.allclose(a.grad, 5 * a.detach())

# %%
# Summing the losses gives the same gradient with one ``backward()``
# -------------------------------------------------------------------
# The derivative of a sum is the sum of the derivatives, so backpropagating
# ``d + e`` once gives the same ``a.grad``, and needs no ``retain_graph``:
summed_grad = a.grad.clone()
a.grad = None
c = 2 * a**2
(c.mean() + c.sum()).backward()
print("(d + e).backward():", a.grad)

assert torch.allclose(a.grad, summed_grad)

# %%
# The same holds for weighted losses: ``(w1 * l1 + w2 * l2).backward()``.
#
# How much faster is one ``backward()``?
# --------------------------------------
# With separate calls, backward walks the shared trunk once *per loss*.
# With the sum it walks the trunk once: the backward engine waits until the
# gradients from all heads have arrived at the trunk's output, adds them, and
# only then runs the trunk's nodes. Here is a modest model: a three-layer
# trunk and four heads, each with its own regression target.
trunk = nn.Sequential(
    nn.Linear(32, 128),
    nn.ReLU(),
    nn.Linear(128, 128),
    nn.ReLU(),
    nn.Linear(128, 128),
    nn.ReLU(),
)
heads = nn.ModuleList(nn.Linear(128, 1) for _ in range(4))
inputs = torch.randn(128, 32)
targets = torch.randn(4, 128, 1)
trunk_passes = []


def head_losses() -> list[torch.Tensor]:
    features = trunk(inputs)
    features.register_hook(lambda grad: trunk_passes.append(1))  # counts visits
    pairs = zip(heads, targets, strict=True)
    return [F.mse_loss(head(features), target) for head, target in pairs]


def one_backward_per_loss() -> None:
    losses = head_losses()
    for loss in losses[:-1]:
        loss.backward(retain_graph=True)
    losses[-1].backward()


def one_backward_of_the_sum() -> None:
    sum(head_losses()).backward()


# %%
# First, both give the same gradients, and the hook counts how often the
# gradient flows back into the trunk:
params = list(trunk.parameters()) + list(heads.parameters())
grads = {}
for approach in [one_backward_per_loss, one_backward_of_the_sum]:
    for p in params:
        p.grad = None
    trunk_passes.clear()
    approach()
    grads[approach.__name__] = [p.grad.clone() for p in params]
    name = approach.__name__
    print(f"{name:24}: backward entered the trunk {len(trunk_passes)} time(s)")

    assert len(trunk_passes) == (len(heads) if approach is one_backward_per_loss else 1)

per_loss_grads, summed_grads = grads.values()
for g_each, g_sum in zip(per_loss_grads, summed_grads, strict=True):
    assert torch.allclose(g_each, g_sum, atol=1e-6)

# %%
# Now the timing (forward plus backward, best of several repeats):
timings = {}
for approach in [one_backward_per_loss, one_backward_of_the_sum]:
    name = approach.__name__
    timings[name] = min(timeit.repeat(approach, number=10, repeat=5)) / 10
    print(f"{name:24}: {timings[name] * 1e3:6.2f} ms per step")
ratio = timings["one_backward_per_loss"] / timings["one_backward_of_the_sum"]
print(f"one backward of the sum is {ratio:.1f}x as fast")

assert ratio > 0  # the ratio depends on the machine; the pass count above does not

# %%
# The exact numbers depend on the machine, but the structure of the result
# does not: the saving grows with the number of heads and the size of the
# trunk, because the trunk's backward is repeated once per extra head.
#
# The source notes suggest this training step:
#
# .. code-block:: python
#
#     l1.backward(retain_graph=True)
#     l2.backward()  # the graph is freed now
#     optimizer.step()
#
# It is correct (the gradients accumulate in ``.grad`` before the step), but
# ``(l1 + l2).backward()`` computes the same ``.grad`` more simply and faster.
#
# Getting each loss's gradient separately
# ---------------------------------------
# Sometimes you *want* the gradients of each loss apart, e.g. to compare their
# sizes. ``torch.autograd.grad`` returns them without touching ``.grad``.
# Pass ``retain_graph=True`` to every call but the last (the losses share
# the trunk), and ask only for parameters the loss depends on: the trunk here.
# The per-loss gradients add up to the gradient of the sum.
trunk_params = list(trunk.parameters())
for p in params:
    p.grad = None
losses = head_losses()
per_loss = [
    torch.autograd.grad(loss, trunk_params, retain_graph=i < len(losses) - 1)
    for i, loss in enumerate(losses)
]
for i, grads_i in enumerate(per_loss):
    print(f"loss {i}: gradient norm on the first trunk weight {grads_i[0].norm():.4f}")

total_grads = grads["one_backward_of_the_sum"][: len(trunk_params)]
for j, total in enumerate(total_grads):
    assert torch.allclose(sum(grads_i[j] for grads_i in per_loss), total, atol=1e-6)
assert all(p.grad is None for p in params)

# %%
# A loss does not depend on the other heads' parameters. Asking for them
# raises an error unless you pass ``allow_unused=True``, which returns
# ``None`` for them:
loss_0 = head_losses()[0]
try:
    torch.autograd.grad(loss_0, list(heads[1].parameters()), retain_graph=True)
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message.split('. ')[0]}.")
else:
    raise AssertionError("expected a RuntimeError")
unused = torch.autograd.grad(loss_0, list(heads[1].parameters()), allow_unused=True)
print("with allow_unused=True:", unused)

assert "appears to not have been used in the graph" in message
assert unused == (None, None)

# %%
# ``backward(inputs=...)`` is the in-place counterpart: it accumulates into
# ``.grad`` of the listed tensors **only**, and leaves every other leaf
# alone. Here the first loss fills the trunk's ``.grad`` and nothing else:
for p in params:
    p.grad = None
losses = head_losses()
losses[0].backward(inputs=trunk_params)
print("trunk .grad filled:  ", all(p.grad is not None for p in trunk_params))
print("head 0 .grad filled: ", any(p.grad is not None for p in heads[0].parameters()))

for p, g in zip(trunk_params, per_loss[0], strict=True):
    assert torch.allclose(p.grad, g)
assert all(p.grad is None for p in heads.parameters())

# %%
# For a complete recipe, including how to rebalance the losses, see the
# how-to :doc:`/how-to/per-loss-gradients`.
#
# When a second ``backward()`` happens to work
# --------------------------------------------
# Some nodes save no tensors at all. Addition, for example: the derivative of
# :math:`a + 1` is :math:`1` whatever ``a`` is, so ``AddBackward0`` keeps
# only the number ``alpha`` (of ``a + alpha * other``), not a tensor. A graph
# made only of such nodes has nothing to free, and a second ``backward()``
# runs without ``retain_graph``; the gradients accumulate as usual, so
# ``a.grad`` doubles:
a.grad = None
s = (a + 1).sum()
s.backward()
once = a.grad.clone()
s.backward()  # no error
print("after one backward: ", once)
print("after two backwards:", a.grad)

assert torch.equal(once, torch.ones(1, 4))
assert torch.equal(a.grad, 2 * once)
# sphinx_gallery_start_ignore
_add = (a + 1).grad_fn
assert [n for n in dir(_add) if n.startswith("_saved_")] == ["_saved_alpha"]
assert _add._saved_alpha == 1
# sphinx_gallery_end_ignore

# %%
# Do not rely on it. Whether a node saves a tensor is an implementation
# detail of each operation, and it is not always what the maths suggests.
# Multiplying by a plain Python number looks just as harmless, but
# ``MulBackward0`` stores the factor ``2`` as a (0-dimensional) tensor, so
# the second call fails:
s = (a * 2).sum()
s.backward()
try:
    s.backward()
except RuntimeError as err:
    message = str(err)
    print(f"(a * 2).sum() twice -> RuntimeError: {message.split(' (')[0]}")
else:
    raise AssertionError("expected a RuntimeError")

assert "backward through the graph a second time" in message
# sphinx_gallery_start_ignore
_factor = (a * 2).grad_fn._saved_other
assert isinstance(_factor, torch.Tensor)
assert _factor.dim() == 0
assert _factor.item() == 2
# sphinx_gallery_end_ignore

# %%
# The ``_saved_*`` attributes of each node list what it kept. Tensors among
# them are freed by ``backward()``; plain numbers and shapes are not. This
# table shows, for a few one-operation graphs, what is saved and whether a
# second ``backward()`` without ``retain_graph`` survives:
ops = {
    "a + 1": lambda t: t + 1,
    "a - a": lambda t: t - t,
    "a + a": lambda t: t + t,
    "a.sum()": lambda t: t.sum(),
    "a.mean()": lambda t: t.mean(),
    "a.view(-1)": lambda t: t.view(-1),
    "a * 2": lambda t: t * 2,
    "a / 2": lambda t: t / 2,
    "a * a": lambda t: t * t,
    "a ** 2": lambda t: t**2,
    "a.exp()": lambda t: t.exp(),
    "a.relu()": lambda t: t.relu(),
}
survives = {}
print(f"{'expression':10} {'node':14} {'saved tensors':27} second backward")
for expr, op in ops.items():
    out = op(a)
    node = out.grad_fn
    saved = [n for n in dir(node) if n.startswith("_saved_")]
    saved_tensors = [n for n in saved if isinstance(getattr(node, n), torch.Tensor)]
    loss = out.sum()
    loss.backward()
    try:
        loss.backward()
        survives[expr] = True
    except RuntimeError:
        survives[expr] = False
    listed = ", ".join(saved_tensors) or "-"
    outcome = "works" if survives[expr] else "fails"
    print(f"{expr:10} {node.name():14} {listed:27} {outcome}")
    assert survives[expr] == (not saved_tensors)

# sphinx_gallery_start_ignore
working = ["a + 1", "a - a", "a + a", "a.sum()", "a.mean()", "a.view(-1)"]
assert [e for e, ok in survives.items() if ok] == working
# sphinx_gallery_end_ignore

# %%
# The rule behind the table: a second backward fails exactly when it needs a
# saved tensor that the first one freed. Which tensors an operation saves
# depends on how its backward formula is implemented, not on the maths:
# ``a + a`` survives and ``a * 2`` does not, though both compute
# :math:`2a`. Nothing in PyTorch's API promises what an operation saves, and
# it may change between versions. So whenever you mean to backpropagate
# through a graph twice, pass ``retain_graph=True``, or better, sum the
# losses.
#
# Summary
# -------
# * ``backward()`` frees the tensors that the graph saved for backward, so a
#   second ``backward()`` through a shared part fails unless the first one
#   passed ``retain_graph=True``.
# * Gradients of successive ``backward()`` calls add up in ``.grad``: for
#   losses :math:`d` and :math:`e` you get :math:`\nabla d + \nabla e`.
# * ``(l1 + l2).backward()`` gives the same ``.grad`` in one pass over the
#   shared trunk: simpler and faster than one ``backward()`` per loss.
# * For per-loss gradients use ``torch.autograd.grad(loss_i, params)`` (it
#   returns them) or ``loss_i.backward(inputs=...)`` (only the listed tensors
#   accumulate).
# * A second backward without ``retain_graph`` works only when no node on
#   the way saved a tensor; that is an implementation detail, not a contract.
#
# Next: :ref:`sphx_glr_tutorials_06_training_part_of_a_weight.py`. See also
# the glossary entry :ref:`retain_graph vs retain_grad
# <glossary-retain-graph-vs-retain-grad>`.
