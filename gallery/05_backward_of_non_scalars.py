"""
Why does ``backward()`` need a scalar, and what does ``gradient=`` compute?
===========================================================================

``loss.backward()`` works on a scalar loss, but on a vector it raises an
error. This script shows why: the derivative of a vector is a whole Jacobian
matrix, and what autograd really computes is a *vector-Jacobian product*,
:math:`v^\\top J`, for a vector :math:`v` that you pass as ``gradient=``.
"""

# %%
# ``requires_grad`` records operations
# ------------------------------------
# The source notes start from ``x = torch.arrange(4.0)``. There is no such
# function; the name is ``arange`` ("a range"):
import torch

from autograd_notes.graph import format_graph

try:
    x = torch.arrange(4.0)
except AttributeError as err:
    message = str(err)
    print(f"AttributeError: {message}")
else:
    raise AssertionError("expected an AttributeError")

assert "has no attribute 'arrange'" in message

# %%
# The notes then say we set ``requires_grad=True`` "to avoid allocating new
# memory every time we take a derivative". That is not what the flag does.
# ``requires_grad=True`` tells autograd to **record the operations** applied
# to the tensor, so that ``backward()`` can later walk them back. Without it
# nothing is recorded: the result has no ``grad_fn`` and there is nothing to
# differentiate.
x = torch.arange(4.0)
y = x * x
print(f"without requires_grad: y.grad_fn = {y.grad_fn}")
try:
    y.sum().backward()
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a RuntimeError")

assert y.grad_fn is None
assert not y.requires_grad
assert "does not require grad and does not have a grad_fn" in message

# %%
# With the flag, the multiplication is recorded as a ``MulBackward0`` node:
x = torch.arange(4.0, requires_grad=True)
y = x * x
print(f"with requires_grad:    y.grad_fn = {y.grad_fn.name()}")

assert type(y.grad_fn).__name__ == "MulBackward0"

# %%
# What *is* reused between derivatives is the ``.grad`` buffer of the leaf.
# The first backward creates it; later ones **add into the same tensor** in
# place, which is why training loops must clear it (``x.grad = None`` or
# ``optimizer.zero_grad()``) before each step:
(x * x).sum().backward()
first_grad = x.grad
print("after one backward:  ", x.grad)
(x * x).sum().backward()
print("after two backwards: ", x.grad)
print("same tensor object:  ", x.grad is first_grad)

assert torch.equal(x.grad, 2 * (2 * x.detach()))
assert x.grad is first_grad
x.grad = None

# %%
# A vector output cannot call ``backward()`` on its own
# -----------------------------------------------------
# ``y = x * x`` has four elements. Calling ``backward()`` on it fails:
y = x * x
try:
    y.backward()
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a RuntimeError")

assert "grad can be implicitly created only for scalar outputs" in message

# %%
# "Scalar" here means *one element*, not zero dimensions: a tensor of shape
# ``(1,)`` or ``(1, 1)`` is accepted too. Autograd refuses anything larger
# because it would have to guess how to combine the elements into one number
# (their sum? their mean? only the first?), and each choice gives a different
# gradient.
for shape in [(), (1,), (1, 1)]:
    t = torch.ones(shape, requires_grad=True)
    (t * 3).backward()
    print(f"shape {tuple(shape)!s:7} -> grad {t.grad.tolist()}")

    assert torch.equal(t.grad, torch.full(shape, 3.0))

# %%
# The Jacobian
# ------------
# The full derivative of a vector :math:`y = f(x) \in \mathbb{R}^m` with
# respect to :math:`x \in \mathbb{R}^n` is the :math:`m \times n` *Jacobian*
# :math:`J_{ij} = \partial y_i / \partial x_j`. For an elementwise function
# like ``x * x`` it is diagonal, which hides the interesting part, so take a
# function that mixes neighbouring components:
#
# .. math::
#
#    y_i = x_i^2 \, \sin(x_{i+1}) \qquad (\text{indices wrap around}),
#
# so row :math:`i` of :math:`J` has two non-zero entries:
# :math:`\partial y_i / \partial x_i = 2 x_i \sin(x_{i+1})` and
# :math:`\partial y_i / \partial x_{i+1} = x_i^2 \cos(x_{i+1})`.
# ``torch.autograd.functional.jacobian`` builds the whole matrix.


def f(x: torch.Tensor) -> torch.Tensor:
    return x**2 * torch.sin(torch.roll(x, -1))


x = torch.tensor([0.5, -1.0, 2.0, 1.5, -0.5], requires_grad=True)
J = torch.autograd.functional.jacobian(f, x)
print(J)

# sphinx_gallery_start_ignore
xd = x.detach()
nxt = torch.roll(xd, -1)
diagonal = torch.diag(2 * xd * torch.sin(nxt))
next_to_diagonal = torch.roll(torch.diag(xd**2 * torch.cos(nxt)), 1, dims=1)
J_by_hand = diagonal + next_to_diagonal
assert torch.allclose(J, J_by_hand)
# sphinx_gallery_end_ignore
off_diagonal = J - torch.diag(torch.diagonal(J))
assert off_diagonal.abs().sum() > 0  # not diagonal: components are mixed

