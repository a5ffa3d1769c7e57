"""
How do you write, and test, a custom autograd Function?
=======================================================

We build a linear layer whose weight trains only inside a mask as a
:class:`torch.autograd.Function`, one piece at a time, check it against the
package's :class:`autograd_notes.MaskedLinearFunction`, test it
with :func:`torch.autograd.gradcheck`, and then make the classic mistakes on
purpose to see which checks catch them.
"""

# %%
# The goal
# --------
# ``y = x @ W.T + b``, with a bool mask ``M`` of ``W``'s shape, in two modes:
#
# * ``"freeze"``: the forward pass uses the whole ``W``; the weight gradient
#   is zeroed outside ``M``. The entries keep acting, they just never learn.
#   This is what the study notes wanted, and it is *deliberately not* the
#   derivative of the forward pass.
# * ``"prune"``: the forward pass uses ``W * M``. Then a zero gradient
#   outside ``M`` *is* the true derivative.
#
# :ref:`sphx_glr_tutorials_06_training_part_of_a_weight.py` explains why the
# two differ. Autograd could do either mode without a custom Function (a
# gradient hook, or ``W * M``); writing it by hand is the exercise.
#
# A vocabulary note, because the study notes used old terms: ``Variable``
# survives only as a deprecated wrapper that returns a plain tensor; tensors
# themselves carry ``requires_grad``, ``.grad`` and ``.grad_fn``. A
# ``Function`` is not an "edge": each call adds one *node* to the backward
# graph (its ``backward``), and the edges link that node to the nodes of its
# inputs.
import torch
import torch.nn.functional as F

_ = torch.manual_seed(0)

# sphinx_gallery_start_ignore
assert type(torch.autograd.Variable(torch.ones(1))) is torch.Tensor
# sphinx_gallery_end_ignore

# %%
# Step 1: ``forward`` computes, and nothing else
# ----------------------------------------------
# ``forward`` receives the inputs exactly as passed to ``apply`` (tensors
# and non-tensors such as the mode string) and returns the output.
# :func:`torch.nn.functional.linear` accepts any number of leading batch
# dimensions, unlike the notes' ``input.mm(weight.t())`` (2-D only).


def forward(input, weight, bias, mask, mode):
    effective = weight if mode == "freeze" else weight * mask
    return F.linear(input, effective, bias)


# sphinx_gallery_start_ignore
assert F.linear(torch.ones(2, 5, 4), torch.ones(3, 4)).shape == (2, 5, 3)
try:
    torch.ones(2, 5, 4).mm(torch.ones(3, 4).t())
except RuntimeError as _err:
    _message = str(_err)
else:
    raise AssertionError("expected mm to reject a 3-D input")
assert "must be a matrix" in _message
# sphinx_gallery_end_ignore


# %%
# Step 2: ``setup_context`` saves what ``backward`` will need
# -----------------------------------------------------------
# Tensors go through ``ctx.save_for_backward`` (autograd then checks that
# they are not modified in place before ``backward`` runs); plain Python
# values such as the mode can be stored as attributes of ``ctx``. Keeping
# ``setup_context`` separate from ``forward`` is the current style, and the
# one that :mod:`torch.func` transforms require.


def setup_context(ctx, inputs, output):
    input, weight, _bias, mask, mode = inputs
    ctx.save_for_backward(input, weight, mask)
    ctx.mode = mode


# %%
# Step 3: ``backward`` returns one gradient per ``forward`` input, in order
# -------------------------------------------------------------------------
# ``forward`` took five inputs ``(input, weight, bias, mask, mode)``, so
# ``backward`` returns five values in that order, ``None`` for the mask and
# the mode, which have no gradient. The mask is applied with one vectorised
# multiplication; the batch dimensions are folded into one so that the weight
# gradient is a single matrix product.


def backward_v1(ctx, grad_output):
    input, weight, mask = ctx.saved_tensors
    effective = weight if ctx.mode == "freeze" else weight * mask
    grad_2d = grad_output.reshape(-1, grad_output.shape[-1])
    input_2d = input.reshape(-1, input.shape[-1])
    grad_input = grad_output @ effective
    grad_weight = (grad_2d.T @ input_2d) * mask
    grad_bias = grad_2d.sum(0)
    return grad_input, grad_weight, grad_bias, None, None


