"""
Which tensors are leaves, and why does it matter?
=================================================

Autograd stores gradients in ``.grad`` for *leaf* tensors, and lets you switch
``requires_grad`` on or off only for leaves. After this tutorial you can tell
a leaf from a non-leaf, predict which tensors hold a ``.grad`` after
``backward()``, and explain why every parameter of a model is a leaf.
"""

# %%
# A tensor you create is a leaf, a result that requires grad is not
# -----------------------------------------------------------------
# A tensor built with ``requires_grad=True`` has no history: its ``grad_fn``
# is ``None`` and ``is_leaf`` is ``True``. An operation on it records itself
# in the result's ``grad_fn``, so the result is not a leaf.
import torch
import torch.nn.functional as F
from torch import nn

from autograd_notes import expect_error, format_graph

_ = torch.manual_seed(0)

w = torch.randn(4, 4, requires_grad=True)
y = w * 2
print(f"w: is_leaf={w.is_leaf}, grad_fn={w.grad_fn}")
print(f"y: is_leaf={y.is_leaf}, grad_fn={type(y.grad_fn).__name__}")
# sphinx_gallery_start_ignore
import warnings

from autograd_notes import walk_graph

assert (w.is_leaf, w.grad_fn) == (True, None)
assert (y.is_leaf, type(y.grad_fn).__name__) == (False, "MulBackward0")
# sphinx_gallery_end_ignore

# %%
# After a backward pass the gradient lands in the leaf. Autograd computed the
# gradient with respect to ``y`` on the way but kept none: ``y.grad`` stays
# ``None``, unless you call ``y.retain_grad()`` before ``backward()``
# (later, in :ref:`tutorial 03 <sphx_glr_tutorials_03_grad_fn_and_the_graph.py>`).
y.sum().backward()
print(w.grad)
# sphinx_gallery_start_ignore
assert torch.equal(w.grad, torch.full((4, 4), 2.0))
with warnings.catch_warnings(record=True):
    warnings.simplefilter("always")
    assert y.grad is None
(_y := w * 2).retain_grad()
_y.sum().backward()
assert torch.equal(_y.grad, torch.ones(4, 4))
w.grad = None
# sphinx_gallery_end_ignore

# %%
# Slices of a leaf that requires grad are not leaves
# --------------------------------------------------
# Indexing, slicing, ``view`` and ``t()`` are operations too. Each result
# has a ``grad_fn`` leading back to ``w``, so none is a leaf. These share
# ``w``'s memory; indexing with a list, ``w[[0, 1]]``, copies instead.
pieces = {"w[2, 3]": w[2, 3], "w[:2, :3]": w[:2, :3], "w.view(16)": w.view(16)}
for expr, piece in pieces.items():
    print(f"{expr:10} is_leaf={piece.is_leaf}  grad_fn={piece.grad_fn.name()}")
# sphinx_gallery_start_ignore
_names = ["SelectBackward0", "SliceBackward0", "ViewBackward0", "TBackward0"]
for _piece, _name in zip([*pieces.values(), w.t()], _names, strict=True):
    assert (_piece.is_leaf, _piece.grad_fn.name()) == (False, _name)
    assert any(getattr(n, "variable", None) is w for n in walk_graph(_piece))
    assert _piece.untyped_storage().data_ptr() == w.untyped_storage().data_ptr()
assert w[[0, 1]].untyped_storage().data_ptr() != w.untyped_storage().data_ptr()
assert (w[[0, 1]].is_leaf, w[[0, 1]].grad_fn.name()) == (False, "IndexBackward0")
# sphinx_gallery_end_ignore

# %%
# Common mistake: freezing part of a weight with ``requires_grad_``
# ------------------------------------------------------------------
# To keep the top-left block of ``w`` fixed, people first try switching off
# ``requires_grad`` on that block. The block is a non-leaf, so PyTorch
# refuses. On the leaf ``w`` the call works, but ``requires_grad`` is one
# ``bool`` for the whole tensor, not a flag per element:
with expect_error(RuntimeError, "only change requires_grad flags of leaf"):
    w[:2, :3].requires_grad_(False)
