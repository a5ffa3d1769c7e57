from __future__ import annotations

import json
import random

import pytest
import torch

from autograd_notes.labels import index_names
from autograd_notes.runs import MIN_STRETCH, by_slot, pack, steps, stretches, unpack
from autograd_notes.view import build_view

rng = random.Random(0)
CASES = {
    "a pattern of two": [0, 1] * 50_000 + [2],
    "no pattern": [rng.randrange(20) for _ in range(20_000)],
    "values too big for one character": [rng.randrange(5_000) for _ in range(3_000)],
    "patterns and none": [0, 1, 2] * 1_000
    + [rng.randrange(9) for _ in range(2_000)]
    + [5, -6] * 3_000,
    "evenly spaced": list(range(0, 30_000, 3)),
    "short": [3, 1, 4, 1, 5],
}


@pytest.mark.parametrize("values", CASES.values(), ids=list(CASES))
def test_pack_then_unpack_gives_the_values_back(values: list[int]) -> None:
    packed = pack(values)
    assert unpack(json.loads(json.dumps(packed))) == values


def test_a_repeating_pattern_is_written_once() -> None:
    assert pack([0, 1] * 50_000 + [2]) == {"r": ["01", 50_000, "2", 1]}
    small = len(json.dumps(pack([0, 1, 2] * 1_000)))
    assert len(json.dumps(pack([0, 1, 2] * 100_000))) - small < 5
    # without a pattern, a value below len(ALPHABET) is one character
    values = CASES["no pattern"]
    assert len(json.dumps(pack(values))) < len(values) + 50 < len(json.dumps(values))


def test_steps_are_as_before_for_short_lists() -> None:
    assert steps([4, 5, 6, 7]) == {"s": [4, 1, 4]}
    assert steps([1, 5, 2]) == [1, 5, 2]
    assert pack(list(range(10))) == steps(list(range(10)))


def test_by_slot_deals_out_each_nodes_values() -> None:
    assert by_slot([1, 1, 1], [1, 1, 1, 0]) == [[1, 1, 1]]
    assert by_slot([1, 9, 1, 8, 7], [2, 2, 0, 1]) == [[1, 1, 7], [9, 8]]


def test_stretches_group_long_runs_of_entries_outside_modules() -> None:
    y = torch.ones(1, requires_grad=True)
    for _ in range(MIN_STRETCH):
        y = y.sin() * 2
    view = build_view(y.grad_fn, index_names(None, "t"), True, None, None)
    assert [len(r) for r in stretches(view)] == [len(view.first)]
    few = (torch.ones(1, requires_grad=True).sin() * 2).grad_fn
    view = build_view(few, index_names(None, "t"), True, None, None)
    assert [len(r) for r in stretches(view)] == [1, 1, 1]