class MaskedLinearV1(torch.autograd.Function):
    forward = staticmethod(forward)
    setup_context = staticmethod(setup_context)
    backward = staticmethod(backward_v1)


# %%
# It works for a layer with a bias, and with a 3-D input. (The ``-0.`` in
# the printed gradient are zeros too: a negative number times ``False``.)
mask = torch.tensor(
    [[True, False, True, True], [False, True, True, False], [True, True, False, True]]
)
x = torch.randn(2, 5, 4, requires_grad=True)
w = torch.randn(3, 4, requires_grad=True)
b = torch.randn(3, requires_grad=True)
y = MaskedLinearV1.apply(x, w, b, mask, "freeze")
y.sum().backward()
print(y.shape, y.grad_fn.name())
print(w.grad)

assert y.shape == (2, 5, 3)
assert y.grad_fn.name() == "MaskedLinearV1Backward"
assert (w.grad[~mask] == 0).all()
assert (w.grad[mask] != 0).all()
# sphinx_gallery_start_ignore
assert torch.signbit(w.grad[~mask]).any()  # the printed -0.
# sphinx_gallery_end_ignore

# %%
# But a layer *without* bias breaks it: ``backward`` returns a gradient for
# an input that was ``None``. (The message still says "Variable", the old
# name for a tensor that takes part in autograd.)
try:
    MaskedLinearV1.apply(x, w, None, mask, "freeze").sum().backward()
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a RuntimeError for bias=None")
assert "returned a gradient different than None at position 3" in message
assert "was not a Variable" in message

# %%
# Step 4: ``ctx.needs_input_grad`` says which gradients to compute
# ----------------------------------------------------------------
# ``ctx.needs_input_grad`` is a tuple of booleans, one per ``forward``
# input, in the same order. Checking it fixes the ``bias=None`` case and
# skips work nobody asked for, e.g. the input gradient of the first layer.


def backward(ctx, grad_output):
    input, weight, mask = ctx.saved_tensors
    needs_input, needs_weight, needs_bias = ctx.needs_input_grad[:3]
    grad_input = grad_weight = grad_bias = None
    grad_2d = grad_output.reshape(-1, grad_output.shape[-1])
    if needs_input:
        effective = weight if ctx.mode == "freeze" else weight * mask
        grad_input = grad_output @ effective
    if needs_weight:
        grad_weight = (grad_2d.T @ input.reshape(-1, input.shape[-1])) * mask
    if needs_bias:
        grad_bias = grad_2d.sum(0)
    return grad_input, grad_weight, grad_bias, None, None


class MyMaskedLinear(torch.autograd.Function):
    forward = staticmethod(forward)
    setup_context = staticmethod(setup_context)
    backward = staticmethod(backward)


w.grad = None
y = MyMaskedLinear.apply(x.detach(), w, None, mask, "freeze")
y.sum().backward()
print("no bias, input without grad: weight gradient computed:", w.grad is not None)

assert w.grad is not None
assert (w.grad[~mask] == 0).all()
# sphinx_gallery_start_ignore
_flags = []


class _Peek(MyMaskedLinear):
    @staticmethod
    def backward(ctx, grad_output):
        _flags.append(ctx.needs_input_grad)
        return backward(ctx, grad_output)


_Peek.apply(x.detach(), w, None, mask, "freeze").sum().backward()
assert _flags == [(False, True, False, False, False)]  # one per forward input
# save_for_backward: modifying a saved tensor in place is detected at backward.
_w = w.detach().clone().requires_grad_()
_y = MyMaskedLinear.apply(x.detach(), _w, None, mask, "freeze")
with torch.no_grad():
    _w.add_(1.0)
try:
    _y.sum().backward()
except RuntimeError as _err:
    _message = str(_err)
else:
    raise AssertionError("expected the in-place check of saved tensors to fire")
assert "modified by an inplace operation" in _message


# torch.func needs a forward without ctx and a separate setup_context:
class _VmapMaskedLinear(MyMaskedLinear):
    generate_vmap_rule = True


