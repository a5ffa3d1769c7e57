"""
How do I accumulate gradients over micro-batches, and clip them?
================================================================

When a batch does not fit in memory, split it into ``k`` *micro-batches*,
let ``.grad`` add up over their backward passes, and step once. After this
tutorial you can make that the full batch's step, place ``zero_grad``, clip
by norm or by value, and name where accumulation is *not* the full batch:
unequal micro-batches, batch norm, and a clipping hook.
"""

# %%
# Scale each micro-batch loss by 1/k
# ----------------------------------
# ``backward()`` adds into ``.grad``
# (:ref:`sphx_glr_tutorials_07_several_losses.py`), so four backward calls
# leave the *sum* of four gradients. The loss of the full batch is a *mean*
# over its 32 samples, and the mean of four equal-sized quarters is the mean
# of their means. So divide each micro-batch's loss by ``k``:
import copy

import torch
import torch.nn.functional as F
from torch import nn

_ = torch.manual_seed(0)
X, Y = torch.randn(32, 4), torch.randn(32, 1)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
k = 4
micro = list(zip(X.chunk(k), Y.chunk(k), strict=True))  # 4 pairs of 8


def grads(model):
    return [p.grad.clone() for p in model.parameters()]


def same(a, b):  # equal up to rounding: sums are added in another order
    pairs = zip(a, b, strict=True)
    return all(torch.allclose(x, y, atol=1e-6) for x, y in pairs)


F.mse_loss(model(X), Y).backward()  # the full batch, for reference
full = grads(model)
model.zero_grad()
for xb, yb in micro:
    (F.mse_loss(model(xb), yb) / k).backward()
print("accumulated == full batch:", same(grads(model), full))
# sphinx_gallery_start_ignore
assert same(grads(model), full)
assert [len(xb) for xb, _ in micro] == [8] * k
# sphinx_gallery_end_ignore

# %%
# Common mistake: forgetting the 1/k
# ----------------------------------
# Without the division, ``.grad`` is the sum of four means: four times the
# full batch's gradient. The step is then ``k`` times too long, as if the
# learning rate had been multiplied by ``k``:
model.zero_grad()
for xb, yb in micro:
    F.mse_loss(model(xb), yb).backward()  # wrong: no / k
print("k times the full batch:", same(grads(model), [k * g for g in full]))
# sphinx_gallery_start_ignore
assert same(grads(model), [k * g for g in full])
# sphinx_gallery_end_ignore

# %%
# Where ``zero_grad`` goes
# ------------------------
# Once per optimizer step, after ``step()``: the micro-batches of one step
# must add up, and the next step must not see them. Three steps of
# accumulation land on the same weights as three full-batch steps:


def train(model, steps, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        for xb, yb in batches:
            (F.mse_loss(model(xb), yb) / len(batches)).backward()
        optimizer.step()
        optimizer.zero_grad()  # once per step, after it
    return list(model.parameters())


accumulated = train(copy.deepcopy(model), 3, micro)
one_batch = train(copy.deepcopy(model), 3, [(X, Y)])
print("same weights:", same(accumulated, one_batch))
# sphinx_gallery_start_ignore
assert same(accumulated, one_batch)
assert not same(accumulated, list(model.parameters()))  # they did move
for _xb, _yb in micro:  # the mistake: zero_grad() before each backward
    model.zero_grad()
    (F.mse_loss(model(_xb), _yb) / k).backward()
_g = torch.autograd.grad(F.mse_loss(model(_xb), _yb), list(model.parameters()))
assert same(grads(model), [g / k for g in _g])
# sphinx_gallery_end_ignore

# %%
# Calling ``zero_grad()`` inside the micro-batch loop, before each backward,
# throws all but the last micro-batch away: the step would use a quarter of
# that one micro-batch's gradient.
#
# Micro-batches of unequal size
# -----------------------------
# Split the 32 samples into 20 and 12, and the mean of the two means is not
# the mean of the 32: each sample of the small micro-batch weighs more. 1/k
# is exact only when all micro-batches have the same size:
uneven = list(zip(X.split([20, 12]), Y.split([20, 12]), strict=True))
model.zero_grad()
for xb, yb in uneven:
    (F.mse_loss(model(xb), yb) / 2).backward()  # 1/k, k = 2
print("unequal sizes, 1/k: full batch?", same(grads(model), full))
# sphinx_gallery_start_ignore
assert not same(grads(model), full)
# sphinx_gallery_end_ignore

# %%
# In general, scale micro-batch *i* by its share :math:`n_i / N` of the
# samples (exercise 2). The last micro-batch of an epoch is often short.
#
# The batch-norm caveat
# ---------------------
# In train mode, batch norm normalizes with the statistics of the batch it
# sees (:ref:`sphx_glr_tutorials_04_detach_and_stopping_gradients.py`). A
# micro-batch has its own mean and variance, so each sample is normalized
# differently than in the full batch: the accumulated gradient is *not* the
# full-batch gradient, whatever the scaling.
bn_model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Tanh())
bn_model.append(nn.Linear(8, 1))
F.mse_loss(bn_model(X), Y).backward()
bn_full = grads(bn_model)
bn_model.zero_grad()
for xb, yb in micro:
    (F.mse_loss(bn_model(xb), yb) / k).backward()