# %%
# ``backward(gradient=v)`` computes :math:`v^\top J`
# --------------------------------------------------
# Give ``backward`` a vector :math:`v` with the same shape as ``y`` and it
# adds :math:`v^\top J` (a vector shaped like ``x``) to ``x.grad``: each
# entry is :math:`\sum_i v_i \, \partial y_i / \partial x_j`.
v = torch.tensor([1.0, 2.0, -1.0, 0.5, 3.0])
y = f(x)
y.backward(gradient=v)
print("x.grad =", x.grad)
print("v @ J  =", v @ J)

assert torch.allclose(x.grad, v @ J)
vjp = x.grad.clone()

# %%
# This is the same as differentiating the scalar :math:`\sum_i v_i y_i`,
# because :math:`\partial (\sum_i v_i y_i) / \partial x_j = \sum_i v_i
# J_{ij}`. Treat ``v`` as a set of fixed weights on the outputs:
x.grad = None
(v * f(x)).sum().backward()
print("via (v * y).sum():", x.grad)

assert torch.allclose(x.grad, vjp)

# %%
# ``v`` must have exactly the shape of ``y``; autograd does not broadcast it,
# not even from a single element:
try:
    f(x).backward(gradient=torch.ones(1))
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a RuntimeError")

assert "Mismatch in shape" in message

# %%
# Where ``v`` comes from in practice
# ----------------------------------
# Usually ``y`` is an intermediate result and a scalar loss :math:`L` is
# computed from it. Then the right ``v`` is :math:`\partial L / \partial y`,
# and ``y.backward(v)`` finishes the chain rule exactly as
# ``L.backward()`` would. That is all the argument means: *the gradient of
# some scalar with respect to* ``y``.
x.grad = None
torch.tanh(f(x)).sum().backward()  # the usual way: backward from the loss
print("L.backward():     ", x.grad)
via_loss = x.grad.clone()

x.grad = None
y = f(x)
L = torch.tanh(y).sum()
(dL_dy,) = torch.autograd.grad(L, y)  # v = dL/dy, the gradient *at* y
y.backward(gradient=dL_dy)  # continue the chain rule from y down to x
print("y.backward(dL/dy):", x.grad)
via_v = x.grad.clone()

assert torch.allclose(via_v, via_loss)

# %%
# Without ever forming :math:`J`
# ------------------------------
# Autograd does not build :math:`J` to compute :math:`v^\top J`: each node of
# the graph multiplies the incoming vector by *its own* local derivative, so
# a single backward pass gives :math:`v^\top J`, whatever the size of ``y``.
# The full Jacobian is much more expensive: row :math:`i`
# is :math:`e_i^\top J` for the one-hot vector :math:`e_i`, so building
# :math:`J` this way takes one backward pass *per output*. A hook on an
# intermediate tensor counts how often the gradient flows through it:
passes = []


def f_counted(x: torch.Tensor) -> torch.Tensor:
    square = x**2
    square.register_hook(lambda grad: passes.append(1))
    return square * torch.sin(torch.roll(x, -1))


rows = []
y = f_counted(x)
for i in range(len(y)):
    e_i = torch.zeros_like(y)
    e_i[i] = 1.0
    (row,) = torch.autograd.grad(y, x, grad_outputs=e_i, retain_graph=True)
    rows.append(row)
print(f"Jacobian row by row: {len(passes)} backward passes")
assert torch.allclose(torch.stack(rows), J)
rows_passes = len(passes)

passes.clear()
_ = torch.autograd.functional.jacobian(f_counted, x)
print(f"functional.jacobian: {len(passes)} backward passes")
jac_passes = len(passes)

passes.clear()
f_counted(x).backward(gradient=v)
print(f"backward(gradient=v): {len(passes)} backward pass")

assert rows_passes == jac_passes == len(x)
assert len(passes) == 1

# %%
# For a model the difference is decisive. For a network with ``n``
# parameters and an output of the same size, merely storing :math:`J` would
# take:
n = 10_000_000
print(f"n = {n:,} -> J has {n * n:.1e} entries, {n * n * 4 / 1e12:,.0f} TB in float32")

# %%
# which is why ``backward`` asks for :math:`v` and never returns :math:`J`.
#
# The sum is the special case :math:`v = (1, \dots, 1)`
# ------------------------------------------------------
# Back to the notes' example: ``y = x * x`` with ``x = [0, 1, 2, 3]``. Its
# Jacobian is diagonal with entries :math:`2x_i`, and a vector of ones picks
# out exactly that diagonal, so ``x.grad`` becomes :math:`2x`. That is the
# same as ``y.sum().backward()``, which is what people usually write.
x = torch.arange(4.0, requires_grad=True)
y = x * x
y.backward(gradient=torch.ones_like(y))
print("backward(gradient=ones):", x.grad)
ones_grad = x.grad.clone()