_batched = torch.func.vmap(
    lambda xi: _VmapMaskedLinear.apply(xi, w.detach(), b.detach(), mask, "freeze")
)(x.detach())
assert torch.allclose(_batched, F.linear(x.detach(), w.detach(), b.detach()))
# sphinx_gallery_end_ignore

# %%
# The result is a node in the graph
# ---------------------------------
# ``MyMaskedLinear.apply`` returns an ordinary tensor whose ``grad_fn`` is
# the node ``MyMaskedLinearBackward``. Its edges lead to the inputs that
# need a gradient, here the ``AccumulateGrad`` nodes of the leaves ``w`` and
# ``b``; ``x`` needs none, and the mask and the mode are not part of the
# graph. :func:`autograd_notes.format_graph` prints the graph behind
# a small loss:
from autograd_notes.graph import draw_graph, format_graph

y = MyMaskedLinear.apply(x.detach(), w, b, mask, "freeze")
loss = (y.relu() ** 2).mean()
print(type(y).__name__, y.grad_fn.name())
print(format_graph(loss, names={"w": w, "b": b, "y": y, "loss": loss}))

assert type(y) is torch.Tensor
assert y.grad_fn.name() == "MyMaskedLinearBackward"
assert "MyMaskedLinearBackward  (grad_fn of y)" in format_graph(loss, names={"y": y})
# sphinx_gallery_start_ignore
assert [None if fn is None else fn.name() for fn, _ in y.grad_fn.next_functions] == [
    None,
    "torch::autograd::AccumulateGrad",
    "torch::autograd::AccumulateGrad",
    None,
]
assert y.grad_fn.next_functions[1][0].variable is w
assert y.grad_fn.next_functions[2][0].variable is b
# sphinx_gallery_end_ignore

# %%
# The same graph, drawn with :func:`autograd_notes.draw_graph`:
try:
    fig = draw_graph(loss, names={"w": w, "b": b, "loss": loss})
except ImportError as err:  # matplotlib and networkx are optional extras
    print(err)

# %%
# Check it against plain autograd
# -------------------------------
# The reference for each mode is one line of ordinary PyTorch. In freeze
# mode it is ``F.linear`` with the whole weight, followed by ``W.grad * M``;
# in prune mode it is ``F.linear`` with ``W * M``. A seeded random upstream
# gradient (the ``probe``) exercises every entry.


def gradients(run, x, w, b):
    """Run `run(x, w, b)` on fresh copies; return the output and the three grads."""
    x, w, b = (t.detach().clone().requires_grad_() for t in (x, w, b))
    out = run(x, w, b)
    probe = torch.randn(out.shape, generator=torch.Generator().manual_seed(1))
    (out * probe).sum().backward()
    return out.detach(), x.grad, w.grad, b.grad


def masked(fn, mode):
    """`fn(x, w, b, mask, mode)` as a function of `(x, w, b)` alone."""
    return lambda x, w, b: fn(x, w, b, mask, mode)


def reference(x, w, b, mask, mode):
    def run(x, w, b):
        return F.linear(x, w if mode == "freeze" else w * mask, b)

    out, grad_x, grad_w, grad_b = gradients(run, x, w, b)
    return out, grad_x, grad_w * mask, grad_b


for mode in ("freeze", "prune"):
    ours = gradients(masked(MyMaskedLinear.apply, mode), x, w, b)
    same = [
        torch.allclose(a, r)
        for a, r in zip(ours, reference(x, w, b, mask, mode), strict=True)
    ]
    print(f"{mode}: output, grad x, grad W, grad b match the reference: {same}")
    assert all(same)

# %%
# The weight gradient in freeze mode, as a picture: the full gradient that
# plain autograd computes, the mask, and what our Function returns: the
# same numbers, with zeros outside the mask.
try:
    import matplotlib.pyplot as plt
except ImportError:  # matplotlib is an optional extra
    plt = None

full_grad = gradients(lambda x, w, b: F.linear(x, w, b), x, w, b)[2]
freeze_grad = gradients(masked(MyMaskedLinear.apply, "freeze"), x, w, b)[2]

