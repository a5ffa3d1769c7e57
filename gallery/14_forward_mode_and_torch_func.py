"""
When is forward mode better, and what is ``torch.func``?
========================================================

``backward()`` is *reverse mode*: one pass gives the derivative of one output
with respect to every input. Forward mode is the mirror image: one pass gives
the derivative of every output along one input direction. This tutorial
counts the passes each mode needs for a tall and a wide Jacobian, and
introduces ``torch.func``, which differentiates *functions* rather than
tensors, with per-sample gradients as the example.
"""

# %%
# Forward mode: a tangent travels with the value
# ----------------------------------------------
# In forward mode every tensor carries a second tensor, its *tangent*: the
# derivative of the value along a direction :math:`v` you choose. Such a pair
# is a *dual tensor*. ``torch.autograd.forward_ad.make_dual`` builds one,
# every operation updates value and tangent together, and ``unpack_dual``
# reads them out. After one forward pass the tangent of the output is the
# Jacobian-vector product :math:`Jv`; no graph is stored and nothing runs
# backwards. ``torch.func.jvp`` does the same in one call. Our example maps 3
# inputs to 100 outputs:
import torch
import torch.autograd.forward_ad as fwAD
from torch import nn
from torch.func import functional_call, grad, jacfwd, jacrev, jvp, vmap

from autograd_notes import expect_error

_ = torch.manual_seed(0)
# sphinx_gallery_start_ignore
import warnings

with warnings.catch_warnings():  # 2.13: a DeprecationWarning, from 2.14: FutureWarning
    warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated")
    import torch._decomp.decompositions_for_jvp  # forward mode's first use imports it
# sphinx_gallery_end_ignore
A = torch.randn(100, 3)
calls = 0


def tall(x):
    """3 inputs, 100 outputs; counts how often it runs."""
    global calls
    calls += 1
    return torch.tanh(A @ x)


x = torch.tensor([0.5, -1.0, 2.0])
v = torch.tensor([1.0, 0.0, 0.0])  # the direction: the first input
with fwAD.dual_level():
    y = tall(fwAD.make_dual(x, v))
    value, tangent = fwAD.unpack_dual(y)
print("tangent (first 4 of 100):", tangent[:4])
value_f, jv = jvp(tall, (x,), (v,))  # function, point, direction
J = torch.autograd.functional.jacobian(tall, x)
print("J:", tuple(J.shape), "  tangent == jv == J @ v:", torch.allclose(jv, J @ v))
# sphinx_gallery_start_ignore
_pairs = [(tangent, J @ v), (jv, tangent), (value, torch.tanh(A @ x)), (value_f, value)]
assert all(torch.allclose(_a, _b) for _a, _b in _pairs)
assert not y.requires_grad  # no graph was recorded
# sphinx_gallery_end_ignore

# %%
# Counting passes for a whole Jacobian
# ------------------------------------
# A forward pass with tangent :math:`e_j` (the :math:`j`-th unit vector) gives
# column :math:`j` of :math:`J`; a backward pass with ``grad_outputs``
# :math:`e_i` gives row :math:`i`
# (:ref:`sphx_glr_tutorials_06_backward_of_non_scalars.py`). So an
# :math:`m \times n` Jacobian costs :math:`n` forward-mode passes or
# :math:`m` backward passes. The function below builds :math:`J` both ways,
# counting calls of ``f`` and, with a hook on the output, backward passes.


def jacobian_both_ways(f, x):
    forward_passes = backward_passes = 0

    def counted_f(x):
        nonlocal forward_passes
        forward_passes += 1
        return f(x)

    def count(grad):
        nonlocal backward_passes
        backward_passes += 1

    columns = [jvp(counted_f, (x,), (e,))[1] for e in torch.eye(len(x))]
    x = x.detach().requires_grad_()
    y = f(x)
    y.register_hook(count)
    rows = [
        torch.autograd.grad(y, x, e, retain_graph=True)[0] for e in torch.eye(len(y))
    ]
    J_fwd, J_rev = torch.stack(columns, dim=1), torch.stack(rows)
    return J_fwd, forward_passes, J_rev, backward_passes


B = torch.randn(3, 100)


def wide(x):
    """100 inputs, 3 outputs."""
    return torch.tanh(B @ x)


