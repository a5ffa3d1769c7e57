from __future__ import annotations

import base64
import html
import random
import re
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch

import autograd_notes.view_html as view_html
from autograd_notes import diff_graphs, format_graph, to_html, track_modules, walk_graph
from autograd_notes._notebook import HINT, MOST_LINES
from autograd_notes.labels import visible
from autograd_notes.view_data import PageGraph, SavedValue, read_page
from autograd_notes.view_html import GraphHtml
from autograd_notes.walk import walk

from .gpt_model import GPT
from .gpt_model import gpt_loss as gpt_model_loss
from .helpers import gpt_loss, has_cycle, lstm_loss


def _block() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh())


def _stack() -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 8),
        torch.nn.Sequential(*[_block() for _ in range(5)]),
        torch.nn.Linear(8, 2),
    )  # fmt: skip
    return model, torch.randn(3, 4)


def _data(page: GraphHtml) -> PageGraph:
    """Every node and item of the page, as view.js decodes them."""
    return read_page(page.html)


def _traced() -> tuple[torch.Tensor, object]:
    model, x = _stack()
    with track_modules(model) as trace:
        loss = model(x).square().sum()
    return loss, trace


def test_the_page_is_the_same_bytes_on_every_run() -> None:
    pages = []
    for _ in range(2):
        loss, trace = _traced()
        pages.append(to_html(loss, modules=trace, title="stack").html)  # type: ignore[arg-type]
    assert pages[0] == pages[1]


def test_the_page_fetches_nothing() -> None:
    loss, trace = _traced()
    page = to_html(loss, modules=trace).html  # type: ignore[arg-type]
    assert "http" not in page.lower()  # no URL at all, so none to fetch
    assert not re.search(r"\b(src|href)\s*=", page)
    for word in ("fetch(", "XMLHttpRequest", "import(", "@import", "url("):
        assert word not in page
    assert page.count("<script") == 2  # the data and the inlined script


def test_the_top_level_is_format_graph_at_depth_1_with_its_numbering() -> None:
    loss, trace = _traced()
    text = format_graph(loss, modules=trace, depth=1)  # type: ignore[arg-type]
    data = _data(to_html(loss, modules=trace))  # type: ignore[arg-type]
    items = data.items
    assert isinstance(items, list)
    tops = [item for item in items if item.parent == -1]
    assert len(tops) == data.data["tops"] == len(text.splitlines())
    for line, (_, _, label, title, note, _) in zip(
        text.splitlines(), tops, strict=True
    ):
        shown = f"{label} {title}" + (f"  ({note})" if note else "")
        assert line.startswith(shown), (line, shown)
    # module 1 (one call) opens to the five blocks as one fold
    [one] = [
        i for i, item in enumerate(items) if item.title == "1" and item.parent == -1
    ]
    assert [item.title for item in items if item.parent == one] == ["1.0–1.4 × 5"]


def test_every_node_belongs_to_an_item_and_a_fold_opens_to_its_calls() -> None:
    loss, trace = _traced()
    data = _data(to_html(loss, modules=trace))  # type: ignore[arg-type]
    items, owner = data.items, data.owner
    assert isinstance(items, list)
    assert isinstance(owner, list)
    assert min(owner) >= 0
    assert all(item.parent < i for i, item in enumerate(items))  # parents come first
    [fold] = [i for i, item in enumerate(items) if item.kind == "fold"]
    calls = [
        item.title for item in items if item.parent == fold and item.kind == "call"
    ]
    assert calls == [f"1.{k} (call 0)" for k in range(5)]
    [params] = [
        i for i, item in enumerate(items) if item.parent == fold and item.kind == "run"
    ]
    assert items[params].title == "parameters"
    assert sum(o == params for o in owner) == 10  # the blocks' weights and biases


def test_without_a_trace_the_entries_are_the_plain_view() -> None:
    a = torch.ones(2, requires_grad=True)
    z = a
    for _ in range(10):
        z = z * 1.5
    data = _data(to_html(z))
    items = data.items
    assert isinstance(items, list)
    assert [(i.label, i.title) for i in items] == [
        ("[0-9]", "MulBackward0 ×10"),
        ("[10]", "AccumulateGrad"),
    ]
    # each MulBackward0 saved the wrapped scalar 1.5: 0-dim, float64, 8 bytes
    scalar = SavedValue(shape=[], dtype="float64", bytes=8)
    assert data.saved == [[scalar]] * 10 + [[]]