if plt is not None:
    fig, axes = plt.subplots(1, 3, figsize=(10, 2.4), layout="constrained")
    lim = float(full_grad.abs().max())
    panels = [
        ("F.linear: W.grad", full_grad, "RdBu_r", -lim, lim),
        ("mask M", mask.float(), "Greys", 0, 1),
        ("MyMaskedLinear, freeze: W.grad", freeze_grad, "RdBu_r", -lim, lim),
    ]
    for ax, (title, data, cmap, lo, hi) in zip(axes, panels, strict=True):
        im = ax.imshow(data.numpy(), cmap=cmap, vmin=lo, vmax=hi)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("input feature")
        ax.set_xticks(range(4))
        ax.set_yticks(range(3))
    axes[0].set_ylabel("output feature")
    fig.colorbar(im, ax=axes[2], shrink=0.9)

assert torch.equal(freeze_grad, full_grad * mask)

# %%
# The package's version gives the same numbers
# --------------------------------------------
# :class:`autograd_notes.MaskedLinearFunction` is this Function
# with two refinements: it saves the input and the weight only when the
# other one needs a gradient, and it supports :func:`torch.func.vmap`. Its
# ``apply`` does not check its arguments; the checked entry points are the
# function :func:`autograd_notes.masked_linear` and the module
# :class:`autograd_notes.MaskedLinear`. Mind the argument
# orders: ``apply(input, weight, bias, mask, mode)`` but
# ``masked_linear(input, weight, mask, bias, mode=...)``.
from autograd_notes.masked_linear import (
    MaskedLinear,
    MaskedLinearFunction,
    masked_linear,
)


def function_in_apply_order(x, w, b, mask, mode):
    return masked_linear(x, w, mask, b, mode=mode)  # mask before bias


for mode in ("freeze", "prune"):
    ours = gradients(masked(MyMaskedLinear.apply, mode), x, w, b)
    via_apply = gradients(masked(MaskedLinearFunction.apply, mode), x, w, b)
    via_function = gradients(masked(function_in_apply_order, mode), x, w, b)
    assert all(torch.allclose(a, c) for a, c in zip(ours, via_apply, strict=True))
    assert all(torch.allclose(a, c) for a, c in zip(ours, via_function, strict=True))

linear = torch.nn.Linear(4, 3)
with torch.no_grad():
    linear.weight.copy_(w)
    linear.bias.copy_(b)
layer = MaskedLinear.from_linear(linear, mask, mode="freeze")
print(layer)
_, _, want_w, want_b = reference(x, w, b, mask, "freeze")
out = layer(x.detach())
(
    out * torch.randn(out.shape, generator=torch.Generator().manual_seed(1))
).sum().backward()
print(
    "module: grad of W and b match:",
    torch.allclose(layer.weight.grad, want_w)
    and torch.allclose(layer.bias.grad, want_b),
)

assert type(out.grad_fn).__name__ == "MaskedLinearFunctionBackward"
# sphinx_gallery_start_ignore
# The refinement: with an input that needs no gradient, the weight is not saved.
_saved = masked_linear(x.detach(), w, mask, b).grad_fn.saved_tensors
assert _saved[0] is not None
assert _saved[1] is None
# sphinx_gallery_end_ignore
assert torch.allclose(layer.weight.grad, want_w)
assert torch.allclose(layer.bias.grad, want_b)
# sphinx_gallery_start_ignore
# apply does not check its arguments; masked_linear and MaskedLinear do.
_half = torch.full((3, 4), 0.5)
MaskedLinearFunction.apply(x.detach(), w.detach(), b.detach(), _half, "freeze")
for _checked in (
    lambda: masked_linear(x.detach(), w.detach(), _half),
    lambda: MaskedLinear(4, 3, _half),
):
    try:
        _checked()
    except ValueError:
        pass
    else:
        raise AssertionError("expected a ValueError")
_vmapped = torch.func.vmap(lambda xi: masked_linear(xi, w.detach(), mask, b.detach()))
assert torch.allclose(_vmapped(x.detach()), reference(x, w, b, mask, "freeze")[0])
# sphinx_gallery_end_ignore

# %%
# Testing with ``gradcheck``
# --------------------------
# :func:`torch.autograd.gradcheck` compares the gradients your ``backward``
# returns with finite differences of your ``forward``, for every input that
# requires grad. Use ``float64``: in ``float32`` the finite differences are
# too noisy. In prune mode the Function is the true derivative, and
# ``gradcheck`` passes for the input, the weight and the bias.
from torch.autograd import gradcheck
from torch.autograd.gradcheck import GradcheckError

