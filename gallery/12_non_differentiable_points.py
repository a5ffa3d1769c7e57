"""
What gradient does PyTorch give where the function has no derivative?
=====================================================================

``relu`` has a kink at 0, ``max`` has ties, ``sqrt`` has an infinite slope
at 0. There is no derivative there, yet autograd returns a number, and
PyTorch documents the rule that picks it. After this tutorial you can state
that rule, predict what common operations give, spot those that break it
(``clamp`` did until torch 2.14), sample with a gradient, avoid the
``torch.where`` trap that turns a gradient into ``nan``, and tell autograd
which outputs of your own ``Function`` have no gradient at all.
"""

# %%
# The rule
# --------
# PyTorch's `Autograd mechanics
# <https://pytorch.org/docs/stable/notes/autograd.html>`_ page ("Gradients
# for non-differentiable functions") defines the gradient of each elementary
# operation by the first case that applies at the point:
#
# 1. **Differentiable:** the gradient.
# 2. **Locally convex** (the graph bends up, like ``abs`` at 0): the
#    *subgradient of minimum norm*. A subgradient is the slope of a line
#    through the point that stays below the graph; the one closest to 0 is
#    chosen because its negative is the steepest descent direction.
# 3. **Locally concave** (bends down): likewise, the *supergradient* (line
#    above the graph) closest to 0.
# 4. **Defined, but none of the above:** the limit of the gradient at
#    nearby points, possibly ``inf``; if there are several, any one of them.
# 5. **Undefined** (``sqrt(-1)``, ``log(-1)``, a ``nan`` input): any value,
#    usually ``nan``.
# 6. **Not a deterministic function** (random sampling): marked
#    non-differentiable, so a backward through it raises an error.
#
# In one dimension, cases 1 to 3 are one recipe: the slopes allowed are
# those between the slope on the left and the slope on the right, so take
# the number between them that is closest to 0. ``rule_1d`` measures both
# slopes with a small step and does exactly that; ``grad_at`` asks autograd.
import torch
import torch.nn.functional as F

from autograd_notes import expect_error

_ = torch.manual_seed(0)


def grad_at(f, point):
    x = torch.tensor(point, requires_grad=True)
    f(x).sum().backward()
    return x.grad


def rule_1d(f, x, h=2.0**-20):
    x = torch.tensor([x], dtype=torch.float64)
    left = ((f(x) - f(x - h)) / h).item()
    right = ((f(x + h) - f(x)) / h).item()
    return min(max(0.0, min(left, right)), max(left, right))


# %%
# Which operations follow it
# --------------------------
# Each row evaluates one operation where the rule has work to do. For
# ``SLOPES`` rows ``rule_1d`` computes the rule's answer; the others are
# explained below. ``backward_of`` reports an error instead of raising it.
SLOPES, ANY, ERROR, HALF = "slopes", "anything", "an error", [0.5, 0.5]


def backward_of(f, point):
    try:
        return grad_at(f, point).tolist()
    except RuntimeError:
        return ERROR


def agrees(gives, rule):
    if isinstance(gives, str) or isinstance(rule, str):
        return rule in (ANY, gives)
    return torch.allclose(torch.tensor(gives), torch.tensor(rule))


def show(values):
    return values if isinstance(values, str) else ", ".join(f"{v:g}" for v in values)