print(type(w.requires_grad).__name__, w.requires_grad)
# sphinx_gallery_start_ignore
assert w.requires_grad is True
assert w.requires_grad_(False).requires_grad is False
w.requires_grad_(True)
# sphinx_gallery_end_ignore

# %%
# The fix is to keep ``requires_grad=True`` on the whole tensor and mask the
# gradient or the weight instead, as you will do later, in
# :ref:`tutorial 08 <sphx_glr_tutorials_08_training_part_of_a_weight.py>`.
#
# A computed tensor that does not require grad is a leaf too
# ----------------------------------------------------------
# Autograd records an operation only when an input requires grad. A result
# computed from tensors that don't has no ``grad_fn``: it is a leaf, and you
# may switch its flag on:
c = torch.ones(3) * 2
print(f"c: is_leaf={c.is_leaf}, requires_grad={c.requires_grad}")
c.requires_grad_(True)
(c * c).sum().backward()
print(c.grad)
# sphinx_gallery_start_ignore
assert (c.is_leaf, c.grad_fn) == (True, None)
assert torch.equal(c.grad, 2 * c.detach())
for _t in [w, y, c, torch.ones(3) * 2, *pieces.values()]:
    assert _t.is_leaf == (_t.grad_fn is None)
assert ":attr:`grad_fn` is None" in torch.Tensor.is_leaf.__doc__
# sphinx_gallery_end_ignore

# %%
# So **a tensor is a leaf exactly when its** ``grad_fn`` **is** ``None``:
# every tensor that does not require grad, and every tensor that requires
# grad and was created rather than computed, as the documentation of
# :attr:`Tensor.is_leaf <torch.Tensor.is_leaf>` states.
#
# Module parameters are leaves
# ----------------------------
# Every parameter a module registers, in ``model.parameters()``, is a leaf,
# however deep its layer: ``__init__`` creates it and the optimizer updates
# it; no operation computes it. Here is a small MLP for a seeded batch of
# five 4x4 one-channel images:


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(16, 8)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


model = MLP()
images = torch.randn(5, 1, 4, 4)
labels = torch.tensor([0, 2, 1, 1, 0])
print(model(images).shape)
for name, p in model.named_parameters():
    print(f"{name:10} is_leaf={p.is_leaf}  requires_grad={p.requires_grad}")
# sphinx_gallery_start_ignore
assert model(images).shape == (5, 3)
assert all(p.is_leaf and p.requires_grad for p in model.parameters())
# sphinx_gallery_end_ignore

# %%
# Common mistake: calling a layer's class inside ``forward``
# ----------------------------------------------------------
# Checking that parameters are leaves never runs ``forward``, so it cannot
# tell you whether the model works. Writing ``nn.Flatten(x)`` or ``nn.ReLU(...)``
# in ``forward`` *constructs a new module* instead of applying the layer, so the
# first ``Linear`` receives a ``Flatten`` module:


class BrokenMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.Flatten(x)  # builds a module, flattens nothing
        return self.fc2(nn.ReLU(self.fc1(x)))


broken = BrokenMLP()
print(all(p.is_leaf for p in broken.parameters()))
with expect_error(TypeError, "must be Tensor, not Flatten"):
    broken(images)
# sphinx_gallery_start_ignore
assert all(isinstance(m, nn.Module) for m in (nn.Flatten(images), nn.ReLU(images)))
# sphinx_gallery_end_ignore

# %%
# The fix is the ``MLP`` above: build the layers in ``__init__`` and *call*
# them in ``forward`` (or use ``torch.flatten`` and ``F.relu``).
#
# After ``backward()``, the parameters hold ``.grad``
# ---------------------------------------------------
# Run the layers step by step to keep the intermediate tensors too:
flat = model.flatten(images)
hidden = model.relu(model.fc1(flat))
logits = model.fc2(hidden)
loss = F.cross_entropy(logits, labels)
loss.backward()
for name, p in model.named_parameters():
    print(f"{name:10} .grad shape {tuple(p.grad.shape)}")
