"""
How does mixed precision change the graph and the gradients?
============================================================

Mixed precision runs the operations on autocast's lower-precision list
(matrix products, convolutions) in ``float16`` or ``bfloat16``, those on
its ``float32`` list (most losses; on GPUs also ``exp``, ``log``, softmax,
sums and norms) in ``float32``, and every other operation in the type of
its inputs (the widest, if they differ).
After this tutorial you can say which casts autocast adds to the graph
and in which type each gradient is computed, keep small ``float16``
gradients alive with ``GradScaler``, and write custom Functions for it.
"""

# %%
# Autocast picks a type for each operation
# ----------------------------------------
# Inside ``with torch.autocast("cpu", dtype=torch.bfloat16):``, operations
# on autocast's lower-precision list (matrix products, ``nn.Linear``,
# convolutions) run in ``bfloat16``, those on its ``float32`` list (most
# losses) in ``float32``, and any other in the type of its inputs, with
# the usual promotion. The lists differ between CPU and GPU (see
# `torch.amp <https://docs.pytorch.org/docs/stable/amp.html>`_). The
# parameters themselves stay ``float32``.
import math

import torch
import torch.nn.functional as F
from torch import nn

from autograd_notes import expect_error, format_graph, walk_graph

_ = torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
x, y = torch.randn(16, 4), torch.randn(16, 1)
with torch.autocast("cpu", dtype=torch.bfloat16):
    hidden = model[0](x)  # lower-precision list
    out = model[2](model[1](hidden))  # ReLU follows its input
    loss = F.mse_loss(out, y)  # float32 list
    by_hand = (out - y).square().mean()  # promotion: float32
print("weight:", model[0].weight.dtype, "| hidden:", hidden.dtype)
print("out:", out.dtype, "| loss:", loss.dtype, "| by_hand:", by_hand.dtype)
# sphinx_gallery_start_ignore
_dtypes = [t.dtype for t in (hidden, out, loss, by_hand, model[0].weight)]
assert _dtypes == [torch.bfloat16] * 2 + [torch.float32] * 3
with torch.autocast("cpu", dtype=torch.bfloat16):  # the list, not promotion
    assert F.mse_loss(out, out.detach()).dtype == torch.float32
    assert F.conv1d(x[:, None], torch.ones(1, 1, 2)).dtype == torch.bfloat16
    # on neither list: the type of the inputs, 16 bits or 32
    assert model[1](hidden).dtype == torch.tanh(hidden).dtype == torch.bfloat16
    assert torch.relu(x).dtype == torch.tanh(x).dtype == torch.float32
    assert (hidden + torch.ones(8)).dtype == torch.float32  # the widest
# sphinx_gallery_end_ignore