x64 = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
w64 = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
b64 = torch.randn(3, dtype=torch.float64, requires_grad=True)
print("prune:", gradcheck(MyMaskedLinear.apply, (x64, w64, b64, mask, "prune")))

assert gradcheck(MyMaskedLinear.apply, (x64, w64, b64, mask, "prune"))
assert gradcheck(MaskedLinearFunction.apply, (x64, w64, b64, mask, "prune"))
# sphinx_gallery_start_ignore
# In float32 the same (correct) Function fails gradcheck: the noise.
import warnings

_inputs32 = (x64.float(), w64.float(), b64.float(), mask, "prune")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # gradcheck warns about float32 inputs
    assert not gradcheck(MyMaskedLinear.apply, _inputs32, raise_exception=False)
# sphinx_gallery_end_ignore

# %%
# In freeze mode ``gradcheck`` rejects the weight gradient, and it *should*:
# the forward pass uses every entry of ``W``, so the true derivative is
# nonzero outside the mask, and our Function returns zeros there on
# purpose. The first line of the error names the output and the input
# (index 1 is the weight, counting only inputs that require grad); the rest
# of the message lists both Jacobians.


def gradcheck_verdict(fn, inputs):
    """'passed', or the first line of gradcheck's error."""
    try:
        gradcheck(fn, inputs)
    except GradcheckError as err:
        return f"GradcheckError: {str(err).splitlines()[0]}"
    return "passed"


verdict = gradcheck_verdict(MyMaskedLinear.apply, (x64, w64, b64, mask, "freeze"))
print(verdict)

assert (
    verdict == "GradcheckError: Jacobian mismatch for output 0 with respect to input 1,"
)
# sphinx_gallery_start_ignore
assert (
    gradcheck_verdict(MaskedLinearFunction.apply, (x64, w64, b64, mask, "freeze"))
    == verdict
)
try:
    gradcheck(MyMaskedLinear.apply, (x64, w64, b64, mask, "freeze"))
except GradcheckError as _err:
    _message = str(_err)
else:
    raise AssertionError("expected a GradcheckError")
assert "numerical:" in _message
assert "analytical:" in _message
# sphinx_gallery_end_ignore

# %%
# So test a Function whose gradient is "wrong" on purpose in two parts:
#
# 1. the intentional part against its specification, here
#    ``W.grad * M`` from plain ``F.linear`` (the reference check above), and
# 2. everything else with ``gradcheck``, holding the weight fixed
#    (``requires_grad=False``) so that only the input and the bias are
#    checked.
verdict = gradcheck_verdict(
    MyMaskedLinear.apply, (x64, w64.detach(), b64, mask, "freeze")
)
print("freeze, input and bias only:", verdict)

assert verdict == "passed"
assert gradcheck(MaskedLinearFunction.apply, (x64, w64.detach(), b64, mask, "freeze"))

# %%
# Classic mistakes, and what catches them
# ---------------------------------------
# Each mistake below appears in hand-written Functions like the one in the
# study notes. We make it on purpose and catch it: with an error from
# autograd, with ``gradcheck``, or with the reference comparison, wrapped
# here in a function that lists what is wrong.


def problems(run, x=x, w=w, b=b, mask=mask, mode="freeze"):
    """Compare `run(x, w, b)` with the reference; describe every mismatch."""
    found = []
    names = ("output", "grad of x", "grad of W", "grad of b")
    for name, got, want in zip(
        names, gradients(run, x, w, b), reference(x, w, b, mask, mode), strict=True
    ):
        if got is None:
            found.append(f"{name}: missing (None)")
        elif got.shape != want.shape or not torch.allclose(got, want):
            found.append(f"{name}: wrong values")
    return found


def make_function(name, backward):
    """A Function class with our forward and setup_context and this backward."""
    namespace = {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(setup_context),
        "backward": staticmethod(backward),
    }
    return type(name, (torch.autograd.Function,), namespace)


print(
    "MyMaskedLinear:",
    problems(masked(MyMaskedLinear.apply, "freeze")),
)