for name, f, point in [("tall", tall, x), ("wide", wide, torch.randn(100))]:
    J_fwd, n_fwd, J_rev, n_rev = jacobian_both_ways(f, point)
    J = torch.autograd.functional.jacobian(f, point)
    same = torch.allclose(J_fwd, J) and torch.allclose(J_rev, J)
    print(f"{name} {tuple(J.shape)}: {n_fwd:3} forward-mode passes,", end=" ")
    print(f"{n_rev:3} backward passes, both match: {same}")
    # sphinx_gallery_start_ignore
    assert (same, n_fwd, n_rev) == (True, J.shape[1], J.shape[0])  # (n, m)
    # sphinx_gallery_end_ignore

# %%
# Forward mode wins for a *tall* Jacobian (few inputs, many outputs),
# reverse mode for a *wide* one (many inputs, few outputs). Training is the
# extreme wide case: a scalar loss of millions of parameters needs one
# backward pass, and forward mode would need millions of passes.
#
# ``torch.func.jacfwd`` and ``torch.func.jacrev`` build :math:`J` in the same
# way, but hand all the unit vectors to ``vmap`` (below), which runs them as
# one batched computation: ``f`` itself runs once, and the same number of
# products are slices of one larger tensor operation.
for name, transform in [("jacfwd", jacfwd), ("jacrev", jacrev)]:
    calls = 0
    J_func = transform(tall)(x)
    ran = calls
    matches = torch.allclose(J_func, torch.autograd.functional.jacobian(tall, x))
    print(f"{name}: f ran {ran} time(s), Jacobian matches: {matches}")
    # sphinx_gallery_start_ignore
    assert (ran, matches) == (1, True)
    # sphinx_gallery_end_ignore

# %%
# ``torch.func``: transform functions, not tensors
# ------------------------------------------------
# Everything so far in this series worked on *tensors that carry a graph*:
# a result remembers how it was made, and ``backward()`` walks that record.
# ``torch.func`` works on *functions*: ``grad(f)`` is a new Python function
# that returns the gradient of ``f``, and ``vmap(f)`` is a new function that
# maps ``f`` over a batch dimension. Given inputs that do not require grad,
# the results are ordinary tensors with no ``grad_fn``. Transforms compose:
# ``vmap(grad(f))`` is a batch of gradients, ``jacfwd(jacrev(f))`` a Hessian.
# The transform differentiates for you: ``backward()`` inside it is an error.


def f(x):
    return (x.sin() * x).sum()


df = grad(f)
print("grad(f) is a", type(df).__name__, "; df(x) =", df(x))
print("df(x).grad_fn:", df(x).grad_fn)


def loss_with_backward(x):
    loss = f(x)
    loss.backward()
    return loss


with expect_error(RuntimeError, "backward\\(\\) called inside a functorch transform"):
    grad(loss_with_backward)(x)
# sphinx_gallery_start_ignore
assert [df(t).grad_fn is None for t in (x, nn.Parameter(x))] == [True, False]
assert torch.allclose(df(x), x.cos() * x + x.sin())
assert torch.allclose(jacfwd(jacrev(f))(x), torch.autograd.functional.hessian(f, x))
# sphinx_gallery_end_ignore

# %%
# Per-sample gradients
# --------------------
# A batch's ``loss.backward()`` gives one gradient for the whole batch: that
# of the *mean* of the per-sample losses with the default
# ``reduction="mean"``, of their *sum* with ``reduction="sum"``. Per-sample
# gradients (for differential privacy or data attribution) need one gradient
# per example. With tensors, a loop of one backward per sample gives them,
# and so does one ``torch.autograd.grad`` call with
# ``is_grads_batched=True``: given the unreduced losses and one row of the
# identity per sample as ``grad_outputs``, it runs the backward for all rows
# at once with ``vmap`` (:doc:`/how-to/per-loss-gradients` uses it).
# With ``torch.func`` you write the loss of *one* sample as a function of the
# parameters, take ``grad`` of it, and ``vmap`` it over the batch.
# ``functional_call(model, params, args)`` runs a module with the parameters
# you pass instead of its own. A Python loop, one backward per sample, gives
# the same numbers:
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
inputs, targets = torch.randn(16, 4), torch.randn(16, 1)
params = {name: p.detach() for name, p in model.named_parameters()}


def sample_loss(params, x, y):
    prediction = functional_call(model, params, (x.unsqueeze(0),))
    return nn.functional.mse_loss(prediction, y.unsqueeze(0))


