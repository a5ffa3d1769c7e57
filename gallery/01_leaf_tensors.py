"""
Which tensors are leaves, and why does it matter?
=================================================

Autograd writes gradients into ``.grad`` only for *leaf* tensors, and lets you
switch ``requires_grad`` on or off only for leaves. This script shows exactly
which tensors are leaves: it is not quite "the tensors you created", and it
is never "a piece of a tensor".
"""

# %%
# A created tensor is a leaf, a computed one is not
# -------------------------------------------------
# A tensor you build yourself with ``requires_grad=True`` has no history: its
# ``grad_fn`` is ``None`` and ``is_leaf`` is ``True``. The result of an
# operation on it records that operation in ``grad_fn``, so it is not a leaf.
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from autograd_notes.graph import draw_graph, format_graph, walk_graph

_ = torch.manual_seed(0)

W = torch.randn(4, 4, requires_grad=True)
y = W * 2
print(f"W: is_leaf={W.is_leaf}, grad_fn={W.grad_fn}")
print(f"y: is_leaf={y.is_leaf}, grad_fn={type(y.grad_fn).__name__}")

assert W.is_leaf
assert W.grad_fn is None
assert not y.is_leaf
assert type(y.grad_fn).__name__ == "MulBackward0"

# %%
# After a backward pass, the gradient lands in the leaf only. ``y`` took part
# in the computation, but it keeps no ``.grad`` of its own (tutorial
# :ref:`sphx_glr_tutorials_02_grad_fn_and_the_graph.py` shows the warning you
# get if you read it anyway).
y.sum().backward()
print(W.grad)

assert torch.equal(W.grad, torch.full((4, 4), 2.0))
# sphinx_gallery_start_ignore
with warnings.catch_warnings(record=True):
    warnings.simplefilter("always")
    assert y.grad is None
# sphinx_gallery_end_ignore

# %%
# Slices and views of a leaf are not leaves
# -----------------------------------------
# Indexing, slicing, ``view`` and ``t()`` are operations too. Each returns a
# new tensor (sharing memory with ``W``) whose ``grad_fn`` leads back to
# ``W``. None of them is a leaf, even though no arithmetic happened.
pieces = {
    "W[2, 3]": W[2, 3],
    "W[:2, :3]": W[:2, :3],
    "W.view(-1)": W.view(-1),
    "W.t()": W.t(),
}
for expr, piece in pieces.items():
    print(
        f"{expr:11} is_leaf={piece.is_leaf!s:5}  grad_fn={type(piece.grad_fn).__name__}"
    )

# sphinx_gallery_start_ignore
for piece in pieces.values():
    assert not piece.is_leaf
    assert piece.grad_fn is not None
    assert any(getattr(n, "variable", None) is W for n in walk_graph(piece))
    assert piece.untyped_storage().data_ptr() == W.untyped_storage().data_ptr()
assert [type(p.grad_fn).__name__ for p in pieces.values()] == [
    "SelectBackward0",
    "SliceBackward0",
    "ViewBackward0",
    "TBackward0",
]
# sphinx_gallery_end_ignore

# %%
# ``requires_grad_`` changes the flag of leaves only
# --------------------------------------------------
# A common wish is "train ``W`` but keep its top-left block fixed". Turning
# off ``requires_grad`` on that block fails, because the block is a non-leaf:
try:
    W[:2, :3].requires_grad_(False)
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a RuntimeError")

assert "only change requires_grad flags of leaf variables" in message

# %%
# On the leaf itself the call works, but ``requires_grad`` is **one flag for
# the whole tensor**, not one flag per element. So there is no way to make
# part of a tensor require grad and the rest not.
W.requires_grad_(False)
print(W.requires_grad, type(W.requires_grad).__name__)
W.requires_grad_(True)

assert isinstance(W.requires_grad, bool)
assert W.requires_grad

# %%
# To train only part of a weight you keep ``requires_grad=True`` on the whole
# tensor and mask the gradient or the weight instead; tutorial
# :ref:`sphx_glr_tutorials_06_training_part_of_a_weight.py` and the how-to
# :doc:`/how-to/freeze-part-of-a-weight` do exactly that.
#
# Tensors that do not require grad are leaves, even computed ones
# ---------------------------------------------------------------
# "A leaf is a tensor the user created" is only half the rule. Autograd
# records operations only when some input requires grad, so a result computed
# from tensors that don't has no ``grad_fn``, and is a leaf too:
c = torch.ones(3) * 2
print(f"c: is_leaf={c.is_leaf}, requires_grad={c.requires_grad}, grad_fn={c.grad_fn}")

