"""
How do you stop gradients: ``detach``, ``no_grad`` or ``inference_mode``?
==========================================================================

Sometimes a value should act as a constant: a fixed target, an old
network's output, a weight you do not train. After this tutorial you can
predict when a result requires grad, and choose between ``detach()``,
``torch.no_grad()`` and ``torch.inference_mode()`` by the tensors each one gives you.
"""

# %%
# How ``requires_grad`` spreads
# -----------------------------
# While autograd records (it does unless you turn it off, see below), an
# operation with an input that requires grad usually gives a result that
# requires grad. Inputs that do not require grad get no gradient at all:
# after ``backward()`` their ``.grad`` stays ``None``.
import torch

from autograd_notes import expect_error, format_graph

a = torch.tensor([1.0])
b = torch.tensor([1.0], requires_grad=True)
c = a + b
c.backward()
print(f"c.requires_grad={c.requires_grad}, a.grad={a.grad}, b.grad={b.grad}")

# sphinx_gallery_start_ignore
assert (c.requires_grad, c.is_leaf, a.grad) == (True, False, None)
assert torch.equal(b.grad, torch.ones(1))
assert not (a + a).requires_grad
from contextlib import redirect_stdout
from io import StringIO  # hidden checks below print into it, not on the page

# sphinx_gallery_end_ignore

# %%
# "Usually", because autograd records only results it can differentiate with
# respect to that input. Only floating-point (and complex) tensors can
# require grad, so comparisons, ``argmax`` and integer casts, whose results
# are boolean or integer, cut the graph. So does ``torch.zeros_like``, which
# only reads the shape. ``floor`` is recorded, although its derivative is
# zero almost everywhere:
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
results = {"x > 0": x > 0, "x.argmax()": x.argmax(), "x.long()": x.long()}
results["torch.zeros_like(x)"] = torch.zeros_like(x)
results["x.floor()"] = x.floor()
for expr, t in results.items():
    print(f"{expr:19} dtype={t.dtype!s:13} requires_grad={t.requires_grad}")

# sphinx_gallery_start_ignore
assert [t.requires_grad for t in results.values()] == [0, 0, 0, 0, 1]
assert all(t.grad_fn is None for t in list(results.values())[:4])
assert torch.ones(2, dtype=torch.cfloat).requires_grad_().requires_grad
with redirect_stdout(StringIO()), expect_error(RuntimeError, "only Tensors of flo"):
    torch.ones(2, dtype=torch.long).requires_grad_(True)
# sphinx_gallery_end_ignore

# %%
# Common mistake: a hard threshold as part of a loss
# --------------------------------------------------
# ``(x > 0).float()`` looks like a differentiable step function, but the
# comparison already cut the graph, so nothing in this "loss" depends on
# ``x`` any more:
step = (x > 0).float()
with expect_error(RuntimeError, "does not require grad"):
    (3 * step).sum().backward()

# %%
# Use the comparison as a constant mask on ``x`` instead; the gradient then
# flows through ``x`` wherever the mask is 1:
(3 * x * (x > 0)).sum().backward()
print(x.grad)

# sphinx_gallery_start_ignore
assert torch.equal(x.grad, torch.tensor([0.0, 3.0, 3.0]))
# sphinx_gallery_end_ignore

# %%
# ``detach()`` returns a leaf that shares memory
# ----------------------------------------------
# ``t.detach()`` returns a tensor with the same values and no history: no
# ``grad_fn``, ``requires_grad=False``, hence a leaf. It is **not a copy**:
# it shares ``t``'s memory and its *version counter*, which every in-place
# operation increments. Zeroing it zeroes ``y``; the sigmoid saved ``y`` for
# its backward, :math:`\sigma'(x) = \sigma(x)(1 - \sigma(x))`, so rather
# than compute a wrong gradient, ``backward()`` refuses:
x = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
y = x.sigmoid()
y_const = y.detach()
print(f"requires_grad={y_const.requires_grad}, is_leaf={y_const.is_leaf}")
y_const.zero_()
print(y)
with expect_error(RuntimeError, "modified by an inplace operation"):
    y.sum().backward()

