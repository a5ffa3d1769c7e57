"""
What does autograd do for one training step?
============================================

Training a model means nudging its parameters against the gradient of a loss.
You write the forward computation, from the parameters to the loss; autograd
computes the derivatives of the loss with respect to the parameters. After
this tutorial you can run one training step by hand (forward, backward,
update, reset), check a gradient against your own derivation, and confirm that
``torch.optim.SGD`` does the same update.
"""

# %%
# A tiny model whose parameters require grad
# ------------------------------------------
# The data are eight points near the line :math:`y = 2x - 1`, with a little
# noise. The model is a line too, :math:`\hat y = w x + b`, and its two
# parameters start at zero. ``requires_grad=True`` asks autograd to track
# every operation that uses them, so that it can differentiate through those
# operations later. The data need no gradient: you never update them.
import torch

from autograd_notes import draw_graph, expect_error, format_graph

_ = torch.manual_seed(0)

x = torch.randn(8)
y = 2 * x - 1 + 0.1 * torch.randn(8)

w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)

# %%
# The forward pass is ordinary arithmetic: predictions, then the mean squared
# error. Because ``w`` and ``b`` require grad, so does the loss, and its
# ``grad_fn`` names the last operation that produced it. No gradient exists
# yet: ``w.grad`` is ``None``.
pred = w * x + b
loss = ((pred - y) ** 2).mean()
print(f"loss = {loss.item():.4f}")
print(f"requires_grad={loss.requires_grad}, grad_fn={type(loss.grad_fn).__name__}")
print("w.grad:", w.grad)

# sphinx_gallery_start_ignore
from autograd_notes import walk_graph

assert (x.requires_grad, y.requires_grad) == (False, False)
assert (loss.requires_grad, type(loss.grad_fn).__name__) == (True, "MeanBackward0")
assert (w.grad, b.grad) == (None, None)
# sphinx_gallery_end_ignore

# %%
# The forward pass recorded a graph
# ---------------------------------
# While the forward pass ran, autograd wrote down each operation as a node of
# a *computation graph*. :func:`~autograd_notes.format_graph` prints it, from
# the loss at the top to the parameters at the bottom, and
# :func:`~autograd_notes.draw_graph` draws it. Read from the bottom up, it is
# the forward pass: ``MulBackward0`` for ``w * x``, ``AddBackward0`` for
# ``+ b``, then the subtraction, the square and the mean. ``x`` and ``y``
# get no node: they do not require grad, so no gradient is computed for them.
print(format_graph(loss, names={"w": w, "b": b}))
try:
    fig = draw_graph(loss, names={"w": w, "b": b})
except ImportError as err:  # matplotlib and networkx are optional extras
    print(err)

# sphinx_gallery_start_ignore
_text = format_graph(loss, names={"w": w, "b": b})
for _line in ("├─ [4] MulBackward0", "│  [5] Accumul", "└─ [6] AccumulateGrad  b"):
    assert _line in _text
_names = [(w**2).grad_fn.name(), (w**w).grad_fn.name()]
assert _names == ["PowBackward0", "PowBackward1"]  # two formulas of pow
assert (w + 1 + 1).grad_fn.next_functions[0][0].name() == "AddBackward0"
assert all(n.name().endswith(("0", "AccumulateGrad")) for n in walk_graph(loss))
_kinds = "MeanBackward0 PowBackward0 SubBackward0 AddBackward0 MulBackward0"
assert [type(n).__name__ for n in walk_graph(loss)][:5] == _kinds.split()
_leaves = [n.variable for n in walk_graph(loss) if hasattr(n, "variable")]
assert {id(t) for t in _leaves} == {id(w), id(b)}
# sphinx_gallery_end_ignore

# %%
# How to read the printout: each line is one node, numbered ``[0]``, ``[1]``,
# ... from the top, and the nodes it passes gradients to are listed under
# it. Where a node has two or more, ``├─`` and ``└─`` branch to them, and
# ``│`` shows that a branch goes on below: ``AddBackward0`` passes to
# ``MulBackward0`` (with ``w`` under it) and to ``b``. A node is named after
# its operation plus a digit. The digit is not a count: it tells apart the
# backward formulas of operations that share a name, and here every node
# ends in ``0``. At the bottom, one ``AccumulateGrad`` node per parameter,
# followed by its name, stores the gradient in that parameter.
#
# The graph still uses ``x``, though: the node of ``w * x`` keeps a reference
# to it, because the derivative of ``w * x`` with respect to ``w`` is ``x``.
# Such *saved tensors* are what a graph costs in memory.
mul = pred.grad_fn.next_functions[0][0]  # the node below AddBackward0
print(f"{mul.name()} saved x: {mul._saved_other is x}")