def test_the_static_svg_shows_the_top_level() -> None:
    loss, trace = _traced()
    page = to_html(loss, modules=trace)  # type: ignore[arg-type]
    assert "<noscript><svg " in page.html
    assert page.svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" ')
    assert page.svg.count("<rect ") == _data(page).data["tops"]


def test_repr_html_and_save(tmp_path: Path) -> None:
    a = torch.ones(2, requires_grad=True)
    page = to_html((a * 2).sum())
    shown = page._repr_html_()
    assert '<iframe class="autograd-notes-frame" srcdoc="&lt;!DOCTYPE html&gt;' in shown
    assert shown == to_html((a * 2).sum())._repr_html_()  # the same bytes
    path = page.save(tmp_path / "graph.html")
    assert path.read_bytes() == page.html.encode("utf-8")
    with pytest.raises(TypeError, match=r"save\(\) argument 'path' must be a str or"):
        page.save(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"root": 3}, TypeError, r"to_html\(\) argument 'root' must be"),
        ({"modules": "m"}, TypeError, r"argument 'modules' must be a ModuleTrace"),
        ({"collapse": 1}, TypeError, r"argument 'collapse' must be a bool"),
        ({"title": None}, TypeError, r"argument 'title' must be a str, not None"),
        ({"root": torch.ones(2)}, ValueError, r"argument 'root' must be a tensor wi"),
    ],
)
def test_argument_errors(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    a = torch.ones(2, requires_grad=True)
    args: dict[str, object] = {"root": (a * 2).sum(), **kwargs}
    with pytest.raises(error, match=match):
        to_html(**args)  # type: ignore[arg-type]


def _clicks(data: dict[str, Any]) -> list[int]:
    """Per node: the boxes to open before it shows as a box of its own.

    A top-level entry shows without a click; opening an item shows its
    children. A ``node`` item is the node itself: nothing to open.
    """
    items, found = data.items, []
    for o in data.owner:
        chain = []
        while o >= 0:
            chain.append(o)
            o = items[o].parent
        found.append(sum(items[i].kind != "node" for i in chain))
    return found


def _edges(data: dict[str, Any]) -> Counter[tuple[str, str]]:
    kinds = data.kind
    return Counter(
        (kinds[n], kinds[k]) for n, row in enumerate(data.inputs) for k in row
    )


def test_gpt2_shape_twelve_blocks_one_fold_every_node_within_3_clicks() -> None:
    trace, loss = gpt_loss()
    data = _data(to_html(loss, modules=trace))
    tops = [item for item in data.items if item.parent == -1]
    assert len(tops) == data.data["tops"] <= 12
    assert [t.title for t in tops if t.kind == "fold"] == ["h.0–h.11 × 12"]
    [fold] = data.data["folds"]
    assert fold["calls"] == 12  # stored once: one template call of fold["size"] nodes
    assert len(data.walk) + 12 * fold["size"] == len(walk_graph(loss))
    clicks = _clicks(data)
    assert len(clicks) == len(walk_graph(loss))
    assert max(clicks) <= 3, Counter(clicks)
    assert max(clicks) == 3  # a node of h.5.attn: the fold, its call 5, attn


def test_the_page_holds_the_graph_the_walk_finds() -> None:
    for trace, loss in (_traced()[::-1], lstm_loss(50, learned_start=False)):
        data = _data(to_html(loss, modules=trace))  # type: ignore[arg-type]
        nodes = walk_graph(loss)
        kinds = [type(fn).__name__ for fn in nodes]
        assert Counter(data.kind) == Counter(kinds)
        walked = Counter(
            (type(fn).__name__, type(k).__name__)
            for fn in nodes
            for k, _ in fn.next_functions
            if k is not None
        )
        assert _edges(data) == walked
        paths = Counter(trace.path_of(fn) for fn in nodes)  # type: ignore[attr-defined]
        assert Counter(data.module) == paths


def test_lstm_500_steps_is_at_most_10_entries_and_a_long_run_is_one_fold() -> None:
    trace, loss = lstm_loss(500, learned_start=False)
    data = _data(to_html(loss, modules=trace))
    assert data.data["tops"] <= 10
    trace, loss = lstm_loss(2_000, learned_start=True)
    page = to_html(loss, modules=trace)
    data = _data(page)
    tops = [item for item in data.items if item.parent == -1]
    assert [t.title for t in tops if t.kind == "fold"] == ["cell × 2,000"]
    [fold] = data.data["folds"]
    assert (fold["calls"], fold["size"]) == (2_000, 15)
    calls = [item.title for item in data.items if item.kind == "call"]
    assert (calls[0], calls[-1]) == ("cell (call 0)", "cell (call 1,999)")
    # it opens to 40 boxes of 50 calls each, and each of those to its calls
    ranges = [item for item in data.items if item.kind == "calls"]
    assert [r.title for r in ranges[:2]] == [
        "calls 0–49 of cell",
        "calls 50–99 of cell",
    ]
    assert len(ranges) == 40
    assert max(_clicks(data)) == 3  # the fold, a box of calls, a call
    # stored once: 2,000 steps take the bytes of 20 (but for the numbers)
    trace, loss = lstm_loss(20, learned_start=True)
    small = to_html(loss, modules=trace).html
    assert len(page.html) - len(small) < 60


def test_the_parameters_a_fold_shares_with_another_call_draw_no_loop() -> None:
    """The top-level boxes link without a cycle: the first step's call and the
    fold of the others use the same parameters, which are neither's."""
    trace, loss = lstm_loss(500, learned_start=False)
    data = _data(to_html(loss, modules=trace))
    items = data.items
    top = []
    for o in data.owner:
        while items[o].parent >= 0:
            o = items[o].parent
        top.append(o)
    links = {(top[n], top[k]) for n, row in enumerate(data.inputs) for k in row}
    assert not has_cycle([(a, b) for a, b in links if a != b])
    assert [item.title for item in items[: data.data["tops"]]] == [
        "SumBackward0", "cell × 499", "cell"
    ]  # fmt: skip


def test_printed_the_notebook_output_shows_the_static_svg() -> None:
    loss, trace = _traced()
    page = to_html(loss, modules=trace)  # type: ignore[arg-type]
    shown = page._repr_html_()
    static = re.search(
        r'<img class="autograd-notes-static" hidden style="display:none" alt="[^"]*" '
        r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]*)">',
        shown,
    )
    assert static is not None
    assert base64.b64decode(static.group(1)).decode("utf-8") == page.svg
    css = re.search(r"<style>(.*?)</style>", shown)
    assert css is not None
    assert ".autograd-notes-static,.autograd-notes-fallback{display:none}" in css.group(
        1
    )
    assert "@media print{.autograd-notes-frame{display:none!important}" in css.group(1)
    assert ".autograd-notes-static{display:block!important}}" in css.group(1)
    # every class and selector is ours; nothing to fetch outside the page
    outside = shown.split("srcdoc=")[0] + shown.split("</iframe>")[1]
    assert set(re.findall(r'class="([^"]*)"', outside)) <= {
        "autograd-notes-view",
        "autograd-notes-frame",
        "autograd-notes-static",
        "autograd-notes-fallback",
    }
    assert all(
        c.startswith("autograd-notes-")
        for c in re.findall(r"\.([a-z-]+)\{", css.group(1))
    )
    assert "http" not in outside.lower()


