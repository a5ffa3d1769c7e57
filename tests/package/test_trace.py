"""Tests for autograd_notes.trace: which module made each node."""

from __future__ import annotations

import threading
import warnings
import weakref
from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograd_notes import ModuleTrace, format_graph, track_modules, walk_graph
from autograd_notes import trace as trace_module

from .helpers import Stack


def test_each_node_knows_its_module(
    traced: tuple[Stack, ModuleTrace, torch.Tensor],
) -> None:
    _, trace, loss = traced
    paths = {}
    for node in walk_graph(loss):
        paths.setdefault(trace.path_of(node), []).append(type(node).__name__)
    assert paths[None] == ["MeanBackward0", "PowBackward0"]  # outside the model
    assert paths[""] == ["MulBackward0"]  # the model's own forward
    assert paths["blocks.1"] == ["AddBackward0"]
    assert paths["blocks.1.act"] == ["TanhBackward0"]
    assert sorted(paths["blocks.0.fc"]) == [
        "AccumulateGrad", "AccumulateGrad", "AddmmBackward0", "TBackward0"
    ]  # fmt: skip
    assert sorted(paths["head"]) == sorted(paths["blocks.1.fc"])


def test_hooks_are_removed_after_tracking(
    traced: tuple[Stack, ModuleTrace, torch.Tensor],
) -> None:
    model = traced[0]
    for module in model.modules():
        assert not module._forward_hooks
        assert not module._forward_pre_hooks


# A module: (own op before its children?, own op after?, children, and whether
# it calls each child twice). A module without children always has an op.
_Spec = tuple[bool, bool, list[Any], bool]
_specs = st.recursive(
    st.tuples(st.just(True), st.booleans(), st.just([]), st.booleans()),
    lambda inner: st.tuples(
        st.booleans(),
        st.booleans(),
        st.lists(inner, min_size=1, max_size=3),
        st.booleans(),
    ),
    max_leaves=8,
)


class _Recorded(torch.nn.Module):
    """Runs its own ops and its children; logs (grad_fn, self) per own op."""

    def __init__(self, spec: _Spec, log: list[tuple[Any, torch.nn.Module]]) -> None:
        super().__init__()
        self.pre, self.post, children, self.twice = spec
        self.kids = torch.nn.ModuleList(_Recorded(c, log) for c in children)
        self.log = log

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre:
            x = x * 1.5
            self.log.append((x.grad_fn, self))
        for kid in self.kids:
            for _ in range(2 if self.twice else 1):
                x = kid(x)
        if self.post:
            x = x + 1
            self.log.append((x.grad_fn, self))
        return x


@settings(max_examples=60, deadline=None)
@given(spec=_specs, wrappers=st.integers(0, 2))
def test_path_of_matches_the_module_that_ran_each_op(
    spec: _Spec, wrappers: int
) -> None:
    log: list[tuple[Any, torch.nn.Module]] = []
    model: torch.nn.Module = _Recorded(spec, log)
    for _ in range(wrappers):  # wrappers with no op of their own
        model = torch.nn.Sequential(model)
    path = {id(m): name for name, m in model.named_modules()}
    with track_modules(model) as trace:
        model(torch.ones(2, requires_grad=True))
    assert log
    for node, module in log:
        assert trace.path_of(node) == path[id(module)]


def test_a_wrapper_around_its_child_keeps_its_own_op() -> None:
    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lin(x) * 2

    model = torch.nn.Sequential(Block())
    with track_modules(model) as trace:
        y = model(torch.ones(1, 2))
    assert trace.path_of(y.grad_fn) == "0"
    text = format_graph(y, modules=trace, depth=1)
    assert text.startswith("[0] 0  (module: 5 nodes, AccumulateGrad ×2, MulBackward0")


@pytest.mark.parametrize("node", [None, "AddBackward0", torch.ones(1)])
def test_path_of_names_its_argument(node: object) -> None:
    with track_modules(torch.nn.Identity()) as trace:
        pass
    with pytest.raises(TypeError, match=r"path_of\(\) argument 'node' must be a"):
        trace.path_of(node)  # type: ignore[arg-type]


