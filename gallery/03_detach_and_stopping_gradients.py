"""
How do you stop gradients: ``detach``, ``no_grad`` or ``inference_mode``?
==========================================================================

Sometimes a value should be used as a constant: a fixed target, the output of
an old network, a weight you do not want to train through. This script shows
how ``requires_grad`` spreads through operations and the three ways to stop
it, including the traps: ``detach()`` shares memory, and inference tensors
cannot re-enter autograd.
"""

# %%
# How ``requires_grad`` spreads
# -----------------------------
# The rule is simple: while autograd is recording (it is, unless you turn it
# off as shown at the end), the result of an operation requires grad if
# **any** of its inputs does. With neither input requiring grad, nothing is
# recorded and the result is a leaf:
import textwrap

import torch

from autograd_notes.graph import draw_graph, format_graph, walk_graph

a = torch.tensor([1.0])
b = torch.tensor([1.0])
c = a + b
print(f"c.requires_grad={c.requires_grad}, c.is_leaf={c.is_leaf}")

assert not c.requires_grad
assert c.is_leaf

# %%
# Let only ``b`` require grad, and ``a + b`` does too. (One set of study notes
# comments this line with ``# False`` while its own output shows ``True``.)
# ``backward()`` then reaches ``b`` only: ``a`` gets no gradient at all, so
# its ``.grad`` stays ``None``.
b.requires_grad_(True)
c = a + b
print(f"c.requires_grad={c.requires_grad}, c.is_leaf={c.is_leaf}")
c.backward()
print(f"a.grad={a.grad}, b.grad={b.grad}")

assert c.requires_grad
assert not c.is_leaf
assert a.grad is None
assert torch.equal(b.grad, torch.tensor([1.0]))

# %%
# ``detach()`` returns a new leaf that shares memory
# --------------------------------------------------
# ``t.detach()`` returns a tensor with the same values but no history: no
# ``grad_fn``, ``requires_grad=False``, hence a leaf. Gradients never flow
# through it. It is **not a copy**: it is a second view of the same memory.
x = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
y = x.sigmoid()
y_const = y.detach()
for name, t in {"y": y, "y_const": y_const}.items():
    grad_fn = t.grad_fn.name() if t.grad_fn is not None else None
    flags = f"is_leaf={t.is_leaf!s:5} requires_grad={t.requires_grad!s:5}"
    print(f"{name:8} {flags} grad_fn={grad_fn}")
print("same memory:", y_const.data_ptr() == y.data_ptr())

assert (y_const.is_leaf, y_const.requires_grad, y_const.grad_fn) == (True, False, None)
assert y_const is not y
assert y_const.data_ptr() == y.data_ptr()

# %%
# So an in-place change to the detached tensor changes the original, too:
y_const.zero_()
print(y)

assert torch.equal(y, torch.zeros(3))

# %%
# Autograd notices when a saved tensor was modified
# -------------------------------------------------
# The backward formula of the sigmoid uses its *output*:
# :math:`\sigma'(x) = \sigma(x)\,(1 - \sigma(x))`, so autograd saved ``y`` for
# the backward pass, and we just overwrote it. Rather than return a wrong
# gradient, ``backward()`` refuses:
try:
    y.sum().backward()
except RuntimeError as err:
    message = str(err)
    print(textwrap.fill(f"RuntimeError: {message.split(' Hint:')[0]}", width=79))
else:
    raise AssertionError("expected a RuntimeError")

assert "modified by an inplace operation" in message
assert "is at version 1; expected version 0" in message

# %%
# It knows through a **version counter** that every tensor carries, shared by
# all tensors that view the same memory (``t._version``; the leading underscore
# marks it as an internal detail, fine for inspection). Every in-place
# operation bumps it, and each node checks at backward time that the versions
# of its saved tensors are still the ones it saved.
t = torch.zeros(3)
versions = [t._version]
t.add_(1)
versions.append(t._version)
t[0] = 5.0
versions.append(t._version)
print("versions:", versions, "| detached view:", t.detach()._version)

assert versions == [0, 1, 2]
assert t.detach()._version == 2

# %%
# Only *saved* tensors are checked. Addition's backward does not need the
# values of its inputs or output, so modifying the output of ``x + 1`` through
# a detached view goes unnoticed, and here the gradient is still right:
x.grad = None
s = x + 1
s.detach().zero_()
s.sum().backward()
print(f"s._version={s._version}, x.grad={x.grad}")

