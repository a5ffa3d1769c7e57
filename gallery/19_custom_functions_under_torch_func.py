"""
What must a custom Function define for vmap, jacfwd and double backward?
========================================================================

The :mod:`torch.func` transforms
(:ref:`sphx_glr_tutorials_14_forward_mode_and_torch_func.py`) need a
custom Function in the split form of
:ref:`sphx_glr_tutorials_09_writing_a_custom_function.py`. That is not
enough: each transform calls its own part of the Function. This tutorial
adds them: a vmap rule, a ``jvp``, a twice-differentiable ``backward``.
"""

# %%
# Each transform calls its own part
# ---------------------------------
# ``grad`` and ``jacrev`` call ``backward``. ``vmap`` needs a *vmap rule*,
# ``jvp`` a ``jvp`` static method, and ``jacfwd``, which maps ``vmap`` over
# ``jvp``, both. 09's ``Exp`` has neither: ``vmap`` and ``jvp`` raise.
import math

import torch
from torch.autograd import gradgradcheck
from torch.autograd.function import once_differentiable
from torch.func import grad, jacfwd, jacrev, jvp, vmap

from autograd_notes import expect_error


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.exp(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.saved_tensors[0]  # e^x, the output


# sphinx_gallery_start_ignore
import warnings
from contextlib import redirect_stdout

with warnings.catch_warnings():  # 2.13: Deprecation-, 2.14: FutureWarning
    warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated")
    import torch._decomp.decompositions_for_jvp  # forward mode's first use
# sphinx_gallery_end_ignore
x = torch.tensor([0.0, 1.0, 2.0])
print("grad:", grad(lambda t: Exp.apply(t).sum())(x))
with expect_error(RuntimeError, "does not have vmap support"):
    vmap(Exp.apply)(x)
with expect_error(NotImplementedError, "must implement the jvp"):
    jvp(Exp.apply, (x,), (torch.ones(3),))
# sphinx_gallery_start_ignore
assert torch.allclose(grad(lambda t: Exp.apply(t).sum())(x), x.exp())
assert torch.allclose(jacrev(Exp.apply)(x), torch.diag(x.exp()))
# sphinx_gallery_end_ignore

# %%
# The automatic vmap rule, and a ``jvp``
# --------------------------------------
# With ``generate_vmap_rule = True``, ``vmap`` runs ``forward``,
# ``setup_context`` and ``backward`` themselves on batched tensors: fine
# for torch operations. Forward mode needs the Function's own derivative:
# ``jvp(ctx, *tangents)`` maps a tangent per input to one per output,
# :math:`Jv` (:math:`e^x v` here), reading what ``ctx.save_for_forward``
# saved. ``vmap`` then equals a loop, and ``jacfwd`` gives
# :math:`\operatorname{diag}(e^x)`:


class FuncExp(Exp):
    generate_vmap_rule = True

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)  # for backward
        ctx.save_for_forward(output)  # for jvp

    @staticmethod
    def jvp(ctx, x_tangent):
        return x_tangent * ctx.saved_tensors[0]


batch = torch.linspace(-3.0, 3.0, 12).reshape(4, 3)
looped = torch.stack([FuncExp.apply(row) for row in batch])
print("vmap == loop:", torch.equal(vmap(FuncExp.apply)(batch), looped))
print(jacfwd(FuncExp.apply)(x))
# sphinx_gallery_start_ignore
assert torch.equal(vmap(FuncExp.apply)(batch), looped)
assert torch.allclose(jacfwd(FuncExp.apply)(x), torch.diag(x.exp()))
_ones = torch.ones(3)
assert torch.allclose(jvp(FuncExp.apply, (x,), (_ones,))[1], x.exp())
_JvpOnly = type("_JvpOnly", (FuncExp,), {"generate_vmap_rule": False})
with redirect_stdout(None), expect_error(RuntimeError, "not have vmap support"):
    jacfwd(_JvpOnly.apply)(x)  # jacfwd needs the vmap rule too
# sphinx_gallery_end_ignore

# %%
# When it cannot work: a ``vmap`` static method
# ---------------------------------------------
# Often ``forward`` runs outside PyTorch (NumPy, a C++ kernel). This
# softsign, :math:`y = z / (1 + |z|)`, computes in Python numbers, as a
# kernel would; ``backward`` uses torch operations (the slope is :math:`(1 -
# |y|)^2`). The automatic rule hands ``forward`` a batched tensor,
# unreadable there:


class Softsign(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(z):
        values = [v / (1 + abs(v)) for v in z.flatten().tolist()]
        return torch.tensor(values, dtype=z.dtype).view_as(z)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (1 - ctx.saved_tensors[0].abs()) ** 2


with expect_error(RuntimeError, "doesn't have storage"):
    vmap(Softsign.apply)(batch)

# %%
# So write the rule, ``vmap(info, in_dims, *args)``: it gets the whole
# batch, ``in_dims`` saying where each argument's batch dimension is
# (``None``: not batched), and returns the output and ``out_dims``, where
# its batch dimension is. Softsign works entry by entry: one call, and the
# batch dimension stays put. (Also the place for speed: one kernel call.)


class BatchedSoftsign(Softsign):
    generate_vmap_rule = False  # one rule per class: this one

    @staticmethod
    def vmap(info, in_dims, z):
        print(f"  vmap rule: batch of {info.batch_size}, in_dims={in_dims}")
        return BatchedSoftsign.apply(z), in_dims[0]


rows = vmap(BatchedSoftsign.apply)(batch)
columns = vmap(BatchedSoftsign.apply, in_dims=1)(batch)
by_row = torch.stack([Softsign.apply(row) for row in batch])
by_column = torch.stack([Softsign.apply(col) for col in batch.T])
print(torch.equal(rows, by_row), torch.equal(columns, by_column))
# sphinx_gallery_start_ignore
assert (torch.equal(rows, by_row), torch.equal(columns, by_column)) == (1, 1)
# sphinx_gallery_end_ignore

# %%
# Double backward: what ``backward`` starts from
# ----------------------------------------------
# ``Exp``'s ``backward`` is a torch operation on the output, which autograd
# recorded: ``grad(grad(exp))`` at 1 is :math:`e`. But ``Cube``
# (:ref:`sphx_glr_tutorials_10_testing_a_custom_function.py`) computes
# :math:`3x^2` in ``setup_context``, which does not record: a constant.
# ``gradgradcheck`` fails, and ``torch.func`` returns 0, not :math:`6x`:


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(3 * inputs[0] ** 2)  # the derivative

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.saved_tensors[0]


t = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
print("gradgradcheck:", gradgradcheck(Cube.apply, t, raise_exception=False))
print("torch.func:", grad(grad(Cube.apply))(t.detach()), "| 6x:", 6 * 2.0)
# sphinx_gallery_start_ignore
_e = grad(grad(FuncExp.apply))(torch.tensor(1.0)).item()
assert math.isclose(_e, math.e, rel_tol=1e-6)
assert gradgradcheck(FuncExp.apply, (x.double().requires_grad_(),))
assert grad(grad(Cube.apply))(t.detach()).item() == 0.0  # silently wrong
assert not gradgradcheck(Cube.apply, (t,), raise_exception=False)
# sphinx_gallery_end_ignore

# %%
# 10's first exercise computes :math:`3x^2` in ``backward`` instead. If that
# runs outside PyTorch, make it a Function whose ``backward`` gives the
# second derivative: ``CubeBackward.apply(g, x)`` is :math:`3x^2 g`, so its
# ``backward`` returns :math:`3x^2` and :math:`6xg`, times ``gg``:


class CubeBackward(torch.autograd.Function):
    @staticmethod
    def forward(grad_output, x):
        return grad_output * 3 * x**2  # or a kernel outside PyTorch

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, gg):
        grad_output, x = ctx.saved_tensors
        return gg * 3 * x**2, gg * grad_output * 6 * x


class TwiceCube(Cube):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])  # x itself

    @staticmethod
    def backward(ctx, grad_output):
        return CubeBackward.apply(grad_output, ctx.saved_tensors[0])


print("gradgradcheck:", gradgradcheck(TwiceCube.apply, (t,)))
print("torch.func:", grad(grad(TwiceCube.apply))(t.detach()))
# sphinx_gallery_start_ignore
assert grad(grad(TwiceCube.apply))(t.detach()).item() == 12.0
_pair = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
assert gradgradcheck(TwiceCube.apply, (_pair,))
# sphinx_gallery_end_ignore

# %%
# ``once_differentiable``: refused by autograd, not by ``torch.func``
# -------------------------------------------------------------------
# A ``backward`` autograd cannot follow is marked ``@once_differentiable``
# (:ref:`sphx_glr_tutorials_13_higher_order_gradients.py`): a second
# backward through it raises. ``torch.func.grad`` does not refuse: it takes
# that gradient as a constant. :math:`f(x) = x e^x` has :math:`f''(1) = 3e`;
# ``grad(grad(f))`` gives :math:`e`:


class OnceExp(Exp):
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        return grad_output * ctx.saved_tensors[0]


def f(x):
    return x * OnceExp.apply(x)


one = torch.tensor(1.0, requires_grad=True)
(slope,) = torch.autograd.grad(f(one), one, create_graph=True)
with expect_error(RuntimeError, "marked with @once_differentiable"):
    slope.backward()
second = grad(grad(f))(one.detach())
print(f"grad(grad(f)): {second:.4f}, 3e: {3 * math.e:.4f}")
# sphinx_gallery_start_ignore
assert math.isclose(second, math.e, rel_tol=1e-6)
# sphinx_gallery_end_ignore

# %%
# Under ``torch.func``, a wrong second derivative and no error: test with
# ``gradgradcheck``. PyTorch's guide: `Extending torch.func with
# autograd.Function
# <https://docs.pytorch.org/docs/stable/notes/extending.func.html>`_.
#
# Exercises
# ---------
#
# **1. Predict.** ``vmap`` cannot run ``Softsign``'s ``forward``. Can
# ``jacrev``, which maps ``vmap`` over ``backward``?
#
# **Solution**

# %%
z = torch.tensor([-1.0, 0.0, 3.0])
print(jacrev(Softsign.apply)(z))  # yes: backward is torch operations
# sphinx_gallery_start_ignore
assert torch.allclose(jacrev(Softsign.apply)(z), torch.diag((1 + z.abs()) ** -2))
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** Is ``grad(grad(Softsign.apply))`` right, at 0.5?
#
# **Solution**

# %%
ours = grad(grad(Softsign.apply))(torch.tensor(0.5))
print(ours, f"{-2 * 1.5**-3:.4f}")  # right: backward starts from the output
# sphinx_gallery_start_ignore
assert math.isclose(ours, -2 * 1.5**-3, rel_tol=1e-6)
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :doc:`/how-to/test-a-custom-function` collects the tests of a Function;
# :doc:`/explanations/mental-model` explains the graph they all walk.
