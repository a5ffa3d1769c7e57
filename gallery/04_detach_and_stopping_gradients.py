"""
How do you stop gradients: ``detach``, ``no_grad`` or ``inference_mode``?
==========================================================================

Sometimes a value should act as a constant: a fixed target, an old
network's output, a weight you do not train. After this tutorial you can
predict when a result requires grad, choose between ``detach()``,
``torch.no_grad()`` and ``torch.inference_mode()`` by the tensors each one
gives you, and tell them apart from ``model.eval()`` and
``requires_grad_(False)``.
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
assert (c.requires_grad, c.is_leaf, a.grad, b.grad.item()) == (True, False, None, 1)
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
# it shares ``t``'s memory, so zeroing it zeroes ``y`` as well. To change a
# detached value, copy it first: ``y.detach().clone()``. (What autograd does
# when a value that backward needs was changed comes later, in
# :ref:`tutorial 05 <sphx_glr_tutorials_05_in_place_and_views.py>`.)
x = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
y = x.sigmoid()
y_const = y.detach()
print(f"requires_grad={y_const.requires_grad}, is_leaf={y_const.is_leaf}")
y_const.zero_()
print(y)

# sphinx_gallery_start_ignore
assert (y_const.is_leaf, y_const.requires_grad, y_const.grad_fn) == (True, False, None)
assert (y_const is y, y_const.data_ptr()) == (False, y.data_ptr())
assert y.tolist() == [0.0, 0.0, 0.0]
assert y.detach().clone().data_ptr() != y.data_ptr()
# sphinx_gallery_end_ignore

# %%
# A stop-gradient inside a product
# --------------------------------
# Take :math:`x = 2`, :math:`w = 3`, :math:`y = x^2`, :math:`z = w^2` and
# :math:`u = y\,z`. Detaching ``y`` treats it as the constant :math:`4`, so
# :math:`u = 4z` and :math:`\partial u/\partial w = 2wy = 24`. ``x`` is not
# part of the graph of ``u`` at all:
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
y, z = x * x, w * w
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
# The straight-through estimator
# -------------------------------
# Back to the hard threshold: it has no useful gradient. To train through
# one anyway, the *straight-through estimator* uses the threshold's value in
# the forward pass and, in the backward pass, pretends it was the identity:
# ``x + (f(x) - x).detach()``. Its value is ``x + f(x) - x``, that is
# :math:`f(x)` (up to rounding); only ``x`` is recorded, so the gradient is
# that of ``x`` itself, 1 everywhere:
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
hard = (x > 0).float()
ste = x + (hard - x).detach()
(3 * ste).sum().backward()
print(ste, x.grad)

# sphinx_gallery_start_ignore
assert torch.equal(ste, hard)  # the forward value is f(x), exactly here
assert torch.equal(x.grad, torch.full((3,), 3.0))  # the gradient of 3 * x
assert type(ste.grad_fn).__name__ == "AddBackward0"
_r = torch.randn(1000, generator=torch.Generator().manual_seed(0))
torch.testing.assert_close(_r + (_r.round() - _r), _r.round())  # up to rounding
# sphinx_gallery_end_ignore

# %%
# ``torch.no_grad()``: stop recording for a block
# -----------------------------------------------
# ``detach()`` cuts one tensor. ``torch.no_grad()`` stops recording for a
# whole block, such as an evaluation or a manual weight update: what the
# block computes does not require grad. (One call records even here,
# ``torch.autograd.grad(..., create_graph=True)``: later, in
# :ref:`tutorial 13 <sphx_glr_tutorials_13_higher_order_gradients.py>`.)
# Three kinds of tensor still report ``requires_grad=True``: one created
# with it; the tensor itself, when an in-place operation returns it
# (exercise 2 uses this); and a view of a tensor that requires grad, such
# as a slice. ``torch.set_grad_enabled(False)`` does the same as
# ``no_grad``, with a switch: one loop serves training (``True``) and
# evaluation (``False``).
weight = torch.ones(4, requires_grad=True)
with torch.no_grad():
    made = {"weight * 2": weight * 2, "weight.double()": weight.double()}
    made["torch.ones(2, requires_grad=True)"] = torch.ones(2, requires_grad=True)
    made["weight.mul_(1)"] = weight.mul_(1)
    made["weight[:2]"] = weight[:2]
for expr, t in made.items():
    print(f"{expr:34} requires_grad={t.requires_grad!s:5} is weight: {t is weight}")

# sphinx_gallery_start_ignore
assert [t.requires_grad for t in made.values()] == [0, 0, 1, 1, 1]
assert [t is weight for t in made.values()] == [0, 0, 0, 1, 0]
_gy = (_gx := torch.tensor(2.0, requires_grad=True)) * _gx
with torch.no_grad():
    assert torch.autograd.grad(_gy, _gx, create_graph=True)[0].grad_fn
assert (made["weight[:2]"]._base is weight, made["weight * 2"].grad_fn) == (True, None)
(made["weight[:2]"] * 3).sum().backward()
assert weight.grad is None
for _mode in (True, False):
    with torch.set_grad_enabled(_mode):
        assert (weight * 2).requires_grad == _mode
# sphinx_gallery_end_ignore

# %%
# The view is a trap: it inherits the flag, but nothing links it to
# ``weight``. A backward through it raises no error, and ``weight.grad``
# stays ``None`` (more on views later, in
# :ref:`tutorial 05 <sphx_glr_tutorials_05_in_place_and_views.py>`). Take
# views where you use them.
#
# ``model.eval()``, ``no_grad`` and ``requires_grad_(False)``
# ------------------------------------------------------------
# These three are often confused. ``model.eval()`` changes what layers
# *compute*: dropout stops dropping, and batch norm normalizes with its
# running statistics instead of the batch's, and stops updating them; the
# graph is recorded as before and parameters still require grad. ``no_grad``
# changes only what is *recorded*. ``requires_grad_(False)`` on parameters
# (*freezing* them; here the first layer's) stops backward from writing
# their ``.grad``, and it changes what is recorded too: an operation none of
# whose inputs requires grad is not recorded. The first layer's other input,
# the batch, does not require grad either, so the frozen layer gets no node
# and saves nothing for backward. That is why freezing the first layers of a
# model saves memory: the tensors they would keep for backward are never
# kept (unless the model's input requires grad, see below the table). The
# layers after it are still recorded, so the table still shows a graph. (The
# last row's ``torch.inference_mode()`` is a stricter ``no_grad``, explained
# at the end of this page.) A tiny model, run twice on one batch in each
# setting (dropout is on if the outputs differ):
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.Dropout(), nn.Linear(8, 1))
batch = torch.randn(16, 3)


def probe(train, mode=torch.enable_grad, freeze_first=False):
    model.train(train).zero_grad()
    model[0].requires_grad_(not freeze_first)
    mean = model[1].running_mean.clone()
    with mode():
        out, again = model(batch), model(batch)
    if out.requires_grad:
        out.sum().backward()
    grads = sum(p.grad is not None for p in model.parameters())
    dropout = not torch.equal(out, again)
    moved = not torch.equal(mean, model[1].running_mean)
    return out.grad_fn is not None, f"{grads}/6", dropout, moved


rows = {
    "train mode": probe(True),
    "model.eval()": probe(False),
    "torch.no_grad()": probe(True, torch.no_grad),
    "requires_grad_(False)": probe(True, freeze_first=True),
    "eval() + inference_mode()": probe(False, torch.inference_mode),
}
print(f"{'':25} graph  .grad  dropout  BN stats updated")
for name, (graph, grads, dropout, moved) in rows.items():
    print(f"{name:25} {graph!s:6} {grads:6} {dropout!s:8} {moved}")

# sphinx_gallery_start_ignore
_cols = list(zip(*rows.values(), strict=True))
assert _cols[0] == (True, True, False, True, False)  # graph
assert _cols[1] == ("6/6", "6/6", "0/6", "4/6", "0/6")  # parameters with .grad
assert _cols[2] == _cols[3] == (True, False, True, True, False)  # dropout, BN
assert all(p.requires_grad for p in model.eval().parameters())
model[0].requires_grad_(False)  # frozen: the first layer is not recorded
_packed = []


def _pack(saved):
    _packed.append(saved)
    return saved


with torch.autograd.graph.saved_tensors_hooks(_pack, lambda saved: saved):
    _frozen_out = model[0](batch)
assert _packed == []  # saves nothing for backward
_next = model[1](_frozen_out)
assert _frozen_out.grad_fn is None
assert not _frozen_out.requires_grad
assert _next.grad_fn is not None  # the layer after it is
assert _next.grad_fn.next_functions[0][0] is None  # with no edge into the first
model[0].requires_grad_(True)
_bn, _h = model[1], model[0](batch).detach()
_running = (_h - _bn.running_mean) / (_bn.running_var + _bn.eps).sqrt()
_batch = (_h - _h.mean(0)) / (_h.var(0, correction=0) + _bn.eps).sqrt()
with torch.no_grad():
    assert torch.allclose(_bn(_h), _running * _bn.weight + _bn.bias)
    assert torch.allclose(_bn.train()(_h), _batch * _bn.weight + _bn.bias, atol=1e-5)
model.eval().requires_grad_(False)  # all frozen: an input that requires grad
_sample = batch[:1].clone().requires_grad_(True)
model(_sample).sum().backward()  # is still recorded, and gets a gradient
assert (_sample.grad.shape, {p.grad for p in model.parameters()}) == ((1, 3), {None})
# sphinx_gallery_end_ignore

# %%
# So evaluating under ``no_grad`` alone is a common mistake: dropout still
# drops, and every validation batch shifts batch norm's running statistics.
# The inference recipe is ``model.eval()`` *and* ``torch.inference_mode()``
# (``no_grad`` if the results will meet autograd again), then
# ``model.train()`` before training again. Freezing every parameter does not
# stop recording either: an input that requires grad still gets its gradient.
#
# ``torch.inference_mode()``: less bookkeeping, three restrictions
# ----------------------------------------------------------------
# ``torch.inference_mode()``, in the recipe above, is ``no_grad`` with less
# bookkeeping, for code that only evaluates. Its results are *inference
# tensors*. Outside the block, recorded operations may read them as long as
# no node has to *save* them: addition saves nothing, multiplication saves
# its inputs. An operation that would save one raises at once, and so do an
# in-place update (even under ``no_grad``, and only *after* writing) and
# ``requires_grad_()``. As the message says, a ``clone()`` made outside the
# block is a normal tensor:
with torch.inference_mode():
    frozen = torch.ones(4) * 2
(frozen + weight).sum().backward()
print(f"is_inference={torch.is_inference(frozen)}, weight.grad={weight.grad}")
with expect_error(RuntimeError, "Inference tensors cannot be saved for backward"):
    frozen * weight
weight.grad = None
(frozen.clone() * weight).sum().backward()
print("after frozen.clone() * weight:", weight.grad)

# sphinx_gallery_start_ignore
assert weight.grad.tolist() == frozen.tolist() == [2.0] * 4
_add, _mul = (torch.ones(4) + weight).grad_fn, (torch.ones(4) * weight).grad_fn
assert not any(isinstance(getattr(_add, n), torch.Tensor) for n in dir(_add))
assert isinstance(_mul._saved_self, torch.Tensor)
assert not any(torch.is_inference(t) for t in (2 * frozen, frozen.clone()))
with redirect_stdout(StringIO()), expect_error(RuntimeError, "Inplace update to"):
    frozen.add_(1)
assert frozen.tolist() == [3.0] * 4  # written, then refused
with redirect_stdout(StringIO()), torch.no_grad(), expect_error(RuntimeError, "Inpl"):
    frozen.mul_(1)
with redirect_stdout(StringIO()), expect_error(RuntimeError, "requires_grad=True on"):
    frozen.requires_grad_()
with torch.inference_mode():
    frozen.mul_(1)  # inside the block, in-place updates are fine
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
assert (w.is_leaf, w.requires_grad, torch.isclose(w, torch.tensor(2.4))) == (1, 1, 1)
assert not (w - 0.1 * w.grad).is_leaf
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_05_in_place_and_views.py` looks at in-place
# operations and views, and at what autograd does when a value that
# backward needs was changed, as through ``detach()`` above.
# :doc:`/explanations/misconceptions` takes apart common wrong ideas about
# ``detach``, ``no_grad`` and assignment.
