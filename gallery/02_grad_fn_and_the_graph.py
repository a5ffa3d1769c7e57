"""
What does ``grad_fn`` record, and where do gradients end up?
=============================================================

Every operation on a tensor that requires grad adds a node to a graph, and the
result's ``grad_fn`` points at that node. ``backward()`` walks this graph from
the output down to the leaves and writes gradients into their ``.grad``, and
nowhere else unless you ask. This script takes the graph apart.
"""

# %%
# Each operation records a node
# -----------------------------
# Take :math:`z = x^2 + 3` at :math:`x = 2`. The *last* operation that
# produced ``z`` is the addition, so ``z.grad_fn`` is an ``AddBackward0``
# node; the square before it left a ``PowBackward0`` node on ``y``.
import inspect
import textwrap
import warnings

import torch

from autograd_notes.graph import draw_graph, format_graph, walk_graph

x = torch.tensor(2.0, requires_grad=True)
y = x**2
z = y + 3
print(y)
print(z)

assert type(y.grad_fn).__name__ == "PowBackward0"
assert type(z.grad_fn).__name__ == "AddBackward0"  # not MulBackward0
assert z.item() == 7.0

# %%
# .. note::
#
#    Study notes sometimes show this ``z`` as ``tensor(7., grad_fn=<MulBackward0>)``.
#    That is wrong: ``grad_fn`` names the operation that created the tensor,
#    and here that is ``+``. A ``MulBackward0`` would come from ``*``.
#
# ``backward()`` applies the chain rule through these nodes:
# :math:`\frac{dz}{dx} = 2x = 4`.
z.backward()
print(x.grad)

assert x.grad.item() == 4.0

# %%
# Where the names come from
# -------------------------
# A node's class is named after the operation whose *backward formula* it
# runs: ``Add`` + ``Backward`` + a digit. PyTorch defines those formulas in
# `derivatives.yaml
# <https://github.com/pytorch/pytorch/blob/main/tools/autograd/derivatives.yaml>`_,
# one entry per operator *overload*, and the trailing digit numbers the
# overloads of the same name in the order they appear there. ``pow`` has three:
# tensor to a number, tensor to a tensor, number to a tensor. For these
# nodes ``grad_fn.name()`` returns the same string as the class name.
v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
m = torch.ones(2, 3, requires_grad=True)
results = {
    "v + 1": v + 1,
    "v * v": v * v,
    "v ** 2": v**2,
    "v ** v": v**v,
    "2 ** v": 2**v,
    "v.sum()": v.sum(),
    "m.sum(dim=0)": m.sum(dim=0),
    "v.mean()": v.mean(),
    "m.mean(dim=0)": m.mean(dim=0),
    "v.exp()": v.exp(),
    "v[0]": v[0],
}
for expr, out in results.items():
    print(f"{expr:14} -> {out.grad_fn.name()}")

expected = [
    "AddBackward0",
    "MulBackward0",
    "PowBackward0",
    "PowBackward1",
    "PowBackward2",
    "SumBackward0",
    "SumBackward1",
    "MeanBackward0",
    "MeanBackward1",
    "ExpBackward0",
    "SelectBackward0",
]
assert [out.grad_fn.name() for out in results.values()] == expected
assert all(type(out.grad_fn).__name__ == out.grad_fn.name() for out in results.values())
# sphinx_gallery_start_ignore
_pow_nodes = [n for n in dir(torch._C._functions) if n.startswith("PowBackward")]
assert sorted(_pow_nodes) == ["PowBackward0", "PowBackward1", "PowBackward2"]
# sphinx_gallery_end_ignore

# %%
# ``v + 1`` is ``AddBackward0`` although ``add`` also has an overload for a
# tensor plus a number (``add.Scalar``): Python turns the ``1`` into a tensor
# and calls ``add.Tensor``, the first entry. Calling the other overload
# directly gives the other node:
print(torch.ops.aten.add.Scalar(v, 1).grad_fn.name())

assert torch.ops.aten.add.Scalar(v, 1).grad_fn.name() == "AddBackward1"
# sphinx_gallery_start_ignore
from torch.utils._python_dispatch import TorchDispatchMode


class _RecordOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


with _RecordOps() as _recorder:
    v + 1
assert _recorder.ops == ["aten.add.Tensor"]
# sphinx_gallery_end_ignore

# %%
# The digit is **not** a counter of how often an operation was used: two
# additions in a row are both ``AddBackward0``.
twice = (v + 1) + 1
print(twice.grad_fn.name(), twice.grad_fn.next_functions[0][0].name())

assert (
    twice.grad_fn.name() == twice.grad_fn.next_functions[0][0].name() == "AddBackward0"
)