def _sanitized(markup: str) -> str:
    """What a sanitiser (JupyterLab's untrusted output, GitHub's preview) leaves
    to read: script, style and iframe dropped with their content, every other
    tag (svg and its parts too) dropped but its text kept; one line per block."""
    markup = re.sub(r"<(script|style|iframe)\b.*?</\1>", "", markup, flags=re.S)
    markup = re.sub(r"</(p|pre|div)>", "\n", markup)
    return html.unescape(re.sub(r"<[^>]*>", "", markup)).strip()


@pytest.mark.parametrize("traced", [False, True])
def test_the_plain_text_and_an_untrusted_notebook_show_the_text_tree(
    traced: bool,
) -> None:
    model, x = _stack()
    with track_modules(model) as trace:
        loss = model(x).square().sum()
    options: dict[str, Any] = {"modules": trace} if traced else {}
    names = dict(model.named_parameters())
    page = to_html(loss, names=names, **options)
    tree = format_graph(loss, names=names, depth=1 if traced else None, **options)
    assert repr(page) == page.text == tree
    left = _sanitized(page._repr_html_())
    assert left == f"{HINT}\n{tree}"
    # the text of the boxes once each, not the picture's title and label run together
    first = tree.splitlines()[0]
    assert left.count(first) == 1
    assert "cell runs" in HINT
    assert "trusted" in HINT


