"""Tests for autograd_notes.dot: DOT text, and rendering it with Graphviz."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import torch

import autograd_notes
from autograd_notes import render_dot, to_dot
from autograd_notes.dot import parse_formats, writable_formats

from .helpers import CHAIN, FakeGraphviz, chain, dot_structure, lstm_loss


def test_to_dot_small_graph(abab: dict[str, torch.Tensor]) -> None:
    source = to_dot(abab["y"], names=abab)
    nodes, edges = dot_structure(source)
    labels = {node: label for node, (label, _) in nodes.items()}
    assert labels == {
        "n0": "SumBackward0\\n(grad_fn of y)",
        "n1": "AddBackward0",
        "n2": "MulBackward0",
        "n3": "AccumulateGrad\\na: (2,) float32",
        "n4": "AccumulateGrad\\nb: (2,) float32",
    }
    assert edges == [
        ("n0", "n1"),
        ("n1", "n2"),
        ("n1", "n3"),
        ("n2", "n3"),
        ("n2", "n4"),
    ]
    # Root, inner nodes and leaves are styled differently.
    assert "#fbd38d" in nodes["n0"][1]
    assert nodes["n1"][1] == nodes["n2"][1] == ""
    assert "ellipse" in nodes["n3"][1]
    assert nodes["n3"][1] == nodes["n4"][1]
    assert to_dot(abab["y"], names=abab) == source


def test_to_dot_tensor_without_graph_is_one_node() -> None:
    x = torch.ones(3)
    nodes, edges = dot_structure(to_dot(x, names={"x": x}))
    assert list(nodes) == ["n0"]
    assert nodes["n0"][0] == (
        "x: leaf tensor, shape (3,), float32, requires_grad=False (no graph)"
    )
    assert edges == []


def test_to_dot_handles_a_million_node_chain(million_chain: list[torch.Tensor]) -> None:
    source = to_dot(million_chain[0], collapse=False)
    # dot_structure checks the small graphs line by line; here, count.
    assert source.count(" [label=") == CHAIN + 1
    assert source.count(" -> ") == CHAIN
    assert '\n  n0 [label="MulBackward0", shape=box' in source
    assert source.endswith(f"\n  n{CHAIN - 1} -> n{CHAIN};\n}}")


def test_render_dot_without_the_dot_program_says_what_to_install(
    abab: dict[str, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` program to be found
    # With the graphviz package installed, the missing program is reported;
    # without it, the missing package is. Either message names the fix.
    with pytest.raises(
        (ImportError, RuntimeError), match=r"'dot' program|pip install graphviz"
    ):
        render_dot(abab["y"], tmp_path / "graph.svg")
    assert not (tmp_path / "graph.svg").exists()


def test_render_dot_without_the_graphviz_package(
    abab: dict[str, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    with pytest.raises(ImportError, match=r"pip install graphviz"):
        render_dot(abab["y"], tmp_path / "graph.svg")


def test_render_dot_writes_the_rendered_bytes(
    abab: dict[str, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeGraphviz(has_dot=True)
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    out = render_dot(abab["y"], str(tmp_path / "g.png"), format="png", names=abab)
    assert out == tmp_path / "g.png"
    assert out.read_bytes() == b"<rendered/>"
    assert fake.calls == [(to_dot(abab["y"], names=abab), "png")]


def test_render_dot_turns_a_missing_program_into_a_clear_error(
    abab: dict[str, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", FakeGraphviz(has_dot=False))
    with pytest.raises(RuntimeError, match="needs Graphviz's 'dot' program on PATH"):
        render_dot(abab["y"], tmp_path / "graph.svg")
    assert not (tmp_path / "graph.svg").exists()


def test_render_dot_rejects_bad_arguments(
    abab: dict[str, torch.Tensor], tmp_path: Path
) -> None:
    y = abab["y"]
    with pytest.raises(
        TypeError, match=r"argument 'filename' must be a str .* not int"
    ):
        render_dot(y, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="argument 'format' must be a str, not int"):
        render_dot(y, tmp_path / "g.svg", format=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'colour'"):
        render_dot(y, tmp_path / "g.svg", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="argument 'show_saved' must be a bool"):
        render_dot(y, tmp_path / "g.svg", show_saved="yes")


@pytest.mark.parametrize("max_nodes", [0, -1])
def test_render_dot_refuses_a_max_nodes_below_one(
    max_nodes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", FakeGraphviz(has_dot=True))
    y = (torch.ones(2, requires_grad=True) * 2).sum()
    with pytest.raises(ValueError, match=r"'max_nodes' must be at least 1, not -?\d"):
        render_dot(y, tmp_path / "g.svg", max_nodes=max_nodes)
    assert not (tmp_path / "g.svg").exists()


@pytest.mark.parametrize("fmt", ["SVG", "Png", ".svg", ".PDF"])
def test_render_dot_says_formats_are_lower_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", FakeGraphviz(has_dot=True))
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(
        ValueError,
        match=rf"must be a Graphviz output format .* not '{fmt}' \(formats are "
        rf"lower case, without a dot: '{fmt.lower().removeprefix('.')}'\)$",
    ):
        render_dot(x * 2, tmp_path / "g.svg", format=fmt)
    with pytest.raises(ValueError, match=r"not 'jpeg2000'$"):
        render_dot(x * 2, tmp_path / "g.svg", format="jpeg2000")


def test_render_dot_collapses_a_huge_chain_and_refuses_a_huge_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeGraphviz(has_dot=True)
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    y = chain(100_000)
    render_dot(y, tmp_path / "chain.svg")
    assert fake.calls[0][0].count("[label=") == 2
    params = [torch.ones(1, requires_grad=True) for _ in range(1_500)]
    tree = torch.stack(params).sum()  # 1,502 nodes: nothing to collapse
    with pytest.raises(
        ValueError, match=r"at most max_nodes=1,000 nodes and this graph has 1,502"
    ):
        render_dot(tree, tmp_path / "tree.svg", max_nodes=1_000)
    assert not (tmp_path / "tree.svg").exists()
    assert len(fake.calls) == 1  # Graphviz was never asked
    autograd_notes.free_graph(y)


# What Graphviz's `dot -T?` says (on stderr), here without bmp and tif.
DOT_ANSWER = (
    "Warning: Could not load a plugin - ignored\n"
    'Format: "?" not recognized. Use one of: canon cmap dot dot_json gv jpeg\n'
    "jpg json pdf plain plain-ext png ps svg svgz xdot xdot1.4 xdot_json\n"
)


def fake_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    """Put a `dot` program on PATH that answers `dot -T?` with ``answer``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "dot"
    program.write_text(f"#!/bin/sh\nprintf '%s' '{answer}' >&2\nexit 1\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))


def never_walked(*args: object) -> None:
    raise AssertionError("the graph was walked before the arguments were checked")


def test_parse_formats_reads_what_dot_lists() -> None:
    found = parse_formats(DOT_ANSWER)
    assert {"svg", "png", "pdf", "xdot1.4", "plain-ext"} <= found
    assert not {"bmp", "tif", "Use", "one", "of:"} & found
    assert parse_formats("Use one of: png:cairo png:gd svg:core") == {"png", "svg"}
    assert parse_formats("dot: command failed") == frozenset()


def test_writable_formats_asks_the_dot_program_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real `dot`, where installed, writes svg; without it nothing is known.
    assert ("svg" in writable_formats()) == (shutil.which("dot") is not None)
    fake_dot(tmp_path, monkeypatch, DOT_ANSWER)
    assert writable_formats() == parse_formats(DOT_ANSWER)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert writable_formats() == frozenset()  # render_dot then says what to install


@pytest.mark.parametrize("fmt", ["bmp", "tif"])
def test_render_dot_refuses_a_format_the_installed_graphviz_cannot_write(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeGraphviz(has_dot=True)
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    fake_dot(tmp_path, monkeypatch, DOT_ANSWER)
    y = (torch.ones(2, requires_grad=True) * 2).sum()
    with monkeypatch.context() as patched:
        patched.setattr(autograd_notes.dot, "build_view", never_walked)
        with pytest.raises(
            ValueError,
            match=rf"^render_dot\(\) argument 'format' must be a format this "
            rf"Graphviz writes \(canon, cmap, .*, xdot_json\), not '{fmt}'$",
        ):
            render_dot(y, tmp_path / f"g.{fmt}", format=fmt)
    assert fake.calls == []
    assert not (tmp_path / f"g.{fmt}").exists()
    render_dot(y, tmp_path / "g.png", format="png")  # one it writes
    assert fake.calls[0][1] == "png"


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("", r"must be the path of a file to write, not ''"),
        (".", r"must be the path of a file to write, not '\.', a folder"),
        ("{tmp}", r"must be the path of a file to write, not '.+', a folder"),
        (
            "{tmp}/missing/g.svg",
            r"must be the path of a file to write in a folder, not '.+/missing/g\.svg',"
            r" whose folder '.+/missing' is missing",
        ),
        (
            "{tmp}/file.txt/g.svg",
            r"must be the path of a file to write in a folder, not "
            r"'.+/file\.txt/g\.svg', whose folder '.+/file\.txt' is a file",
        ),
    ],
    ids=["empty", "dot", "folder", "missing-folder", "under-a-file"],
)
def test_render_dot_checks_the_filename_before_anything_else(
    where: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file.txt").write_text("a file")
    monkeypatch.setitem(sys.modules, "graphviz", None)  # not even imported
    monkeypatch.setattr(autograd_notes.dot, "build_view", never_walked)
    y = (torch.ones(2, requires_grad=True) * 2).sum()
    filename = where.format(tmp=tmp_path)
    with pytest.raises(
        ValueError, match=r"^render_dot\(\) argument 'filename' " + message
    ):
        render_dot(y, filename)
    with pytest.raises(ValueError, match="argument 'filename'"):
        render_dot(y, Path(filename))  # a PathLike, the same
    assert (tmp_path / "file.txt").read_text() == "a file"


def test_quick_labels_match_the_entry_parts() -> None:
    """The quick paths for lone nodes and leaves give the general labels."""
    from autograd_notes.dot import _dot_escape
    from autograd_notes.labels import index_names
    from autograd_notes.view import build_view, entry_parts, label_lines

    a = torch.ones(2, requires_grad=True)
    p = torch.nn.Parameter(torch.ones(2, 3, dtype=torch.float64))
    h = torch.ones(3, dtype=torch.float16, requires_grad=True)
    u = torch.ones(2, requires_grad=True)  # no name
    y = (a * 2).sum() + p.sum() + h.double().sum() + (u * a).sum() + p.mean()
    names = {'q"uote\\back\nnew $x$ \x00': a, "p": p, "é h": h}
    index = index_names(names, "to_dot")
    assert y.grad_fn is not None
    view = build_view(y.grad_fn, index, True, None, None)
    expected = [
        "\\n".join(
            _dot_escape(line)
            for line in label_lines(entry_parts(view, e, index, False), index)
        )
        for e in range(len(view.first))
    ]
    nodes, _ = dot_structure(to_dot(y, names=names))
    assert [label for label, _ in nodes.values()] == expected
    assert "AccumulateGrad\\nleaf: (2,) float32" in expected
    assert (
        'AccumulateGrad\\nq\\"uote\\\\back\\\\nnew $x$ \\\\x00: (2,) float32'
        in expected
    )


def test_a_fold_is_one_dot_node_and_render_dot_counts_folded_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace, loss = lstm_loss(40, learned_start=True)
    nodes, edges = dot_structure(to_dot(loss, modules=trace))
    assert nodes["n1"] == (
        "cell × 40\\n(fold: calls 0–39 of cell, 15 nodes each, SigmoidBackward0 ×3, "
        "MulBackward0 ×3, TBackward0 ×2, 4 more kinds; 4 leaves)",
        ', shape=box3d, style=filled, fillcolor="#e9d8fd", color="#6b46c1"',
    )
    # Then the start state: two SelectBackward0 of one parameter.
    assert [nodes[f"n{e}"][0].split("\\n")[0] for e in range(2, 5)] == [
        "SelectBackward0", "AccumulateGrad", "SelectBackward0"
    ]  # fmt: skip
    assert edges == [
        ("n0", "n1"),
        ("n1", "n2"),
        ("n1", "n4"),
        ("n2", "n3"),
        ("n4", "n3"),
    ]
    fake = FakeGraphviz(has_dot=True)
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    render_dot(loss, tmp_path / "g.svg", modules=trace, max_nodes=5)
    with pytest.raises(ValueError, match=r"max_nodes=5 nodes and this graph has 608"):
        render_dot(loss, tmp_path / "g.svg", modules=trace, max_nodes=5, fold=False)