# %%
# Why this page never prints a node
# ---------------------------------
# ``print(z.grad_fn)`` shows the node's default Python representation,
# ``<AddBackward0 object at 0x...>``, where the hexadecimal number is the
# node's memory address: it changes on every run and tells you nothing about
# the graph. So this page always prints ``type(node).__name__`` or
# ``node.name()``. (Printing a *tensor* is fine: its ``grad_fn=<AddBackward0>``
# part contains no address.)

assert repr(z.grad_fn).startswith("<AddBackward0 object at 0x")
assert "0x" not in repr(z)

# %%
# Walking the graph by hand
# -------------------------
# A node's ``next_functions`` is a tuple with one ``(node, index)`` pair per
# input of the operation: the node that produced that input and which of its
# outputs it was. An input that does not require grad, like the constant
# ``3``, appears as ``None``. Following the first input from ``z``:
node = z.grad_fn
while node is not None:
    inputs = [
        (type(n).__name__ if n is not None else None, i) for n, i in node.next_functions
    ]
    print(f"{type(node).__name__:15} next_functions={inputs}")
    node = node.next_functions[0][0] if node.next_functions else None

# %%
# The chain ends in an ``AccumulateGrad`` node, which has no inputs. It is the
# node that *accumulates* the incoming gradient into a leaf's ``.grad``, and
# its ``variable`` attribute is that leaf. (It is implemented in C++ and its
# ``name()`` is the C++ one, which is why the loop above printed class names.)
accumulate = z.grad_fn.next_functions[0][0].next_functions[0][0]
print(type(accumulate).__name__, accumulate.name(), accumulate.variable is x)

assert type(accumulate).__name__ == "AccumulateGrad"
assert accumulate.name() == "torch::autograd::AccumulateGrad"
assert accumulate.variable is x
assert accumulate.next_functions == ()
assert z.grad_fn.next_functions[1] == (None, 0)

# %%
# Printing and drawing a whole graph
# ----------------------------------
# Walking by hand gets tedious once a tensor is used twice. Here is the loss
# of a tiny linear model with an L2 penalty: ``w`` is used in the prediction
# *and* in the penalty, so gradients reach it along two paths.
# :func:`autograd_notes.format_graph` prints the graph as an indented
# tree, labelling nodes with the names you pass in (``locals()`` works too).
_ = torch.manual_seed(0)

inputs = torch.randn(6, 3)
target = torch.randn(6)
w = torch.randn(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)

pred = inputs @ w + b
mse = ((pred - target) ** 2).mean()
loss = mse + 0.1 * (w**2).sum()
print(format_graph(loss, names={"w": w, "b": b, "pred": pred, "mse": mse}))

# sphinx_gallery_start_ignore
assert format_graph(loss, names=locals()) == format_graph(
    loss, names={"w": w, "b": b, "pred": pred, "mse": mse, "loss": loss}
)
# sphinx_gallery_end_ignore

# %%
# :func:`autograd_notes.draw_graph` draws the same graph: the two
# arrows into ``w``'s ``AccumulateGrad`` node are the two paths whose
# gradients are added up in ``w.grad``.
try:
    fig = draw_graph(loss, names={"w": w, "b": b, "pred": pred, "mse": mse})
except ImportError as err:  # matplotlib and networkx are optional extras
    print(err)

# sphinx_gallery_start_ignore
_into_w = [
    n
    for n in walk_graph(loss)
    for child, _ in n.next_functions
    if type(child).__name__ == "AccumulateGrad" and child.variable is w
]
assert len(_into_w) == 2  # two paths end in w's AccumulateGrad
assert (
    sum(type(n).__name__ == "AccumulateGrad" for n in walk_graph(loss)) == 2
)  # w and b
# sphinx_gallery_end_ignore

# %%
# ``.grad`` is filled only on leaves
# ----------------------------------
# After ``loss.backward()``, the leaves ``w`` and ``b`` hold gradients. The
# non-leaf ``pred`` took part, and autograd *did* compute
# :math:`\partial\,\mathrm{loss}/\partial\,\mathrm{pred}` on the way, but
# threw it away once it was passed on. Reading ``pred.grad`` returns ``None``
# and raises a ``UserWarning`` (shown here without the location in PyTorch's
# C++ sources that it ends with):
loss.backward()
print("w.grad:", w.grad)
print("b.grad:", b.grad)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pred_grad = pred.grad
print("pred.grad:", pred_grad)
for warning in caught:
    message = str(warning.message).split(" (Triggered internally")[0]
    print(textwrap.fill(f"{warning.category.__name__}: {message}", width=79))

assert w.grad is not None
assert b.grad is not None
assert pred_grad is None
assert [warning.category for warning in caught] == [UserWarning]
# sphinx_gallery_start_ignore
assert "not a leaf Tensor" in message
assert "retain_grad" in message
assert "(Triggered internally at " in str(caught[0].message)  # the part cut off
# sphinx_gallery_end_ignore

