"""The items of ``to_html``'s page: what each box is, and which nodes it holds.

Each item is an :class:`Item`: the top-level entries first (``kind``
"node", "run", "module", "fold", or "nodes": a long stretch of entries
outside modules, see ``autograd_notes.runs``), then, below a module, its
submodules, folds and (where it has many nodes of its own) a box of them.
``owner`` gives each node's item; view.js makes the rest (calls of folds,
boxes of nodes).
"""

from __future__ import annotations

from typing import NamedTuple

from autograd_notes.fold import Fold, fold_title_words
from autograd_notes.labels import visible
from autograd_notes.runs import MIN_STRETCH, stretches, summary
from autograd_notes.view import View, entry_words, fold_summary_words
from autograd_notes.words import Text


class Item(NamedTuple):
    """A box of the page that opens (or one node outside modules, ``"node"``).

    ``parent`` is an item index (-1: the top level); ``kind`` one of
    "node", "run", "module", "fold", "nodes", and the script's "call" and
    "calls"; ``label`` the numbering of :func:`.format_graph` (top level
    only); ``path`` the module path (None: not one module). ``title`` and
    ``note`` are words (``autograd_notes.words``) where the page says them
    in the reader's language.
    """

    parent: int
    kind: str
    label: str
    title: Text
    note: Text
    path: str | None


def _depth(path: str) -> int:
    return 0 if not path else path.count(".") + 1


class Tree:
    """Groups (:class:`Item` rows) and owners.

    The tree of the page (``owner`` by walk index), or the template of one
    call of a fold (parent -1: the call itself).
    """

    def __init__(
        self, view: View, folds: list[Fold], fold_of: list[int], *, stretch: bool
    ) -> None:
        self.view = view
        self.stretch = stretch  # many nodes of one module: a box of nodes
        self.rows: list[Item] = []
        self.owner: dict[int, int] = {}
        self.module_of = view.module_of or [None] * len(view.graph.nodes)
        self.folds, self.fold_of = folds, fold_of
        self.opened: list[tuple[int, Fold]] = []  # fold items, in order made

    def add(self, parent: int, kind: str, label: str, title: Text, note: Text,
            path: str | None) -> int:  # fmt: skip
        self.rows.append(Item(parent, kind, label, title, note, path))
        return len(self.rows) - 1

    def template(self, path: str, nodes: list[int]) -> Tree:
        """The items of one call of a fold of module ``path``, made of ``nodes``."""
        call = Tree(self.view, self.folds, self.fold_of, stretch=False)
        call.split(-1, path, nodes)
        return call

    def open_fold(self, item: int, fold: Fold) -> None:
        """Record ``item`` as ``fold`` (its calls come from a template); its leaves."""
        self.opened.append((item, fold))
        if len(fold.leaves) > 1:  # the parameters of every call, as one box
            note = [[("accumulateNodes", len(fold.leaves))]]
            item = self.add(item, "run", "", [[("parameters",)]], note, None)
        for i in fold.leaves:
            self.owner[i] = item

    def _keys(
        self, path: str, nodes: list[int]
    ) -> tuple[list[int], dict[str | int, list[int]]]:
        """Nodes of ``path`` itself, and the others by submodule or fold below it."""
        subs: dict[str | int, list[int]] = {}
        direct: list[int] = []
        for i in nodes:
            f, here = self.fold_of[i], self.module_of[i]
            if f >= 0 and _depth(self.folds[f].paths[0]) > _depth(path):
                subs.setdefault(f, []).append(i)
            elif here is None or _depth(here) <= _depth(path):
                direct.append(i)
            else:
                key = ".".join(here.split(".")[: _depth(path) + 1])
                subs.setdefault(key, []).append(i)
        return direct, subs

    def split(self, item: int, path: str, nodes: list[int]) -> None:
        """Give ``nodes`` of module ``path`` to ``item``, a group per submodule."""
        work = [(item, path, nodes)]
        while work:
            item, path, nodes = work.pop(0)
            direct, subs = self._keys(path, nodes)
            while not direct and len(subs) == 1:  # one submodule holds all: go down
                key = next(iter(subs))
                if not isinstance(key, str):
                    break
                path = key
                direct, subs = self._keys(path, nodes)
            if self.stretch and len(direct) > MIN_STRETCH:
                note = summary(self.view.kinds, direct)
                title = [[("nodes", len(direct))]]
                item = self.add(item, "nodes", "", title, note, None)
            for i in direct:
                self.owner[i] = item
            for key, members in subs.items():
                if isinstance(key, int):
                    fold = self.folds[key]
                    note = fold_summary_words(self.view, fold)
                    title = fold_title_words(fold)
                    self.open_fold(self.add(item, "fold", "", title, note, None), fold)
                elif len(members) == 1:
                    self.owner[members[0]] = item
                else:
                    count = [[("moduleNodes", len(members))]]
                    sub = self.add(item, "module", "", visible(key), count, key)
                    work.append((sub, key, members))


def page_tree(
    view: View, folds: list[Fold], fold_of: list[int]
) -> tuple[Tree, list[range]]:
    """The items of the page, and the view's entries each top-level item shows."""
    tree = Tree(view, folds, fold_of, stretch=True)
    tops = stretches(view)
    for top in tops:
        if len(top) > 1:  # many entries outside modules: one box of nodes
            members = _stretch_nodes(view, top)
            start, end = view.node_id(top[0]), view.node_id(top[-1])
            label = f"[{start.split('-')[0]}-{end.split('-')[-1]}]"
            count: Text = [[("nodes", len(members))]]
            tree.add(-1, "nodes", label, count, summary(view.kinds, members), None)
            continue
        e = top[0]
        title, note = entry_words(view, e)
        label = f"[{view.node_id(e)}]"
        fold = view.folds.get(e)
        group = view.group[e]
        kind = "fold" if fold else "module" if group is not None else "run"
        if group is None and view.sizes[e] == 1:
            kind = "node"
        path = None if group is None or fold else group
        tree.add(-1, kind, label, title, note, path)
    for item, top in enumerate(tops):
        e = top[0]
        fold = view.folds.get(e)
        group = view.group[e]
        if fold is not None:
            tree.open_fold(item, fold)
        elif group is not None:
            tree.split(item, group, view.members[e])
        else:
            tree.owner.update(dict.fromkeys(_stretch_nodes(view, top), item))
    return tree, tops


def _stretch_nodes(view: View, entries: range) -> list[int] | range:
    """The nodes of the view's ``entries`` (a run of entries in no group)."""
    first, sizes = view.first, view.sizes
    if not view.members:  # entries in walk order, each its nodes in a row
        return range(first[entries[0]], first[entries[-1]] + sizes[entries[-1]])
    return [i for e in entries for i in view.members[e]]
