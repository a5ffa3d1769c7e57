"""
How does ``backward()`` follow ``grad_fn`` to compute gradients?
================================================================

Every operation on a tensor that requires grad adds a node to a graph, and
the result's ``grad_fn`` points at that node. ``backward()`` walks this graph
from the output down to the leaves, applying the chain rule one node at a
time. After this tutorial you can follow the graph with ``next_functions``,
compute a gradient by hand along it, and say which tensors hold a ``.grad``
afterwards, including how to keep the gradient of an intermediate result.
"""

# %%
# Each operation records a node
# -----------------------------
# Take :math:`y = (wx + b)^2` with :math:`w = 3`, :math:`b = 1` and the input
# :math:`x = 2`. Only ``w`` and ``b`` require grad. Written as three
# operations, each result gets a ``grad_fn``: the node of the *last*
# operation that produced it, not of the whole expression.
import torch

from autograd_notes import draw_graph, expect_warning, format_graph

w = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
x = torch.tensor(2.0)

u = w * x
v = u + b
y = v**2
for name, t in {"u": u, "v": v, "y": y}.items():
    print(f"{name} = {t.item():4}   grad_fn: {type(t.grad_fn).__name__}")
# sphinx_gallery_start_ignore
import warnings

from autograd_notes import walk_graph

assert (u.item(), v.item(), y.item()) == (6.0, 7.0, 49.0)
_kinds = [type(t.grad_fn).__name__ for t in (u, v, y)]
assert _kinds == ["MulBackward0", "AddBackward0", "PowBackward0"]
assert repr(y.grad_fn).startswith("<PowBackward0 object at 0x")
# sphinx_gallery_end_ignore

# %%
# A node is named after the operation whose backward it computes. Print
# ``type(node).__name__``, not the node itself: its ``repr`` contains a memory
# address that changes on every run.
#
# Walking the graph with ``next_functions``
# -----------------------------------------
# A node's ``next_functions`` holds one ``(node, index)`` pair per input of
# its operation: the node that produced that input (the index matters only
# for operations with several outputs). An input that does not require grad,
# like ``x``, gets ``None``. A leaf that requires grad gets an
# ``AccumulateGrad`` node, whose ``variable`` attribute is the leaf. Following
# every edge from ``y``:


def show(node, depth=0):
    label = "None" if node is None else type(node).__name__
    if hasattr(node, "variable"):
        label += " of w" if node.variable is w else " of b"
    print("    " * depth + label)
    for child, _ in getattr(node, "next_functions", ()):
        show(child, depth + 1)


show(y.grad_fn)
# sphinx_gallery_start_ignore
_add = y.grad_fn.next_functions[0][0]
_mul = _add.next_functions[0][0]
assert (_add, _mul) == (v.grad_fn, u.grad_fn)  # nodes compare by identity
assert _mul.next_functions[0][0].variable is w
assert _mul.next_functions[1] == (None, 0)
assert _add.next_functions[1][0].variable is b
assert _mul.next_functions[0][0].next_functions == ()
# sphinx_gallery_end_ignore

# %%
# The chain rule, one node at a time
# ----------------------------------
# ``y.backward()`` walks the same graph from the top. It starts with the
# gradient :math:`\partial y / \partial y = 1` and hands it to ``y.grad_fn``.
# Each node multiplies the gradient it receives by the *local derivative* of
# its own operation with respect to each input, and sends the product down
# that input's edge:
#
# * ``PowBackward0``: :math:`\partial (v^2) / \partial v = 2v = 14`;
# * ``AddBackward0``: :math:`\partial (u + b) / \partial u = 1`, and the
#   same for ``b``;
# * ``MulBackward0``: :math:`\partial (wx) / \partial w = x = 2`.
#
# So :math:`\partial y / \partial w` is the product of the local derivatives
# along the path from ``y`` to ``w``. By hand, node by node:
local = {"PowBackward0": 2 * v.item(), "AddBackward0": 1.0, "MulBackward0": x.item()}
grad = 1.0
for node_name, derivative in local.items():
    grad = grad * derivative
    print(f"{node_name:12}  local derivative {derivative:4}  ->  gradient {grad}")
