"""Tests for autograd_notes.fold: repeated module calls fold into one entry."""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Callable

import pytest
import torch
from torch.utils.checkpoint import checkpoint

import autograd_notes.fold
from autograd_notes import (
    draw_graph,
    format_graph,
    to_dot,
    to_html,
    track_modules,
    walk_graph,
)
from autograd_notes.labels import index_names
from autograd_notes.view import build_view
from autograd_notes.view_data import read_page

from .helpers import (
    dot_structure,
    drawn_labels,
    gpt_loss,
    has_cycle,
    lstm_loss,
    text_edges,
)


class Scale(torch.nn.Module):
    """``x * 2``; the odd one adds 1 as well (another structure)."""

    def __init__(self, odd: bool = False) -> None:
        super().__init__()
        self.odd = odd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        return y + 1 if self.odd else y


def entries(text: str) -> list[str]:
    """The entries a printed graph defines (not its back-references)."""
    return [line for line in text.split("\n") if "(see above)" not in line]


def test_gpt2_shape_at_depth_1_shows_the_twelve_blocks_as_one_fold(
    close_figures: None,
) -> None:
    trace, loss = gpt_loss()
    fold = "h.0–h.11 × 12  (fold: 12 calls, 31 nodes each, "
    for depth in (1, 2, 3):
        text = format_graph(loss, modules=trace, depth=depth)
        assert len(entries(text)) <= 12, text
        assert sum(fold in line for line in entries(text)) == 1, text
        assert "h.3" not in text
    # The same entries, with the same numbering, as DOT and as a picture.
    text = entries(format_graph(loss, modules=trace, depth=1))
    at = next(n for n, line in enumerate(text) if fold in line)
    nodes, _ = dot_structure(to_dot(loss, modules=trace, depth=1))
    assert len(nodes) == len(text)
    assert nodes[f"n{at}"][0].startswith("h.0–h.11 × 12\\n(fold: 12 calls, ")
    drawn = drawn_labels(draw_graph(loss, modules=trace, depth=1))
    assert len(drawn) == len(text)
    assert drawn[at].startswith("h.0–h.11 × 12\nfold: 12 calls\n31 nodes each")
    # Unfolded, depth 2 lists the twelve blocks, as it did before folding.
    unfolded = format_graph(loss, modules=trace, depth=2, fold=False)
    assert [line.split("  ")[0].split("] ")[1] for line in entries(unfolded)][5:17] == [
        f"h.{i}" for i in range(11, -1, -1)
    ]


def test_an_lstm_cell_for_500_steps_is_a_handful_of_entries() -> None:
    trace, loss = lstm_loss(500, learned_start=False)
    assert len(walk_graph(loss)) == 7_505
    for depth in (1, None):
        text = entries(format_graph(loss, modules=trace, depth=depth))
        assert len(text) <= (10 if depth == 1 else 21)  # 21: the first step's 15
        # nodes, the 4 parameters it shares with the fold, the sum and the fold
        folded = [line for line in text if "cell × 499" in line]
        assert len(folded) == 1
        assert "fold: calls 1–499 of cell, 15 nodes each" in folded[0]
    # The first step differs (its start state needs no gradient): on its own.
    depth1 = entries(format_graph(loss, modules=trace, depth=1))
    assert [line.split("  ")[0] for line in depth1] == [
        "[0] SumBackward0",
        "[1] cell × 499",
        "[2] cell",  # with the parameters it shares with the fold: it links
    ]  # to nothing else, so the fold's links to them close no loop
    assert "cell  (module: 19 nodes, AccumulateGrad ×4, " in depth1[2]


def test_the_parameters_a_fold_shares_with_other_calls_draw_no_loop(
    close_figures: None,
) -> None:
    """The first step's call uses the fold's parameters: they stay outside the fold."""
    trace, loss = lstm_loss(500, learned_start=False)
    for depth in (1, None):
        text = format_graph(loss, modules=trace, depth=depth)
        assert "cell × 499" in text
        assert not has_cycle(text_edges(text)), text
        nodes, edges = dot_structure(to_dot(loss, modules=trace, depth=depth))
        assert not has_cycle([(int(a[1:]), int(b[1:])) for a, b in edges])
        assert len(nodes) == len(entries(text))
        view = build_view(loss.grad_fn, index_names(None, "t"), True, trace, depth)
        links = [(e, k) for e in range(len(view.first)) for k in view.inputs_of(e)]
        assert not has_cycle(links)
        [fold] = view.folds.values()
        assert fold.leaves == []  # shared with the first step: not the fold's
    assert "4 leaves" not in format_graph(loss, modules=trace, depth=1)
    # Used by the fold's calls alone, the parameters are the fold's.
    trace, loss = lstm_loss(50, learned_start=True)
    line = format_graph(loss, modules=trace).split("\n")[1]
    assert line.startswith("[1] cell × 50  (fold: calls 0–49 of cell")
    assert line.endswith("; 4 leaves)")


