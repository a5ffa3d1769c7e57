"""
When can I modify a tensor in place without breaking autograd?
==============================================================

``x.add_(1)``, ``x[0] = 0`` and ``x += 1`` change a tensor's memory instead
of making a new tensor. Autograd allows this most of the time, refuses it in a
few cases, and, with ``.data``, can be tricked into a silently wrong gradient.
After this tutorial you can tell which case you are in, read the error
message that names the tensor you overwrote, and fix the code.
"""

# %%
# A leaf that requires grad cannot be changed in place
# ----------------------------------------------------
# A leaf with ``requires_grad=True`` is what you want gradients *for*: a
# weight, an input you optimise. Changing it in place while autograd is
# recording raises an error, and so does writing into a slice of it:
import torch

from autograd_notes import expect_error, format_graph

w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    w.add_(1.0)
with expect_error(RuntimeError, "a view of a leaf Variable that requires grad"):
    w[0] = 0.0

# sphinx_gallery_start_ignore
assert (w.tolist(), w._version) == ([1.0, 2.0, 3.0], 0)  # nothing was changed
# sphinx_gallery_end_ignore

# %%
# Why? To record ``w.add_(1)``, autograd would have to give ``w`` a
# ``grad_fn``, turning the tensor you want ``.grad`` for into an intermediate
# result. A deliberate change to a weight is not part of the model: make it
# under ``torch.no_grad()``, as an optimizer's ``step()`` does. ``w`` stays a
# leaf:
(w**2).sum().backward()
with torch.no_grad():
    w -= 0.1 * w.grad
print(w, "| is_leaf:", w.is_leaf)

# sphinx_gallery_start_ignore
assert torch.allclose(w, torch.tensor([0.8, 1.6, 2.4]))
assert (w.is_leaf, w.requires_grad, w.grad_fn, w._version) == (True, True, None, 1)
_p = torch.ones(2, requires_grad=True)
_p.sum().backward()
torch.optim.SGD([_p], lr=0.5).step()  # optimizers update in place, as above
assert (_p.is_leaf, _p._version, _p.tolist()) == (True, 1, [0.5, 0.5])
# sphinx_gallery_end_ignore

# %%
# In-place on a result is recorded
# --------------------------------
# A tensor computed from a leaf may be modified in place: autograd records
# the operation by giving the tensor a new ``grad_fn``. Every tensor also
# carries a **version counter**, ``t._version`` (internal, but fine to read),
# which each in-place operation increases by one:
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
print("before:", type(y.grad_fn).__name__, "version", y._version)
y.add_(1.0)
print("after: ", type(y.grad_fn).__name__, "version", y._version)

# sphinx_gallery_start_ignore
assert (type(y.grad_fn).__name__, y._version) == ("AddBackward0", 1)
assert type(y.grad_fn.next_functions[0][0]).__name__ == "MulBackward0"
# sphinx_gallery_end_ignore

# %%
# Writing into a *view* of ``y``, such as a slice, changes ``y`` too, and
# autograd gives ``y`` a ``CopySlices`` node. In backward it applies the
# in-place operation's derivative to the written part of the gradient only,
# then passes the whole gradient on to ``y``'s old history: the gradient of
# the final values, :math:`(2x_0, 20x_1, 20x_2)`.
y = x * 2
y[1:].mul_(10)
print(format_graph(y, names={"x": x}))
y.sum().backward()
print("x.grad:", x.grad)

# sphinx_gallery_start_ignore
assert torch.equal(y, torch.tensor([2.0, 40.0, 60.0]))
assert type(y.grad_fn).__name__ == "CopySlices"
assert torch.equal(x.grad, torch.tensor([2.0, 20.0, 20.0]))
# sphinx_gallery_end_ignore