class _Turns:
    """Lets threads take steps in the order of ``schedule``, then in turn.

    A schedule entry for a thread that has finished is skipped, and after the
    schedule each step goes to the next live thread, so no thread waits for
    ever and every run of one schedule interleaves the same way.
    """

    def __init__(self, schedule: list[int], count: int) -> None:
        self.schedule, self.at, self.last = schedule, 0, -1
        self.live = set(range(count))
        self.turn = threading.Condition()
        self.me = threading.local()

    def _whose(self) -> int:
        while self.at < len(self.schedule) and self.schedule[self.at] not in self.live:
            self.at += 1
        if self.at < len(self.schedule):
            return self.schedule[self.at]
        live = sorted(self.live)
        return next((i for i in live if i > self.last), live[0])

    def step(self) -> None:
        with self.turn:
            while self._whose() != self.me.i:
                self.turn.wait()
            self.at, self.last = self.at + 1, self.me.i
            self.turn.notify_all()

    def done(self) -> None:
        with self.turn:
            self.live.discard(self.me.i)
            self.turn.notify_all()


class _Stepped(_Recorded):
    """:class:`_Recorded` whose forward and own ops each wait for their turn."""

    def __init__(
        self, spec: _Spec, log: list[tuple[Any, torch.nn.Module]], turns: _Turns
    ) -> None:
        torch.nn.Module.__init__(self)
        self.pre, self.post, children, self.twice = spec
        self.kids = torch.nn.ModuleList(_Stepped(c, log, turns) for c in children)
        self.log, self.turns = log, turns

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.turns.step()
        if self.pre:
            self.turns.step()
            x = x * 1.5
            self.log.append((x.grad_fn, self))
        for kid in self.kids:
            for _ in range(2 if self.twice else 1):
                x = kid(x)
        if self.post:
            self.turns.step()
            x = x + 1
            self.log.append((x.grad_fn, self))
        return x


# Per thread: which model it runs, how many nodes it makes first (to shift
# its sequence numbers), and how many forwards it runs.
_runs = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 3), st.integers(1, 2)),
    min_size=2,
    max_size=4,
)


@settings(max_examples=40, deadline=None)
@given(
    models=st.lists(_specs, min_size=2, max_size=2),
    runs=_runs,
    schedule=st.lists(st.integers(0, 3), max_size=60),
)
def test_path_of_is_right_whatever_thread_made_the_node(
    models: list[_Spec], runs: list[tuple[int, int, int]], schedule: list[int]
) -> None:
    """Each run in a new thread (its numbers start at 0); every op takes turns."""
    log: list[tuple[Any, torch.nn.Module]] = []
    turns = _Turns(schedule, len(runs))
    model = torch.nn.ModuleList(_Stepped(spec, log, turns) for spec in models)
    path = {id(m): name for name, m in model.named_modules()}
    outside: list[Any] = []  # nodes made outside every forward
    errors: list[BaseException] = []

    def run(i: int) -> None:
        turns.me.i = i
        try:
            which, shift, calls = runs[i]
            x = torch.ones(2, requires_grad=True)
            for _ in range(shift):
                x = x * 1
                outside.append(x.grad_fn)
            for _ in range(calls):
                x = model[which](x)
                x = x * 0.5  # outside the model: no module
                outside.append(x.grad_fn)
            outside.append(x.sum().grad_fn)
        except BaseException as error:  # reported below, in the main thread
            errors.append(error)
        finally:
            turns.done()

    with track_modules(model) as trace:
        workers = [threading.Thread(target=run, args=(i,)) for i in range(len(runs))]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    assert not errors
    assert log
    wrong = [
        (type(node).__name__, trace.path_of(node), path[id(module)])
        for node, module in log
        if trace.path_of(node) != path[id(module)]
    ]
    wrong += [
        (type(n).__name__, trace.path_of(n), None) for n in outside if trace.path_of(n)
    ]
    assert not wrong, f"{len(wrong)} of {len(log) + len(outside)} wrong"