def test_the_text_of_a_huge_view_is_cut_and_says_so() -> None:
    x = torch.ones(2, requires_grad=True)
    parts = [x * float(k) for k in range(MOST_LINES)]  # one branch per line
    page = to_html(torch.stack(parts).sum(), collapse=False)
    lines = page.text.splitlines()
    full = format_graph(torch.stack(parts).sum(), collapse=False).splitlines()
    assert len(full) > MOST_LINES == len(lines) - 1
    assert lines[:-1] == full[:MOST_LINES]
    assert lines[-1] == f"... (the first {MOST_LINES} lines: format_graph prints all)"


class Step(torch.nn.Module):
    """``tanh(lin(x))``; with ``exp``, an ``exp`` after it (one node more)."""

    def __init__(self, exp: bool) -> None:
        super().__init__()
        self.lin, self.exp = torch.nn.Linear(4, 4), exp

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x).tanh()
        return y.exp() if self.exp else y


def _two(first: bool, second: bool) -> tuple[torch.Tensor, Any]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(Step(first), Step(second))
    with track_modules(model) as trace:
        loss = model(torch.randn(3, 4)).sum()
    return loss, trace


def test_the_diff_view_marks_added_nodes_and_lists_removed_ones() -> None:
    (before, tb), (after, ta) = _two(True, False), _two(False, True)
    diff = diff_graphs(before, after, tb, ta)
    page = to_html(after, modules=ta, diff=diff)
    data = _data(page)
    shown = data.diff
    assert shown is not None
    assert shown["nodes"] == (diff.nodes_before, diff.nodes_after, 1, 1)
    [new] = shown["added"]
    assert data.kind[new] == "ExpBackward0"
    assert data.module[new] == "1"
    assert shown["removed"] == [("0", 0, "ExpBackward0", 1)]
    assert shown["removed"][0].nodes == 1
    # exp saves its result: module 0 saves less, module 1 more, said in text
    assert shown["modules"]["0"].change.startswith("-")
    assert shown["modules"]["1"].change.startswith("+")
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", page.svg)
    assert any(
        t.startswith("[") and " 1  saved +" in t and "+1 new" in t for t in texts
    )
    assert any(" 0  saved -" in t for t in texts)
    again = to_html(after, modules=ta, diff=diff_graphs(before, after, tb, ta))
    assert again.html == page.html


def test_the_diff_view_of_checkpointed_blocks_shows_each_block_saving_less() -> None:
    sides = []
    for checkpointed in (False, True):
        torch.manual_seed(0)
        model = GPT(blocks=4, checkpointed=checkpointed)
        with track_modules(model) as trace:
            loss, _ = gpt_model_loss(model)
        sides.append((loss, trace))
    (before, tb), (after, ta) = sides
    data = _data(to_html(after, modules=ta, diff=diff_graphs(before, after, tb, ta)))
    [fold] = [i for i, item in enumerate(data.items) if item.kind == "fold"]
    assert data.items[fold].title == "h.0–h.3 × 4"
    assert data.diff is not None
    assert data.diff["items"][str(fold)].startswith("-")
    for k in range(4):
        assert data.diff["modules"][f"h.{k}"].change.startswith("-")


def test_a_diff_of_modules_named_like_digits() -> None:
    pages = []
    for last in (torch.nn.Tanh(), torch.nn.Sigmoid()):
        torch.manual_seed(0)
        model = torch.nn.Sequential()
        model.add_module("²", torch.nn.Linear(2, 2))
        model.add_module("2", last)
        with track_modules(model) as trace:
            pages.append((trace, model(torch.ones(1, 2)).sum()))
    (tb, before), (ta, after) = pages
    page = to_html(after, modules=ta, diff=diff_graphs(before, after, tb, ta))
    assert "²" in _data(page).data["paths"]


