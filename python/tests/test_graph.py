"""strata.Graph: files, arrays, scipy, edge_index and PyG in and out; copies reported."""

import numpy as np
import pytest

import strata
from support import CORA


@pytest.fixture(scope="module")
def cora():
    return strata.datasets.cora()


def test_load_reads_cora(cora):
    assert (cora.num_nodes, cora.num_edges, cora.num_features, cora.num_classes) == \
        (2708, 10556, 1433, 7)
    assert cora.indptr.dtype == np.int64 and cora.x.dtype == np.float32
    assert cora.x.shape == (2708, 1433) and cora.train_mask.shape == (1, 2708)
    assert int(cora.train_mask.sum()) == 140
    assert cora.content_id.startswith("content64:")


def test_arrays_are_views_that_keep_the_graph_alive():
    g = strata.load(CORA)
    x = g.x
    assert not x.flags.owndata and not x.flags.writeable
    first = x[0].copy()
    del g
    assert np.array_equal(x[0], first)


def test_from_arrays_round_trip_keeps_the_content(cora, tmp_path):
    g = strata.Graph.from_arrays(cora.indptr, cora.indices, cora.x, cora.y, cora.train_mask,
                                 cora.val_mask, cora.test_mask, num_classes=7, name="cora")
    assert g.copies == []
    assert g.content_id == cora.content_id
    g.save(tmp_path / "g.h5")
    assert strata.load(tmp_path / "g.h5").content_id == cora.content_id


def test_conversions_are_copies_listed_and_refusable(cora):
    g = strata.Graph.from_arrays(cora.indptr.astype(np.int32), cora.indices.astype(np.int32),
                                 cora.x.astype(np.float64), cora.y, num_classes=7)
    assert g.copies == ["indptr: int32 -> int64, 2709 values copied",
                        "indices: int32 -> int64, 10556 values copied",
                        "x: float64 -> float32, 3880564 values copied"]
    with pytest.raises(strata.Error, match="copy=False, but x: float64 -> float32"):
        strata.Graph.from_arrays(cora.indptr, cora.indices, cora.x.astype(np.float64),
                                 cora.y, copy=False)


def test_invalid_arrays_raise_the_format_message():
    with pytest.raises(strata.Error, match=r"Graph: .*indices"):
        strata.Graph.from_arrays(np.array([0, 1, 2]), np.array([0, 5]),
                                 np.zeros((2, 3), np.float32), np.array([0, 1]))


def test_edge_index_sorted_by_destination_duplicates_dropped_self_loops_kept():
    ei = np.array([[1, 2, 0, 1, 2], [0, 0, 1, 0, 2]])  # 1->0 twice, 2->2 a self loop
    g = strata.Graph.from_edge_index(ei, np.eye(3, dtype=np.float32), np.array([0, 1, 0]))
    assert g.indptr.tolist() == [0, 2, 3, 4]
    assert g.indices.tolist() == [1, 2, 0, 2]
    assert g.copies == ["edge_index: sorted by destination, 4 edges copied (1 duplicates dropped)"]


def test_scipy_rows_source_is_the_pyg_convention():
    import scipy.sparse as sp
    a = sp.coo_matrix((np.ones(2), ([0, 0], [1, 2])), shape=(3, 3))  # edges 0->1, 0->2
    x = np.eye(3, dtype=np.float32)
    g = strata.Graph.from_scipy(a, x, np.array([0, 1, 1]))
    assert g.indptr.tolist() == [0, 0, 1, 2] and g.indices.tolist() == [0, 0]
    d = strata.Graph.from_scipy(a, x, np.array([0, 1, 1]), rows="destination")
    assert d.indptr.tolist() == [0, 2, 2, 2] and d.indices.tolist() == [1, 2]


def test_pyg_round_trip_is_lossless(cora):
    pytest.importorskip("torch_geometric")
    data = cora.to_pyg()
    assert data.edge_index.shape == (2, 10556) and data.train_mask.dtype.is_floating_point is False
    back = strata.Graph.from_pyg(data)
    assert back.content_id == strata.Graph.from_arrays(
        cora.indptr, cora.indices, cora.x, cora.y, cora.train_mask, cora.val_mask,
        cora.test_mask, num_classes=7).content_id
    assert back.copies == ["edge_index: sorted by destination, 10556 edges copied"]
    for k in ("indptr", "indices", "x", "y", "train_mask", "val_mask", "test_mask"):
        assert np.array_equal(getattr(back, k), getattr(cora, k)), k


