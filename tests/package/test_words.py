"""The notes as words: one table per language, said the same in Python and the page."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest
import torch

from autograd_notes import format_graph, to_html, track_modules
from autograd_notes.words import english, kinds_clause, say, tables

FIELD = re.compile(r"\{(\d)\}")
# Code and names a Chinese note keeps as they are.
CODE = re.compile(
    r"torch\.compile|autograd\.Function|create_graph=True|AccumulateGrad|grad_fn"
)


def _templates(language: str) -> dict[str, list[str]]:
    notes = tables()[language]["notes"]
    return {k: v if isinstance(v, list) else [v] for k, v in notes.items()}


def test_every_language_has_every_note_with_the_same_values() -> None:
    english_notes = _templates("en")
    for language in tables():
        notes = _templates(language)
        assert notes.keys() == english_notes.keys(), language
        for key, forms in notes.items():
            fields = {frozenset(FIELD.findall(form)) for form in forms}
            assert fields == {frozenset(FIELD.findall(english_notes[key][0]))}, key


def test_the_chinese_notes_hold_no_english_but_code() -> None:
    for key, forms in _templates("zh").items():
        for form in forms:
            assert not re.search(r"[A-Za-z]{2,}", CODE.sub("", form)), (key, form)


def test_a_count_of_one_takes_the_singular() -> None:
    assert english([[("nodes", 1)], [("nodes", 2_000)]]) == "1 node; 2,000 nodes"
    assert say([[("nodes", 1)], [("nodes", 2_000)]], "zh") == "1 个节点；2,000 个节点"


def test_an_empty_path_is_the_model() -> None:
    assert english([[("foldOne", "", 3)]]) == "the model × 3"
    assert say([[("foldRange", "", "h.1", 2)]], "zh") == "整个模型–h.1 × 2"
    assert say([[("foldCallsOfModel", 0, 4)]], "zh") == "折叠条目：整个模型的调用 #0–#4"


def test_kinds_name_the_three_commonest_then_how_many_more() -> None:
    found = Counter({"A": 5, "B": 3, "C": 2, "D": 1, "E": 1})
    assert english([kinds_clause(found)]) == "A ×5, B ×3, C ×2, 2 more kinds"
    assert say([kinds_clause(found)], "zh") == "A ×5、B ×3、C ×2、另有 2 种类型"


def _stack_page() -> tuple[dict[str, Any], str]:
    torch.manual_seed(0)
    blocks = [
        torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh()) for _ in range(4)
    ]
    model = torch.nn.Sequential(*blocks)
    with track_modules(model) as trace:
        loss = model(torch.randn(2, 3)).sum()
    page = to_html(loss, modules=trace).html
    found = re.search(r'id="an-data">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1)), format_graph(loss, modules=trace, depth=1)


def _words(value: object) -> list[Any]:
    """Every words value (a list of clauses) anywhere in the page data."""
    if isinstance(value, list):
        if value and all(isinstance(c, list) and c and all(
            isinstance(p, list) and p and isinstance(p[0], str) for p in c
        ) for c in value):  # fmt: skip
            return [value]
        return [w for v in value for w in _words(v)]
    if isinstance(value, dict):
        return [w for v in value.values() for w in _words(v)]
    return []


def test_the_page_writes_words_that_the_tables_say() -> None:
    data, _ = _stack_page()
    found = _words(data["items"]) + _words(data["folds"]) + _words(data["names"])
    keys = {phrase[0] for words in found for clause in words for phrase in clause}
    assert {"foldRange", "foldCalls", "nodesEach", "leaves", "parameters"} <= keys
    for language in tables():
        for words in found:
            assert say(words, language)


def test_the_page_says_in_english_what_format_graph_prints() -> None:
    data, text = _stack_page()
    [fold] = [item for item in data["items"] if item[1] == "fold"]
    shown = f"{fold[2]} {english(fold[3])}  ({english(fold[4])})"
    assert shown in text.splitlines()
    assert shown.startswith("[1] 1–3 × 3  (fold: 3 calls, 3 nodes each, ")
    assert say(fold[4], "zh") == (
        "折叠条目：3 次调用，每次调用 3 个节点，"
        "TBackward0、AddmmBackward0、TanhBackward0；6 个叶子"
    )


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_table_is_package_data(language: str) -> None:
    assert tables()[language]["notes"]["parameters"]