rows = [  # operation, the input x, the rule's answer
    ("relu(x)", torch.relu, [0.0], SLOPES),
    ("abs(x)", torch.abs, [0.0], SLOPES),
    ("leaky_relu(x, 0.1)", lambda t: F.leaky_relu(t, 0.1), [0.0], SLOPES),
    ("relu6(x)", F.relu6, [6.0], SLOPES),
    ("x.clamp(0, 1)", lambda t: t.clamp(0.0, 1.0), [1.0], SLOPES),
    ("x.clamp(min=0)", lambda t: t.clamp(min=0.0), [0.0], SLOPES),
    ("x.max()", torch.max, [3.0, 3.0], HALF),
    ("x.max(dim=0).values", lambda t: t.max(dim=0).values, [3.0, 3.0], HALF),
    ("maximum(x[0], x[1])", lambda t: torch.maximum(*t), [1.0, 1.0], HALF),
    ("fmax(x[0], x[1])", lambda t: torch.fmax(*t), [1.0, 1.0], HALF),
    ("x[0].clamp(min=x[1])", lambda t: t[0].clamp(min=t[1]), [0.0, 0.0], HALF),
    ("vector_norm(x)", torch.linalg.vector_norm, [0.0, 0.0], [0.0, 0.0]),
    ("sqrt(x)", torch.sqrt, [0.0], [float("inf")]),
    ("sqrt(x)", torch.sqrt, [-1.0], ANY),
    ("log(x)", torch.log, [-1.0], ANY),
    ("bernoulli(x)", torch.bernoulli, [0.5], ERROR),
    ("binomial(4, x)", lambda t: torch.binomial(t.new_tensor([4.0]), t), [0.5], ERROR),
]
print(f"torch {torch.__version__}")
print(f"{'operation':22}{'at x =':10}{'gives':11}{'rule':11}follows")
table = []
for op, f, point, rule in rows:
    rule = [rule_1d(f, point[0])] if rule == SLOPES else rule
    gives = backward_of(f, point)
    table.append((show(gives), show(rule), agrees(gives, rule)))
    print(f"{op:22}{show(point):10}{show(gives):11}{show(rule):11}{table[-1][2]}")

# sphinx_gallery_start_ignore
import warnings
from contextlib import redirect_stdout

_new = torch.__version__ >= (2, 14)  # clamp, fmax and fmin follow the rule
_c, _t = ("0", "0.5, 0.5") if _new else ("1", "1, 0")
_gives = ["0", "0", "0.1", "0", _c, _c, "0.5, 0.5", "1, 0", "0.5, 0.5", _t, _t]
_gives += ["0, 0", "inf", "nan", "-1", "0", ERROR]
assert [g for g, _, _ in table] == _gives
_rules = ["0", "0", "0.1", "0", "0", "0", *["0.5, 0.5"] * 5, "0, 0", "inf"]
assert [r for _, r, _ in table] == [*_rules, ANY, ANY, ERROR, ERROR]
_ok = [True] * 4 + [_new] * 2 + [True, False, True] + [_new] * 2 + [True] * 4
assert [ok for _, _, ok in table] == [*_ok, False, True]
assert abs(rule_1d(torch.sin, 0.0) - 1.0) < 1e-9  # smooth: the derivative
assert grad_at(F.relu6, [0.0, 6.0]).tolist() == [0.0, 0.0]
assert grad_at(F.hardtanh, [-1.0, 1.0]).tolist() == [0.0, 0.0]
assert grad_at(torch.min, [1.0, 1.0, 3.0]).tolist() == [0.5, 0.5, 0.0]
assert grad_at(lambda t: torch.sqrt((t**2).sum()), [0.0, 0.0]).isnan().all()
assert grad_at(torch.amax, [1.0, 3.0, 3.0]).tolist() == [0.0, 0.5, 0.5]
assert show(grad_at(lambda t: torch.fmin(*t), [1.0, 1.0]).tolist()) == _t
with redirect_stdout(None), expect_error(RuntimeError, "aten::binomial is not"):
    grad_at(rows[-1][1], [0.5])
assert torch.bernoulli(torch.tensor(0.5, requires_grad=True)).grad_fn is not None
assert grad_at(lambda t: t.clamp(0.0, 6.0), [0.0, 6.0]).tolist() == [1 - _new] * 2
assert grad_at(lambda t: t.clamp(max=1.0), [1.0]).item() == 1 - _new
_inside = grad_at(rows[4][1], [-1.0, 0.0, 0.5, 1.0, 2.0]).tolist()  # clamp(0, 1)
assert _inside == [0.0, 1 - _new, 1.0, 1 - _new, 0.0]
_bound = torch.tensor(0.0)  # a tensor bound that does not require grad
assert grad_at(lambda t: t.clamp(min=_bound), [0.0]).item() == (0.5 if _new else 1.0)
with warnings.catch_warnings():  # forward mode's first use: a torch.jit deprecation
    warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated")
    _, _t = torch.func.jvp(lambda t: t.clamp(min=_bound), (_bound,), (_bound + 1,))