assert problems(masked(MyMaskedLinear.apply, "freeze")) == []
assert problems(masked(MyMaskedLinear.apply, "prune"), mode="prune") == []


# %%
# (a) The wrong number of gradients
# ---------------------------------
# Forgetting the ``None`` for the mask and the mode: autograd counts, and
# says so.
def backward_too_few(ctx, grad_output):
    return backward(ctx, grad_output)[:3]


TooFew = make_function("TooFew", backward_too_few)
try:
    TooFew.apply(x, w, b, mask, "freeze").sum().backward()
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a RuntimeError for three gradients")
assert "returned an incorrect number of gradients (expected 5, got 3)" in message

# %%
# (a) The wrong order of gradients
# --------------------------------
# The notes' Function had the signature ``forward(ctx, input, weight,
# location, bias)`` and returned ``grad_input, grad_weight, grad_bias,
# grad_bias``, so the third value, which belongs to ``location``, was the bias
# gradient. The correct return is ``grad_input, grad_weight, None,
# grad_bias``. Yet the bug did no harm, *by luck*: ``location`` is an integer
# tensor that needs no gradient, and autograd silently drops whatever is
# returned for such an input. Here is that Function (vectorised, and with
# the bias index fixed, see (b)), run with the notes' argument order:
location = torch.tensor([0, 2, 3])  # the input columns whose weights train
col_mask = torch.zeros(3, 4, dtype=torch.bool)
col_mask[:, location] = True


def notes_forward(input, weight, location, bias):
    return F.linear(input, weight, bias)


def notes_setup_context(ctx, inputs, output):
    input, weight, location, _bias = inputs
    ctx.save_for_backward(input, weight, location)


def notes_backward(bias_index):
    """The notes' backward, vectorised; it reads the bias flag at `bias_index`."""

    def backward(ctx, grad_output):
        input, weight, location = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        grad_2d = grad_output.reshape(-1, grad_output.shape[-1])
        if ctx.needs_input_grad[0]:
            grad_input = grad_output @ weight
        if ctx.needs_input_grad[1]:
            keep = torch.zeros(weight.shape[1], dtype=torch.bool)
            keep[location] = True
            grad_weight = (grad_2d.T @ input.reshape(-1, input.shape[-1])) * keep
        if ctx.needs_input_grad[bias_index]:
            grad_bias = grad_2d.sum(0)
        return grad_input, grad_weight, grad_bias, grad_bias  # the notes' order

    return backward


def notes_style(name, bias_index):
    namespace = {
        "forward": staticmethod(notes_forward),
        "setup_context": staticmethod(notes_setup_context),
        "backward": staticmethod(notes_backward(bias_index)),
    }
    return type(name, (torch.autograd.Function,), namespace)


NotesOrder = notes_style("NotesOrder", bias_index=3)
found = problems(lambda x, w, b: NotesOrder.apply(x, w, location, b), mask=col_mask)
print("notes' order, location needs no grad:", found)

assert found == []


# %%
# Autograd checks the number of gradients and their shapes, never their
# values. Swap two
# gradients whose shapes differ and it refuses; swap two that happen to have
# the same shape, and the result is silently wrong. Here ``backward`` returns
# the weight gradient first and the input gradient second:
def backward_swapped(ctx, grad_output):
    grad_input, grad_weight, grad_bias, _, _ = backward(ctx, grad_output)
    return grad_weight, grad_input, grad_bias, None, None


Swapped = make_function("Swapped", backward_swapped)
try:
    Swapped.apply(x, w, b, mask, "prune").sum().backward()
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message}")
else:
    raise AssertionError("expected a shape error for swapped gradients")
assert "returned an invalid gradient at index 0" in message

# %%
# With a batch of 3 samples for a layer with 3 outputs, the input ``(3, 4)``
# and the weight ``(3, 4)`` have the same shape. No error, wrong numbers;
# the reference comparison and ``gradcheck`` both catch it.
x_square = torch.randn(3, 4)
found = problems(masked(Swapped.apply, "prune"), x=x_square, mode="prune")
print("swapped, square shapes:", found)
verdict = gradcheck_verdict(Swapped.apply, (x64[:3], w64, b64, mask, "prune"))
print(verdict)