assert s._version == 1
assert torch.equal(x.grad, torch.ones(3))
# sphinx_gallery_start_ignore
_saved = [n for n in dir(s.grad_fn) if n.startswith("_saved_")]
assert not any(isinstance(getattr(s.grad_fn, n), torch.Tensor) for n in _saved)
# sphinx_gallery_end_ignore

# %%
# If you want to modify a detached value, take a copy first:
# ``y.detach().clone()``.
#
# A stop-gradient inside a product
# --------------------------------
# Take :math:`x = 2`, :math:`w = 3`, :math:`y = x^2`, :math:`z = w^2` and
# :math:`u = y\,z`. Detaching ``y`` treats it as the constant :math:`4`:
# :math:`u = 4 z`. Then :math:`\partial u/\partial w = 2 w y = 24`, and
# :math:`x` is not part of the graph of ``u`` at all.
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
y = x * x
z = w * w
u = y.detach() * z
u.backward()
print(f"x.grad={x.grad}, w.grad={w.grad}")

assert x.grad is None  # not 0: backward never reached x
assert w.grad.item() == 2 * w.item() * y.item() == 24.0
# sphinx_gallery_start_ignore
try:
    x.grad.zero_()
except AttributeError:
    pass
else:
    raise AssertionError("expected x.grad.zero_() to fail on None")
# sphinx_gallery_end_ignore

# %%
# .. note::
#
#    ``x.grad`` is ``None``, not ``tensor(0.)`` as some notes claim:
#    ``backward()`` only touches leaves it can reach, and no zero gradient is
#    written into the others. Code that does ``x.grad.zero_()`` or
#    ``x.grad * 2`` afterwards will fail on ``None``.
#
# The graph shows the cut. On the left, the full product ``y * z``; on the
# right, ``y.detach() * z``: the ``MulBackward0`` node that squared ``x`` and
# ``x``'s own ``AccumulateGrad`` node are gone. Arrows point the way gradients
# flow, from the output down to the leaves.
try:
    import matplotlib.pyplot as plt
except ImportError:  # matplotlib and networkx are optional extras
    plt = None

names = {"x": x, "w": w, "y": y, "z": z}
if plt is not None:
    fig = plt.figure(figsize=(9, 4.2), layout="constrained", facecolor="white")
    panels = zip(
        fig.subfigures(1, 2),
        [y * z, y.detach() * z],
        ["u = y * z", "u = y.detach() * z"],
        strict=True,
    )
    try:
        for panel, u_drawn, title in panels:
            ax = panel.subplots()
            draw_graph(u_drawn, names=names, ax=ax)
            ax.get_legend().remove()  # arrows point the way gradients flow
            panel.suptitle(title, fontfamily="monospace")
    except ImportError as err:
        print(err)

# %%
# As text, with :func:`autograd_notes.format_graph`:
print(format_graph(y.detach() * z, names=names))


# sphinx_gallery_start_ignore
def _leaves_of(t: torch.Tensor) -> list[torch.Tensor]:
    return [n.variable for n in walk_graph(t) if type(n).__name__ == "AccumulateGrad"]


assert any(v is x for v in _leaves_of(y * z))
assert [v is w for v in _leaves_of(y.detach() * z)] == [True]  # only w, no x
# sphinx_gallery_end_ignore

# %%
# When would :math:`w` get 48?
# ----------------------------
# Gradients accumulate (see
# :ref:`sphx_glr_tutorials_02_grad_fn_and_the_graph.py`), so the numbers above
# hold only for fresh gradients. If you first run backward through the full
# product and then through the detached one without resetting ``.grad``, you
# get :math:`24 + 24 = 48` for ``w``, and ``x`` keeps the gradient
# :math:`2 x z = 36` from the first call. (The second call also needs a fresh
# ``z``: the first ``backward()`` freed the graph behind the old one.)
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
y = x * x
z = w * w
(y * z).backward()
print(f"after u = y * z:          x.grad={x.grad}, w.grad={w.grad}")

try:
    (y.detach() * z).backward()
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message.split(' (')[0]} ...")
else:
    raise AssertionError("expected a RuntimeError")
assert "backward through the graph a second time" in message

z = w * w
(y.detach() * z).backward()
print(f"after u = y.detach() * z: x.grad={x.grad}, w.grad={w.grad}")