assert _t.item() == (0.5 if _new else 0.0)  # forward mode at the tie
_split = [0.5, 0.0, 0.5] if _new else [1.0, 0.0, 0.0]  # two tensor bounds, x == max
assert grad_at(lambda t: t[0].clamp(t[1], t[2]), [1.0, 0.0, 1.0]).tolist() == _split
# sphinx_gallery_end_ignore

# %%
# **Kinks.** ``relu`` at 0 has slopes 0 and 1, ``abs`` -1 and 1,
# ``leaky_relu`` 0.1 and 1, ``relu6`` at 6 (concave there) 1 and 0: PyTorch
# gives the one closest to 0, as does ``hardtanh`` at its corners.
#
# **Ties.** At a tie, the max of several inputs may share the gradient among
# the tied ones in any proportion; the shortest such vector is the even
# split, which ``x.max()`` (and ``x.min()``, ``x.amax()``) and
# ``torch.maximum`` give. ``x.max(dim=0)`` also returns an index and sends
# the whole gradient there (the first tied entry): a subgradient, but not the
# shortest. Two ways of writing "the max" can train differently on ties.
#
# **Norms.** Every vector of length at most 1 is a subgradient of the norm at
# 0; the shortest is 0, and ``vector_norm`` gives it. A hand-written
# ``torch.sqrt((x**2).sum())`` gives ``nan`` there: the rule applies to each
# elementary operation, and ``x**2``'s 0 times ``sqrt``'s ``inf`` is ``nan``.
#
# **Edges and undefined points.** ``sqrt`` is concave, but no line through
# the origin stays above :math:`\sqrt{x}`, so case 4 applies: the slope
# :math:`1 / (2\sqrt{x})` grows without bound as :math:`x \to 0`, and the
# gradient is ``inf``. ``sqrt(-1)`` is undefined and gives ``nan``;
# ``log(-1)``, undefined too, gives a finite -1 (just :math:`1/x`), which
# case 5 allows: never trust a gradient where the value is ``nan``.
#
# **Randomness.** ``torch.binomial`` raises "derivative for aten::binomial is
# not implemented", as case 6 asks, but ``torch.bernoulli`` quietly returns
# a zero gradient.
#
# Sampling with a gradient: ``rsample``
# -------------------------------------
# A distribution's ``sample()`` has no ``grad_fn``, even when the parameters
# require grad. ``rsample()`` *reparameterises*: a normal sample is
# ``loc + scale * eps``, the noise ``eps`` drawn from :math:`N(0, 1)` on its
# own, so it is a differentiable function of ``loc`` (gradient 1) and
# ``scale`` (gradient ``eps``). ``has_rsample`` says which distributions
# can: a discrete sample has no useful gradient, and its ``rsample()``
# raises.
from torch.distributions import Bernoulli, Normal

loc = torch.tensor([0.0, 1.0], requires_grad=True)
scale = torch.tensor([1.0, 2.0], requires_grad=True)
normal = Normal(loc, scale)
print("sample() grad_fn:", normal.sample().grad_fn)
_ = torch.manual_seed(1)
normal.rsample().sum().backward()
print("loc.grad:", loc.grad, " scale.grad:", scale.grad)
print("has_rsample:", normal.has_rsample, Bernoulli(0.5).has_rsample)
# sphinx_gallery_start_ignore
_eps = torch.randn(2, generator=torch.Generator().manual_seed(1))  # the noise
assert torch.equal(torch.stack([loc.grad, scale.grad]), torch.stack([_eps**0, _eps]))
with redirect_stdout(None), expect_error(NotImplementedError, ""):
    Bernoulli(0.5).rsample()
# sphinx_gallery_end_ignore

