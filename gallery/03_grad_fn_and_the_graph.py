"""
What does ``grad_fn`` record, and where do gradients end up?
=============================================================

Every operation on a tensor that requires grad adds a node to a graph, and
the result's ``grad_fn`` points at that node. ``backward()`` walks the graph
from the output down to the leaves. After this tutorial you can read a
``grad_fn``, follow the graph by hand or print it, and say which tensors hold
a ``.grad`` afterwards, including how to keep the gradient of an
intermediate result.
"""

# %%
# Each operation records a node
# -----------------------------
# Take :math:`z = x^2 + 3` at :math:`x = 2`. ``grad_fn`` names the *last*
# operation that produced a tensor, not the whole expression: ``z`` comes
# from the addition, so ``z.grad_fn`` is an ``AddBackward0`` node, while the
# square left a ``PowBackward0`` node on ``y``.
import torch

from autograd_notes import draw_graph, expect_warning, format_graph

x = torch.tensor(2.0, requires_grad=True)
y = x**2
z = y + 3
print(y, z, sep="\n")
z.backward()  # the chain rule through both nodes: dz/dx = 2x = 4
print(x.grad)

# sphinx_gallery_start_ignore
assert type(y.grad_fn).__name__ == "PowBackward0"
assert type(z.grad_fn).__name__ == "AddBackward0"
assert (z.item(), x.grad.item()) == (7.0, 4.0)
# sphinx_gallery_end_ignore

# %%
# Where the names come from
# -------------------------
# A node is named after the operation whose *backward formula* it runs, plus
# a digit. The formulas live in `derivatives.yaml
# <https://github.com/pytorch/pytorch/blob/main/tools/autograd/derivatives.yaml>`_,
# one per *overload*, and the digit numbers the overloads of one name:
# ``pow`` has three (tensor to a number, tensor to a tensor, number to a
# tensor), ``sum`` two (all elements, or along a dimension). The digit is
# **not** a counter: two additions in a row give two ``AddBackward0`` nodes.
v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
m = torch.ones(2, 3, requires_grad=True)
results = {"v ** 2": v**2, "v ** v": v**v, "2 ** v": 2**v, "v.sum()": v.sum()}
results["m.sum(dim=0)"] = m.sum(dim=0)
results["(v + 1) + 1"] = (v + 1) + 1
for expr, out in results.items():
    print(f"{expr:13} -> {out.grad_fn.name()}")

# sphinx_gallery_start_ignore
_expected = ["PowBackward0", "PowBackward1", "PowBackward2"]
_expected += ["SumBackward0", "SumBackward1", "AddBackward0"]
assert [out.grad_fn.name() for out in results.values()] == _expected
_pow = sorted(n for n in dir(torch._C._functions) if n.startswith("PowBackward"))
assert _pow == ["PowBackward0", "PowBackward1", "PowBackward2"]
_twice = results["(v + 1) + 1"].grad_fn
assert _twice.next_functions[0][0].name() == "AddBackward0"
# sphinx_gallery_end_ignore

# %%
# Print a node's name, never the node
# -----------------------------------
# ``print(z.grad_fn)`` shows ``<AddBackward0 object at 0x...>``, a memory
# address that changes on every run. Print ``type(node).__name__`` or
# ``node.name()`` instead. (Printing a *tensor* is fine: its
# ``grad_fn=<AddBackward0>`` part has no address.)
#
# Walking the graph by hand
# -------------------------
# A node's ``next_functions`` holds one ``(node, index)`` pair per input of
# the operation: the node that produced that input, and which of its outputs
# it was. An input that does not require grad, like the constant ``3``,
# appears as ``None``. Following the first input from ``z``:
node = z.grad_fn
while node is not None:
    inputs = [(type(n).__name__ if n else None, i) for n, i in node.next_functions]
    print(f"{type(node).__name__:15} next_functions={inputs}")
    node = node.next_functions[0][0] if node.next_functions else None

# sphinx_gallery_start_ignore
assert repr(z.grad_fn).startswith("<AddBackward0 object at 0x")
assert "0x" not in repr(z)
# sphinx_gallery_end_ignore