print("batch norm: full batch?", same(grads(bn_model), bn_full))
# sphinx_gallery_start_ignore
assert not same(grads(bn_model), bn_full)
assert bn_model[1].num_batches_tracked == 1 + k  # full batch, then k
for _norm in (nn.LayerNorm(8), nn.BatchNorm1d(8).eval()):
    _m = nn.Sequential(nn.Linear(4, 8), _norm, nn.Tanh(), nn.Linear(8, 1))
    _ref = torch.autograd.grad(F.mse_loss(_m(X), Y), list(_m.parameters()))
    for _xb, _yb in micro:
        (F.mse_loss(_m(_xb), _yb) / k).backward()
    assert same(grads(_m), _ref)
    assert getattr(_norm, "num_batches_tracked", 0) == 0  # no stats moved
# sphinx_gallery_end_ignore

# %%
# Its running statistics are updated ``k`` times per step, too. A layer
# that normalizes each sample on its own, like ``nn.LayerNorm``, has neither
# problem, and neither has batch norm in ``eval()`` mode.
#
# Several processes: DDP's ``no_sync``
# ------------------------------------
# ``DistributedDataParallel`` (DDP) trains one copy of the model per
# process, each on its own part of the batch. During backward it averages
# the gradients over the processes (an *all-reduce*). With accumulation that
# is wasted work for the first ``k - 1`` micro-batches: inside
# ``with ddp_model.no_sync():`` DDP skips it and ``.grad`` adds up locally;
# the last micro-batch's backward, outside the block, averages the sum once.
#
# A group of one process runs here on a CPU, and a *communication hook*
# counts the all-reduces:
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

store = dist.HashStore()  # in memory: no network address
dist.init_process_group("gloo", store=store, rank=0, world_size=1)
ddp_model = nn.parallel.DistributedDataParallel(model)
all_reduces = []


def counting_hook(state, bucket):
    all_reduces.append(bucket.index())
    return default_hooks.allreduce_hook(state, bucket)


ddp_model.register_comm_hook(None, counting_hook)
model.zero_grad()
for i, (xb, yb) in enumerate(micro):
    if i < k - 1:
        with ddp_model.no_sync():  # no all-reduce: .grad adds up
            (F.mse_loss(ddp_model(xb), yb) / k).backward()
    else:  # the last micro-batch: one all-reduce of the sum
        (F.mse_loss(ddp_model(xb), yb) / k).backward()
    print(f"micro-batch {i}: {len(all_reduces)} all-reduce(s) so far")
dist.destroy_process_group()
# sphinx_gallery_start_ignore
assert len(all_reduces) == 1
assert same(grads(model), full)  # one process: the average is the sum
# 2 processes x 16 samples: each accumulates its half's mean (see the top)
_p, _xy = list(model.parameters()), zip(X.chunk(2), Y.chunk(2), strict=True)
_h = [torch.autograd.grad(F.mse_loss(model(x), y), _p) for x, y in _xy]
assert same([(a + b) / 2 for a, b in zip(*_h, strict=True)], full)
# sphinx_gallery_end_ignore

