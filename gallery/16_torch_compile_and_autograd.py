"""
What does torch.compile do to autograd?
=======================================

``torch.compile`` captures your forward pass as a graph, and it also works
out the backward pass of that graph *ahead of time*. Autograd then sees the
whole compiled region as a single node. After this tutorial you can read the
backward graph of a compiled function, check that its gradients match eager
mode, compile a custom ``autograd.Function``, and find out which autograd
calls split a compiled function into pieces.
"""

# %%
# The backend used on this page
# -----------------------------
# ``torch.compile`` runs in three stages: Dynamo captures the Python code as
# a graph, AOTAutograd derives the backward graph from it, and a backend
# turns both into code. The default backend, ``"inductor"``, generates
# optimized kernels, which needs a C++ compiler and takes a while. This page
# uses ``backend="aot_eager"``: it runs Dynamo and AOTAutograd as the default
# does, so autograd sees the same single node, but skips inductor's own
# decompositions and executes the graphs with ordinary PyTorch operations.
# That keeps the page quick to build; in your own code, leave it out.
import torch

from autograd_notes import format_graph, masked_linear, walk_graph

_ = torch.manual_seed(0)
# sphinx_gallery_start_ignore
torch._dynamo.reset()  # start clean, whatever ran earlier in this process
assert torch.compiler.get_default_backend() == "inductor"
assert "aot_eager" in torch.compiler.list_backends(exclude_tags=())
# sphinx_gallery_end_ignore

# %%
# One node for the whole compiled region
# --------------------------------------
# In eager mode, every operation adds a node to the backward graph, and each
# node saves what its own backward formula needs:


def loss_fn(x, w):
    return torch.tanh(x @ w).sum()


x = torch.randn(4, 3)
w = torch.randn(3, 2, requires_grad=True)
eager_loss = loss_fn(x, w)
print(format_graph(eager_loss, names={"w": w}, show_saved=True))

# %%
# The compiled function computes the same value, but its output hangs off a
# single ``CompiledFunctionBackward`` node. The first call compiles; the
# saved tensors are still there, now kept by that one node:
compiled_loss_fn = torch.compile(loss_fn, backend="aot_eager")
compiled_loss = compiled_loss_fn(x, w)
print(format_graph(compiled_loss, names={"w": w}, show_saved=True))
# sphinx_gallery_start_ignore
_eager = ["SumBackward0", "TanhBackward0", "MmBackward0", "AccumulateGrad"]
assert [type(n).__name__ for n in walk_graph(eager_loss)] == _eager
_compiled = ["CompiledFunctionBackward", "AccumulateGrad"]
assert [type(n).__name__ for n in walk_graph(compiled_loss)] == _compiled
_saved = compiled_loss.grad_fn.saved_tensors
assert sorted(tuple(t.shape) for t in _saved) == [(3, 4), (4, 2)]
assert any(torch.allclose(t, torch.tanh(x @ w)) for t in _saved)
assert any(torch.equal(t, x.T) for t in _saved)
assert torch.allclose(compiled_loss, eager_loss)
# sphinx_gallery_end_ignore

# %%
# Inside that node is the backward graph that AOTAutograd traced at compile
# time, for the whole region at once. It saved the same two tensors as eager
# mode: the output of ``tanh`` (:math:`\tanh' = 1 - \tanh^2`) and the input
# ``x`` (transposed, for the gradient of ``w``). :func:`~autograd_notes.format_graph`
# cannot show the operations inside: to autograd they are one step.
#
# The gradients are the same
# --------------------------
# ``backward()`` on a compiled output works as usual and fills ``w.grad``.
# With ``aot_eager`` the numbers match eager mode exactly; a backend that
# generates its own kernels, such as ``"inductor"``, may reorder floating
# point operations and differ in the last bits, so compare with
# ``torch.allclose``.
compiled_loss.backward()
compiled_grad, w.grad = w.grad, None
eager_loss.backward()
print("compiled:", compiled_grad)
print("eager:   ", w.grad)
print("allclose:", torch.allclose(compiled_grad, w.grad))
# sphinx_gallery_start_ignore
assert torch.equal(compiled_grad, w.grad)  # raises if either is None
# sphinx_gallery_end_ignore