# %%
# The chain ends in an ``AccumulateGrad`` node, which has no inputs. It adds
# the incoming gradient into a leaf's ``.grad``, and its ``variable``
# attribute is that leaf. Its ``name()`` differs from its class name:
acc = z.grad_fn.next_functions[0][0].next_functions[0][0]
print(type(acc).__name__, "|", acc.name(), "|", acc.variable is x)

# sphinx_gallery_start_ignore
assert (type(acc).__name__, acc.next_functions) == ("AccumulateGrad", ())
assert acc.name() == "torch::autograd::AccumulateGrad"
assert acc.variable is x
assert z.grad_fn.next_functions[1] == (None, 0)
# sphinx_gallery_end_ignore

# %%
# All node classes, ``AddBackward0`` as much as ``AccumulateGrad``, are C++
# classes exposed in ``torch._C._functions``. The nodes of ordinary
# operations are *generated* from ``derivatives.yaml`` with a ``name()`` that
# returns the short class name. A few are written by hand, such as
# ``AccumulateGrad`` or ``CopySlices``, which an in-place write into a slice
# creates (:ref:`sphx_glr_tutorials_05_in_place_and_views.py`); their
# ``name()`` is the full C++ name. ``type(node).__name__`` is always short.
t = x * torch.ones(3)
t[0] = 0.0
print(type(t.grad_fn).__name__, "|", t.grad_fn.name())

# sphinx_gallery_start_ignore
assert t.grad_fn.name() == "torch::autograd::CopySlices"
for _name in ("AddBackward0", "AccumulateGrad", "CopySlices"):
    assert getattr(torch._C._functions, _name).__module__ == "builtins"
assert all(type(o.grad_fn).__name__ == o.grad_fn.name() for o in results.values())
assert type(z.grad_fn) is torch._C._functions.AddBackward0
assert type(acc) is torch._C._functions.AccumulateGrad
# sphinx_gallery_end_ignore

# %%
# Printing and drawing a whole graph
# ----------------------------------
# Walking by hand gets tedious once a tensor is used twice. Here is the loss
# of a tiny linear model with an L2 penalty: ``w`` is used in the prediction
# *and* in the penalty, so gradients reach it along two paths.
# :func:`~autograd_notes.format_graph` prints the graph as an indented tree,
# labelling the tensors you name:
_ = torch.manual_seed(0)

inputs = torch.randn(6, 3)
target = torch.randn(6)
w = torch.randn(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)

pred = inputs @ w + b
loss = ((pred - target) ** 2).mean() + 0.1 * (w**2).sum()
names = {"w": w, "b": b, "pred": pred}
print(format_graph(loss, names=names))

# %%
# :func:`~autograd_notes.draw_graph` draws the same graph. The two arrows
# into ``w``'s ``AccumulateGrad`` node are the two paths whose gradients are
# added up in ``w.grad``.
try:
    fig = draw_graph(loss, names=names)
except ImportError as err:  # matplotlib and networkx are optional extras
    print(err)

# sphinx_gallery_start_ignore
import warnings

from autograd_notes import walk_graph

_edges = [child for n in walk_graph(loss) for child, _ in n.next_functions]
assert sum(getattr(c, "variable", None) is w for c in _edges) == 2
# sphinx_gallery_end_ignore

# %%
# ``.grad`` is filled on leaves only
# ----------------------------------
# After ``loss.backward()`` the leaves ``w`` and ``b`` hold gradients. The
# non-leaf ``pred`` took part, and autograd did compute the gradient with
# respect to it on the way, but it passed it on and kept nothing. Reading
# ``pred.grad`` returns ``None`` with a ``UserWarning``:
loss.backward()
print("w.grad:", w.grad)
print("b.grad:", b.grad)
with expect_warning(UserWarning, "not a leaf Tensor"):
    print("pred.grad:", pred.grad)

# %%
# Common mistake: ``retain_graph`` instead of ``retain_grad``
# -----------------------------------------------------------
# The two names look alike. ``backward(retain_graph=True)`` keeps the
# *graph* (the tensors its nodes saved) so that you can run backward through
# it a second time (:ref:`sphx_glr_tutorials_07_several_losses.py`). It
# stores no gradient in any non-leaf: ``pred.grad`` is still ``None``, with
# the same warning.
pred = inputs @ w + b
loss = ((pred - target) ** 2).mean() + 0.1 * (w**2).sum()
loss.backward(retain_graph=True)
print("pred.retains_grad:", pred.retains_grad)