assert found == ["grad of x: wrong values", "grad of W: wrong values"]
assert verdict.startswith(
    "GradcheckError: Jacobian mismatch for output 0 with respect to input 0"
)

# %%
# (b) ``needs_input_grad`` read at the wrong index
# ------------------------------------------------
# The notes tested ``ctx.needs_input_grad[2]`` before computing the bias
# gradient, but index 2 is ``location``; the bias is index 3. ``location``
# never needs a gradient, so the bias gradient is never computed: no error,
# just a bias that never trains.
NotesIndex = notes_style("NotesIndex", bias_index=2)
b_leaf = b.detach().clone().requires_grad_()
NotesIndex.apply(x, w, location, b_leaf).sum().backward()
print("b.grad:", b_leaf.grad)
found = problems(lambda x, w, b: NotesIndex.apply(x, w, location, b), mask=col_mask)
print("notes' index:", found)

assert b_leaf.grad is None
assert found == ["grad of b: missing (None)"]

# %%
# ``gradcheck`` catches it as well: a missing gradient counts as zero, and
# the finite differences for the bias are not zero. (``gradcheck`` numbers
# only the inputs that require grad; with the weight held fixed those are
# ``x`` and ``b``, so "input 1" is the bias.)
verdict = gradcheck_verdict(NotesIndex.apply, (x64, w64.detach(), location, b64))
print(verdict)

assert (
    verdict == "GradcheckError: Jacobian mismatch for output 0 with respect to input 1,"
)
# sphinx_gallery_start_ignore
assert gradcheck(NotesOrder.apply, (x64, w64.detach(), location, b64))
# sphinx_gallery_end_ignore


# %%
# (c) Python loops over entries
# -----------------------------
# The notes zeroed the weight gradient outside ``location`` entry by entry:
# a loop over rows, a loop over ``range(20)`` columns, and a membership
# test for each. The hard-coded ``20`` is a bug of its own: for a layer with
# more inputs, the columns past 20 are never zeroed.
def zero_columns_loop(grad_weight, location, n_cols):
    grad_weight = grad_weight.clone()
    for row in grad_weight:
        for col in range(n_cols):
            if col not in location:
                row[col] = 0
    return grad_weight


def zero_columns_vectorised(grad_weight, location):
    keep = torch.zeros(grad_weight.shape[1], dtype=torch.bool)
    keep[location] = True
    return grad_weight * keep


big_grad = torch.randn(64, 32)
big_location = torch.tensor([1, 5, 8, 13, 21, 30])
with_20 = zero_columns_loop(big_grad, big_location, 20)
expected = zero_columns_vectorised(big_grad, big_location)
wrong_columns = (with_20 != expected).any(0).nonzero().flatten().tolist()
print("range(20) on 32 columns, correct:", torch.equal(with_20, expected))
print("columns that should be zero but are not:", wrong_columns)

assert not torch.equal(with_20, expected)
assert min(wrong_columns) >= 20
# sphinx_gallery_start_ignore
assert wrong_columns == [c for c in range(20, 32) if c not in big_location.tolist()]
# sphinx_gallery_end_ignore

# %%
# With the right column count the loop is correct, only slow: one Python
# step per entry instead of one tensor operation. The ratio printed below is
# measured while the page is built, so it varies from build to build.
import time

start = time.perf_counter()
looped = zero_columns_loop(big_grad, big_location, big_grad.shape[1])
loop_time = time.perf_counter() - start

start = time.perf_counter()
for _ in range(100):
    vectorised = zero_columns_vectorised(big_grad, big_location)
vec_time = (time.perf_counter() - start) / 100

print(f"same result: {torch.equal(looped, vectorised)}")
print(
    f"loop {loop_time * 1e3:.1f} ms, vectorised {vec_time * 1e3:.3f} ms,"
    f" about {loop_time / vec_time:.0f}x slower"
)

assert torch.equal(looped, vectorised)
assert loop_time > vec_time  # loose on purpose: timings vary between machines