def test_pyg_masks_with_several_splits_are_transposed():
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_geometric")
    from torch_geometric.data import Data
    n = 4
    masks = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=torch.bool)  # [N, S]
    data = Data(x=torch.eye(n), edge_index=torch.tensor([[0, 1], [1, 2]]),
                y=torch.tensor([0, 1, 0, 1]), train_mask=masks, val_mask=~masks,
                test_mask=torch.zeros(n, 2, dtype=torch.bool), num_nodes=n)
    g = strata.Graph.from_pyg(data)
    assert g.num_splits == 2
    assert g.train_mask.tolist() == [[1, 0, 1, 0], [0, 1, 1, 0]]
    assert np.array_equal(g.to_pyg().train_mask.numpy(), masks.numpy())


def test_arrays_of_the_right_dtype_are_viewed_not_copied(cora):
    indptr, indices, x, y = (np.array(a) for a in (cora.indptr, cora.indices, cora.x, cora.y))
    train = np.array(cora.train_mask[0]).astype(bool)  # PyG's [N] bool: viewed as uint8
    g = strata.Graph.from_arrays(indptr, indices, x, y, train, num_classes=7)
    assert g.copies == []
    for mine, given in ((g.indptr, indptr), (g.indices, indices), (g.x, x), (g.y, y),
                        (g.train_mask, train)):
        assert mine.__array_interface__["data"][0] == given.ctypes.data
    del indptr, indices, x, y  # the graph keeps the caller's arrays alive
    assert g.content_id == strata.Graph.from_arrays(
        cora.indptr, cora.indices, cora.x, cora.y, cora.train_mask, num_classes=7).content_id


def test_from_pyg_views_x_and_y_and_copies_only_the_edges(cora):
    pytest.importorskip("torch_geometric")
    data = cora.to_pyg()
    g = strata.Graph.from_pyg(data)
    assert g.x.__array_interface__["data"][0] == data.x.data_ptr()
    assert g.y.__array_interface__["data"][0] == data.y.data_ptr()
    assert len(g.copies) == 1 and g.copies[0].startswith("edge_index: sorted by destination")


class FakeDGLGraph:
    """What Graph.from_dgl reads of a dgl.DGLGraph (DGL is not installed here): edges(),
    num_nodes(), ndata, edata, one node and one edge type."""

    def __init__(self, src, dst, n, ndata, edata=None):
        self._src, self._dst, self._n = src, dst, n
        self.ndata, self.edata = ndata, edata or {}
        self.ntypes = ["_N"]
        self.canonical_etypes = [("_N", "_E", "_N")]

    def edges(self):
        return self._src, self._dst

    def num_nodes(self):
        return self._n


def test_from_dgl_equals_the_graph_it_was_made_from(cora):
    dst = np.repeat(np.arange(cora.num_nodes), np.diff(cora.indptr))
    order = np.random.default_rng(1).permutation(dst.size)  # DGL's edges in no special order
    g = FakeDGLGraph(np.array(cora.indices)[order], dst[order], cora.num_nodes,
                     {"feat": cora.x, "label": cora.y,
                      "train_mask": cora.train_mask[0].astype(bool),
                      "val_mask": cora.val_mask[0].astype(bool),
                      "test_mask": cora.test_mask[0].astype(bool)})
    back = strata.Graph.from_dgl(g, num_classes=7)
    assert back.content_id == strata.Graph.from_arrays(
        cora.indptr, cora.indices, cora.x, cora.y, cora.train_mask, cora.val_mask,
        cora.test_mask, num_classes=7).content_id
    assert back.copies == ["edge_index: sorted by destination, 10556 edges copied"]
    assert back.x.__array_interface__["data"][0] == cora.x.__array_interface__["data"][0]


def test_from_dgl_torch_tensors_weights_and_missing_keys():
    torch = pytest.importorskip("torch")
    src, dst = torch.tensor([0, 1, 1], dtype=torch.int32), torch.tensor([1, 2, 2])
    ndata = {"h": torch.eye(3), "label": torch.tensor([0, 1, 1])}
    g = FakeDGLGraph(src, dst, 3, ndata, {"w": torch.tensor([0.5, 2.0, 3.0])})
    out = strata.Graph.from_dgl(g, feat="h", weight="w")
    assert out.indptr.tolist() == [0, 0, 1, 2] and out.indices.tolist() == [0, 1]
    assert out.edge_weight.tolist() == [0.5, 2.0]  # the duplicate 1->2 dropped, the first kept
    assert out.copies == ["src: int32 -> int64, 3 values copied",
                          "edge_index: sorted by destination, 2 edges copied (1 duplicates "
                          "dropped)"]
    with pytest.raises(strata.Error, match=r"g.ndata has no 'feat' \(features\); it has "
                                           r"\['h', 'label'\]"):
        strata.Graph.from_dgl(g)
    with pytest.raises(strata.Error, match="g.edata has no 'weight'"):
        strata.Graph.from_dgl(g, feat="h", weight="weight")
    g.ntypes = ["user", "item"]
    with pytest.raises(strata.Error, match="one node and one edge type"):
        strata.Graph.from_dgl(g, feat="h")