# sphinx_gallery_start_ignore
assert (mul.name(), mul._saved_other is x) == ("MulBackward0", True)
# sphinx_gallery_end_ignore

# %%
# ``loss.backward()`` walks this graph from the loss down to its *leaves*,
# the tensors that no recorded operation produced: here ``w`` and ``b``.
# (``x`` and ``y`` are leaves too, outside the graph.) Each node knows the
# derivative of its own operation and passes the gradient on to the nodes
# below it: the chain rule, one operation at a time. At the bottom, each
# ``AccumulateGrad`` node stores the result in its parameter's ``.grad``:
loss.backward()
print("w.grad:", w.grad)
print("b.grad:", b.grad)

# sphinx_gallery_start_ignore
assert (x.is_leaf, y.is_leaf, y.grad_fn) == (True, True, None)  # computed, yet leaves
# sphinx_gallery_end_ignore

# %%
# Check the gradient by hand
# --------------------------
# With :math:`n` points, the loss and its two partial derivatives are
#
# .. math::
#
#    L(w, b) = \frac{1}{n} \sum_{i=1}^{n} (w x_i + b - y_i)^2,
#
# .. math::
#
#    \frac{\partial L}{\partial w} = \frac{2}{n} \sum_{i=1}^{n}
#    (w x_i + b - y_i)\, x_i,
#    \qquad
#    \frac{\partial L}{\partial b} = \frac{2}{n} \sum_{i=1}^{n}
#    (w x_i + b - y_i).
#
# The square contributes the factor :math:`2 (w x_i + b - y_i)`, and the
# inside of the square contributes :math:`x_i` for :math:`w` and :math:`1` for
# :math:`b`. Compute both with plain numbers (``.item()`` gives a Python
# float, so autograd records nothing here) and compare:
residual = w.item() * x + b.item() - y
grad_w = 2 * (residual * x).mean()
grad_b = 2 * residual.mean()
print(f"by hand:  {grad_w.item():.6f}  {grad_b.item():.6f}")
print(f"autograd: {w.grad.item():.6f}  {b.grad.item():.6f}")
torch.testing.assert_close(w.grad, grad_w)
torch.testing.assert_close(b.grad, grad_b)

# sphinx_gallery_start_ignore
assert not residual.requires_grad
# sphinx_gallery_end_ignore

# %%
# A second example: a vector
# ---------------------------
# Gradients work for a vector of parameters the same way. For
# :math:`f(\mathbf{v}) = 2\,\mathbf{v}^\top \mathbf{v} = 2 \sum_j v_j^2`, each
# partial derivative is :math:`\partial f / \partial v_j = 4 v_j`, so the
# gradient is :math:`4\mathbf{v}`:
v = torch.arange(4.0, requires_grad=True)
f = 2 * torch.dot(v, v)
f.backward()
print(v.grad)
print(v.grad == 4 * v)

# sphinx_gallery_start_ignore
assert torch.equal(v.grad, torch.tensor([0.0, 4.0, 8.0, 12.0]))
assert (v.grad == 4 * v).all()
# sphinx_gallery_end_ignore

# %%
# Update the parameters
# ---------------------
# A gradient descent step moves each parameter a small step against its
# gradient: :math:`w \leftarrow w - \eta\, \partial L / \partial w`, with a
# learning rate :math:`\eta`:
lr = 0.1

# %%
# Common mistake: updating a parameter while autograd records
# -----------------------------------------------------------
# Written directly, the update fails with an error. To show an error
# without stopping the script, the tutorials run the failing line inside
# :func:`~autograd_notes.expect_error` from the package:
# ``expect_error(RuntimeError, pattern)`` checks that the block raises that
# error with a message matching ``pattern``, prints the message, and lets
# the script go on (it fails if the block raises nothing). Without the
# package, write ``try:``, the line, then
# ``except RuntimeError as err: print(err)``.
with expect_error(RuntimeError, "leaf Variable that requires grad .* in-place"):
    w -= lr * w.grad