assert c.is_leaf
assert not c.requires_grad
assert c.grad_fn is None

# %%
# Being a leaf, ``c`` may have its flag switched on; from then on it collects
# gradients like any parameter:
c.requires_grad_(True)
(c * c).sum().backward()
print(c.grad)

assert torch.equal(c.grad, 2 * c.detach())

# %%
# The precise rule is: **a tensor is a leaf exactly when its** ``grad_fn``
# **is** ``None``. That is the case when it does not require grad (however it
# was made), or when it requires grad and was created directly rather than
# computed by a recorded operation. This is also how the documentation of
# `Tensor.is_leaf
# <https://docs.pytorch.org/docs/stable/generated/torch.Tensor.is_leaf.html>`_
# puts it.
examples = {"W": W, "y": y, "c": c, "torch.ones(3) * 2": torch.ones(3) * 2, **pieces}
for expr, t in examples.items():
    print(
        f"{expr:17} requires_grad={t.requires_grad!s:5}  "
        f"grad_fn is None={t.grad_fn is None!s:5}  is_leaf={t.is_leaf}"
    )

for t in examples.values():
    assert t.is_leaf == (t.grad_fn is None)
# sphinx_gallery_start_ignore
assert ":attr:`grad_fn` is None" in torch.Tensor.is_leaf.__doc__
assert "``False`` will be leaf Tensors" in torch.Tensor.is_leaf.__doc__
# sphinx_gallery_end_ignore

# %%
# Module parameters are leaves
# ----------------------------
# The weights and biases of every layer, however deep, are leaves: they are
# created by the module's ``__init__`` and updated by the optimizer, never
# computed from other tensors. Here is a small MLP for 4x4 one-channel images.
#
# Note the pattern: layers such as ``nn.Flatten()`` and ``nn.ReLU()`` are
# *modules*. Build them once in ``__init__`` and **call** them on tensors in
# ``forward`` (or use the functions ``torch.flatten`` and ``F.relu``).
# Writing ``nn.ReLU(h)`` or ``nn.Flatten(x)`` inside ``forward``, as some
# study notes do, constructs a *new module* with the tensor as a constructor
# argument instead of applying the layer, so such a model can never run.


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
images = torch.randn(5, 1, 4, 4)  # a seeded batch of five "images"
labels = torch.tensor([0, 2, 1, 1, 0])
logits = model(images)
print(logits.shape)

assert logits.shape == (5, 3)

# %%
# The broken pattern fails on the first layer, because what reaches it is a
# ``Flatten`` module, not a tensor:
wrong = nn.Flatten(images)  # builds a module whose start_dim is the batch!
print(type(wrong).__name__)
try:
    model.fc1(wrong)
except TypeError as err:
    message = str(err)
    print(f"TypeError: {message}")
else:
    raise AssertionError("expected a TypeError")

assert isinstance(wrong, nn.Module)
assert "must be Tensor, not Flatten" in message
# sphinx_gallery_start_ignore
assert wrong.start_dim is images
assert isinstance(nn.ReLU(images), nn.Module)  # nn.ReLU(h) builds a module too
# sphinx_gallery_end_ignore

# %%
# Every parameter is a leaf that requires grad:
for name, p in model.named_parameters():
    shape = str(tuple(p.shape))
    print(
        f"{name:10} shape={shape:8} is_leaf={p.is_leaf} requires_grad={p.requires_grad}"
    )

assert all(p.is_leaf and p.requires_grad for p in model.parameters())

# %%
# After a backward pass, only the parameters get ``.grad``
# --------------------------------------------------------
# To look at the activations we run the same layers step by step, keeping the
# intermediate tensors, and check that this matches ``model(images)``.
flat = model.flatten(images)
hidden = model.relu(model.fc1(flat))
logits = model.fc2(hidden)
loss = F.cross_entropy(logits, labels)
loss.backward()
print(f"loss = {loss.item():.4f}")