def test_a_node_whose_thread_cannot_be_told_has_no_module() -> None:
    """A node no output leads to: by its range alone, from one thread only."""

    class Stash(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.side = x * 3  # not returned: no output leads to it
            return x * 2

    model = torch.nn.Sequential(Stash())
    x = torch.ones(2, requires_grad=True)
    with track_modules(model) as alone:
        model(x)
    assert alone.path_of(model[0].side.grad_fn) == "0"
    sides = []
    with track_modules(model) as trace:
        for _ in range(2):
            worker = threading.Thread(target=lambda: sides.append(model(x) * 1))
            worker.start()
            worker.join()
        model(x)
    assert trace.path_of(model[0].side.grad_fn) is None
    assert [trace.path_of(s.grad_fn.next_functions[0][0]) for s in sides] == ["0"] * 2


_HOOKS = (
    "_forward_hooks", "_forward_pre_hooks", "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs",
    "_backward_hooks", "_backward_pre_hooks",
)  # fmt: skip


def _hooks(model: torch.nn.Module) -> dict[tuple[str, str], list[Any]]:
    return {
        (path, name): list(getattr(module, name).items())
        for path, module in model.named_modules()
        for name in _HOOKS
    }


class _NoHooks(torch.nn.Identity):
    def register_forward_hook(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no forward hooks here")


def _jit(kind: str) -> torch.nn.Module:
    """A Linear scripted or traced by torch.jit (deprecated: it warns, with a
    DeprecationWarning on 2.13 and a FutureWarning on 2.15)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        if kind == "script":
            return torch.jit.script(torch.nn.Linear(2, 2))
        return torch.jit.trace(torch.nn.Linear(2, 2), torch.ones(1, 2))


def _scripted() -> torch.nn.Module:
    inner = torch.nn.Sequential(torch.nn.Tanh(), _jit("script"))
    return torch.nn.Sequential(torch.nn.Linear(2, 2), inner)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            _scripted,
            TypeError,
            r"^track_modules\(\) argument 'model' must hold no scripted or traced "
            r"\(torch.jit\) submodule, not '1.1': RecursiveScriptModule$",
        ),
        (
            lambda: torch.nn.Sequential(
                torch.nn.Linear(2, 2), torch.nn.Tanh(), _NoHooks()
            ),
            RuntimeError,
            "^no forward hooks here$",
        ),
    ],
    ids=["scripted submodule", "a hook refused"],
)
def test_a_failed_track_modules_leaves_no_hook(
    make: Any, error: type[Exception], message: str
) -> None:
    model = make()
    calls = []
    model[0].register_forward_hook(lambda *args: calls.append(1))
    before = _hooks(model)
    with pytest.raises(error, match=message), track_modules(model):
        pass  # pragma: no cover - never reached
    assert _hooks(model) == before
    model(torch.ones(1, 2))  # only the caller's own hook runs
    assert calls == [1]


def test_hooks_are_removed_when_the_block_raises() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    before = _hooks(model)
    with pytest.raises(KeyError), track_modules(model):
        raise KeyError
    assert _hooks(model) == before


@pytest.mark.parametrize(
    ("model", "actual"),
    [
        (None, "NoneType"),
        (torch.nn.Linear, "the class Linear itself (make one first)"),
        (torch.ones(2), "Tensor"),
        (
            "script",
            "hold no scripted or traced (torch.jit) submodule, not the model "
            "itself: RecursiveScriptModule",
        ),
        (
            "trace",
            "hold no scripted or traced (torch.jit) submodule, not the model "
            "itself: TopLevelTracedModule",
        ),
    ],
    ids=["None", "a class", "a tensor", "scripted", "traced"],
)
def test_track_modules_names_its_argument(model: object, actual: str) -> None:
    if isinstance(model, str):  # made here: torch.jit warns
        model = _jit(model)
    with pytest.raises(TypeError) as info, track_modules(model):  # type: ignore[arg-type]
        pass  # pragma: no cover - never reached
    assert str(info.value).startswith("track_modules() argument 'model' must ")
    assert str(info.value).endswith(actual)


def test_one_thread_keeps_no_node_past_the_block() -> None:
    """Only forwards in several threads keep nodes, hence graphs, alive."""
    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    x = torch.ones(1, 2)  # saved by the Linear's node for its backward
    kept = weakref.ref(x)
    with track_modules(model) as trace:
        y = model(x)
    del x, y
    assert kept() is None
    assert trace.path_of(model(torch.ones(1, 2)).grad_fn) is None  # made after


def test_forwards_past_the_cap_give_no_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the outermost forwards whose nodes a trace keeps: None, not a guess."""
    monkeypatch.setattr(trace_module, "_MAX_ANCHORED", 1)
    model = torch.nn.Sequential(torch.nn.Tanh())
    outs: list[torch.Tensor] = []
    with track_modules(model) as trace:
        worker = threading.Thread(
            target=lambda: outs.append(model(torch.ones(1, requires_grad=True) * 1))
        )
        worker.start()
        worker.join()
        outs.append(model(torch.ones(1, requires_grad=True) * 1))
    assert [trace.path_of(out.grad_fn) for out in outs] == ["0", None]


class _Fan(torch.nn.Module):
    """Runs each child in a thread of its own, like ``nn.DataParallel``."""

    def __init__(self) -> None:
        super().__init__()
        self.kids = torch.nn.ModuleList(torch.nn.Tanh() for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xs = [x * (i + 2) for i in range(3)]
        outs: list[torch.Tensor] = [x] * 3

        def run(i: int) -> None:
            outs[i] = self.kids[i](xs[i])

        workers = [threading.Thread(target=run, args=(i,)) for i in range(3)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        return outs[0] + outs[1] * outs[2]


def test_a_forward_may_hand_its_children_to_threads() -> None:
    """Run in a new thread, the forward's numbers overlap its children's."""
    model = _Fan()
    x = torch.ones(2, requires_grad=True)
    ys: list[torch.Tensor] = []
    with track_modules(model) as trace:
        caller = threading.Thread(target=lambda: ys.append(model(x)))
        caller.start()
        caller.join()
    (y,) = ys
    paths = {}
    for node in walk_graph(y):
        paths.setdefault(trace.path_of(node), []).append(type(node).__name__)
    assert paths[""] == ["AddBackward0", "MulBackward0"]  # the gathering ops
    assert {k: v for k, v in paths.items() if k} == {
        f"kids.{i}": ["TanhBackward0"] for i in range(3)
    }
    # x * (i + 2) is reached only through the workers' outputs: the thread
    # that made it cannot be told, so it is not given to a module.
    assert sorted(paths[None]) == ["AccumulateGrad"] + ["MulBackward0"] * 3


def test_calls_number_each_call_of_a_module_and_place_each_node() -> None:
    cell = torch.nn.Linear(2, 2)
    model = torch.nn.Sequential(cell, torch.nn.Tanh())
    x = torch.ones(1, 2, requires_grad=True)
    with track_modules(model) as trace:
        for _ in range(3):
            x = model(x)
    loss = x.sum()
    calls = trace.calls()
    assert list(zip(calls.paths, calls.call_index, calls.parents, strict=True)) == [
        ("", 0, -1), ("0", 0, 0), ("1", 0, 0),
        ("", 1, -1), ("0", 1, 3), ("1", 1, 3),
        ("", 2, -1), ("0", 2, 6), ("1", 2, 6),
    ]  # fmt: skip
    nodes = walk_graph(loss)
    made = [
        (type(n).__name__, calls.paths[c], calls.call_index[c]) if c >= 0 else None
        for n, c in zip(nodes, trace.calls_of(nodes), strict=True)
    ]
    assert made[:3] == [None, ("TanhBackward0", "1", 2), ("AddmmBackward0", "0", 2)]
    leaves = [
        m
        for n, m in zip(nodes, made, strict=True)
        if type(n).__name__ == "AccumulateGrad"
    ]
    assert leaves == [None] * 3  # parameters and x belong to no call
    assert sorted(m[2] for m in made if m and m[0] == "TanhBackward0") == [0, 1, 2]


def test_calls_of_names_a_bad_argument() -> None:
    trace = ModuleTrace()
    with pytest.raises(
        TypeError, match=r"argument 'nodes' must be a sequence .*, not str"
    ):
        trace.calls_of("x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not one item int"):
        trace.calls_of([1])  # type: ignore[list-item]
    assert trace.calls_of([]) == []


def test_calls_of_gives_each_enclosing_call_and_its_index() -> None:
    """A module called twice inside one call of its parent, and a parent
    called twice: each node knows which call of each module made it."""

    class Twice(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.act = torch.nn.Tanh()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.act(self.act(x) * 2)

    model = torch.nn.Sequential(Twice())
    x = torch.ones(2, requires_grad=True)
    with track_modules(model) as trace:
        y = model(model(x))
    calls = {}
    nodes = [n for n in walk_graph(y) if type(n).__name__ != "AccumulateGrad"]
    for node, c in zip(nodes, trace.calls_of(nodes), strict=True):
        calls.setdefault(_chain(trace, c), []).append(type(node).__name__)
    assert calls == {
        (("0.act", 3), ("0", 1), ("", 1)): ["TanhBackward0"],
        (("0", 1), ("", 1)): ["MulBackward0"],
        (("0.act", 2), ("0", 1), ("", 1)): ["TanhBackward0"],
        (("0.act", 1), ("0", 0), ("", 0)): ["TanhBackward0"],
        (("0", 0), ("", 0)): ["MulBackward0"],
        (("0.act", 0), ("0", 0), ("", 0)): ["TanhBackward0"],
    }
    leaf = walk_graph(y)[-1]
    assert trace.calls_of([leaf]) == [-1]  # no call makes an AccumulateGrad node
    assert trace.calls_of([(y * 2).grad_fn]) == [-1]  # made outside the model


def _chain(trace: ModuleTrace, c: int) -> tuple[tuple[str, int], ...]:
    """The calls around call ``c``, innermost first, as ``(path, call index)``."""
    calls, chain = trace.calls(), []
    while c >= 0:
        chain.append((calls.paths[c], calls.call_index[c]))
        c = calls.parents[c]
    return tuple(chain)


def test_named_state_lists_parameters_and_buffers() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    with track_modules(model) as trace:
        pass
    state = {name: (kind, tensor) for name, kind, tensor in trace.named_state()}
    expected = {name: ("parameter", p) for name, p in model.named_parameters()}
    expected |= {name: ("buffer", b) for name, b in model.named_buffers()}
    assert state.keys() == expected.keys()
    for name, (kind, tensor) in state.items():
        assert kind == expected[name][0]
        assert tensor is expected[name][1]


def test_calls_of_stays_right_while_forwards_run() -> None:
    model = torch.nn.Sequential(torch.nn.Tanh())
    x = torch.ones(1, requires_grad=True)
    outputs = []
    with track_modules(model) as trace:
        for k in range(5):
            outputs.append(model(x))
            [c] = trace.calls_of([outputs[-1].grad_fn])
            assert _chain(trace, c) == (("0", k), ("", k))
    found = trace.calls_of([y.grad_fn for y in outputs])
    assert [_chain(trace, c)[0] for c in found] == [("0", k) for k in range(5)]


def test_named_state_lists_a_tied_weight_under_each_name() -> None:
    model = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5))
    model[1].weight = model[0].weight
    with track_modules(model) as trace:
        pass
    names = [name for name, _, t in trace.named_state() if t is model[0].weight]
    assert names == ["0.weight", "1.weight"]