# sphinx_gallery_start_ignore
from contextlib import redirect_stdout
from io import StringIO

try:
    w -= lr * w.grad
except RuntimeError as _err:  # the plain form catches the same error
    _caught = str(_err)
assert ("leaf Variable that requires grad" in _caught, w.item()) == (True, 0.0)
with redirect_stdout(_out := StringIO()), expect_error(ZeroDivisionError, "zero"):
    1 / 0
assert _out.getvalue() == "ZeroDivisionError: division by zero\n"
_nothing = expect_error(AssertionError, "nothing was raised")
with redirect_stdout(StringIO()), _nothing, expect_error(RuntimeError, "anything"):
    pass
# sphinx_gallery_end_ignore

# %%
# Outside ``no_grad``, autograd tries to record the update like any other
# operation on ``w``, and it refuses to record one that overwrites, in place,
# a leaf that requires grad. The update is not part of the computation you
# want to differentiate anyway, so run it under ``torch.no_grad()``, where
# autograd records nothing: the parameters change value and stay leaves
# without a ``grad_fn``.
with torch.no_grad():
    w -= lr * w.grad
    b -= lr * b.grad
print(f"w = {w.item():.6f}, b = {b.item():.6f}")
print(f"is_leaf={w.is_leaf}, requires_grad={w.requires_grad}, grad_fn={w.grad_fn}")

# sphinx_gallery_start_ignore
assert torch.equal(torch.stack([w, b]), -lr * torch.stack([w.grad, b.grad]))
assert (w.is_leaf, w.requires_grad, w.grad_fn) == (True, True, None)
with torch.no_grad():
    assert not (w * 2).requires_grad
# sphinx_gallery_end_ignore

# %%
# Common mistake: forgetting to reset the gradient
# ------------------------------------------------
# ``backward()`` *adds* the new gradient to whatever ``.grad`` already holds.
# Start from an empty gradient, run the forward and backward passes once,
# then once more without resetting: ``.grad`` now holds twice the gradient.
w.grad, b.grad = None, None
((w * x + b - y) ** 2).mean().backward()
once = w.grad.clone()
((w * x + b - y) ** 2).mean().backward()
print(f"after one backward: {once}, after two: {w.grad}, ratio {w.grad / once}")

# sphinx_gallery_start_ignore
assert torch.equal(w.grad, 2 * once)
w.grad.zero_()
((w * x + b - y) ** 2).mean().backward()
assert torch.equal(w.grad, once)  # zero_() then backward: one gradient again
# sphinx_gallery_end_ignore

# %%
# In a training loop this silently mixes old gradients into every step. The
# fix is to reset ``.grad`` once the update has used it: ``w.grad = None``
# (the next ``backward()`` then stores a fresh gradient) or
# ``w.grad.zero_()``.
#
# The whole loop
# --------------
# One training step is: forward, ``backward()``, update under ``no_grad``,
# reset. Five steps from a fresh start, printing the loss:
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
losses = []
for step in range(5):
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad, b.grad = None, None
    losses.append(loss.item())
    print(f"step {step}: loss {loss.item():.4f}")

# sphinx_gallery_start_ignore
assert losses == sorted(set(losses), reverse=True)  # strictly decreasing
# sphinx_gallery_end_ignore

