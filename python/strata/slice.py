"""strata.GraphSlice: one rank's rows of a graph, for a run in which no rank holds the whole graph
(docs/python.md, "Per-rank slices"). Rank r gives the in-edges of its rows
[first, first + rows), the rows of every rank following one another in rank order from vertex 0;
the ranks then partition and exchange rows as they do for the slices of a .h5 file."""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import _strata
from .graph import _array, _labels, _masks


class GraphSlice:
    """Build one with `GraphSlice.from_arrays` (or `Graph.slice` of a whole graph, for tests).
    Pass it to `Trainer` on every rank (each rank its own slice)."""

    def __init__(self, core: "_strata.GraphSlice", copies: list):
        self._s = core
        self.copies = copies

    @classmethod
    def from_arrays(cls, first: int, num_nodes: int, indptr, indices, x, y=None,
                    train_mask=None, val_mask=None, test_mask=None, *, num_classes: int,
                    edge_weight=None, name: str = "") -> "GraphSlice":
        """This rank's rows [first, first + R) of a graph of num_nodes vertices, CSR by
        destination as Graph.from_arrays: indptr [R+1] (from 0), indices [E_r] (the original
        ids of the sources of the rows' in-edges, any vertex of the graph), x [R, F], y [R],
        masks [R] / [R, S] (PyG) or [S, R]. num_classes is the whole graph's (every rank gives
        the same). The arrays are copied into the slice (listed in `copies` when a dtype is
        converted first)."""
        copies: list[str] = []
        indptr = _array(indptr, np.int64, "indptr", copies, ndim=1)
        indices = _array(indices, np.int64, "indices", copies, ndim=1)
        rows = indptr.shape[0] - 1
        x = _array(x, np.float32, "x", copies, ndim=2)
        y = _labels(y, rows, copies)
        masks = [_masks(m, rows, k, copies) for k, m in
                 (("train_mask", train_mask), ("val_mask", val_mask), ("test_mask", test_mask))]
        if edge_weight is not None:
            edge_weight = _array(edge_weight, np.float32, "edge_weight", copies, ndim=1)
        core = _strata.GraphSlice.from_arrays(int(first), int(num_nodes), indptr, indices, x, y,
                                              *masks, int(num_classes), edge_weight, name)
        return cls(core, copies)

    first = property(lambda self: self._s.first)
    num_rows = property(lambda self: self._s.num_rows)
    num_nodes = property(lambda self: self._s.num_nodes)
    num_local_edges = property(lambda self: self._s.num_local_edges)
    num_features = property(lambda self: self._s.num_features)
    num_classes = property(lambda self: self._s.num_classes)
    num_splits = property(lambda self: self._s.num_splits)

    def __repr__(self) -> str:
        return (f"GraphSlice(rows {self.first}..{self.first + self.num_rows} of {self.num_nodes}"
                f", {self.num_local_edges} in-edges, {self.num_features} features)")


def slice_of(graph, first: int, last: int) -> GraphSlice:
    """Rows [first, last) of a whole strata.Graph as a GraphSlice."""
    ip = graph.indptr
    lo, hi = int(ip[first]), int(ip[last])
    w = graph.edge_weight
    return GraphSlice.from_arrays(
        first, graph.num_nodes, ip[first:last + 1] - lo, graph.indices[lo:hi],
        graph.x[first:last], graph.y[first:last], graph.train_mask[:, first:last],
        graph.val_mask[:, first:last], graph.test_mask[:, first:last],
        num_classes=graph.num_classes, edge_weight=None if w is None else w[lo:hi],
        name=graph.name)