# %%
# A custom ``autograd.Function`` inside a compiled region
# -------------------------------------------------------
# :func:`~autograd_notes.masked_linear` is built on a custom
# :class:`torch.autograd.Function`
# (:ref:`sphx_glr_tutorials_09_writing_a_custom_function.py`). Dynamo traces
# through its ``forward`` and AOTAutograd through its ``backward``, so the
# Function compiles into the same single node. ``fullgraph=True`` turns any
# graph break into an error, so running without one proves that the whole
# function was captured:
mask = torch.tensor(
    [[True, False, True, True], [False, True, True, False], [True, True, False, True]]
)
weight = torch.randn(3, 4, requires_grad=True)
inputs = torch.randn(5, 4)


def masked_loss(inputs, weight):
    return masked_linear(inputs, weight, mask).pow(2).sum()


compiled_masked_loss = torch.compile(masked_loss, backend="aot_eager", fullgraph=True)
# sphinx_gallery_start_ignore
# While tracing a custom Function, Dynamo creates a torch.autograd.Function
# object and hides the DeprecationWarning that this raises with
# catch_warnings(record=True), which does not override the "error" filter of
# this strict build. Compile once here with exactly that warning ignored; the
# visible call below reuses the compiled graph (its guards still hold).
import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", ".*should not be instantiated")
    warnings.filterwarnings("ignore", "`torch.jit.script")  # 2.13, decompositions
    compiled_masked_loss(inputs, weight)
    # AOTAutograd with inductor's decompositions, without inductor's code
    _x = torch.arange(64.0).view(8, 8).sin()
    _w = _x.T.cos().requires_grad_()
    _decomposed = torch.compile(loss_fn, backend="aot_eager_decomp_partition")(_x, _w)
_grads = [torch.autograd.grad(y, _w)[0] for y in (_decomposed, loss_fn(_x, _w))]
assert not torch.equal(*_grads)  # not exactly aot_eager's: other last bits
# sphinx_gallery_end_ignore
loss = compiled_masked_loss(inputs, weight)
print("grad_fn:", loss.grad_fn.name())
loss.backward()
print(weight.grad)
# sphinx_gallery_start_ignore
assert loss.grad_fn.name() == "CompiledFunctionBackward"
assert torch.equal(weight.grad != 0, mask)  # zero exactly outside the mask
_compiled_grad, weight.grad = weight.grad, None
masked_loss(inputs, weight).backward()
assert torch.allclose(_compiled_grad, weight.grad)
_eager_nodes = [n.name() for n in walk_graph(masked_loss(inputs, weight))]
assert "MaskedLinearFunctionBackward" in _eager_nodes
# sphinx_gallery_end_ignore

# %%
# The weight gradient is zero outside the mask, as in eager mode, and
# matches it; but the Function's own ``MaskedLinearFunctionBackward`` node is
# gone, folded into ``CompiledFunctionBackward``.
#
# Common mistake: calling ``backward()`` inside the compiled function
# --------------------------------------------------------------------
# It is tempting to compile a whole training step, backward included. Dynamo
# cannot capture ``Tensor.backward()`` or ``torch.autograd.grad``: it *breaks
# the graph* there, runs that call in ordinary Python, and compiles what is
# left separately (with ``fullgraph=True`` it raises an error instead).
# ``torch._dynamo.explain`` runs a function once and reports the graphs it
# captured and why it had to break:


def graph_report(fn, *args):
    torch._dynamo.reset()  # forget earlier compilations, for a clean report
    report = torch._dynamo.explain(fn)(*args)
    reasons = [r.reason.splitlines()[0] for r in report.break_reasons]
    print(f"{fn.__name__}: {report.graph_count} graph(s), breaks: {reasons}")
    return report


def train_step(x, w):
    loss_fn(x, w).backward()  # wrong place: a graph break


def grad_step(x, w):
    (grad,) = torch.autograd.grad(loss_fn(x, w), w)  # a graph break too
    return grad


step_report = graph_report(train_step, x, w)
grad_report = graph_report(grad_step, x, w)
# sphinx_gallery_start_ignore
assert (len(step_report.break_reasons), len(grad_report.break_reasons)) == (1, 1)
assert "Tensor.backward()" in step_report.break_reasons[0].reason
assert "torch.autograd.grad" in grad_report.break_reasons[0].reason
assert torch._dynamo.config.trace_autograd_ops is False
torch._dynamo.reset()
try:
    torch.compile(train_step, backend="aot_eager", fullgraph=True)(x, w)