# %%
# The same loop with an optimizer
# -------------------------------
# ``torch.optim.SGD`` does the update and the reset for you: ``step()``
# subtracts ``lr`` times ``.grad`` from each parameter, under ``no_grad``, and
# ``zero_grad()`` sets every ``.grad`` to ``None``. Here the losses and the
# final parameters are the same numbers, bit for bit. That holds for these
# single numbers; on a large tensor, ``step()`` computes
# ``w.add_(w.grad, alpha=-lr)``, which rounds some entries differently in the
# last bit, so compare those with ``torch.testing.assert_close``:
w_sgd = torch.tensor(0.0, requires_grad=True)
b_sgd = torch.tensor(0.0, requires_grad=True)
optimizer = torch.optim.SGD([w_sgd, b_sgd], lr=lr)
losses_sgd = []
for _ in range(5):
    optimizer.zero_grad()
    loss = ((w_sgd * x + b_sgd - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses_sgd.append(loss.item())
print(losses_sgd == losses, torch.equal(w_sgd, w), torch.equal(b_sgd, b))

# sphinx_gallery_start_ignore
assert losses_sgd == losses
assert torch.equal(torch.stack([w_sgd, b_sgd]), torch.stack([w, b]))
optimizer.zero_grad()
assert w_sgd.grad is None  # zero_grad() sets .grad to None by default
assert (w_sgd.is_leaf, w_sgd.grad_fn) == (True, None)
_start, _g = torch.randn(2, 1000, generator=torch.Generator().manual_seed(0))
_big = torch.nn.Parameter(_start.clone())
_big.grad = _g.clone()
torch.optim.SGD([_big], lr=lr).step()
assert torch.equal(_big.detach(), _start.add(_g, alpha=-lr))
assert not torch.equal(_big.detach(), _start - lr * _g)  # differs in the last bits
torch.testing.assert_close(_big.detach(), _start - lr * _g)
# sphinx_gallery_end_ignore

# %%
# The graph is recorded as the code runs
# --------------------------------------
# Autograd does not read your code; it records the operations that actually
# run. So a Python loop or ``if`` whose path depends on the data is fine. This
# function doubles its input until it reaches 100 in absolute value, then
# flips the sign of a negative result:


def grow(a: torch.Tensor) -> torch.Tensor:
    out = a * 2
    while out.abs() < 100:
        out = out * 2
    if out < 0:
        out = -out
    return out


# %%
# Along the path taken, each operation multiplies by a constant (:math:`2` or
# :math:`-1`), so :math:`\mathrm{grow}(a) = k\,a` for a factor :math:`k` set
# by the path, and the derivative is that same :math:`k =
# \mathrm{grow}(a) / a`. Different inputs take different paths, record
# different graphs, and get different gradients, each exact for its path.
# In the printouts, ``[0-8] MulBackward0 ×9`` folds nine ``MulBackward0``
# nodes in a row, numbers 0 to 8, into one line:
for start in (0.3, -7.0):
    a = torch.tensor(start, requires_grad=True)
    out = grow(a)
    out.backward()
    print(f"a = {start}: a.grad = {a.grad.item()}, grow(a) / a = {(out / a).item()}")
    print(format_graph(out, names={"a": a}))
    # sphinx_gallery_start_ignore
    # 0.3 is doubled 9 times (to 153.6): k = 2**9; -7.0 4 times, then negated
    _k, _doublings = {0.3: (512.0, 9), -7.0: (-16.0, 4)}[start]
    assert a.grad.item() == (out / a).item() == _k
    _graph = [type(n).__name__ for n in walk_graph(out)]
    assert _graph.count("MulBackward0") == _doublings
    assert ("NegBackward0" in _graph) == (start < 0)  # the branch taken
    # sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** For ``u = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)``
# and ``s = (u ** 3).sum()``, what is ``u.grad`` after ``s.backward()``?
#
# **Solution**

# %%
u = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
s = (u**3).sum()
s.backward()
print(u.grad)  # ds/du_j = 3 u_j ** 2

# sphinx_gallery_start_ignore
assert torch.equal(u.grad, torch.tensor([3.0, 12.0, 27.0]))
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** With ``q = torch.tensor(3.0, requires_grad=True)``, you call
# ``(q ** 2).backward()`` and then ``(5 * q).backward()`` without resetting.
# What does ``q.grad`` hold?
#
# **Solution**

# %%
q = torch.tensor(3.0, requires_grad=True)
(q**2).backward()
(5 * q).backward()
print(q.grad)  # 2 * q + 5: the two gradients are added

# sphinx_gallery_start_ignore
assert q.grad.item() == 11.0
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# You have now seen every piece of a training step. The next tutorial,
# :ref:`leaf tensors <sphx_glr_tutorials_02_leaf_tensors.py>`, explains
# which tensors get a ``.grad``; the ones after it follow the graph and the
# chain rule node by node, then keep a value out of the gradient.