# %%
# (d) Editing ``grad_output`` in place
# ------------------------------------
# ``backward`` does not own ``grad_output``: autograd may hand the very same
# tensor to other nodes. A residual connection ``f(h) + h`` is enough: the
# addition passes its incoming gradient both to ``f`` and, unchanged, to the
# skip path. Take a Function that scales by ``s`` and writes
# ``grad_output *= s``. It looks like a rebinding, but ``*=`` on a tensor is an
# in-place multiplication.
class ScaleInPlace(torch.autograd.Function):
    @staticmethod
    def forward(input, s):
        return input * s

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.s = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        grad_output *= ctx.s  # BUG: modifies a tensor autograd may share
        return grad_output, None


# %%
# Checked on its own, it is perfect: ``gradcheck`` passes.
h64 = torch.randn(6, dtype=torch.float64, requires_grad=True)
print(
    "ScaleInPlace alone:",
    gradcheck_verdict(lambda h: ScaleInPlace.apply(h, 3.0), (h64,)),
)

assert gradcheck(lambda h: ScaleInPlace.apply(h, 3.0), (h64,))


# %%
# Inside a residual connection, the skip path receives the scaled gradient
# too. The gradient of :math:`\exp(h) \cdot 3 + \exp(h)` is
# :math:`4\exp(h)`; compare what comes out:
def residual(h, scale_fn):
    e = h.exp()
    return scale_fn(e, 3.0) + e


h = torch.randn(6, requires_grad=True)
probe = torch.randn(6, generator=torch.Generator().manual_seed(2))
(residual(h, ScaleInPlace.apply) * probe).sum().backward()
want = 4 * h.detach().exp() * probe
print("gradient / true gradient:", h.grad / want)
print(
    "residual, gradcheck:",
    gradcheck_verdict(lambda h: residual(h, ScaleInPlace.apply), (h64,)),
)

assert not torch.allclose(h.grad, want)
# sphinx_gallery_start_ignore
assert torch.allclose(h.grad, 6 * h.detach().exp() * probe)
# sphinx_gallery_end_ignore
assert gradcheck_verdict(lambda h: residual(h, ScaleInPlace.apply), (h64,)).startswith(
    "GradcheckError: Jacobian mismatch"
)


# %%
# The ratio printed above is 6/4: the skip path received the gradient
# already multiplied by 3, so the two paths contributed 3 + 3 instead of
# 3 + 1. The fix is an out-of-place operation, ``grad_output * ctx.s``.
# (The package's backward never writes into ``grad_output`` either: it masks
# the weight gradient with an out-of-place product.) Test a Function
# *inside* a small graph with shared paths, not only on its own.

# sphinx_gallery_start_ignore
_g = torch.randn(2, 3)
_g_before = _g.clone()
_w = torch.randn(3, 4, requires_grad=True)
_x = torch.randn(2, 4, requires_grad=True)
_m = torch.rand(3, 4) < 0.5
for _mode in ("freeze", "prune"):
    masked_linear(_x, _w, _m, mode=_mode).backward(_g)
    assert torch.equal(_g, _g_before), "the package modified grad_output"
# sphinx_gallery_end_ignore


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(input, s):
        return input * s

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.s = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.s, None


print(
    "fixed, residual, gradcheck:",
    gradcheck_verdict(lambda h: residual(h, Scale.apply), (h64,)),
)

assert gradcheck(lambda h: residual(h, Scale.apply), (h64,))

# %%
# Summary
# -------
# * ``forward`` computes; ``setup_context`` saves tensors with
#   ``save_for_backward`` and other values on ``ctx``; ``backward`` returns
#   exactly one gradient per ``forward`` input, in order, ``None`` where there
#   is none, and consults ``ctx.needs_input_grad`` by the same positions.
# * Vectorise masks; never loop over entries in Python.
# * Never modify ``grad_output`` in place.
# * Test with ``gradcheck`` in ``float64``, also inside a graph with a
#   residual path. Where the gradient is wrong on purpose, as in freeze mode,
#   test that part against its specification and ``gradcheck`` the rest.
#
# A checklist version of this page: :doc:`/how-to/test-a-custom-function`.
# The package's layer: :mod:`autograd_notes.masked_linear`. PyTorch's guide:
# `Extending torch.autograd
# <https://docs.pytorch.org/docs/stable/notes/extending.html>`_.

# sphinx_gallery_thumbnail_number = 1