# sphinx_gallery_start_ignore
assert (y_const.is_leaf, y_const.requires_grad, y_const.grad_fn) == (True, False, None)
assert y_const is not y
assert y_const.data_ptr() == y.data_ptr()
assert y._version == y_const._version == 1
_x = torch.tensor([0.0, 1.0], requires_grad=True)
_y = _x.exp()
_y.data.mul_(2)
_y.sum().backward()
assert _y._version == 0
assert torch.allclose(_x.grad, 2 * _x.detach().exp())  # wrong, and no error
assert _y.detach().clone().data_ptr() != _y.data_ptr()
# sphinx_gallery_end_ignore

# %%
# ``.data``, the old way to get at the values, does **not** share the version
# counter: the same change through ``y.data`` goes unnoticed and the gradient
# is silently wrong (:ref:`sphx_glr_tutorials_05_in_place_and_views.py`). To
# change a detached value, copy it first: ``y.detach().clone()``.
#
# A stop-gradient inside a product
# --------------------------------
# Take :math:`x = 2`, :math:`w = 3`, :math:`y = x^2`, :math:`z = w^2` and
# :math:`u = y\,z`. Detaching ``y`` treats it as the constant :math:`4`, so
# :math:`u = 4z` and :math:`\partial u/\partial w = 2wy = 24`. ``x`` is not
# part of the graph of ``u`` at all:
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
y = x * x
z = w * w
u = y.detach() * z
u.backward()
print(f"x.grad={x.grad}, w.grad={w.grad}")
print(format_graph(u, names={"x": x, "w": w, "z": z}))

# sphinx_gallery_start_ignore
assert w.grad.item() == 2 * w.item() * y.item() == 24.0
assert "AccumulateGrad  x" not in format_graph(u, names={"x": x, "w": w})
torch.optim.SGD([x], lr=0.1).zero_grad(set_to_none=False)  # skips x: no error
assert x.grad is None  # None all along, not zeros
# sphinx_gallery_end_ignore

# %%
# Common mistake: expecting a zero gradient
# -----------------------------------------
# ``x.grad`` is ``None``, not ``tensor(0.)``: ``backward()`` writes only into
# leaves it reaches. Code that treats it as a number fails:
with expect_error(AttributeError, "'NoneType' object has no attribute"):
    x.grad.zero_()

# %%
# Check for ``None`` first, or use ``optimizer.zero_grad()``, which skips
# parameters without a gradient.
#
# Gradients also accumulate. Backward through the full product, then through
# the detached one without clearing ``.grad``, gives ``w`` :math:`24 + 24 = 48`,
# while ``x`` keeps :math:`2xz = 36` from the first call. (``retain_graph``
# keeps ``z``'s graph for the second call:
# :ref:`sphx_glr_tutorials_07_several_losses.py`.)
y = x * x
z = w * w
w.grad = None  # start from scratch, as in the first run
(y * z).backward(retain_graph=True)
(y.detach() * z).backward()
print(f"x.grad={x.grad}, w.grad={w.grad}")

# sphinx_gallery_start_ignore
assert (x.grad.item(), w.grad.item()) == (36.0, 48.0)
# sphinx_gallery_end_ignore

# %%
# Assignment is not an operation
# ------------------------------
# ``e = d`` binds a second name to the *same* tensor; it adds nothing to the
# graph. ``e = e.detach()`` rebinds the name ``e`` to a new leaf and leaves
# ``d`` untouched. Make that leaf require grad and use it: for :math:`h = 2e`,
# ``e.grad`` is :math:`dh/de = 2`, and nothing reaches ``p``:
p = torch.tensor([1.0], requires_grad=True)
d = p + 1
e = d
print("e is d:", e is d)
e = e.detach().requires_grad_(True)  # a new leaf; d is unchanged
(e * 2).backward()  # h = 2e
print(f"e is d: {e is d}, e.grad={e.grad}, p.grad={p.grad}")

# sphinx_gallery_start_ignore
assert (e.is_leaf, d.is_leaf, p.grad) == (True, False, None)
assert torch.equal(e.grad, torch.tensor([2.0]))
# sphinx_gallery_end_ignore