# %%
# ``clamp`` at its bounds changed in torch 2.14
# ---------------------------------------------
# Up to torch 2.13, ``clamp`` counts its bounds as inside the range and lets
# the whole gradient (1) through at ``x == min`` and ``x == max``. That is a
# subgradient, but not the one closest to 0: it breaks the rule, and
# ``x.clamp(min=0)`` and ``x.clamp(0, 6)`` disagree with ``relu`` and
# ``relu6``, the same functions. PyTorch had chosen 1 on purpose in 2018
# (`pytorch#7049 <https://github.com/pytorch/pytorch/pull/7049>`_), after
# users complained that a value sitting on a bound got no gradient. Torch
# 2.14 follows the rule (`pytorch#191142
# <https://github.com/pytorch/pytorch/pull/191142>`_) for each signature of
# ``clamp`` apart: a number bound gives 0, like ``relu``; a tensor bound ties
# with the input and each gets half, like ``torch.maximum``, even when the
# bound does not require grad. So ``x.clamp(min=0.)`` and
# ``x.clamp(min=torch.tensor(0.))`` now train differently at the bound.
# Forward mode gives 0.5 there too (2.13's gave 0, where its backward gave
# 1). ``fmax`` and ``fmin`` changed the same way. Code that relied on the
# gradient at a bound behaves differently (exercise 1).
#
# Common mistake: ``torch.where`` does not protect the gradient
# --------------------------------------------------------------
# To keep :math:`\sqrt{x}` away from :math:`x \le 0`, one writes
# ``torch.where(x > 0, torch.sqrt(x), 0)``. The forward pass is clean, yet
# the gradient is ``nan`` at every point the ``where`` was meant to protect:
x = torch.tensor([-1.0, 0.0, 4.0], requires_grad=True)
y = torch.where(x > 0, torch.sqrt(x), 0.0)
y.sum().backward()
print("y:     ", y)
print("x.grad:", x.grad)
# sphinx_gallery_start_ignore
assert y.tolist() == [0.0, 0.0, 2.0]
assert (x.grad[:2].isnan().all(), x.grad[2].item()) == (True, 0.25)
with warnings.catch_warnings(record=True) as _caught, redirect_stdout(None):
    warnings.simplefilter("always")
    with torch.autograd.detect_anomaly(), expect_error(RuntimeError, "'SqrtBackward0'"):
        torch.where(x > 0, torch.sqrt(x), 0.0).sum().backward()
assert any("Error detected in SqrtBackward0" in str(w.message) for w in _caught)
assert any("increase the runtime" in str(w.message) for w in _caught)
_x = torch.tensor([0.0, 4.0], requires_grad=True)
(torch.sqrt(_x) * (_x > 0)).sum().backward()
assert _x.grad[0].isnan()
x.grad = None
# sphinx_gallery_end_ignore

# %%
# ``sqrt`` ran on *all* entries, and ``where`` sends a zero gradient to the
# branch it did not pick, which ``sqrt``'s backward multiplies by its slope:
# :math:`0 \cdot \infty` at 0, :math:`0 \cdot \text{nan}` at -1, both
# ``nan``. A mask multiplied in instead of ``where`` fails the same way.
# ``torch.autograd.detect_anomaly()`` finds the culprit in a large model:
# backward raises at the first node whose gradient contains a ``nan``, here
# ``SqrtBackward0`` (it is slow: use it only while debugging).
#
# The fix, the "double ``where``": keep the unsafe values away from ``sqrt``
# *before* it runs, by swapping in a harmless input (here 1), then select as
# before. Now both branches have finite gradients:
safe_x = torch.where(x > 0, x, 1.0)
y = torch.where(x > 0, torch.sqrt(safe_x), 0.0)
y.sum().backward()
print("y:     ", y)
print("x.grad:", x.grad)
# sphinx_gallery_start_ignore
assert (y.tolist(), x.grad.tolist()) == ([0.0, 0.0, 2.0], [0.0, 0.0, 0.25])
# sphinx_gallery_end_ignore

# %%
# Outputs that have no gradient, in your own ``Function``
# -------------------------------------------------------
# A custom :class:`torch.autograd.Function`
# (:ref:`sphx_glr_tutorials_09_writing_a_custom_function.py`) may return
# something with no derivative at all, such as the *index* of the largest
# entry. ``ctx.mark_non_differentiable(index)`` says so: that output never
# requires grad. ``backward`` still receives one gradient per output
# (``received`` records the index's), *materialized* as a tensor of zeros,
# allocated only to be ignored. After ``ctx.set_materialize_grads(False)``
# it is ``None`` instead, and ``backward`` must handle ``None`` in every
# gradient it reads.
received = []


class MaxWithIndex(torch.autograd.Function):  # the max and where it is
    @staticmethod
    def forward(x, materialize=True):
        index = x.argmax()
        return x[index], index

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, materialize = inputs
        ctx.mark_non_differentiable(output[1])
        ctx.set_materialize_grads(materialize)
        ctx.save_for_backward(output[1])
        ctx.size = x.shape[0]

    @staticmethod
    def backward(ctx, grad_value, grad_index):
        received.append(grad_index)
        (index,) = ctx.saved_tensors
        grad_x = grad_value.new_zeros(ctx.size)
        grad_x[index] = grad_value
        return grad_x, None


