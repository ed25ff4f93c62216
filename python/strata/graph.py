"""strata.Graph: a whole graph in host memory (docs/format.md, docs/python.md).

Layout: CSR by destination (the in-neighbours of v are indices[indptr[v]:indptr[v+1]]), int64
ids, float32 features [N, F], int64 labels (-1: unlabeled), masks per split. Conversions from
other dtypes are copies; each one is listed in `Graph.copies`, never silent.
"""

from __future__ import annotations

import os
from typing import Optional

import numpy as np

from . import _strata


def _array(value, dtype, name: str, copies: list, ndim: Optional[int] = None) -> np.ndarray:
    """`value` as a C-contiguous `dtype` array: the same memory when it already is one, else a
    copy noted in `copies`."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor (CPU)
        value = value.detach().cpu().numpy()
    a = np.asarray(value)
    if ndim is not None and a.ndim != ndim:
        raise _strata.Error(f"Graph: {name} has {a.ndim} dimensions, expected {ndim}")
    if a.dtype != dtype:
        if dtype == np.int64 and not np.issubdtype(a.dtype, np.integer):
            raise _strata.Error(f"Graph: {name} has dtype {a.dtype}, expected integers")
        copies.append(f"{name}: {a.dtype} -> {np.dtype(dtype).name}, {a.size} values copied")
        a = np.ascontiguousarray(a, dtype=dtype)
    elif not a.flags.c_contiguous:
        copies.append(f"{name}: not C-contiguous, {a.size} values copied")
        a = np.ascontiguousarray(a)
    return a


def _masks(mask, n: int, name: str, copies: list) -> np.ndarray:
    """A PyG mask ([N] or [N, S], bool) or Strata's [S, N] as Strata's [S, N] uint8."""
    if mask is None:
        return np.zeros((1, n), dtype=np.uint8)
    if hasattr(mask, "detach"):
        mask = mask.detach().cpu().numpy()
    m = np.asarray(mask)
    if m.ndim == 1:
        m = m.reshape(1, -1)
    elif m.ndim == 2 and m.shape[0] == n and m.shape[1] != n:
        copies.append(f"{name}: [N, S] -> [S, N], {m.size} values copied")
        m = np.ascontiguousarray(m.T)
    if m.dtype == np.bool_:
        m = m.view(np.uint8)
    return _array(m, np.uint8, name, copies, ndim=2)


def _labels(y, n: int, copies: list) -> np.ndarray:
    if y is None:
        return np.full(n, -1, dtype=np.int64)
    a = _array(y, np.int64, "y", copies)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a.reshape(-1)
    return a


class Graph:
    """A whole graph in host memory. Build one with `Graph.load`, `Graph.from_arrays`,
    `Graph.from_edge_index`, `Graph.from_scipy`, `Graph.from_pyg` or `Graph.from_dgl`."""

    def __init__(self, core: "_strata.Graph"):
        self._g = core

    # ---- construction
    @classmethod
    def load(cls, path: str | os.PathLike) -> "Graph":
        """Reads and validates a graph file (`strata convert`'s .h5)."""
        return cls(_strata.Graph.load(os.fspath(path)))

    @classmethod
    def from_arrays(cls, indptr, indices, x, y=None, train_mask=None, val_mask=None,
                    test_mask=None, *, num_classes: Optional[int] = None, edge_weight=None,
                    name: str = "", copy: bool = True) -> "Graph":
        """CSR by destination: indptr [N+1], indices [E] (the source of each edge), x [N, F]
        float32, y [N] int64 (-1: unlabeled), masks [N] / [N, S] (PyG) or [S, N] (Strata).
        int32 indices or float64 features are converted (a copy, listed in `copies`);
        `copy=False` makes any conversion an error."""
        copies: list[str] = []
        indptr = _array(indptr, np.int64, "indptr", copies, ndim=1)
        indices = _array(indices, np.int64, "indices", copies, ndim=1)
        n = indptr.shape[0] - 1
        x = _array(x, np.float32, "x", copies, ndim=2)
        y = _labels(y, n, copies)
        masks = [_masks(m, n, k, copies) for k, m in
                 (("train_mask", train_mask), ("val_mask", val_mask), ("test_mask", test_mask))]
        if edge_weight is not None:
            edge_weight = _array(edge_weight, np.float32, "edge_weight", copies, ndim=1)
        if num_classes is None:
            num_classes = int(y.max()) + 1 if y.size and y.max() >= 0 else 1
        if not copy and copies:
            raise _strata.Error("Graph: copy=False, but " + "; ".join(copies))
        core = _strata.Graph.from_arrays(indptr, indices, x, y, *masks, int(num_classes),
                                         edge_weight, name)
        core._add_copies(copies)
        return cls(core)

    @classmethod
    def from_edge_index(cls, edge_index, x, y=None, train_mask=None, val_mask=None,
                        test_mask=None, *, num_nodes: Optional[int] = None,
                        num_classes: Optional[int] = None, edge_weight=None,
                        name: str = "") -> "Graph":
        """PyG's edge_index [2, E] (row 0 the source, row 1 the destination of each edge, a
        message flowing source -> destination) as Strata's CSR by destination: one O(E) copy
        (the edges sorted by destination, then source: the sorted sources are kept, the sort's
        temporaries freed), listed in `copies`. As the C++
        converters do: a duplicate edge is dropped (the first kept, with its weight), self loops
        are kept as given (Strata's operators add I themselves), no reverse edges are added."""
        copies: list[str] = []
        ei = _array(edge_index, np.int64, "edge_index", copies, ndim=2)
        if ei.shape[0] != 2:
            raise _strata.Error(f"Graph: edge_index has shape {list(ei.shape)}, expected [2, E]")
        return cls._from_edges(ei[0], ei[1], x, y, train_mask, val_mask, test_mask, copies,
                               num_nodes=num_nodes, num_classes=num_classes,
                               edge_weight=edge_weight, name=name)

    @classmethod
    def _from_edges(cls, src, dst, x, y, train_mask, val_mask, test_mask, copies: list, *,
                    num_nodes, num_classes, edge_weight, name) -> "Graph":
        """from_edge_index's work on int64 source and destination arrays."""
        xa = _array(x, np.float32, "x", copies, ndim=2)
        n = int(num_nodes) if num_nodes is not None else xa.shape[0]
        if src.shape != dst.shape:
            raise _strata.Error(f"Graph: {src.shape[0]} sources but {dst.shape[0]} destinations")
        order = np.lexsort((src, dst))  # stable: by destination, then source
        s, d = src[order], dst[order]
        keep = np.ones(s.shape[0], dtype=bool)
        if s.shape[0] > 1:
            keep[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
        dropped = int(s.shape[0] - keep.sum())
        w = None
        if edge_weight is not None:
            w = _array(edge_weight, np.float32, "edge_weight", copies, ndim=1)[order][keep]
        if dropped:
            s, d = s[keep], d[keep]
        if s.size and (min(s.min(), d.min()) < 0 or max(s.max(), d.max()) >= n):
            raise _strata.Error(f"Graph: edge_index holds a vertex outside [0, {n})")
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(d, minlength=n), out=indptr[1:])
        copies.append(f"edge_index: sorted by destination, {s.size} edges copied"
                      + (f" ({dropped} duplicates dropped)" if dropped else ""))
        g = cls.from_arrays(indptr, np.ascontiguousarray(s), xa, y, train_mask, val_mask,
                            test_mask, num_classes=num_classes, edge_weight=w, name=name)
        g._g._add_copies(copies)
        return g

    @classmethod
    def from_scipy(cls, adjacency, x, y=None, train_mask=None, val_mask=None, test_mask=None,
                   *, rows: str = "source", num_classes: Optional[int] = None,
                   name: str = "") -> "Graph":
        """A scipy.sparse adjacency matrix. rows="source" (default: networkx's and PyG's
        convention, A[u, v] for an edge u -> v) takes A's CSC form; rows="destination" takes
        A as Strata's own CSR by destination. Stored values become edge weights unless all 1."""
        import scipy.sparse as sp
        if rows not in ("source", "destination"):
            raise _strata.Error(f"Graph: rows = '{rows}': expected source or destination")
        a = sp.csr_matrix(adjacency) if rows == "destination" else sp.csc_matrix(adjacency)
        a.sort_indices()
        a.sum_duplicates()
        w = None if a.nnz == 0 or np.all(a.data == 1) else a.data
        return cls.from_arrays(a.indptr, a.indices, x, y, train_mask, val_mask, test_mask,
                               num_classes=num_classes, edge_weight=w, name=name)

    @classmethod
    def from_pyg(cls, data, *, num_classes: Optional[int] = None) -> "Graph":
        """A PyTorch Geometric `Data` (duck-typed: edge_index, x, y, train_mask, val_mask,
        test_mask, edge_weight or a 1-D edge_attr, num_nodes), see from_edge_index."""
        weight = getattr(data, "edge_weight", None)
        if weight is None:
            attr = getattr(data, "edge_attr", None)
            if attr is not None and attr.dim() == 1:
                weight = attr
        return cls.from_edge_index(
            data.edge_index, data.x, getattr(data, "y", None),
            getattr(data, "train_mask", None), getattr(data, "val_mask", None),
            getattr(data, "test_mask", None), num_nodes=data.num_nodes,
            num_classes=num_classes, edge_weight=weight, name=getattr(data, "name", "") or "")

    @classmethod
    def from_dgl(cls, g, *, feat: str = "feat", label: str = "label",
                 weight: Optional[str] = None, num_classes: Optional[int] = None) -> "Graph":
        """A DGL graph (duck-typed: `g.edges()` -> (src, dst), `g.num_nodes()`, `g.ndata`,
        `g.edata`; one node and one edge type). Features are `g.ndata[feat]`, labels
        `g.ndata[label]` (absent: unlabeled), masks `train_mask`, `val_mask`, `test_mask` of
        `g.ndata` ([N] or [N, S], as DGL's datasets store them); edge weights `g.edata[weight]`
        when `weight` is given. The edges are taken as from_edge_index takes PyG's (one O(E)
        copy, duplicates dropped, self loops kept, no reverse edges added: DGL's datasets store
        both directions of an undirected graph, as PyG's do)."""
        ntypes = getattr(g, "ntypes", None)
        etypes = getattr(g, "canonical_etypes", None)
        if (ntypes is not None and len(ntypes) != 1) or (etypes is not None and len(etypes) != 1):
            raise _strata.Error(f"Graph: from_dgl takes a graph of one node and one edge type, "
                                f"got node types {list(ntypes or [])} and edge types "
                                f"{list(etypes or [])}")
        ndata = g.ndata
        if feat not in ndata:
            raise _strata.Error(f"Graph: from_dgl: g.ndata has no '{feat}' (features); it has "
                                f"{sorted(ndata.keys())}")

        def get(store, key):
            return store[key] if key is not None and key in store else None

        copies: list[str] = []
        src, dst = g.edges()
        src = _array(src, np.int64, "src", copies, ndim=1)
        dst = _array(dst, np.int64, "dst", copies, ndim=1)
        w = None
        if weight is not None:
            w = get(g.edata, weight)
            if w is None:
                raise _strata.Error(f"Graph: from_dgl: g.edata has no '{weight}' (edge weights); "
                                    f"it has {sorted(g.edata.keys())}")
        return cls._from_edges(
            src, dst, ndata[feat], get(ndata, label), get(ndata, "train_mask"),
            get(ndata, "val_mask"), get(ndata, "test_mask"), copies,
            num_nodes=int(g.num_nodes()), num_classes=num_classes, edge_weight=w, name="")

    def slice(self, first: int, last: int):
        """Rows [first, last) as a strata.GraphSlice (a copy): what one rank of a run on per-rank
        slices would give."""
        from .slice import slice_of
        return slice_of(self, first, last)

    # ---- out
    def to_pyg(self):
        """A PyTorch Geometric `Data` with edge_index [2, E] (sorted by destination), x, y,
        edge_weight (when stored), masks in PyG's layout ([N] bool for one split, else [N, S]).
        The tensors are copies (torch wants writable memory; this graph's arrays are read-only)."""
        import torch
        from torch_geometric.data import Data
        indptr = self.indptr
        dst = np.repeat(np.arange(self.num_nodes, dtype=np.int64), np.diff(indptr))
        edge_index = torch.from_numpy(np.stack([self.indices, dst]))
        kw = {}
        if self.edge_weight is not None:
            kw["edge_weight"] = torch.from_numpy(self.edge_weight.copy())
        masks = {k: torch.from_numpy(self._pyg_mask(i)) for i, k in
                 enumerate(("train_mask", "val_mask", "test_mask"))}
        return Data(x=torch.from_numpy(np.array(self.x)), edge_index=edge_index,
                    y=torch.from_numpy(np.array(self.y)), num_nodes=self.num_nodes,
                    **masks, **kw)

    def _pyg_mask(self, which: int) -> np.ndarray:
        m = self._g._mask(which).astype(bool)
        return m[0].copy() if m.shape[0] == 1 else np.ascontiguousarray(m.T)

    def save(self, path: str | os.PathLike, *, overwrite: bool = False) -> None:
        """Writes the graph file (validated, atomic, with its content id)."""
        self._g.save(os.fspath(path), overwrite)

    def validate(self) -> None:
        """Checks every invariant of docs/format.md; raises strata.Error naming the first."""
        self._g.validate()

    # ---- properties (arrays are views that keep the graph alive)
    num_nodes = property(lambda self: self._g.num_nodes)
    num_edges = property(lambda self: self._g.num_edges)
    num_features = property(lambda self: self._g.num_features)
    num_classes = property(lambda self: self._g.num_classes)
    num_splits = property(lambda self: self._g.num_splits)
    name = property(lambda self: self._g.name)
    content_id = property(lambda self: self._g.content_id)
    copies = property(lambda self: list(self._g.copies),
                      doc="The copies made while building this graph, one line each.")
    indptr = property(lambda self: self._g.indptr)
    indices = property(lambda self: self._g.indices)
    edge_weight = property(lambda self: self._g.edge_weight)
    x = property(lambda self: self._g.x)
    y = property(lambda self: self._g.y)
    train_mask = property(lambda self: self._g._mask(0), doc="[S, N] uint8")
    val_mask = property(lambda self: self._g._mask(1), doc="[S, N] uint8")
    test_mask = property(lambda self: self._g._mask(2), doc="[S, N] uint8")

    def __repr__(self) -> str:
        return (f"Graph({self.name or 'unnamed'}: {self.num_nodes} nodes, {self.num_edges} "
                f"edges, {self.num_features} features, {self.num_classes} classes, "
                f"{self.num_splits} split(s))")


def load(path: str | os.PathLike) -> Graph:
    """strata.load(path) = Graph.load(path)."""
    return Graph.load(path)