for name, t in {"images": images, "flat": flat, "hidden": hidden}.items():
    print(f"{name:10} is_leaf={t.is_leaf!s:5}  requires_grad={t.requires_grad}")
# sphinx_gallery_start_ignore
assert torch.equal(logits, model(images))
assert all(p.grad is not None and p.grad.shape == p.shape for p in model.parameters())
assert [t.is_leaf for t in (images, flat, hidden, logits)] == [1, 1, 0, 0]
with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always")
    _grads = [t.grad for t in (images, flat, hidden, logits)]
assert (_grads, len(_caught)) == ([None] * 4, 2)  # the 2 non-leaves' .grad warns
# sphinx_gallery_end_ignore

# %%
# ``hidden`` and ``logits`` are non-leaves: their ``.grad`` stays ``None``.
# ``images`` and ``flat`` are leaves that do not require grad, so no gradient
# is computed for them. In the graph of the loss, printed by
# :func:`~autograd_notes.format_graph`, each parameter enters through an
# ``AccumulateGrad`` node, which adds into its ``.grad``; the images do not
# appear. (``nn.Linear`` multiplies by the transposed weight: ``TBackward0``.)
print(format_graph(loss, names=dict(model.named_parameters())))
# sphinx_gallery_start_ignore
_acc = [n.variable for n in walk_graph(loss) if type(n).__name__ == "AccumulateGrad"]
assert sorted(map(id, _acc)) == sorted(map(id, model.parameters()))  # each once
_t_nodes = [n for n in walk_graph(loss) if type(n).__name__ == "TBackward0"]
_t_in = {id(n.next_functions[0][0].variable) for n in _t_nodes}
assert _t_in == {id(model.fc1.weight), id(model.fc2.weight)}
# sphinx_gallery_end_ignore

# %%
# What about ``torch.autograd.Variable``?
# ---------------------------------------
# Older code wraps tensors in ``Variable`` to make them differentiable.
# ``Variable`` is deprecated and survives only as a call that returns a plain
# tensor (it does not even warn). Write ``torch.ones(3, requires_grad=True)``.
from torch.autograd import Variable

v = Variable(torch.ones(3), requires_grad=True)
print(type(v).__name__, v.is_leaf, v.requires_grad)
# sphinx_gallery_start_ignore
with warnings.catch_warnings():
    warnings.simplefilter("error")  # any warning would raise here
    Variable(torch.ones(3), requires_grad=True)
assert (type(v), v.is_leaf, v.requires_grad) == (torch.Tensor, True, True)
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** With ``a = torch.randn(3)`` and
# ``p = torch.randn(3, requires_grad=True)``, which of ``a * 2``, ``p + a``,
# ``(p + a)[0]`` and ``a * p.sum().item()`` are leaves?
#
# **Solution**

# %%
a = torch.randn(3)
p = torch.randn(3, requires_grad=True)
candidates = {"a * 2": a * 2, "p + a": p + a, "(p + a)[0]": (p + a)[0]}
candidates["a * p.sum().item()"] = a * p.sum().item()
print({expr: t.is_leaf for expr, t in candidates.items()})
# .item() returns a Python float: no tensor that requires grad reaches the *
# sphinx_gallery_start_ignore
assert [t.is_leaf for t in candidates.values()] == [True, False, False, True]
# sphinx_gallery_end_ignore

# %%
# **2. Write.** Freeze the whole first layer of ``model`` (weight and bias),
# compute the loss again and check that its parameters get no ``.grad`` while
# ``fc2``'s still do. Hint: a module has a ``requires_grad_`` method too.
#
# **Solution**

# %%
model.zero_grad()
model.fc1.requires_grad_(False)  # both fc1 parameters are leaves: allowed
F.cross_entropy(model(images), labels).backward()
print({name: p.grad is not None for name, p in model.named_parameters()})
# sphinx_gallery_start_ignore
assert [p.grad is None for p in model.parameters()] == [True, True, False, False]
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_03_grad_fn_and_the_graph.py` looks at the
# ``grad_fn`` nodes that connect these tensors, and at where gradients end
# up. See also the :doc:`/reference/glossary`.