assert torch.equal(logits, model(images))

# %%
# The parameters now hold gradients of the loss. The activations ``hidden``
# and ``logits`` are non-leaves, so their ``.grad`` stays ``None`` (reading it
# raises a warning, which this cell records instead of showing; tutorial 02
# looks at it). The
# input batch and ``flat`` do not require grad: they are leaves, but no
# gradient is computed for them at all.
for name, p in model.named_parameters():
    print(f"{name:10} .grad has shape {tuple(p.grad.shape)}")

activations = {"images": images, "flat": flat, "hidden": hidden, "logits": logits}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    grads = {name: t.grad for name, t in activations.items()}
for name, t in activations.items():
    flags = f"is_leaf={t.is_leaf!s:5} requires_grad={t.requires_grad!s:5}"
    print(f"{name:10} {flags} .grad={grads[name]}")

assert all(p.grad is not None and p.grad.shape == p.shape for p in model.parameters())
assert all(g is None for g in grads.values())
assert (flat.is_leaf, flat.requires_grad) == (True, False)
assert (images.is_leaf, images.requires_grad) == (True, False)
assert not any(t.is_leaf for t in (hidden, logits))
# sphinx_gallery_start_ignore
# Two warnings: one per non-leaf whose .grad was read.
assert len(caught) == 2
assert all(w.category is UserWarning for w in caught)
# sphinx_gallery_end_ignore

# %%
# The graph of this loss shows it directly. Each parameter enters the graph
# through an ``AccumulateGrad`` node, the place where backward writes into its
# ``.grad`` (the weights pass through a ``TBackward0`` first, because
# ``nn.Linear`` multiplies by the transposed weight). Activations are inner
# nodes, and the images do not appear at all, since nothing about them is
# differentiated. :func:`autograd_notes.format_graph` prints the graph
# as text:
print(format_graph(loss, names=dict(model.named_parameters())))

# sphinx_gallery_start_ignore
_leaves = [n.variable for n in walk_graph(loss) if type(n).__name__ == "AccumulateGrad"]
assert len(_leaves) == 4
assert {id(t) for t in _leaves} == {id(p) for p in model.parameters()}
assert all(
    not n.next_functions
    for n in walk_graph(loss)
    if type(n).__name__ == "AccumulateGrad"
)
_t_nodes = [n for n in walk_graph(loss) if type(n).__name__ == "TBackward0"]
assert {id(n.next_functions[0][0].variable) for n in _t_nodes} == {
    id(model.fc1.weight),
    id(model.fc2.weight),
}
# sphinx_gallery_end_ignore

# %%
# and :func:`autograd_notes.draw_graph` draws it:
try:
    fig = draw_graph(loss, names=dict(model.named_parameters()))
except ImportError as err:  # matplotlib and networkx are optional extras
    print(err)

# %%
# What about ``torch.autograd.Variable``?
# ---------------------------------------
# Old code (and many notes) wrap tensors in ``Variable`` to make them
# differentiable. Tensors have long done that themselves: ``Variable``
# is deprecated and survives only as a wrapper that returns a plain tensor.
# It does not even warn:
from torch.autograd import Variable

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    v = Variable(torch.ones(3), requires_grad=True)
print("warnings:", [f"{w.category.__name__}: {w.message}" for w in caught])
print(type(v), v.is_leaf, v.requires_grad)

assert type(v) is torch.Tensor
assert v.is_leaf
assert v.requires_grad
assert caught == []

# %%
# Write ``torch.ones(3, requires_grad=True)`` instead.
#
# Summary
# -------
# * A tensor is a leaf exactly when ``grad_fn is None``: it was created
#   directly, or it does not require grad.
# * Results of operations on tensors that require grad, including indexing,
#   slices, views and transposes, are not leaves.
# * ``requires_grad_`` changes the flag of leaves only, and the flag covers
#   the whole tensor: you cannot switch it off for part of a tensor.
# * Module parameters are leaves; after ``backward()`` they hold ``.grad``,
#   the activations do not.
#
# Next: :ref:`sphx_glr_tutorials_02_grad_fn_and_the_graph.py` looks at the
# ``grad_fn`` nodes that connect all of these tensors. See also the
# :doc:`/explanations/glossary`.
