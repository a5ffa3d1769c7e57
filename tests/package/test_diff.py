"""Tests for autograd_notes.diff: comparing two backward graphs."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.utils.checkpoint import checkpoint

from autograd_notes import ModuleTrace, diff_graphs, saved_memory, track_modules

from .gpt_model import GPT, gpt_loss
from .helpers import BAD_DEPTHS, superscript_model


def run(model: torch.nn.Module, x: torch.Tensor) -> tuple[ModuleTrace, torch.Tensor]:
    with track_modules(model) as trace:
        out = model(x).sum()
    return trace, out


def test_checkpointing_the_blocks_lowers_each_blocks_saved_bytes() -> None:
    """The first example: a GPT-2-shaped model with and without
    ``checkpoint(..., use_reentrant=False)`` around each block."""
    torch.manual_seed(0)
    plain = GPT(blocks=3)
    saved = GPT(blocks=3, checkpointed=True)
    saved.load_state_dict(plain.state_dict())
    with track_modules(plain) as before:
        loss_before, _ = gpt_loss(plain)
    with track_modules(saved) as after:
        loss_after, _ = gpt_loss(saved)
    assert torch.equal(loss_before, loss_after)
    diff = diff_graphs(loss_before, loss_after, before, after)
    assert (diff.added, diff.removed) == (0, 0)  # the same nodes, saving less
    assert diff.nodes == []
    rows = {row.path: row for row in diff.modules}
    for block in ("h.0", "h.1", "h.2"):
        row = rows[block]
        assert row.nodes_before == row.nodes_after
        assert row.bytes_after < row.bytes_before / 10, block
        assert row.change == row.bytes_after - row.bytes_before
    for same in ("wte", "ln_f", "lm_head", None):  # outside the blocks
        assert rows[same].change == 0, same
    assert diff.before.total == saved_memory(loss_before, before).total
    change = diff.after.total - diff.before.total
    assert change == rows[""].change + rows[None].change < 0
    text = str(diff)
    assert text.startswith("nodes: ")
    assert "(0 added, 0 removed)\nsaved for backward: " in text
    lines = {line.split()[0]: line for line in text.splitlines()[4:] if line.strip()}
    assert lines["h.1"].rstrip().split()[-2].startswith("-")  # "-141.2 KiB"
    assert "wte" not in lines  # unchanged modules are not shown


class Blocks(torch.nn.Module):
    def __init__(self, reentrant: bool | None, calls: int = 2) -> None:
        super().__init__()
        self.block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh())
        self.reentrant = reentrant
        self.calls = calls

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.calls):
            if self.reentrant is None:
                x = self.block(x)
            else:
                x = checkpoint(self.block, x, use_reentrant=self.reentrant)
        return x


def test_a_reentrant_checkpoint_replaces_the_blocks_nodes() -> None:
    torch.manual_seed(0)
    x = torch.ones(2, 4, requires_grad=True)
    plain, reentrant = Blocks(None), Blocks(True)
    reentrant.load_state_dict(plain.state_dict())
    before, out_before = run(plain, x)
    after, out_after = run(reentrant, x)
    diff = diff_graphs(out_before, out_after, before, after)
    changes = {(c.module, c.call, c.kind): (c.before, c.after) for c in diff.nodes}
    expected = {("", 0, "CheckpointFunctionBackward"): (0, 2)}
    expected[("block.0", None, "AccumulateGrad")] = (2, 0)  # weight and bias
    for call in (0, 1):
        expected[("block.0", call, "AddmmBackward0")] = (1, 0)
        expected[("block.0", call, "TBackward0")] = (1, 0)
        expected[("block.1", call, "TanhBackward0")] = (1, 0)
    assert changes == expected
    assert (diff.added, diff.removed) == (2, 8)
    rows = {row.path: row for row in diff.modules}
    assert rows["block"].bytes_after == rows["block"].nodes_after == 0
    text = str(diff)
    assert "  + CheckpointFunctionBackward ×2  (in the model, call 0)" in text
    assert "  - TanhBackward0 ×1  (in block.1, call 1)" in text


def test_nodes_are_matched_by_call_index() -> None:
    """A third call of the block adds its nodes, marked with call 2."""
    torch.manual_seed(0)
    x = torch.ones(2, 4, requires_grad=True)
    two, three = Blocks(None, calls=2), Blocks(None, calls=3)
    three.load_state_dict(two.state_dict())
    before, out_before = run(two, x)
    after, out_after = run(three, x)
    diff = diff_graphs(out_before, out_after, before, after)
    assert {(c.module, c.call, c.kind, c.change) for c in diff.nodes} == {
        ("block.0", 2, "AddmmBackward0", 1),
        ("block.0", 2, "TBackward0", 1),
        ("block.1", 2, "TanhBackward0", 1),
    }
    assert diff.removed == 0
    rows = {row.path: row for row in diff.modules}
    assert rows["block.1"].change == 2 * 4 * 4  # one more saved tanh result
    assert rows["block"].nodes_after == rows["block"].nodes_before + 3
    assert rows["block"].change == rows["block.1"].change  # the rest is shared


def test_the_same_graph_has_no_difference() -> None:
    torch.manual_seed(0)
    model = Blocks(None)
    trace, out = run(model, torch.ones(2, 4))
    diff = diff_graphs(out, out, trace, trace)
    assert diff.nodes == []
    assert all(row.change == 0 for row in diff.modules)
    assert str(diff).splitlines() == [
        f"nodes: {diff.nodes_before} -> {diff.nodes_after} (0 added, 0 removed)",
        "saved for backward: 160 B -> 160 B (0 B)",
    ]


def test_without_traces_nodes_are_matched_by_kind() -> None:
    x = torch.ones(4, requires_grad=True)
    diff = diff_graphs(x.exp().exp().sum(), x.sin().exp().sum().grad_fn)
    assert {(c.module, c.call, c.kind, c.before, c.after) for c in diff.nodes} == {
        (None, None, "ExpBackward0", 2, 1),
        (None, None, "SinBackward0", 0, 1),
    }
    assert diff.modules == []
    assert str(diff).endswith("nodes removed:\n  - ExpBackward0 ×1")


def test_a_tensor_without_a_graph_has_no_nodes() -> None:
    x = torch.ones(3, requires_grad=True)
    diff = diff_graphs(torch.ones(3), x.exp().sum())
    assert (diff.nodes_before, diff.nodes_after, diff.added) == (0, 3, 3)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"before": 1}, TypeError, "argument 'before' must be a torch.Tensor or a"),
        ({"after": "y"}, TypeError, "argument 'after' must be a torch.Tensor or a"),
        (
            {"modules_before": "t"},
            TypeError,
            "argument 'modules_before' must be a ModuleTrace (from track_modules())",
        ),
        (
            {"modules_before": ModuleTrace()},
            ValueError,
            "argument 'modules_after' must be a ModuleTrace too, as 'modules_before'"
            " is one, not None",
        ),
        (
            {"modules_after": ModuleTrace()},
            ValueError,
            "argument 'modules_before' must be a ModuleTrace too",
        ),
    ],
)
def test_diff_graphs_names_a_wrong_argument(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    y = torch.ones(2, requires_grad=True).exp().sum()
    with pytest.raises(error) as raised:
        diff_graphs(**({"before": y, "after": y} | kwargs))
    assert message in str(raised.value)


def test_module_names_that_look_like_digits_sort_as_names() -> None:
    before = superscript_model(torch.nn.Tanh())
    after = superscript_model(torch.nn.Sigmoid())
    diff = diff_graphs(before[1], after[1], before[0], after[0])
    assert [row.path for row in diff.modules] == ["", "2", "10", "²", None]
    assert diff.table(depth=1).startswith("nodes: 7 -> 7 (1 added, 1 removed)")


@pytest.mark.parametrize(("depth", "error", "message"), BAD_DEPTHS)
def test_table_refuses_a_depth_format_graph_refuses(
    depth: object, error: type[Exception], message: str
) -> None:
    loss = torch.ones(2, requires_grad=True).exp().sum()
    report = diff_graphs(loss, loss)
    full = report.table()
    with pytest.raises(
        error, match=rf"^GraphDiff\.table\(\) argument 'depth' must be {message}$"
    ):
        report.table(depth)  # type: ignore[arg-type]
    assert report.table(None) == full
    assert report.table(1)