# %%
# The casts are nodes of the graph
# --------------------------------
# Casting a tensor that requires grad is an operation like any other, so
# autograd records it as a ``ToCopyBackward0`` node. Here ``w`` is a
# ``float32`` leaf and ``x @ w`` runs in ``bfloat16``:
w = torch.randn(4, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    product = x @ w
    z = torch.tanh(product)
print(format_graph(z, names={"w": w}))
# sphinx_gallery_start_ignore
_kinds = [type(n).__name__ for n in walk_graph(z)]
assert _kinds == ["TanhBackward0", "MvBackward0", "ToCopyBackward0", "AccumulateGrad"]
_casts = [n for n in walk_graph(loss) if type(n).__name__ == "ToCopyBackward0"]
_below = [n.next_functions[0][0] for n in _casts]  # one cast per parameter:
_leaves = [id(n.variable) for n in _below if hasattr(n, "variable")]
assert sorted(_leaves) == sorted(id(p) for p in model.parameters())
# sphinx_gallery_end_ignore

# %%
# Read it from the leaf up: ``w`` is cast to ``bfloat16`` (``[2]``) and the
# product uses the copy. ``x`` is cast too, but needs no grad, so its cast
# has no node. Each parameter of ``model`` has its own cast node.
#
# Backward runs each node in the type its forward operation used, even
# after the ``with`` block: the gradient reaching ``product`` is
# ``bfloat16`` (a hook, :ref:`sphx_glr_tutorials_11_hooks.py`, shows it),
# and ``ToCopyBackward0`` casts it back: ``w.grad`` is ``float32``, like
# ``w``. So call ``backward()`` after the block; only the forward pass and
# the loss belong inside.
seen = []
product.register_hook(lambda grad: seen.append(grad.dtype))
z.sum().backward()
print("gradient at product:", seen[0], "| w.grad:", w.grad.dtype)
# sphinx_gallery_start_ignore
assert (seen, w.grad.dtype) == ([torch.bfloat16], torch.float32)
# sphinx_gallery_end_ignore

# %%
# Why ``float16`` needs a scaler
# ------------------------------
# ``bfloat16`` has the range of ``float32`` with fewer digits. ``float16``
# has more digits but a far smaller range: below about ``3e-8`` everything
# rounds to zero. Autocast runs in ``float16`` on the CPU too, so we can
# watch a gradient vanish (the loss times ``1e-8`` stands in for the tiny
# gradients of a large model):
small = torch.tensor([1e-4, 1e-6, 1e-8])
print(small.to(torch.float16))
print(small.to(torch.bfloat16))


def fp16_loss(layer):
    with torch.autocast("cpu", dtype=torch.float16):
        return F.mse_loss(layer(x), y)


layer = nn.Linear(4, 1)
ref = torch.autograd.grad(F.mse_loss(layer(x), y) * 1e-8, layer.weight)[0]
tiny = fp16_loss(layer) * 1e-8
tiny.backward(retain_graph=True)
print("float32:", ref)
print("float16:", layer.weight.grad)
# sphinx_gallery_start_ignore
assert torch.finfo(torch.float16).eps < torch.finfo(torch.bfloat16).eps
assert torch.finfo(torch.bfloat16).tiny == torch.finfo(torch.float32).tiny
assert (torch.tensor([2.9e-8, 3e-8]).half() > 0).tolist() == [False, True]
assert ((ref != 0).all(), small.bfloat16()[2] > 0) == (True, True)
assert (layer.weight.grad.any(), layer.bias.grad.any()) == (False, False)
# sphinx_gallery_end_ignore

# %%
# ``GradScaler`` multiplies the loss by a large *scale* (``2**16`` at
# first), so every gradient is that much larger while it is ``float16``.
# ``scaler.unscale_(optimizer)`` then divides each ``float32`` ``.grad`` by
# the scale. ``torch.amp.GradScaler("cpu")`` exists on every torch this
# site runs.
scaler = torch.amp.GradScaler("cpu")
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
optimizer.zero_grad()
scaler.scale(tiny).backward()
print("scaled:  ", layer.weight.grad)
scaler.unscale_(optimizer)
print("unscaled:", layer.weight.grad)
# sphinx_gallery_start_ignore
assert scaler.get_scale() == 2.0**16
assert torch.allclose(layer.weight.grad, ref, rtol=1e-2)
# sphinx_gallery_end_ignore

# %%
# A training step with a scaler
# -----------------------------
# With too large a scale, a ``float16`` gradient overflows to ``inf`` or
# ``nan``, and ``scaler.step(optimizer)`` skips ``optimizer.step()``: the
# weights do not move. ``scaler.update()`` halves the scale after a skip,
# and doubles it after ``growth_interval`` steps in a row without one
# (2,000 by default, 2 here). ``2**16`` is the largest scale whose
# gradients stay finite here; we start from ``2**18``.
#
# To clip (:ref:`sphx_glr_tutorials_17_gradient_accumulation_and_clipping.py`),
# call ``scaler.unscale_(optimizer)`` first: on the scaled ``.grad``,
# ``clip_grad_norm_`` sees a norm ``2**16`` times too large and clips to
# ``max_norm / 2**16``. ``scaler.step`` does not divide a second time.
_ = torch.manual_seed(0)
layer = nn.Linear(4, 1)
optimizer = torch.optim.SGD(layer.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**18, growth_interval=2)
history = []
for step in range(7):
    before = layer.weight.detach().clone()
    optimizer.zero_grad()
    scaler.scale(fp16_loss(layer)).backward()
    scaler.unscale_(optimizer)  # before clipping
    norm = nn.utils.clip_grad_norm_(layer.parameters(), max_norm=0.5)
    scaler.step(optimizer)  # skipped if a gradient is inf or nan
    scaler.update()
    moved = not torch.equal(layer.weight, before)
    history.append((moved, math.log2(scaler.get_scale())))
    done = "stepped" if moved else "skipped"
    print(f"{step}: {done}, norm {norm:.2f}, scale 2**{history[-1][1]:.0f}")
# sphinx_gallery_start_ignore
_expected = [(False, 17), (False, 16), (True, 16), (True, 17), (False, 16)]
assert history == [*_expected, (True, 16), (True, 17)], history
_grads = torch.cat([p.grad.flatten() for p in layer.parameters()])
assert (norm > 0.5, torch.isclose(_grads.norm(), torch.tensor(0.5))) == (True, True)
_scaler = torch.amp.GradScaler("cpu")  # the wrong order: clip the scaled grads
_scaler.scale(fp16_loss(layer)).backward()
assert nn.utils.clip_grad_norm_(layer.parameters(), 0.5) > 2**15  # scaled norm
_scaler.step(optimizer)  # unscales: the step uses max_norm / 2**16
_grads = torch.cat([p.grad.flatten() for p in layer.parameters()])
assert torch.isclose(_grads.norm(), torch.tensor(0.5 * 2**-16), rtol=1e-3)
# sphinx_gallery_end_ignore

# %%
# Custom Functions under autocast
# -------------------------------
# Autocast reaches into a custom Function's ``forward``
# (:ref:`sphx_glr_tutorials_09_writing_a_custom_function.py`), so
# ``x @ w.T`` there runs in ``bfloat16``. But ``backward`` runs when you
# call ``loss.backward()``, after the ``with`` block, with autocast off:
# ``bfloat16`` gradients meet ``float32`` weights, and the product fails.


class Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w.T

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        return grad_output @ w, grad_output.T @ x


w = torch.randn(3, 4, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    out = Linear.apply(x, w)
print("out:", out.dtype)
with expect_error(RuntimeError, "same dtype"):
    out.float().sum().backward()

# %%
# The fix is two decorators from ``torch.amp``, under ``@staticmethod``.
# ``custom_fwd(device_type="cpu")`` records whether autocast was on in
# ``forward``; ``custom_bwd(device_type="cpu")`` runs ``backward`` in that
# state. They keep it on ``ctx``, so they need the ``forward(ctx, ...)``
# form: on the split form of 09, ``backward`` raises ``AttributeError``.
from torch.amp import custom_bwd, custom_fwd


class AutocastLinear(Linear):
    @staticmethod
    @custom_fwd(device_type="cpu")
    def forward(ctx, x, w):
        return Linear.forward(ctx, x, w)

    @staticmethod
    @custom_bwd(device_type="cpu")
    def backward(ctx, grad_output):
        return Linear.backward(ctx, grad_output)


with torch.autocast("cpu", dtype=torch.bfloat16):
    fixed = AutocastLinear.apply(x, w)
fixed.float().sum().backward()
print("out:", fixed.dtype, "| w.grad:", w.grad.dtype)
# sphinx_gallery_start_ignore
from contextlib import redirect_stdout

assert [out.dtype, fixed.dtype, w.grad.dtype] == [torch.bfloat16] * 2 + [torch.float32]
_fwd = staticmethod(custom_fwd(lambda x, w: x @ w.T, device_type="cpu"))
_ctx = staticmethod(lambda ctx, i, o: ctx.save_for_backward(*i))
_Split = type("_Split", (AutocastLinear,), {"forward": _fwd, "setup_context": _ctx})
with torch.autocast("cpu", dtype=torch.bfloat16):
    _out = _Split.apply(x, w)
with redirect_stdout(None), expect_error(AttributeError, "_fwd_used_autocast"):
    _out.float().sum().backward()
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** ``a`` and ``b`` are ``float32`` matrices of shape
# ``(3, 3)``. Inside ``torch.autocast("cpu", dtype=torch.bfloat16)``, what
# are the types of ``a @ b``, ``a + b``, ``a @ b + b`` and
# ``F.mse_loss(a @ b, b)``?
#
# **Solution**

# %%
a, b = torch.randn(3, 3), torch.randn(3, 3)
with torch.autocast("cpu", dtype=torch.bfloat16):
    results = [a @ b, a + b, a @ b + b, F.mse_loss(a @ b, b)]
print([r.dtype for r in results])  # bf16 list, inputs, promotion, f32 list
# sphinx_gallery_start_ignore
assert [r.dtype for r in results] == [torch.bfloat16] + [torch.float32] * 3
# sphinx_gallery_end_ignore

# %%
# **2. Write.** ``custom_fwd(device_type="cpu", cast_inputs=torch.float32)``
# casts the float inputs of ``forward`` to ``float32`` and turns autocast
# off inside it, for operations that need the precision. Write
# ``Float32Linear`` so, and give it ``h``, the ``bfloat16`` output of an
# ``nn.Linear``: what types have its output and the gradient reaching ``h``?
#
# **Solution**


# %%
class Float32Linear(AutocastLinear):
    @staticmethod
    @custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, x, w):
        return Linear.forward(ctx, x, w)


with torch.autocast("cpu", dtype=torch.bfloat16):
    h = nn.Linear(4, 4)(x)
    out = Float32Linear.apply(h, w)
seen = []
h.register_hook(lambda grad: seen.append(grad.dtype))
out.sum().backward()
print(out.dtype, seen[0])  # autograd casts a gradient to its input's type
# sphinx_gallery_start_ignore
assert (h.dtype, out.dtype, seen) == (torch.bfloat16, torch.float32, [torch.bfloat16])
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# A custom Function can also support ``vmap`` and forward mode:
# :ref:`sphx_glr_tutorials_19_custom_functions_under_torch_func.py`.