# sphinx_gallery_start_ignore
_path, _node = [], y.grad_fn
while _node.next_functions:
    _path.append(type(_node).__name__)
    _node = _node.next_functions[0][0]
assert (_path, _node.variable is w) == (list(local), True)
with torch.no_grad():
    assert y.grad_fn(torch.tensor(1.0)).item() == 14.0
    assert [g.item() for g in _add(torch.tensor(14.0))] == [14.0, 14.0]
    _to_w, _to_x = _mul(torch.tensor(14.0))
    assert (_to_w.item(), _to_x) == (28.0, None)
# sphinx_gallery_end_ignore

# %%
# ``backward()`` does exactly these multiplications, and the ``AccumulateGrad``
# nodes write the results into the leaves' ``.grad``. The path to ``b`` stops
# after ``AddBackward0``, so :math:`\partial y / \partial b = 14 \cdot 1 = 14`.
y.backward()
print(f"by hand: {grad}   autograd: w.grad = {w.grad}")
print(f"b.grad = {b.grad}")
# sphinx_gallery_start_ignore
assert w.grad.item() == grad == 28.0
assert b.grad.item() == 14.0
with warnings.catch_warnings(record=True):
    warnings.simplefilter("always")
    assert (u.grad, v.grad) == (None, None)
# sphinx_gallery_end_ignore

# %%
# With vectors, the local derivative is a matrix
# ----------------------------------------------
# In a model, a step maps several numbers to several numbers. For
# :math:`\mathbf{y} = A\mathbf{x}`, from 3 numbers to 2, the local derivative
# is the *Jacobian* :math:`J`, with :math:`J_{ij} = \partial y_i / \partial
# x_j`; here :math:`J = A`. The gradient arriving from above is a vector
# :math:`\mathbf{v}`, with :math:`v_i = \partial L / \partial y_i`, and the
# node sends down :math:`\mathbf{v}^\top J`, the *vector-Jacobian product*:
# for each input, the sum of the products along the paths through every
# :math:`y_i`. With :math:`L = y_1^2 + y_2^2` and :math:`\mathbf{y} = (3,
# 5)`, :math:`\mathbf{v} = 2\mathbf{y} = (6, 10)`:
A = torch.tensor([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0]])
xv = torch.tensor([1.0, 1.0, 2.0], requires_grad=True)
yv = A @ xv
(yv**2).sum().backward()
vec = torch.tensor([6.0, 10.0])  # the gradient dL/dy = 2y
print("v @ J:  ", vec @ A)
print("xv.grad:", xv.grad)
# sphinx_gallery_start_ignore
assert yv.tolist() == [3.0, 5.0]
_J = torch.autograd.functional.jacobian(lambda _x: A @ _x, xv.detach())
assert torch.equal(_J, A)
assert torch.equal(xv.grad, vec @ _J)
assert xv.grad.tolist() == [6.0, 2.0, 30.0]
# sphinx_gallery_end_ignore

# %%
# ``.grad`` is filled on leaves only
# ----------------------------------
# On the way down, autograd also computed the gradients with respect to
# ``v`` and ``u`` (14 each, the gradients printed above), but it passed them
# on and kept nothing: ``u`` and ``v`` are not leaves, so their ``.grad`` stays
# ``None``.
#
# Common mistake: ``retain_graph`` instead of ``retain_grad``
# -----------------------------------------------------------
# The two names look alike. ``backward(retain_graph=True)`` keeps the graph
# (the tensors its nodes saved) so that you can run backward through it a
# second time (later, in
# :ref:`tutorial 07 <sphx_glr_tutorials_07_several_losses.py>`). It stores no
# gradient in a non-leaf: ``v.grad`` is still ``None``, and reading it warns.
# :func:`~autograd_notes.expect_warning` is the twin of ``expect_error``: it
# checks that the block warns with a matching message and prints the
# warning.
v = w * x + b
y = v**2
y.backward(retain_graph=True)
with expect_warning(UserWarning, "not a leaf Tensor"):
    print("v.grad:", v.grad)