class Widths(torch.nn.Module):
    """Linear+Tanh blocks ``h`` through widths 4, 4, 4, 8, 8: ``h.0``, ``h.1`` alike."""

    def __init__(self, each: Callable[[torch.nn.Module, torch.Tensor], torch.Tensor]):
        super().__init__()
        widths = [4, 4, 4, 8, 8]
        self.h = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(a, b), torch.nn.Tanh())
            for a, b in itertools.pairwise(widths)
        )
        self.each = each

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.h:
            x = self.each(block, x)
        return x


def _widths(
    how: str, ran: list[str]
) -> tuple[autograd_notes.ModuleTrace, torch.Tensor]:
    """The model's loss, its saved values as ``how`` says; ``ran`` logs the
    forward calls of blocks and the unpack hook's calls."""

    def plain(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        return block(x)  # type: ignore[no-any-return]

    def recomputed(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        return checkpoint(block, x, use_reentrant=False)  # type: ignore[no-any-return]

    def unpack(packed: tuple[torch.device, torch.Tensor]) -> torch.Tensor:
        ran.append("unpack")
        return packed[1]

    torch.manual_seed(0)
    model = Widths(recomputed if how == "checkpoint" else plain)
    for block in model.h:
        block.register_forward_pre_hook(lambda *_: ran.append("forward"))
    x = torch.randn(2, 4, requires_grad=True)
    hooks = {
        "save_on_cpu": torch.autograd.graph.save_on_cpu(),
        "own hooks": torch.autograd.graph.saved_tensors_hooks(
            lambda t: (t.device, t), unpack
        ),
    }
    with track_modules(model) as trace, hooks.get(how, contextlib.nullcontext()):
        loss = model(x).sum()
    if how == "backward":
        loss.backward()
    return trace, loss


@pytest.mark.parametrize(
    "how", ["plain", "save_on_cpu", "own hooks", "checkpoint", "backward"]
)
def test_calls_that_differ_do_not_fold_when_saved_values_are_unread(how: str) -> None:
    """Hooks and backward hide the saved shapes; what each node receives tells."""
    ran: list[str] = []
    trace, loss = _widths(how, ran)
    ran.clear()
    for depth in (None, 1, 2):
        text = format_graph(loss, modules=trace, depth=depth)
        assert re.findall(r"\] (h\.\S+ × \d+)", text) == ["h.0–h.1 × 2"], text
    page = to_html(loss, modules=trace)
    items = read_page(page.html).items
    assert [item.title for item in items if item.kind == "fold"] == ["h.0–h.1 × 2"]
    assert ran == []  # no unpack hook, no recomputed forward


def test_calls_fold_only_where_what_is_known_tells_them_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the nodes' input metadata (a torch that lacks it), calls whose
    saved values cannot be read are never folded; readable ones still are."""
    monkeypatch.setattr(autograd_notes.fold, "_received", lambda node: None, False)
    for how, folds in (("plain", 1), ("save_on_cpu", 1), ("backward", 0)):
        trace, loss = _widths(how, [])
        text = format_graph(loss, modules=trace)
        assert text.count(" × ") == text.count("] h.0–h.1 × 2  (") == folds, text
    with torch.autograd.graph.saved_tensors_hooks(lambda t: object(), lambda p: p):
        x = torch.ones(2, requires_grad=True)
        model = torch.nn.Sequential(torch.nn.Tanh(), torch.nn.Tanh(), torch.nn.Tanh())
        with track_modules(model) as trace:
            loss = model(x).sum()
    assert " × " not in format_graph(loss, modules=trace)


def test_a_few_thousand_calls_of_one_structure_are_one_fold() -> None:
    trace, loss = lstm_loss(2_000, learned_start=True)
    text = format_graph(loss, modules=trace, depth=1)
    assert text.split("\n")[1].startswith(
        "[1] cell × 2,000  (fold: calls 0–1,999 of cell, 15 nodes each, "
    )
    assert text.split("\n")[1].endswith("; 4 leaves)")  # the cell's parameters
    view = build_view(loss.grad_fn, index_names(None, "t"), True, trace, 1)
    (fold,) = view.folds.values()
    assert fold.call_index == list(range(2_000))
    assert fold.paths == ["cell"] * 2_000
    assert {len(nodes) for nodes in fold.nodes} == {15}


def test_a_call_that_differs_breaks_the_fold(close_figures: None) -> None:
    model = torch.nn.Sequential(
        torch.nn.Linear(2, 2), Scale(), Scale(), Scale(odd=True), Scale(), Scale()
    )
    with track_modules(model) as trace:
        loss = model(torch.ones(1, 2)).sum()
    assert format_graph(loss, modules=trace, depth=1).split("\n") == [
        "[0] SumBackward0",
        "[1] 4–5 × 2  (fold: 2 calls, 1 node each, MulBackward0)",
        "[2] 3  (module: 2 nodes, AddBackward0, MulBackward0)",
        "[3] 1–2 × 2  (fold: 2 calls, 1 node each, MulBackward0)",
        "[4] 0  (module: 4 nodes, AccumulateGrad ×2, AddmmBackward0, TBackward0)",
    ]
    # Without depth, the rest shows node by node, each with its module.
    lines = format_graph(loss, modules=trace).split("\n")
    assert lines[1:4] == [
        "[1] 4–5 × 2  (fold: 2 calls, 1 node each, MulBackward0)",
        "[2] AddBackward0  [in 3]",
        "[3] MulBackward0  [in 3]",
    ]
    nodes, edges = dot_structure(to_dot(loss, modules=trace))
    assert [nodes[f"n{e}"][0].split("\\n")[0] for e in range(5)] == [
        "SumBackward0", "4–5 × 2", "AddBackward0", "MulBackward0", "1–2 × 2"
    ]  # fmt: skip
    assert edges[:4] == [("n0", "n1"), ("n1", "n2"), ("n2", "n3"), ("n3", "n4")]
    drawn = drawn_labels(draw_graph(loss, modules=trace))
    assert [label.split("\n")[0] for label in drawn[:5]] == [
        "SumBackward0", "4–5 × 2", "AddBackward0", "MulBackward0", "1–2 × 2"
    ]  # fmt: skip


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x).tanh()
        return x


def test_a_call_that_repeats_nothing_opens_down_to_the_depth() -> None:
    model = torch.nn.Sequential(Encoder(), torch.nn.Linear(3, 1))
    with track_modules(model) as trace:
        loss = model(torch.ones(2, 3, requires_grad=True)).sum()
    fold = "0.layers.0–0.layers.2 × 3"
    # depth 1 stops at the encoder's call: no fold inside; depth 2 opens it.
    assert fold not in format_graph(loss, modules=trace, depth=1)
    for depth in (2, 3, None):
        assert fold in format_graph(loss, modules=trace, depth=depth)


def test_the_folded_view_is_plain_data_that_covers_every_node() -> None:
    trace, loss = lstm_loss(50, learned_start=False)
    assert loss.grad_fn is not None
    view = build_view(loss.grad_fn, index_names(None, "t"), True, trace, None)
    seen = sorted(i for members in view.members.values() for i in members)
    assert seen == list(range(len(view.graph.nodes)))  # each node in one entry
    (e, fold), *_ = view.folds.items()
    assert view.group[e] == "cell × 49"
    assert (len(fold.calls), fold.call_index[:2], fold.paths[0]) == (49, [1, 2], "cell")
    assert sorted(fold.leaves + [i for nodes in fold.nodes for i in nodes]) == sorted(
        view.members[e]
    )
    plain = (list, int, str)
    assert all(type(x) in plain for part in fold for x in [part, *part])


def test_untraced_output_is_unchanged_and_fold_false_turns_it_off() -> None:
    trace, loss = lstm_loss(20, learned_start=False)
    plain = format_graph(loss)
    assert plain == format_graph(loss, fold=False)  # no trace: nothing to fold
    assert "×" not in format_graph(loss, modules=trace, fold=False).split("\n")[1]
    assert to_dot(loss) == to_dot(loss, fold=False)
