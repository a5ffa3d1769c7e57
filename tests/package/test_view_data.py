"""The page's schema: what page_data writes is what the TypedDicts and FIELDS say."""

from __future__ import annotations

import json
import re
from typing import Any, get_type_hints

import pytest
import torch

from autograd_notes import diff_graphs, to_html, track_modules, walk_graph
from autograd_notes.view_data import (
    FIELDS,
    DiffData,
    FoldData,
    PageData,
    read_page,
)


def _model_page(*, diff: bool) -> str:
    """Three blocks (a fold) and a head; with ``diff``, against a head without tanh."""
    torch.manual_seed(0)
    blocks = [
        torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh()) for _ in range(3)
    ]
    head = torch.nn.Linear(4, 2)
    model = torch.nn.Sequential(*blocks, torch.nn.Sequential(head, torch.nn.Tanh()))
    x = torch.randn(2, 4)
    with track_modules(model) as trace:
        loss = model(x).sum()
    changes = None
    if diff:
        plain = torch.nn.Sequential(*blocks, torch.nn.Sequential(head))
        with track_modules(plain) as before_trace:
            before = plain(x).sum()
        changes = diff_graphs(before, loss, before_trace, trace)
    return to_html(loss, modules=trace, diff=changes).html


def _raw(page: str) -> dict[str, Any]:
    found = re.search(r'id="an-data">(.*?)</script>', page, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_the_page_holds_the_keys_the_typed_dicts_name() -> None:
    data = _raw(_model_page(diff=True))
    assert set(data) == set(get_type_hints(PageData))
    assert data["folds"], "the three blocks fold"
    for fold in data["folds"]:
        assert set(fold) == set(get_type_hints(FoldData))
    assert set(data["diff"]) == set(get_type_hints(DiffData))
    assert data["fields"] == FIELDS


def test_every_record_has_the_fields_its_type_names() -> None:
    data = _raw(_model_page(diff=True))
    width = {name: len(fields) for name, fields in FIELDS.items()}
    records = {
        "Item": data["items"],
        "NodeType": data["node_types"],
        "SavedValue": [value for rows in data["saved"] for value in rows],
        "NodeName": data["names"],
        "ShownPath": data["shown"],
        "BoxSize": [data["box"]],
        "CallItem": [row for fold in data["folds"] for row in fold["items"]],
        "PathFix": [row for fold in data["folds"] for row in fold["fixes"]],
        "NodeCounts": [data["diff"]["nodes"]],
        "SavedTotals": [data["diff"]["saved"]],
        "ModuleDiff": list(data["diff"]["modules"].values()),
        "RemovedNodes": data["diff"]["removed"],
    }
    assert set(records) == set(FIELDS)
    for name, rows in records.items():
        assert all(len(row) == width[name] for row in rows), name
    assert records["Item"]
    assert records["CallItem"]
    assert records["ModuleDiff"]


def test_read_page_gives_every_node_of_the_walk() -> None:
    page = _model_page(diff=False)
    graph = read_page(page)
    assert len(graph.kind) == len(graph.owner) == len(graph.inputs)
    assert all(0 <= k < len(graph.kind) for row in graph.inputs for k in row)
    assert graph.kind[graph.data["root"]] == "SumBackward0"
    assert all(0 <= owner < len(graph.items) for owner in graph.owner)
    assert {item.kind for item in graph.items} >= {"fold", "call", "module"}


def test_read_page_counts_the_nodes_of_a_walk() -> None:
    x = torch.ones(3, requires_grad=True)
    y = x
    for _ in range(120):
        y = y.sin() * 1.5
    graph = read_page(to_html(y.sum()).html)
    walked = walk_graph(y.sum())
    assert len(graph.kind) == len(walked)
    assert sorted(graph.kind) == sorted(type(n).__name__ for n in walked)


def test_read_page_refuses_what_is_not_a_page() -> None:
    with pytest.raises(TypeError, match=r"read_page\(\) argument 'page' must be a str"):
        read_page(b"<html>")
    with pytest.raises(ValueError, match="must be a page made by to_html"):
        read_page("<!DOCTYPE html><p>no data</p>")