x.grad = None
(x * x).sum().backward()
print("sum().backward():       ", x.grad)

assert torch.equal(ones_grad, torch.tensor([0.0, 2.0, 4.0, 6.0]))
assert torch.equal(x.grad, ones_grad)

# %%
# The graph shows where the ones come from: ``SumBackward0`` sends a
# gradient of ones to ``MulBackward0``, the same vector that ``gradient=``
# supplies directly. A prehook on the ``MulBackward0`` node (tutorial
# :ref:`sphx_glr_tutorials_08_beyond_the_notes.py` covers hooks) records
# what it receives:
x.grad = None
total = (x * x).sum()
print(format_graph(total, names={"x": x}))
received = []
mul_node = total.grad_fn.next_functions[0][0]
mul_node.register_prehook(lambda grads: received.append(grads[0]))
total.backward()
print("MulBackward0 received:", received[0])

assert torch.equal(received[0], torch.ones(4))

# %%
# ``torch.autograd.grad`` returns the product instead of storing it
# -----------------------------------------------------------------
# ``backward`` *adds* its result to ``.grad`` of the leaves. The functional
# ``torch.autograd.grad(outputs, inputs, grad_outputs=v)`` computes the same
# :math:`v^\top J` but **returns** it, as a tuple with one entry per input,
# and leaves ``.grad`` alone:
x = torch.tensor([0.5, -1.0, 2.0, 1.5, -0.5], requires_grad=True)
(g,) = torch.autograd.grad(f(x), x, grad_outputs=v)
print("returned:", g)
print("x.grad:  ", x.grad)

assert torch.allclose(g, vjp)
assert x.grad is None

# %%
# and an existing ``.grad`` is not changed either:
x.grad = torch.zeros(5)
(g,) = torch.autograd.grad(f(x), x, grad_outputs=v)
print("x.grad after autograd.grad:", x.grad)

assert torch.equal(x.grad, torch.zeros(5))
assert torch.allclose(g, vjp)

# %%
# A picture of :math:`v^\top J`
# -----------------------------
# The heatmap is the Jacobian of :math:`f` at our ``x`` (two non-zero entries
# per row, the second wrapping around). Each entry of :math:`v^\top J` is the
# column below it weighted by :math:`v` and summed.
try:
    import matplotlib.pyplot as plt
except ImportError:  # matplotlib is an optional extra
    plt = None

if plt is not None:
    ratios = {"width_ratios": [1, 5], "height_ratios": [5, 1]}
    fig, axes = plt.subplots(2, 2, figsize=(6.4, 5.2), gridspec_kw=ratios)
    (ax_v, ax_j), (ax_blank, ax_r) = axes
    limit = max(J.abs().max().item(), vjp.abs().max().item())
    style = {"cmap": "RdBu_r", "vmin": -limit, "vmax": limit}
    panels = [(ax_j, J.tolist()), (ax_v, v[:, None].tolist()), (ax_r, [vjp.tolist()])]
    for ax, rows_of_values in panels:
        image = ax.imshow(rows_of_values, **style)
        for r, row_values in enumerate(rows_of_values):
            for c, value in enumerate(row_values):
                color = "white" if abs(value) > 0.6 * limit else "black"
                label = f"{value:.2f}"
                ax.text(c, r, label, ha="center", va="center", color=color, size=8)
        ax.set_xticks([])
        ax.set_yticks([])
    ax_j.set_title(r"Jacobian $J_{ij} = \partial y_i / \partial x_j$")
    ax_j.set_xticks(range(5), [f"$x_{j}$" for j in range(5)])
    ax_j.xaxis.tick_top()
    ax_v.set_title("$v$")
    ax_v.set_yticks(range(5), [f"$y_{i}$" for i in range(5)])
    ax_r.set_yticks([0], ["$v^T J$"])
    ax_blank.axis("off")
    fig.colorbar(image, ax=axes[:, 1].tolist(), shrink=0.8)

# %%
# Summary
# -------
# * ``requires_grad=True`` makes autograd record operations on a tensor; it
#   is not a memory optimisation. The ``.grad`` buffer is reused, which is
#   why gradients accumulate until you clear them.
# * ``backward()`` without arguments needs a one-element output. For any
#   other shape, pass ``gradient=v`` with ``y``'s shape.
# * ``y.backward(gradient=v)`` adds :math:`v^\top J` to ``x.grad`` in one
#   backward pass, without forming :math:`J`. It equals
#   ``(v * y).sum().backward()``; ``v`` = ones is ``y.sum().backward()``.
# * ``torch.autograd.grad(y, x, grad_outputs=v)`` returns the same product
#   and does not touch ``.grad``.
#
# Next: :ref:`sphx_glr_tutorials_05_several_losses.py` calls ``backward``
# more than once on the same graph. See also the
# :ref:`vector-Jacobian product <glossary-vjp>` entry of the
# :doc:`/explanations/glossary`.