# in_dims: the same params for all, batch dimension 0 of inputs and targets
per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, inputs, targets)
for name, g in per_sample.items():
    shapes = f"{tuple(params[name].shape)!s:7} -> gradients {tuple(g.shape)}"
    print(f"{name:9} parameter {shapes}")

loop = {name: [] for name in params}
for i in range(len(inputs)):
    model.zero_grad()
    nn.functional.mse_loss(model(inputs[i : i + 1]), targets[i : i + 1]).backward()
    for name, p in model.named_parameters():
        loop[name].append(p.grad.clone())
agree = all(
    torch.allclose(per_sample[n], torch.stack(loop[n]), atol=1e-6) for n in params
)
print("vmap(grad) matches the loop:", agree)
# sphinx_gallery_start_ignore
assert agree
_ps, _n, _grads = list(model.parameters()), len(inputs), {}
for _reduction in ["mean", "sum"]:  # a batch's backward, with each reduction
    model.zero_grad()
    nn.functional.mse_loss(model(inputs), targets, reduction=_reduction).backward()
    _grads[_reduction] = [p.grad.clone() for p in _ps]
_losses = nn.functional.mse_loss(model(inputs), targets, reduction="none")[:, 0]
_batched = torch.autograd.grad(_losses, _ps, torch.eye(_n), is_grads_batched=True)
for n, _mean, _sum, _b in zip(params, *_grads.values(), _batched, strict=True):
    assert torch.allclose(_sum, _n * _mean, atol=1e-5)
    assert torch.allclose(torch.stack(loop[n]).mean(0), _mean, atol=1e-6)
    assert torch.allclose(_b, torch.stack(loop[n]), atol=1e-6)
model.zero_grad()
# sphinx_gallery_end_ignore

# %%
# Common mistake: differentiating with respect to the wrong argument
# ------------------------------------------------------------------
# ``grad`` differentiates with respect to the *first argument* of the
# function. A loss that uses ``model`` directly, instead of parameters it
# receives, treats the weights as constants. Nothing fails; you get the
# gradient with respect to the first argument, the input:


def loss_of_input(x, y):
    return nn.functional.mse_loss(model(x.unsqueeze(0)), y.unsqueeze(0))


wrong = vmap(grad(loss_of_input))(inputs, targets)
print("shape:", tuple(wrong.shape), "= one gradient per input feature, not per weight")
# sphinx_gallery_start_ignore
_x0 = inputs[0].clone().requires_grad_()
(_g0,) = torch.autograd.grad(loss_of_input(_x0, targets[0]), _x0)
assert (wrong.shape, torch.allclose(wrong[0], _g0)) == (inputs.shape, True)
# sphinx_gallery_end_ignore

# %%
# The fix is the pattern above: pass the parameters as the first argument
# and run the model with ``functional_call``. (``grad(f, argnums=1)`` picks
# another argument when you need one.)
#
# Exercises
# ---------
#
# **1. Predict.** A loss maps 50 parameters to one number. How many
# forward-mode passes and how many backward passes does its full gradient
# take? Check with ``jacobian_both_ways``.
#
# **Solution**

# %%
weights = torch.randn(50)
_, n_fwd, _, n_rev = jacobian_both_ways(
    lambda w: (w.tanh() ** 2).sum().reshape(1), weights
)
print(f"forward mode: {n_fwd} passes, reverse mode: {n_rev} pass")  # 50 and 1
# sphinx_gallery_start_ignore
assert (n_fwd, n_rev) == (50, 1)
# sphinx_gallery_end_ignore

# %%
# **2. Write.** A Hessian-vector product :math:`Hv` is the forward-mode
# derivative of the gradient along :math:`v`. Compute it for ``f`` above at
# ``x`` along ``u = [1, 1, 1]`` with ``jvp`` and ``grad``, and compare with
# ``torch.autograd.functional.hvp``.
#
# **Solution**

# %%
u = torch.ones(3)
_, hv = jvp(grad(f), (x,), (u,))
print(hv, torch.allclose(hv, torch.autograd.functional.hvp(f, x, u)[1]))
# sphinx_gallery_start_ignore
assert torch.allclose(hv, torch.autograd.functional.hvp(f, x, u)[1])
assert torch.allclose(hv, torch.autograd.functional.hessian(f, x) @ u)
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_15_memory_and_checkpointing.py` looks at the
# memory a reverse-mode graph holds between forward and backward, and how to
# trade it for compute.
