"""The machine tree of the reference interpreter (brief §1, §7, §10).

`parse_shape("2x[1,3]x2")` builds the tree of an explicit `--sgl-shape`:
each level is one count for every node of the level above, or a bracketed
list with one count per node of the level above; `0` alone is the one-node
tree whose root is a worker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Node:
    path: str  # "0", "0.1", "0.1.2"
    depth: int
    child_index: int
    children: list[Node] = field(default_factory=list)
    nworkers: int = 1
    # the node variables (brief §4): one copy per node for the whole run
    globals: dict[Any, Any] = field(default_factory=dict)

    @property
    def master(self) -> bool:
        return bool(self.children)

    def subtree(self) -> list[Node]:
        out = [self]
        for c in self.children:
            out += c.subtree()
        return out


class ShapeError(ValueError):
    pass


_LEVEL = re.compile(r"^(\d+|\[\d+(,\d+)*\])$")


def parse_shape(shape: str) -> Node:
    root = Node("0", 0, 0)
    text = shape.replace(" ", "")
    if text == "0":
        return root
    levels = text.split("x") if text else []
    if not levels or not all(_LEVEL.match(lv) for lv in levels):
        raise ShapeError(f"bad machine shape '{shape}'")
    frontier = [root]
    for lv in levels:
        if lv.startswith("["):
            counts = [int(x) for x in lv[1:-1].split(",")]
            if len(counts) != len(frontier):
                raise ShapeError(f"bad machine shape '{shape}': level '{lv}' lists {len(counts)} counts "
                                 f"for {len(frontier)} nodes")
        else:
            counts = [int(lv)] * len(frontier)
        nxt: list[Node] = []
        for node, n in zip(frontier, counts):
            if n < 1:
                raise ShapeError(f"bad machine shape '{shape}': a count of 0 below the root")
            node.children = [Node(f"{node.path}.{i}", node.depth + 1, i) for i in range(n)]
            nxt += node.children
        frontier = nxt
    _count(root)
    return root


def _count(n: Node) -> int:
    n.nworkers = sum(_count(c) for c in n.children) if n.children else 1
    return n.nworkers