x = torch.tensor([2.0, 7.0, 5.0], requires_grad=True)
value, index = MaxWithIndex.apply(x)
print("requires_grad: value", value.requires_grad, " index", index.requires_grad)
value.backward()
print("x.grad:", x.grad, " backward received for the index:", received[-1])
MaxWithIndex.apply(x, False)[0].backward()  # materialize=False
print("and with set_materialize_grads(False):", received[-1])
# sphinx_gallery_start_ignore
assert value.grad_fn.name() == "MaxWithIndexBackward"
assert (index.grad_fn, index.requires_grad) == (None, False)
assert torch.equal(received[0], torch.zeros((), dtype=torch.int64))
assert received[1] is None
assert x.grad.tolist() == [0.0, 2.0, 0.0]


class _Mask(torch.autograd.Function):  # a 0/1 mask: no derivative
    @staticmethod
    def forward(ctx, x, mark):
        mask = (x > 0).to(x.dtype)
        ctx.mark_non_differentiable(*[mask][:mark])  # only if mark
        return mask

    @staticmethod
    def backward(ctx, grad_mask):
        return torch.zeros_like(grad_mask), None


_x = torch.tensor([-1.0, 2.0], requires_grad=True)
(_mask := _Mask.apply(_x, False)).sum().backward()
assert (_mask.requires_grad, _x.grad.tolist()) == (True, [0.0, 0.0])
assert not _Mask.apply(_x, True).requires_grad
with redirect_stdout(None), expect_error(RuntimeError, "floating point dtype"):
    torch.zeros(1, dtype=torch.int64).requires_grad_()
# sphinx_gallery_end_ignore

# %%
# An integer output can never require grad, so for an index the mark mostly
# states intent. It matters for a *floating-point* output without a
# derivative, such as a 0/1 mask: unmarked, it requires grad, and a loss
# built on it runs and quietly yields a zero gradient, as if the mask were
# differentiable.
#
# Exercises
# ---------
#
# **1. Predict.** A weight ``w`` must stay in :math:`[0, 1]`, so the loss
# uses ``w.clamp(0, 1)``: :math:`(\mathrm{clamp}(w, 0, 1) - 0.5)^2`. It
# starts exactly on the bound, ``w = 0``. Where is it after 20 steps of SGD
# (learning rate 0.1) on torch 2.13, and on torch 2.14?
#
# **Solution**

# %%
w = torch.tensor(0.0, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for _ in range(20):
    optimizer.zero_grad()
    ((w.clamp(0.0, 1.0) - 0.5) ** 2).backward()
    optimizer.step()
print(f"torch {torch.__version__}: w = {w.item():.4f}")
# 2.13: gradient -1 at the bound, w moves in; 2.14: gradient 0, w never moves
# sphinx_gallery_start_ignore
assert (w.item() == 0.0) if _new else (abs(w.item() - 0.5 * (1 - 0.8**20)) < 1e-6)
# sphinx_gallery_end_ignore

# %%
# **2. Write.** The entropy term :math:`x \log x` is 0 at :math:`x = 0` by
# convention, but ``x * torch.log(x)`` gives ``nan`` there. Write a version
# whose value is 0 at 0 and whose gradient is finite everywhere on
# :math:`x \ge 0`.
#
# **Solution**

# %%
x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
safe_x = torch.where(x > 0, x, 1.0)
y = torch.where(x > 0, x * torch.log(safe_x), 0.0)
y.sum().backward()
print("value:   ", y)
print("gradient:", x.grad)  # 1 + log(x) for x > 0, and 0 at the protected point
# sphinx_gallery_start_ignore
assert (torch.tensor(0.0) * torch.log(torch.tensor(0.0))).isnan()
assert (y.tolist()[:2], x.grad.isfinite().all().item()) == ([0.0, 0.0], True)
assert torch.allclose(x.grad[1:], 1 + torch.log(x.detach()[1:]))
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_13_higher_order_gradients.py`: gradients of
# gradients, for penalties and second-order methods.