assert x.grad.item() == 36.0
assert w.grad.item() == 48.0

# %%
# Assignment does not create a tensor
# -----------------------------------
# ``e = d`` binds a second name to the *same* tensor object; it is not an
# operation and adds nothing to the graph. ``e`` is a non-leaf only because
# ``d`` is one.
p = torch.tensor([1.0], requires_grad=True)
q = torch.tensor([1.0], requires_grad=True)
r = torch.tensor([1.0], requires_grad=True)
d = p + q + r
e = d
print(f"e is d: {e is d}, e.is_leaf={e.is_leaf}, e.grad_fn={e.grad_fn.name()}")

assert e is d
assert not e.is_leaf

# %%
# ``e = e.detach()`` rebinds the name ``e`` to a new leaf and leaves ``d``
# untouched. Make that leaf require grad and use it: for :math:`h = 2e`,
# ``e.grad`` is :math:`dh/de = 2` (not 1), and nothing flows back to
# ``p``, ``q``, ``r``.
e = e.detach()
e.requires_grad_(True)
h = e * 2
h.backward()
print(
    f"e is d: {e is d}, d.grad_fn={d.grad_fn.name()}, e.grad={e.grad}, p.grad={p.grad}"
)

assert e is not d
assert not d.is_leaf
assert e.is_leaf
assert torch.equal(e.grad, torch.tensor([2.0]))
assert all(t.grad is None for t in (p, q, r))

# %%
# ``torch.no_grad()`` and ``torch.inference_mode()``
# --------------------------------------------------
# ``detach()`` cuts one tensor. To stop recording for a whole block of code,
# for evaluation or for a manual weight update, use a context manager. Inside
# either one, results do not require grad, and are therefore leaves:
weight = torch.ones(3, requires_grad=True)
with torch.no_grad():
    out_no_grad = weight * 2
with torch.inference_mode():
    out_inference = weight * 2
for name, t in {"no_grad": out_no_grad, "inference_mode": out_inference}.items():
    print(
        f"{name:15} requires_grad={t.requires_grad!s:5} is_leaf={t.is_leaf!s:5} "
        f"is_inference={torch.is_inference(t)}"
    )

for t in (out_no_grad, out_inference):
    assert not t.requires_grad
    assert t.is_leaf
assert not torch.is_inference(out_no_grad)
assert torch.is_inference(out_inference)

# %%
# The difference shows later. A ``no_grad`` result is an ordinary tensor: you
# can use it as a constant in a computation that autograd records.
(out_no_grad * weight).sum().backward()
print(weight.grad)

assert torch.equal(weight.grad, torch.full((3,), 2.0))

# %%
# ``inference_mode`` goes further: to be faster, it skips the bookkeeping
# autograd would need later, such as the version counter. Its results are
# *inference tensors*, and autograd refuses to save them for backward:
try:
    (out_inference * weight).sum().backward()
except RuntimeError as err:
    message = str(err)
    print(textwrap.fill(f"RuntimeError: {message}", width=79))
else:
    raise AssertionError("expected a RuntimeError")

assert "Inference tensors cannot be saved for backward" in message
assert "make a clone to get a normal tensor" in message

try:
    out_inference._version
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a RuntimeError")

assert "do not track version counter" in message

# %%
# As the message says, a ``clone()`` made outside inference mode is a normal
# tensor again:
usable = out_inference.clone()
weight.grad = None
(usable * weight).sum().backward()
print(torch.is_inference(usable), weight.grad)

assert not torch.is_inference(usable)
assert torch.equal(weight.grad, torch.full((3,), 2.0))

# %%
# Use ``inference_mode`` for pure inference whose results never meet
# autograd again, and ``no_grad`` otherwise.
#
# Summary
# -------
# * An operation's result requires grad if any input does; inputs that don't
#   get no ``.grad`` (it stays ``None``).
# * ``detach()`` gives a leaf without history that **shares memory** with the
#   original; in-place changes through it can break a later ``backward()``,
#   which autograd detects through the version counter.
# * Leaves cut off by ``detach()`` get ``None``, not zero, and gradients of
#   the rest accumulate as usual.
# * ``e = d`` is not an operation; ``e.detach()`` is.
# * ``no_grad`` and ``inference_mode`` stop recording for a block; only
#   ``no_grad`` results can be used in autograd later.
#
# Common misreadings of these rules are collected in
# :doc:`/explanations/misconceptions`.