# %%
# ``retain_grad()`` keeps a non-leaf's gradient
# ---------------------------------------------
# Call ``retain_grad()`` on a non-leaf *before* ``backward()`` and it keeps its
# ``.grad``. It stays a non-leaf: the call only changes what is stored. The
# penalty does not depend on ``pred``, so with :math:`n = 6` samples,
#
# .. math::
#
#    \frac{\partial\,\mathrm{loss}}{\partial\,\mathrm{pred}_i}
#    = \frac{2}{n}\,(\mathrm{pred}_i - \mathrm{target}_i).
#
pred = inputs @ w + b
pred.retain_grad()
loss = ((pred - target) ** 2).mean() + 0.1 * (w**2).sum()
loss.backward()
print(pred.grad)
print(f"is_leaf={pred.is_leaf}, retains_grad={pred.retains_grad}")

assert torch.allclose(pred.grad, 2 * (pred.detach() - target) / 6)
assert not pred.is_leaf
assert pred.retains_grad

# %%
# .. note::
#
#    ``retain_grad()`` is not ``retain_graph``. Notes that say "use
#    ``retain_graph`` to see the gradient of an inner node" mix them up.
#    ``backward(retain_graph=True)`` keeps the *graph* (the tensors its nodes
#    saved) alive so that you can call ``backward()`` through it again, as in
#    :ref:`sphx_glr_tutorials_05_several_losses.py`. It stores no gradient in
#    any non-leaf:
pred = inputs @ w + b
loss = ((pred - target) ** 2).mean() + 0.1 * (w**2).sum()
loss.backward(retain_graph=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pred_grad = pred.grad
print("pred.grad after backward(retain_graph=True):", pred_grad)

assert pred_grad is None
assert not pred.retains_grad
assert len(caught) == 1
assert caught[0].category is UserWarning
# sphinx_gallery_start_ignore
loss.backward()  # the graph was kept: a second backward through it works
# sphinx_gallery_end_ignore

# %%
# Gradients accumulate
# --------------------
# ``backward()`` *adds* into ``.grad``; it never overwrites it. That is what
# lets two paths (like ``w`` above) or two losses contribute to one gradient,
# but it also means that repeated calls keep growing it. Each loop iteration
# builds a fresh graph for :math:`\sum_i 3a_i` and runs backward:
a = torch.tensor([1.0, 2.0], requires_grad=True)
history = []
for step in range(3):
    (3 * a).sum().backward()
    history.append(a.grad.clone())
    print(f"after backward #{step + 1}: a.grad = {a.grad}")

assert torch.equal(history[0], torch.tensor([3.0, 3.0]))
assert torch.equal(history[1], 2 * history[0])
assert torch.equal(history[2], 3 * history[0])

# %%
# Three ways to reset, each leaving a different state behind:
#
# * ``a.grad = None`` drops the gradient; the next backward *assigns* a new one.
# * ``a.grad.zero_()`` keeps the tensor and fills it with zeros.
# * ``optimizer.zero_grad()`` does this for all parameters it holds. It sets
#   them to ``None`` by default (``set_to_none=True``), which saves memory;
#   ``set_to_none=False`` zeroes in place.
a.grad.zero_()
print("after zero_():", a.grad)
assert torch.equal(a.grad, torch.zeros(2))

a.grad = None
print("after a.grad = None:", a.grad)
assert a.grad is None

optimizer = torch.optim.SGD([a], lr=0.1)
(3 * a).sum().backward()
# sphinx_gallery_start_ignore
assert torch.equal(a.grad, torch.tensor([3.0, 3.0]))  # assigned, not added
# sphinx_gallery_end_ignore
optimizer.zero_grad()
print("after optimizer.zero_grad():", a.grad)
assert a.grad is None

(3 * a).sum().backward()
optimizer.zero_grad(set_to_none=False)
print("after optimizer.zero_grad(set_to_none=False):", a.grad)
assert torch.equal(a.grad, torch.zeros(2))

# sphinx_gallery_start_ignore
assert (
    inspect.signature(torch.optim.Optimizer.zero_grad).parameters["set_to_none"].default
    is True
)
# sphinx_gallery_end_ignore

# %%
# Summary
# -------
# * ``t.grad_fn`` is the node of the operation that produced ``t``; its name
#   is that operation's backward formula plus an overload number.
# * ``next_functions`` links nodes to the nodes of their inputs, down to one
#   ``AccumulateGrad`` per leaf, whose ``variable`` is the leaf.
# * ``backward()`` fills ``.grad`` on leaves only; ``retain_grad()`` (not
#   ``retain_graph``) makes a non-leaf keep its gradient.
# * Gradients add up across backward calls until you reset them.
#
# Next: :ref:`sphx_glr_tutorials_03_detach_and_stopping_gradients.py` cuts
# the graph on purpose. To explore graphs of your own, see
# :doc:`/how-to/inspect-the-graph`; for the bigger picture,
# :doc:`/explanations/mental-model`.
