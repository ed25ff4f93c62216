"""Resident memory that strata.Graph.from_arrays adds over the caller's arrays (issue 32's
zero-copy target: <= 5 % of the arrays' bytes), on a random graph of N vertices (default 2.4M),
average in-degree D, F float32 features; int64 CSC indptr/indices.
    .venv/bin/python python/bench/zero_copy_rss.py [N] [D] [F]"""
import sys

import numpy as np

import strata


def rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_400_000
d = int(sys.argv[2]) if len(sys.argv) > 2 else 10
f = int(sys.argv[3]) if len(sys.argv) > 3 else 32
rng = np.random.default_rng(0)
indptr = np.arange(0, (n + 1) * d, d, dtype=np.int64)
indices = rng.integers(0, n, n * d, dtype=np.int64)
x = rng.random((n, f), dtype=np.float32)
y = rng.integers(0, 10, n, dtype=np.int64)
masks = [(rng.random(n) < p).astype(np.uint8).reshape(1, n) for p in (0.1, 0.1, 0.1)]
arrays = indptr.nbytes + indices.nbytes + x.nbytes + y.nbytes + sum(m.nbytes for m in masks)
graph_arrays = indptr.nbytes + indices.nbytes + x.nbytes
before = rss()
g = strata.Graph.from_arrays(indptr, indices, x, y, *masks, num_classes=10)
after = rss()
added = after - before
print(f"N={n} E={n * d} F={f}: CSC indptr+indices+x {graph_arrays / 1e6:.1f} MB "
      f"(all arrays {arrays / 1e6:.1f} MB); resident before {before / 1e6:.1f} MB, after "
      f"{after / 1e6:.1f} MB: +{added / 1e6:.2f} MB = {100 * added / graph_arrays:.2f} % of "
      f"indptr+indices+x; copies: {g.copies}")