def test_a_lone_surrogate_in_the_title_a_module_or_a_name_saves(
    tmp_path: Path,
) -> None:
    """UTF-8 has no lone surrogate: it is escaped, as unprintables are shown."""
    odd = "\ud800"
    pages = []
    for last in (torch.nn.Tanh(), torch.nn.Sigmoid()):
        model = torch.nn.Sequential()
        model.add_module("a" + odd, torch.nn.Linear(2, 2))
        model.add_module("b", last)
        with track_modules(model) as trace:
            pages.append((trace, model(torch.ones(1, 2)).sum(), model))
    (tb, before, _), (ta, after, model) = pages
    diff = diff_graphs(before, after, tb, ta)
    names = {"w" + odd: model[0].weight}
    for kwargs in (
        {"title": "t" + odd},
        {"modules": ta},
        {"names": names},
        {"modules": ta, "diff": diff, "names": names, "title": odd},
    ):
        page = to_html(after, **kwargs)  # type: ignore[arg-type]
        saved = page.save(tmp_path / "graph.html")
        assert saved.read_text(encoding="utf-8") == page.html
        assert page._repr_html_().encode("utf-8")
        data = _data(page)
        if "title" in kwargs:  # shown escaped, as names are
            assert data.data["title"] == visible(str(kwargs["title"]))
            assert data.data["title"].endswith("\\ud800")
        if "modules" in kwargs:  # the path itself (a key), and how it shows
            assert "a" + odd in data.data["paths"]
            assert [data.data["paths"][k] for k, shown in data.data["shown"]] == [
                "a" + odd
            ]
            assert [shown for _, shown in data.data["shown"]] == ["a\\ud800"]


def test_diff_argument_errors() -> None:
    loss, trace = _traced()
    other, other_trace = _two(False, False)
    with pytest.raises(
        TypeError, match=r"argument 'diff' must be a GraphDiff .*, not str"
    ):
        to_html(loss, modules=trace, diff="d")  # type: ignore[arg-type]
    plain = diff_graphs(other, other)
    with pytest.raises(ValueError, match=r"argument 'diff' must be a diff made with t"):
        to_html(other, modules=other_trace, diff=plain)
    wrong = diff_graphs(other, other, other_trace, other_trace)
    with pytest.raises(ValueError, match=r"must be diff_graphs\(\.\.\., after\) of th"):
        to_html(loss, modules=trace, diff=wrong)  # type: ignore[arg-type]


def test_nodes_a_create_graph_backward_made_are_marked_or_said_unknown() -> None:
    x = torch.ones(2, requires_grad=True)
    (plain,) = torch.autograd.grad((x * x).sum(), x, create_graph=True)
    with torch.autograd.set_detect_anomaly(True):
        (recorded,) = torch.autograd.grad((x * x).sum(), x, create_graph=True)
    unknown, known = _data(to_html(plain)), _data(to_html(recorded))
    note = "made by a create_graph=True backward"
    assert unknown.data["anomaly"] is False
    assert not any(note in str(item.note) for item in unknown.items)
    assert known.data["anomaly"] is True
    assert any(note in str(item.note) for item in known.items)


def _chain(steps: int) -> torch.Tensor:
    """``sin`` and ``* 1.5``, ``steps`` times each: nodes in a repeating pattern."""
    y = torch.ones(1, requires_grad=True)
    for _ in range(steps):
        y = y.sin() * 1.5
    return y


def _no_pattern(steps: int) -> torch.Tensor:
    """A chain of ops drawn at random (seeded): no pattern repeats."""
    ops = [torch.sin, torch.cos, torch.exp, torch.tanh, lambda t: t * 1.5]
    rng = random.Random(0)
    y = torch.ones(1, requires_grad=True)
    for _ in range(steps):
        y = rng.choice(ops)(y)
    return y


def _shared(steps: int) -> torch.Tensor:
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(steps):
        y = y + x.sin()
    return y


def _as_walked(data: dict[str, Any], root: torch.Tensor) -> None:
    """Every node of the walk is on the page once, with its kind and inputs."""
    graph = walk(root.grad_fn)
    at = data.walk  # page node -> walk index (no folds here)
    assert sorted(at) == list(range(len(graph.nodes)))
    for n, w in enumerate(at):
        assert data.kind[n] == type(graph.nodes[w]).__name__
        walked = graph.inputs[graph.starts[w] : graph.starts[w + 1]]
        assert [at[k] for k in data.inputs[n]] == walked


