"""A graph from numpy/scipy arrays: a stochastic block model (4 communities) with random
features, trained with GraphSAGE.    .venv/bin/python examples/python/numpy_graph.py"""
import numpy as np
import scipy.sparse as sp

import strata

rng = np.random.default_rng(0)
n, k, f = 2000, 4, 32
y = rng.integers(0, k, n)
src, dst = rng.integers(0, n, 40000), rng.integers(0, n, 40000)
keep = (y[src] == y[dst]) | (rng.random(src.size) < 0.1)        # mostly within a community
a = sp.coo_matrix((np.ones(keep.sum()), (src[keep], dst[keep])), shape=(n, n))
a = ((a + a.T) > 0).astype(np.float32)                            # undirected, no duplicates
x = (rng.normal(size=(n, f)) + np.eye(k)[y] @ rng.normal(size=(k, f))).astype(np.float32)
split = rng.permutation(n)
masks = [np.isin(np.arange(n), split[a:b]) for a, b in ((0, 200), (200, 700), (700, n))]

graph = strata.Graph.from_scipy(a, x, y, *masks)   # rows="source": A[u, v] is an edge u -> v
print(graph, "copies:", graph.copies)              # scipy's int32 indices are widened: listed
trainer = strata.Trainer(graph, model="sage", epochs=100, seed=1)
result = trainer.fit()
print(f"test accuracy {result.test_acc:.4f} (best epoch {result.best_epoch})")