except torch._dynamo.exc.Unsupported as _err:
    _message = str(_err)
assert _message.startswith("Unsupported Tensor.backward() call")
torch._dynamo.reset()
w.grad = None
# sphinx_gallery_end_ignore

# %%
# The fix: compile the forward pass (the model and the loss) and call
# ``backward()`` outside. Nothing is lost: the backward of the compiled
# region is already compiled, as ``CompiledFunctionBackward``. The flag in
# the second message, ``trace_autograd_ops``, is off by default; you do not
# need it for training.
report = graph_report(loss_fn, x, w)
torch._dynamo.reset()
compiled_loss_fn = torch.compile(loss_fn, backend="aot_eager", fullgraph=True)
compiled_loss_fn(x, w).backward()
print("w.grad:", w.grad)
# sphinx_gallery_start_ignore
assert (report.graph_count, len(report.break_reasons)) == (1, 0)
assert torch.equal(w.grad, compiled_grad)
# sphinx_gallery_end_ignore

# %%
# What else breaks the graph, and what does not
# ---------------------------------------------
# Printing a tensor needs its values, which do not exist while Dynamo traces,
# so ``print`` breaks the graph. Most other autograd tools compile without a
# break: a ``torch.no_grad()`` block, ``.detach()``, and even a hook
# registered on an intermediate tensor (it still changes the gradient, as in
# :ref:`sphx_glr_tutorials_11_hooks.py`).


def with_print(x, w):
    y = x * 2
    print("y =", y)
    return loss_fn(y, w)


def with_no_grad(x, w):
    with torch.no_grad():
        scale = (x @ w).abs().max()
    return loss_fn(x, w) / scale


def with_detach(x, w):
    y = x @ w
    return (y - y.detach().mean()).pow(2).sum()


def with_hook(x, w):
    y = x @ w
    y.register_hook(lambda grad: grad * 2)
    return y.sum()


reports = [graph_report(f, x, w) for f in (with_print, with_no_grad, with_detach)]
hook_report = graph_report(with_hook, x, w)
# sphinx_gallery_start_ignore
assert [len(r.break_reasons) for r in reports] == [1, 0, 0]
assert (reports[0].graph_count, len(hook_report.break_reasons)) == (2, 0)
torch._dynamo.reset()
w.grad = None
torch.compile(with_hook, backend="aot_eager", fullgraph=True)(x, w).backward()
_compiled_hook_grad, w.grad = w.grad, None
with_hook(x, w).backward()
assert torch.equal(_compiled_hook_grad, w.grad)
assert torch.equal(w.grad, 2 * x.sum(0, keepdim=True).T.expand(3, 2))
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** ``deep`` below chains seven operations. How many nodes does
# the backward graph of its output have in eager mode, and how many after
# ``torch.compile``?
#
# **Solution**

# %%


def deep(x, w):
    y = x @ w
    return (y.sin() * 2 + 1).exp().mean().log()


torch._dynamo.reset()
eager_nodes = len(walk_graph(deep(x, w)))
compiled_nodes = len(walk_graph(torch.compile(deep, backend="aot_eager")(x, w)))
print(f"eager: {eager_nodes} nodes, compiled: {compiled_nodes} nodes")
# sphinx_gallery_start_ignore
# seven operations plus AccumulateGrad; CompiledFunctionBackward and AccumulateGrad
assert (eager_nodes, compiled_nodes) == (8, 2)
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** You call ``compiled_loss_fn(x, w)`` inside
# ``torch.no_grad()``. Does the output have a ``grad_fn``?
#
# **Solution**

# %%
with torch.no_grad():
    out = compiled_loss_fn(x, w)
print(out.grad_fn, out.requires_grad)  # None False: no graph is recorded
# sphinx_gallery_start_ignore
assert (out.grad_fn, out.requires_grad) == (None, False)
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# Compiled or not, a training step often adds up the gradients of several
# micro-batches and clips them before it steps:
# :ref:`sphx_glr_tutorials_17_gradient_accumulation_and_clipping.py`.