# %%
# Modifying a tensor that backward needs
# --------------------------------------
# Many backward formulas need values from the forward pass, and autograd
# saves them. :math:`\frac{d}{dx} e^x = e^x`, so ``exp`` saves its *output*.
# Overwrite that output, and the saved value is no longer :math:`e^x`. This is
# a common mistake, here with ``+=``:
x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
y = x.exp()
y += 1  # in place: y is the tensor exp saved
with expect_error(RuntimeError, r"\[3\]\], which is output 0 of Exp.*version 1; exp"):
    y.sum().backward()

# %%
# Read the message from left to right:
#
# * ``[torch.FloatTensor [3]]``: the modified tensor is a float tensor of
#   shape ``(3,)``. Look for a tensor of that shape in your code.
# * ``which is output 0 of Exp``: it was produced by ``exp`` (the part is
#   missing when the tensor is a leaf).
# * ``is at version 1; expected version 0``: it was saved at version 0 and
#   has been modified once since.
#
# At backward time each node checks that its saved tensors are still at the
# versions it saved, and refuses to compute with changed values. The fix is
# to leave the saved tensor alone: ``y = y + 1`` makes a new tensor.
y = x.exp()
y = y + 1
y.sum().backward()
print(x.grad)

# sphinx_gallery_start_ignore
assert torch.allclose(x.grad, x.detach().exp())
_leaf = torch.ones(3, requires_grad=True)
_out = _leaf * _leaf  # saves the leaf itself
with torch.no_grad():
    _leaf.add_(1)
try:
    _out.sum().backward()
except RuntimeError as err:
    _msg = str(err)  # a leaf: the "output 0 of ..." part is missing
assert ("[3]] is at version 1" in _msg, "which is output" in _msg) == (True, False)
# sphinx_gallery_end_ignore

# %%
# Only *saved* tensors are checked. ``x * 2`` saves the constant 2 but
# neither ``x`` nor its output, which is why ``y.add_(1)`` earlier did no
# harm. ``show_saved=True`` prints what each node saved:
print(format_graph(x.exp(), show_saved=True))
print(format_graph(x * 2, show_saved=True))

# sphinx_gallery_start_ignore
assert x.exp().grad_fn._saved_result is not None
assert ((x * 2).grad_fn._saved_self, (x * 2).grad_fn._saved_other) == (None, 2)
# sphinx_gallery_end_ignore

# %%
# ``.data`` hides the change; ``.detach()`` does not
# --------------------------------------------------
# Old code edits ``t.data`` to change values "behind autograd's back".
# ``.data`` and ``.detach()`` both share ``t``'s memory and have no history,
# but only ``.detach()`` shares the version counter. A change through
# ``.data`` goes unnoticed and the gradient is **silently wrong**:
# :math:`2e^x` instead of :math:`e^x`, with no warning.
x.grad = None
y = x.exp()
y.data.mul_(2)
y.sum().backward()
print("with .data:  ", x.grad, "| true gradient:", x.detach().exp())

# sphinx_gallery_start_ignore
assert y._version == 0
assert torch.allclose(x.grad, 2 * x.detach().exp())
assert y.data.data_ptr() == y.detach().data_ptr() == y.data_ptr()
assert (y.data.grad_fn, y.detach().grad_fn) == (None, None)
y.detach().mul_(1)
assert y._version == 1  # .detach() shares the counter, .data did not
# sphinx_gallery_end_ignore

# %%
# The same change through ``.detach()`` bumps the shared version counter, so
# backward refuses instead of returning a wrong number:
y = x.exp()
y.detach().mul_(2)
with expect_error(RuntimeError, "is at version 1; expected version 0"):
    y.sum().backward()

# %%
# Prefer ``.detach()`` (or ``torch.no_grad()``): an error is better than a
# wrong gradient (see :ref:`sphx_glr_tutorials_04_detach_and_stopping_gradients.py`).
#
# Views made under ``torch.no_grad()``
# ------------------------------------
# A view remembers the tensor it looks into, its *base*, and reports that
# base's ``requires_grad``, even when the view was made with recording off.
# Such a view says ``requires_grad=True`` and looks like a leaf:
w = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
with torch.no_grad():
    head = w[:2]