# sphinx_gallery_start_ignore
(_again,) = torch.autograd.grad(y, w)  # the graph was kept: a second pass works
assert (_again.item(), w.grad.item()) == (28.0, 2 * 28.0)
# sphinx_gallery_end_ignore

# %%
# The fix is ``retain_grad()``, called on the tensor *before* ``backward()``.
# The tensor stays a non-leaf; only what is stored changes. The intermediate
# gradients of the hand computation appear:
u = w * x
v = u + b
u.retain_grad()
v.retain_grad()
(v**2).backward()
print(f"v.grad = {v.grad}, u.grad = {u.grad}")
print(f"v.is_leaf = {v.is_leaf}, v.retains_grad = {v.retains_grad}")
# sphinx_gallery_start_ignore
assert (v.grad.item(), u.grad.item()) == (14.0, 14.0)
assert (v.is_leaf, v.retains_grad) == (False, True)
# sphinx_gallery_end_ignore

# %%
# Gradients accumulate
# --------------------
# Each ``backward()`` *adds* into ``.grad``; it never overwrites it. This
# page has now run three backward passes through the same formula at the same
# point, so ``w.grad`` holds three times 28:
print(f"w.grad = {w.grad}")
# sphinx_gallery_start_ignore
assert w.grad.item() == 3 * 28.0
# sphinx_gallery_end_ignore

# %%
# So clear gradients between training steps. ``optimizer.zero_grad()`` sets
# the ``.grad`` of every parameter it holds to ``None`` (the default,
# ``set_to_none=True``); the next backward then *assigns* a fresh gradient.
# ``zero_grad(set_to_none=False)`` fills with zeros instead.
optimizer = torch.optim.SGD([w, b], lr=0.1)
optimizer.zero_grad()
print("after zero_grad():", w.grad)
# sphinx_gallery_start_ignore
assert (w.grad, b.grad) == (None, None)
((w * x + b) ** 2).backward()
optimizer.zero_grad(set_to_none=False)
assert w.grad.item() == 0.0
w.grad = b.grad = None
# sphinx_gallery_end_ignore

# %%
# Branches add up
# ---------------
# When a tensor is used twice, the graph branches: gradients reach it along
# two paths. Each path contributes the product of its local derivatives, and
# the contributions are *added*. For :math:`s = wx + w^2` the path through the
# product contributes :math:`x = 2`, the path through the square
# :math:`2w = 6`:
s = w * x + w**2
s.backward()
print(f"w.grad = {w.grad}  (2 + 6)")
# sphinx_gallery_start_ignore
assert w.grad.item() == 2.0 + 6.0
_edges = [c for n in walk_graph(s) for c, _ in n.next_functions]
assert sum(getattr(c, "variable", None) is w for c in _edges) == 2
# sphinx_gallery_end_ignore

# %%
# Printing and drawing a whole graph
# ----------------------------------
# Walking by hand gets tedious for real models. Here is the loss of a tiny
# linear model with an L2 penalty: ``w`` is used in the prediction *and* in
# the penalty, so it too is reached along two paths.
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
# The second path reaches ``w``'s node again: the tree prints a node only
# once, and where it meets it again it writes ``-> [6] AccumulateGrad (see
# above)``, a pointer to line ``[6]``.
# :func:`~autograd_notes.draw_graph` draws the same graph. The two arrows
# into ``w``'s ``AccumulateGrad`` node are the two paths whose gradients are
# added up in ``w.grad``.
try:
    fig = draw_graph(loss, names=names)
except ImportError as err:  # matplotlib and networkx are optional extras
    print(err)
# sphinx_gallery_start_ignore
_edges = [child for n in walk_graph(loss) for child, _ in n.next_functions]
assert sum(getattr(c, "variable", None) is w for c in _edges) == 2
_tree = format_graph(loss, names=names)
assert "[6] AccumulateGrad  w" in _tree
assert "-> [6] AccumulateGrad (see above)" in _tree
# sphinx_gallery_end_ignore