# sphinx_gallery_start_ignore
with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always")
    assert pred.grad is None
assert "not a leaf Tensor" in str(_caught[0].message)
loss.backward()  # the graph was kept: a second backward through it works
# sphinx_gallery_end_ignore

# %%
# The fix is ``pred.retain_grad()``, called *before* ``backward()``. The
# tensor stays a non-leaf; only what is stored changes. The penalty does not
# depend on ``pred``, so with :math:`n = 6` samples
# :math:`\partial\,\mathrm{loss}/\partial\,\mathrm{pred}_i
# = \frac{2}{n}(\mathrm{pred}_i - \mathrm{target}_i)`:
pred = inputs @ w + b
pred.retain_grad()
loss = ((pred - target) ** 2).mean() + 0.1 * (w**2).sum()
loss.backward()
print(pred.grad)
print(f"is_leaf={pred.is_leaf}, retains_grad={pred.retains_grad}")

# sphinx_gallery_start_ignore
assert torch.allclose(pred.grad, 2 * (pred.detach() - target) / 6)
assert (pred.is_leaf, pred.retains_grad) == (False, True)
# sphinx_gallery_end_ignore

# %%
# Gradients accumulate
# --------------------
# ``backward()`` *adds* into ``.grad``; it never overwrites it. That is how
# two paths (like ``w``'s above) or two losses contribute to one gradient,
# and also why repeated calls keep growing it. Each iteration below builds a
# fresh graph for :math:`\sum_i 3a_i` and runs backward:
a = torch.tensor([1.0, 2.0], requires_grad=True)
for step in range(3):
    (3 * a).sum().backward()
    print(f"after backward #{step + 1}: a.grad = {a.grad}")

# sphinx_gallery_start_ignore
assert torch.equal(a.grad, torch.tensor([9.0, 9.0]))
# sphinx_gallery_end_ignore

# %%
# So clear gradients between training steps. ``optimizer.zero_grad()`` sets
# the ``.grad`` of every parameter it holds to ``None`` (the default,
# ``set_to_none=True``); the next backward then *assigns* a fresh gradient.
# ``a.grad.zero_()`` or ``zero_grad(set_to_none=False)`` fill with zeros
# instead.
optimizer = torch.optim.SGD([a], lr=0.1)
optimizer.zero_grad()
print("after zero_grad():", a.grad)
(3 * a).sum().backward()
print("after one backward:", a.grad)

# sphinx_gallery_start_ignore
assert torch.equal(a.grad, torch.tensor([3.0, 3.0]))
optimizer.zero_grad(set_to_none=False)
assert torch.equal(a.grad, torch.zeros(2))
(3 * a).sum().backward()
assert torch.equal(a.grad.zero_(), torch.zeros(2))
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** For ``s = (v * 3).sum() / 2``, list the class names you
# meet when you follow ``s.grad_fn`` through the first input of each node.
#
# **Solution**

# %%
s = (v * 3).sum() / 2
node, chain = s.grad_fn, []
while node is not None:
    chain.append(type(node).__name__)
    node = node.next_functions[0][0] if node.next_functions else None
print(" -> ".join(chain))  # the last operation comes first

# sphinx_gallery_start_ignore
assert chain == ["DivBackward0", "SumBackward0", "MulBackward0", "AccumulateGrad"]
# sphinx_gallery_end_ignore

# %%
# **2. Write.** Get :math:`\partial\,\mathrm{loss}/\partial\,\mathrm{pred}`
# without ``retain_grad()`` and without touching any ``.grad``. Hint:
# ``torch.autograd.grad(outputs, inputs)`` returns gradients with respect to
# any tensors of the graph, non-leaves included.
#
# **Solution**

# %%
pred = inputs @ w + b
loss = ((pred - target) ** 2).mean() + 0.1 * (w**2).sum()
(pred_grad,) = torch.autograd.grad(loss, pred)
print(pred_grad)

# sphinx_gallery_start_ignore
assert torch.allclose(pred_grad, 2 * (pred.detach() - target) / 6)
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_04_detach_and_stopping_gradients.py` cuts the
# graph on purpose. To explore graphs of your own, see
# :doc:`/how-to/inspect-the-graph`.