print(f"requires_grad={head.requires_grad}, is_leaf={head.is_leaf}")

# sphinx_gallery_start_ignore
assert head._base is w
assert (head.requires_grad, head.is_leaf, head.grad_fn) == (True, True, None)
with torch.no_grad():
    assert not torch.ones(2)[:1].requires_grad  # it is the base's flag
# sphinx_gallery_end_ignore

# %%
# But nothing links it to ``w``: no gradient flows through it, and, unlike a
# real leaf, it does not collect one either. This is a common mistake when a
# view is taken inside an evaluation or update block and reused later.
# Backward runs without a complaint, and nobody gets a gradient:
loss = (head * 3).sum()
loss.backward()
print(f"w.grad={w.grad}, head.grad={head.grad}")

# sphinx_gallery_start_ignore
assert loss.requires_grad
assert (w.grad, head.grad) == (None, None)
assert loss.grad_fn.next_functions[0][0].next_functions == ((None, 0), (None, 0))
# sphinx_gallery_end_ignore

# %%
# Modifying such a view in place with recording on is ambiguous (should the
# write be recorded or not?), so PyTorch forbids it:
with expect_error(RuntimeError, "A view was created in no_grad mode"):
    head.mul_(2)

# %%
# The fix follows the message: take the view where you use it. Outside
# ``no_grad``, ``w[:2]`` is an ordinary differentiable view; if you meant a
# constant, ``w[:2].detach()`` says so and reports ``requires_grad=False``.
head = w[:2]
(head * 3).sum().backward()
print("w.grad:", w.grad, "| detached:", w[:2].detach().requires_grad)

# sphinx_gallery_start_ignore
assert torch.equal(w.grad, torch.tensor([3.0, 3.0, 0.0, 0.0]))
assert not w[:2].detach().requires_grad
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** Which of these two backward calls fails, and why?
#
# .. code-block:: python
#
#    a = torch.ones(3, requires_grad=True)
#    s = a.sigmoid()
#    s.add_(1)
#    s.sum().backward()  # (A)
#
#    b = a * 3
#    b.add_(1)
#    b.sum().backward()  # (B)
#
# **Solution**

# %%
a = torch.ones(3, requires_grad=True)
s = a.sigmoid()
s.add_(1)
# (A) fails: the derivative sigmoid * (1 - sigmoid) needs the saved output
with expect_error(RuntimeError, "output 0 of Sigmoid"):
    s.sum().backward()
b = a * 3
b.add_(1)
b.sum().backward()  # (B) works: a * 3 saved nothing that add_ changed
print("(B) a.grad =", a.grad)
# sphinx_gallery_start_ignore
assert torch.equal(a.grad, torch.full((3,), 3.0))
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** What is ``p.grad``, and what is ``type(q.grad_fn).__name__``?
#
# .. code-block:: python
#
#    p = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
#    q = p * 3
#    q[0] = 0.0
#    q.sum().backward()
#
# **Solution**

# %%
p = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
q = p * 3
q[0] = 0.0
q.sum().backward()
# q[0] no longer depends on p, so its gradient is 0; the rest get 3
print(p.grad, type(q.grad_fn).__name__)
# sphinx_gallery_start_ignore
assert torch.equal(p.grad, torch.tensor([0.0, 3.0, 3.0]))
assert type(q.grad_fn).__name__ == "CopySlices"
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# In short: in-place on a leaf that requires grad is an error: update weights under
# ``torch.no_grad()``. In-place on a result or its view (``CopySlices``) is
# recorded, unless backward needs the old value: the version counter stops
# it. ``.data`` hides changes from it; use ``.detach()``. Take views where
# you use them, not inside ``no_grad``.
#
# :ref:`sphx_glr_tutorials_06_backward_of_non_scalars.py` calls
# ``backward()`` on an output with more than one element.