# %%
# ``torch.no_grad()``: stop recording for a block
# -----------------------------------------------
# ``detach()`` cuts one tensor. ``torch.no_grad()`` stops recording for a
# whole block, such as an evaluation or a manual weight update: no nodes are
# added, so ordinary results do not require grad. Three kinds still report
# ``requires_grad=True``: a tensor created with ``requires_grad=True``; the
# result of an in-place operation, which *is* its input (exercise 2 uses
# this); and a view of a tensor that requires grad.
weight = torch.ones(4, requires_grad=True)
with torch.no_grad():
    made = {"weight * 2": weight * 2}
    made["torch.ones(2, requires_grad=True)"] = torch.ones(2, requires_grad=True)
    made["weight.mul_(1)"] = weight.mul_(1)
    made["weight[:2]"] = weight[:2]
for expr, t in made.items():
    print(f"{expr:34} requires_grad={t.requires_grad!s:5} is_leaf={t.is_leaf}")

# sphinx_gallery_start_ignore
assert [t.requires_grad for t in made.values()] == [False, True, True, True]
assert made["weight.mul_(1)"] is weight
assert (made["weight * 2"].grad_fn, made["weight[:2]"].grad_fn) == (None, None)
(made["weight[:2]"] * 3).sum().backward()
assert weight.grad is None
# sphinx_gallery_end_ignore

# %%
# The view is a trap: it inherits the flag, but nothing links it to
# ``weight``. A backward through it raises no error, and ``weight.grad`` stays
# ``None`` (:ref:`sphx_glr_tutorials_05_in_place_and_views.py` shows this
# in detail). Take views where you use them.
#
# ``torch.inference_mode()``: less bookkeeping, one restriction
# -------------------------------------------------------------
# ``inference_mode`` also skips bookkeeping such as the version counter. Its
# results are *inference tensors*: they can take part in a later backward as
# long as no node has to *save* them. Addition saves nothing; multiplication
# saves its inputs.
with torch.inference_mode():
    frozen = torch.ones(4) * 2
print("is_inference:", torch.is_inference(frozen))
(frozen + weight).sum().backward()
print("after frozen + weight:", weight.grad)
with expect_error(RuntimeError, "Inference tensors cannot be saved for backward"):
    (frozen * weight).sum().backward()

# sphinx_gallery_start_ignore
assert torch.equal(weight.grad, torch.ones(4))
_add, _mul = (torch.ones(4) + weight).grad_fn, (torch.ones(4) * weight).grad_fn
assert not any(isinstance(getattr(_add, n), torch.Tensor) for n in dir(_add))
assert isinstance(_mul._saved_self, torch.Tensor)
with redirect_stdout(StringIO()), expect_error(RuntimeError, "track version count"):
    frozen._version
# sphinx_gallery_end_ignore

# %%
# As the message says, a ``clone()`` made outside inference mode is a normal
# tensor again. Use ``inference_mode`` for pure inference whose results never
# meet autograd again, and ``no_grad`` otherwise.
weight.grad = None
(frozen.clone() * weight).sum().backward()
print(weight.grad)

# sphinx_gallery_start_ignore
assert torch.equal(weight.grad, torch.full((4,), 2.0))
assert not torch.is_inference(frozen.clone())
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** With ``x = 2`` and ``w = 3`` (both leaves that require
# grad), what are ``x.grad`` and ``w.grad`` after
# ``((x * w).detach() * w).backward()``?
#
# **Solution**

# %%
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
((x * w).detach() * w).backward()
print(x.grad, w.grad)  # None, and 6: the detached x * w is the constant 6

# sphinx_gallery_start_ignore
assert (x.grad, w.grad.item()) == (None, 6.0)
# sphinx_gallery_end_ignore

# %%
# **2. Write.** Take one gradient-descent step on ``w`` with learning rate
# ``0.1`` so that ``w`` stays a leaf that requires grad. (Why does
# ``w = w - 0.1 * w.grad`` not do that?)
#
# **Solution**

# %%
with torch.no_grad():
    w -= 0.1 * w.grad  # in place and unrecorded: w stays the same leaf
print(w, w.is_leaf)
# w = w - 0.1 * w.grad would be recorded, making w a non-leaf with a grad_fn

# sphinx_gallery_start_ignore
assert (w.is_leaf, w.requires_grad) == (True, True)
assert torch.isclose(w, torch.tensor(2.4))
assert not (w - 0.1 * w.grad).is_leaf
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_05_in_place_and_views.py` looks at in-place
# operations and views, where the version counter met here does its work.
