#!/usr/bin/python3
"""Baseline for bench/epoch: the same 3-layer GCN written in plain PyTorch (torch.sparse.mm),
full-batch, Adam, dropout 0.5, on the same .h5 graph and the same number of threads.
Prints the median epoch time (epochs >= 2) as JSON."""
import json
import statistics
import sys
import time

import h5py
import numpy as np
import torch

path, hidden, layers, epochs, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(
    sys.argv[4]), int(sys.argv[5])
torch.set_num_threads(threads)
torch.manual_seed(1)
with h5py.File(path, "r") as f:
    indptr = f["/graph/indptr"][:]
    indices = f["/graph/indices"][:]
    x = torch.from_numpy(f["/node/features"][:])
    y = torch.from_numpy(f["/node/labels"][:])
    train_mask = f["/node/train_mask"][:].astype(bool)  # [S, N] (format 2) or [N] (format 1)
    train = torch.from_numpy(train_mask[0] if train_mask.ndim == 2 else train_mask)
    classes = int(f.attrs["num_classes"])
n = len(indptr) - 1
rows = np.repeat(np.arange(n), np.diff(indptr))
# Â = D^-1/2 (A + I) D^-1/2
rows = np.concatenate([rows, np.arange(n)])
cols = np.concatenate([indices, np.arange(n)])
deg = np.bincount(rows, minlength=n).astype(np.float32)
vals = (1.0 / np.sqrt(deg[rows] * deg[cols])).astype(np.float32)
a_hat = torch.sparse_coo_tensor(np.vstack([rows, cols]), vals, (n, n)).coalesce().to_sparse_csr()

dims = [x.shape[1]] + [hidden] * (layers - 1) + [classes]
weights = [torch.nn.Parameter(torch.empty(dims[i], dims[i + 1])) for i in range(layers)]
biases = [torch.nn.Parameter(torch.zeros(dims[i + 1])) for i in range(layers)]
for w in weights:
    torch.nn.init.xavier_uniform_(w)
opt = torch.optim.Adam(weights + biases, lr=0.01)
times = []
for epoch in range(epochs):
    start = time.perf_counter()
    opt.zero_grad()
    h = x
    for i in range(layers):
        h = torch.nn.functional.dropout(h, 0.5, training=True)
        h = a_hat @ (h @ weights[i]) + biases[i]
        if i + 1 < layers:
            h = torch.relu(h)
    loss = torch.nn.functional.cross_entropy(h[train], y[train])
    loss.backward()
    opt.step()
    times.append(time.perf_counter() - start)
    print(f"torch epoch {epoch + 1}: {times[-1]:.3f} s loss {loss.item():.4f}", file=sys.stderr)
print(json.dumps({"median_epoch_s": statistics.median(times[1:] or times)}))