# %%
# The same kind of graph, interactive
# -----------------------------------
# A real model's graph has hundreds of nodes or more, too many for a tree
# or a picture. Take a stack of four identical blocks (a linear layer, then
# ``tanh``) and a head. :func:`~autograd_notes.track_modules` records which
# module made each node, and :func:`~autograd_notes.to_html` turns the graph
# into an interactive view, one box per module at the top:
from torch import nn

from autograd_notes import to_html, track_modules

_ = torch.manual_seed(0)
blocks = [nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(4)]
model = nn.Sequential(*blocks, nn.Linear(4, 1))
with track_modules(model) as trace:
    out = model(torch.randn(5, 4))
view = to_html((out**2).mean(), modules=trace)
# sphinx_gallery_start_ignore
import html
import tempfile
from pathlib import Path

from autograd_notes.view_data import read_page

_data = read_page(view.html)  # the page's data, as its script reads it
_top_items = _data.items[: _data.data["tops"]]
_tops = [f"{item.label} {item.title}" for item in _top_items]
_tree = format_graph((out**2).mean(), modules=trace, depth=1)
assert _tops == [line.split("  (")[0] for line in _tree.splitlines()], _tops
assert "[3] 1–3 × 3" in _tops, _tops
assert "[4] 0" in _tops, _tops
_addmm = {trace.path_of(n): n for n in walk_graph(out) if "Addmm" in n.name()}
assert _addmm["0.0"].next_functions[1] == (None, 0)  # the data: no gradient
assert _addmm["1.0"].next_functions[1][0] is not None
assert [item.kind for item in _top_items].count("fold") == 1
assert "http" not in view.html.lower()  # nothing is fetched
assert view.html in html.unescape(view._repr_html_())
with tempfile.TemporaryDirectory() as _dir:
    _file = view.save(Path(_dir) / "graph.html")
    assert _file.read_text(encoding="utf-8") == view.html
# sphinx_gallery_end_ignore
view  # the last value of a cell is shown: here, the view

# %%
# The boxes and their numbers are the entries of ``format_graph(...,
# modules=trace, depth=1)``. Blocks ``1`` to ``3`` made the same nodes, so
# they fold into one box, ``1–3 × 3``; block ``0`` stands apart, because its
# input is the data, which needs no gradient. Click a box to open it (a fold
# opens into its calls, a module into its parts) and to see in the details
# panel what its nodes saved; the *Close* buttons there close it again. The
# search field finds nodes by kind (try ``Tanh``) or module path. Drag or use
# the arrow keys to move; the mouse wheel or ``+`` and ``-`` zoom. In Jupyter
# or Colab the same object shows the same view, and
# ``view.save("graph.html")`` writes it to one file that any browser opens,
# offline.

# %%
# Exercises
# ---------
#
# **1. Walk and multiply.** For :math:`z = (2w + 1)^3` at :math:`w = 1`,
# list the nodes on the path from ``z`` to ``w`` by following the first
# input of each node, multiply their local derivatives, and compare with what
# ``backward()`` puts in ``.grad``.
#
# **Solution**

# %%
w1 = torch.tensor(1.0, requires_grad=True)
h = 2 * w1 + 1
z = h**3
node, path = z.grad_fn, []
while node.next_functions:
    path.append(type(node).__name__)
    node = node.next_functions[0][0]
print(" -> ".join(path))
by_hand = (3 * h.item() ** 2) * 1.0 * 2.0  # 3h^2, then 1, then 2
z.backward()
print(f"by hand: {by_hand}   w1.grad = {w1.grad}")
# sphinx_gallery_start_ignore
assert path == ["PowBackward0", "AddBackward0", "MulBackward0"]
assert node.variable is w1
assert by_hand == w1.grad.item() == 54.0
# sphinx_gallery_end_ignore

# %%
# **2. Write.** For the linear model above, get
# :math:`\partial\,\mathrm{loss}/\partial\,\mathrm{pred}` without
# ``retain_grad()`` and without touching any ``.grad``. Hint:
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
# :doc:`/how-to/inspect-the-graph`; what the node classes are, and when
# saved tensors are freed, is explained in :doc:`/explanations/mental-model`.
