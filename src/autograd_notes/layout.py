"""The layered layout of a graph of boxes: which row each box is drawn in.

One rule for every picture of the graph: :func:`.draw_graph` (through
networkx, which it needs for drawing anyway), :func:`.to_html`'s static SVG
(here) and its script (``_html/layout.js``, the same steps in JavaScript).
The tests hold the three to the same answers on the same graphs, cycles
included.

The rule: a box's row is its longest distance from a box that nothing
links to (so every link points down); where grouping by module made a cycle
(a module used twice), the shortest distance from the root box, which needs
no order. Boxes that link to nothing (a node with no inputs: a leaf), and
boxes the root does not reach, go to the bottom row.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from autograd_notes._checks import arg_error, type_name

__all__ = ["layers"]


def _check(out: object, root: object) -> list[list[int]]:
    if not isinstance(out, Sequence):
        expected = "a sequence of lists of box indices"
        raise TypeError(arg_error("layers", "out", expected, type_name(out)))
    boxes = len(out)
    links: list[list[int]] = []
    for targets in out:
        if not isinstance(targets, Sequence) or not all(
            isinstance(t, int) and not isinstance(t, bool) and 0 <= t < boxes
            for t in targets
        ):
            expected = f"lists of box indices from 0 to {boxes - 1}"
            raise ValueError(arg_error("layers", "out", expected, repr(targets)))
        links.append(list(targets))
    if not isinstance(root, int) or isinstance(root, bool):
        raise TypeError(arg_error("layers", "root", "an int", type_name(root)))
    if boxes and not 0 <= root < boxes:
        expected = f"a box index from 0 to {boxes - 1}"
        raise ValueError(arg_error("layers", "root", expected, str(root)))
    return links


def layers(out: Sequence[Sequence[int]], root: int = 0) -> list[int]:
    """The row of each box; ``out[b]`` lists the boxes ``b`` links down to.

    >>> layers([[1, 2], [2], []])  # 0 -> 1 -> 2, and 0 -> 2: 2 is lower
    [0, 1, 2]
    >>> layers([[1], [0, 2], []])  # a cycle: the shortest way from 0
    [0, 1, 2]
    """
    links = _check(out, root)
    boxes = len(links)
    incoming = [0] * boxes
    for targets in links:
        for t in targets:
            incoming[t] += 1
    row = [0] * boxes
    ready = deque(b for b in range(boxes) if incoming[b] == 0)
    done = 0
    while ready:  # Kahn's order: a box after every box that links to it
        b = ready.popleft()
        done += 1
        for t in links[b]:
            row[t] = max(row[t], row[b] + 1)
            incoming[t] -= 1
            if incoming[t] == 0:
                ready.append(t)
    if done < boxes:  # a cycle: breadth first from the root
        row = [-1] * boxes
        if boxes:
            row[root] = 0
            queue = deque([root])
            while queue:
                b = queue.popleft()
                for t in links[b]:
                    if row[t] < 0:
                        row[t] = row[b] + 1
                        queue.append(t)
    bottom = max((r for r in row if r >= 0), default=0)
    return [r if r >= 0 and links[b] else bottom for b, r in enumerate(row)]