# %%
# One process: the average changes nothing, and this is the full-batch
# gradient. With several, the average of their accumulated gradients is
# the full batch's when all micro-batches have the same size.
#
# Clip by norm, after the last backward
# -------------------------------------
# ``nn.utils.clip_grad_norm_(params, max_norm)`` treats all the gradients as
# one long vector. If its norm is above ``max_norm``, it scales every
# ``.grad`` by the same factor, so the direction is kept. It returns the
# total norm *before* clipping: log it to see how often clipping acts. Call
# it once ``.grad`` is complete, after the last micro-batch's backward, and
# before ``step()``:
model.zero_grad()
for xb, yb in micro:
    (F.mse_loss(model(xb), yb) / k).backward()
before = torch.cat([g.flatten() for g in grads(model)])
total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
after = torch.cat([p.grad.flatten() for p in model.parameters()])
print(f"returned {total:.4f}, norm before {before.norm():.4f}")
print(f"norm after {after.norm():.4f}")
# sphinx_gallery_start_ignore
assert torch.allclose(total, torch.linalg.vector_norm(before))
assert torch.allclose(after, before * 0.5 / total, atol=1e-6)  # norm 0.5
nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)  # no-op
assert torch.equal(torch.cat([p.grad.flatten() for p in model.parameters()]), after)
# sphinx_gallery_end_ignore

# %%
# Clip by value, and a clipping hook
# ----------------------------------
# ``nn.utils.clip_grad_value_(params, clip_value)`` clamps each entry of
# each ``.grad`` to ``[-clip_value, clip_value]`` on its own, so, unlike
# clipping by norm, it can change the gradient's direction. A tensor hook
# that clamps the gradient (:ref:`sphx_glr_tutorials_11_hooks.py`) looks
# like the same thing, but it runs during *each* backward, on that
# backward's gradient, before it is added to ``.grad``. So it clips each
# micro-batch's contribution on its own, and clip-then-accumulate is not
# accumulate-then-clip. Two micro-batches whose gradients are ``[3, 0.5]``
# and ``[-1, 0.5]``:
contributions = [torch.tensor([3.0, 0.5]), torch.tensor([-1.0, 0.5])]
p = torch.zeros(2, requires_grad=True)
p.register_hook(lambda grad: grad.clamp(-1.0, 1.0))
q = torch.zeros(2, requires_grad=True)
for c in contributions:
    (p * c).sum().backward()
    (q * c).sum().backward()
nn.utils.clip_grad_value_([q], clip_value=1.0)
print("hook, clip each:      ", p.grad)
print("accumulate, then clip:", q.grad)
# sphinx_gallery_start_ignore
assert torch.equal(p.grad, torch.tensor([0.0, 1.0]))  # 1 - 1, 0.5 + 0.5
assert torch.equal(q.grad, torch.tensor([1.0, 1.0]))  # [2, 1] clamped
# sphinx_gallery_end_ignore

# %%
# So clip with ``clip_grad_norm_`` or ``clip_grad_value_`` after the last
# backward, and use a hook only when clipping each contribution is what you
# want.
#
# Exercises
# ---------
#
# **1. Predict.** You forget the 1/k, but clip by norm with a ``max_norm``
# that both versions of the gradient exceed. Does the forgotten 1/k change
# the step?
#
# **Solution**

# %%
clipped = []
for divide in (1, k):
    model.zero_grad()
    for xb, yb in micro:
        (F.mse_loss(model(xb), yb) / divide).backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.01)
    clipped.append(grads(model))
print("same step:", same(*clipped))  # no change: same norm, same direction
# sphinx_gallery_start_ignore
assert same(*clipped)
assert norm > 0.01  # the smaller of the two norms (with 1/k): clipped too
# sphinx_gallery_end_ignore

# %%
# **2. Write.** Accumulate the micro-batches of 20 and 12 samples so that
# ``.grad`` is the full-batch gradient.
#
# **Solution**

# %%
model.zero_grad()
for xb, yb in uneven:
    (F.mse_loss(model(xb), yb) * len(xb) / len(X)).backward()  # n_i / N
print("full batch?", same(grads(model), full))
# sphinx_gallery_start_ignore
assert same(grads(model), full)
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# The same recipe in lower precision, where the gradient has to be unscaled
# before it is clipped: :ref:`sphx_glr_tutorials_18_mixed_precision.py`. The
# cheat sheet lists the calls of this page: :doc:`/reference/cheatsheet`.
