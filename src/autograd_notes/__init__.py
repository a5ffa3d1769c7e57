"""Small, strict helpers for studying PyTorch autograd.

One idea per module:

* :mod:`autograd_notes.walk` walks the backward graph behind a tensor and
  frees deep graphs safely;
* :mod:`autograd_notes.trace` records which module of a model made each
  node of the graph;
* :mod:`autograd_notes.text`, :mod:`autograd_notes.dot` and
  :mod:`autograd_notes.drawing` print, export (Graphviz DOT) and draw the
  graph: three renderers of one view of it (``autograd_notes.view``,
  which collapses long chains, groups nodes by module and folds repeated
  module calls, ``autograd_notes.fold``; ``autograd_notes.marks`` marks
  custom ``Function`` and double-backward nodes);
* ``autograd_notes.saved`` reads what a node saved for backward without
  running user code, and ``autograd_notes.labels`` says how tensors and
  their names read in every output;
* :mod:`autograd_notes.memory` counts the bytes the nodes saved, per node
  and per module, and :mod:`autograd_notes.diff` compares two graphs (nodes
  added and removed, saved bytes per module);
* :mod:`autograd_notes.view_html` writes an interactive view of the graph
  as one self-contained HTML file (folds and modules open on a click);
* :mod:`autograd_notes.masks` builds and checks masks that decide which
  entries of a weight may learn;
* :mod:`autograd_notes.freezing` trains only the entries inside a mask (in
  the forward pass or the gradient), keeps the others frozen through
  optimizer steps, and reports what moved;
* :mod:`autograd_notes.masked_linear` is a linear layer whose weight is
  trained only inside a mask, written as a custom ``torch.autograd.Function``;
* :mod:`autograd_notes.expect` shows an expected error or warning and fails
  when it does not come; the tutorials use it to show what goes wrong.

Importing the package has no side effects beyond importing ``torch``.

The package is not on PyPI: its documentation site publishes the wheel of
the version the site was built with, in ``_static/wheels/``, and the site's
landing page shows the command that installs it, ``pip install
"autograd-notes[plot] @ <wheel URL>"`` (``[plot]`` adds matplotlib and
networkx, for :func:`.draw_graph`).
"""

from autograd_notes.diff import GraphDiff, ModuleChange, NodeChange, diff_graphs
from autograd_notes.dot import render_dot, to_dot
from autograd_notes.drawing import draw_graph
from autograd_notes.expect import expect_error, expect_warning
from autograd_notes.freezing import (
    FrozenReport,
    apply_mask,
    frozen_report,
    keep_frozen,
    parametrize_mask,
    register_grad_mask,
)
from autograd_notes.masked_linear import (
    MaskedLinear,
    MaskedLinearFunction,
    masked_linear,
)
from autograd_notes.masks import (
    check_mask,
    mask_from_condition,
    mask_from_indices,
    random_mask,
)
from autograd_notes.memory import (
    CallRow,
    ModuleRow,
    NodeRow,
    NotCounted,
    SavedMemory,
    StorageRow,
    saved_memory,
)
from autograd_notes.text import format_graph
from autograd_notes.trace import Calls, ModuleTrace, track_modules
from autograd_notes.view_html import GraphHtml, to_html
from autograd_notes.walk import free_graph, walk_graph

__version__ = "0.1.0"

__all__ = [
    "CallRow",
    "Calls",
    "FrozenReport",
    "GraphDiff",
    "GraphHtml",
    "MaskedLinear",
    "MaskedLinearFunction",
    "ModuleChange",
    "ModuleRow",
    "ModuleTrace",
    "NodeChange",
    "NodeRow",
    "NotCounted",
    "SavedMemory",
    "StorageRow",
    "__version__",
    "apply_mask",
    "check_mask",
    "diff_graphs",
    "draw_graph",
    "expect_error",
    "expect_warning",
    "format_graph",
    "free_graph",
    "frozen_report",
    "keep_frozen",
    "mask_from_condition",
    "mask_from_indices",
    "masked_linear",
    "parametrize_mask",
    "random_mask",
    "register_grad_mask",
    "render_dot",
    "saved_memory",
    "to_dot",
    "to_html",
    "track_modules",
    "walk_graph",
]