def _at_most_50_per_box(data: dict[str, Any]) -> None:
    """An item shows at most 50 boxes when opened: items or nodes of its own."""
    shown = Counter(item.parent for item in data.items)
    shown.update(data.owner)
    del shown[-1]  # the top level
    assert max(shown.values()) <= 50, shown.most_common(3)


def test_a_long_chain_outside_modules_is_one_box_stored_once() -> None:
    root = _chain(100_000)
    small, big = to_html(_chain(10_000)), to_html(root)
    assert len(big.html) - len(small.html) < 100  # 20k and 200k nodes alike
    data = _data(big)
    assert data.data["tops"] == 1 == big.svg.count("<rect ")
    top = data.items[0]
    assert top[:4] == (-1, "nodes", "[0-200000]", "200,001 nodes")
    assert top.note == "MulBackward0 ×100,000, SinBackward0 ×100,000, AccumulateGrad"
    # it opens to boxes of nodes, at most 50 each, down to the nodes
    assert [i.title for i in data.items if i.parent == 0] == [
        "nodes 0–124,999",
        "nodes 125,000–200,000",
    ]
    _at_most_50_per_box(data)
    assert max(_clicks(data)) == 4  # 125,000 -> 2,500 -> 50 -> the node
    _as_walked(data, root)


def test_a_chain_with_no_pattern_decodes_to_the_walk_and_stays_small() -> None:
    root = _no_pattern(20_000)
    page = to_html(root)
    data = _data(page)
    _as_walked(data, root)
    _at_most_50_per_box(data)
    base = len(to_html(_no_pattern(100)).html)
    assert len(page.html) - base < 2 * 20_000  # a character or so per node


def test_a_shared_input_graph_stays_bounded() -> None:
    root = _shared(20_000)
    small, big = to_html(_shared(2_000)), to_html(root)
    assert len(big.html) - len(small.html) < 200
    data = _data(big)
    _as_walked(data, root)
    _at_most_50_per_box(data)


class LongChain(torch.nn.Module):
    """One call: a chain of 20,000 nodes that repeats no module call."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * self.scale
        for _ in range(10_000):
            y = y.sin() * 1.5
        return y


def test_a_module_with_a_long_chain_inside_opens_to_a_box_of_its_nodes() -> None:
    model = torch.nn.Sequential(LongChain())
    with track_modules(model) as trace:
        root = model(torch.ones(1)).sum()
    data = _data(to_html(root, modules=trace))
    assert [(i.kind, i.title) for i in data.items[: data.data["tops"]]] == [
        ("node", "SumBackward0"),
        ("module", "0"),
    ]
    below = [item[:4] for item in data.items if item.parent == 1]
    assert below == [(1, "nodes", "", "20,002 nodes")]
    assert Counter(data.module)["0"] == 20_002  # x * scale, the chain, the leaf
    _at_most_50_per_box(data)
    assert max(_clicks(data)) == 4  # the module, its nodes, 2,500, 50


def test_large_page_data_is_deflated_to_the_same_data_and_bytes_every_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loss, trace = _traced()
    plain = to_html(loss, modules=trace)  # type: ignore[arg-type]
    monkeypatch.setattr(view_html, "DEFLATE_ABOVE", 0)  # every page is "large"
    pages = [to_html(loss, modules=trace).html for _ in range(2)]  # type: ignore[arg-type]
    assert pages[0] == pages[1]  # deflated at a fixed level: the same bytes
    found = re.search(r'<script type="application/json" id="an-data" data-deflate>'
                      r"([A-Za-z0-9+/=]*)</script>", pages[0])  # fmt: skip
    assert found is not None
    inflated = zlib.decompress(base64.b64decode(found.group(1))).decode("utf-8")
    packed = GraphHtml(pages[0].replace(found.group(0), "<script type=\"application"
                       f'/json" id="an-data">{inflated}</script>'), "", "")  # fmt: skip
    assert packed.html == plain.html  # as view.js inflates it: the same page
    data = _data(packed)  # and so the walk's nodes
    kinds = Counter(type(fn).__name__ for fn in walk_graph(loss))
    assert Counter(data.kind) == kinds
