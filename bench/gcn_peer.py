#!/usr/bin/python3
"""Peers of bench/epoch: the GCN strata trains, on the same .h5 graph and the same threads,
full batch, Adam lr 0.01, dropout 0.5 on the input and after every hidden ReLU, mean
cross-entropy over the training vertices.

  --impl torch      plain PyTorch: Â = D^-1/2 (A + I) D^-1/2 built in numpy, torch.sparse CSR.
  --impl pyg        PyTorch Geometric: Â from gcn_norm, PyG's spmm over a sparse adjacency and
                    torch_geometric.nn.Linear, in strata's order per layer.
  --impl pyg-stock  PyTorch Geometric's stock GCNConv(cached=True) over the sparse adjacency
                    (it always transforms first).

The order per layer is strata's (layers/gcn_model.cpp): aggregate first (Â X then · W) when the
layer does not narrow the width (out >= in), else transform first. `edge_index` message passing
would materialise E x F messages; all three use a sparse adjacency.

Usage: gcn_peer.py GRAPH.h5 --impl torch|pyg|pyg-stock [--hidden 256] [--layers 3]
       [--epochs 6] [--threads 2]
Prints one JSON object: median training step and evaluation forward pass (epochs >= 2).
"""
import argparse
import json
import statistics
import sys
import time

import h5py
import numpy as np
import torch

parser = argparse.ArgumentParser()
parser.add_argument("graph")
parser.add_argument("--impl", choices=["torch", "pyg", "pyg-stock"], required=True)
parser.add_argument("--hidden", type=int, default=256)
parser.add_argument("--layers", type=int, default=3)
parser.add_argument("--epochs", type=int, default=6)
parser.add_argument("--threads", type=int, default=2)
args = parser.parse_args()
torch.set_num_threads(args.threads)
torch.manual_seed(1)

with h5py.File(args.graph, "r") as f:
    indptr = f["/graph/indptr"][:]
    indices = f["/graph/indices"][:]
    x = torch.from_numpy(f["/node/features"][:])
    y = torch.from_numpy(f["/node/labels"][:].astype(np.int64))
    train_mask = f["/node/train_mask"][:].astype(bool)  # [S, N] (format >= 2) or [N]
    train = torch.from_numpy(train_mask[0] if train_mask.ndim == 2 else train_mask)
    classes = int(f.attrs["num_classes"])
n = len(indptr) - 1
dst = np.repeat(np.arange(n), np.diff(indptr))  # row = destination, column = source
dims = [x.shape[1]] + [args.hidden] * (args.layers - 1) + [classes]
aggregate_first = [dims[i + 1] >= dims[i] for i in range(args.layers)]

if args.impl == "torch":
    rows = np.concatenate([dst, np.arange(n)])
    cols = np.concatenate([indices, np.arange(n)])
    deg = np.bincount(rows, minlength=n).astype(np.float32)
    vals = (1.0 / np.sqrt(deg[rows] * deg[cols])).astype(np.float32)
    adj = torch.sparse_coo_tensor(np.vstack([rows, cols]), vals, (n, n)).coalesce().to_sparse_csr()
    weights = [torch.nn.Parameter(torch.empty(dims[i], dims[i + 1])) for i in range(args.layers)]
    biases = [torch.nn.Parameter(torch.zeros(dims[i + 1])) for i in range(args.layers)]
    for w in weights:
        torch.nn.init.xavier_uniform_(w)
    params = weights + biases

    def layer(i, h):
        if aggregate_first[i]:
            return (adj @ h) @ weights[i] + biases[i]
        return adj @ (h @ weights[i]) + biases[i]
else:
    import torch_geometric
    from torch_geometric.nn import GCNConv, Linear
    from torch_geometric.nn.conv.gcn_conv import gcn_norm
    from torch_geometric.utils import spmm

    edge_index = torch.from_numpy(np.vstack([indices, dst]).astype(np.int64))  # source -> target
    if args.impl == "pyg-stock":
        convs = torch.nn.ModuleList(
            GCNConv(dims[i], dims[i + 1], cached=True) for i in range(args.layers))
        # PyG's sparse form: adj_t[target, source]
        adj_t = torch.sparse_coo_tensor(
            torch.stack([edge_index[1], edge_index[0]]), torch.ones(edge_index.shape[1]),
            (n, n)).coalesce().to_sparse_csr()
        params = list(convs.parameters())

        def layer(i, h):
            return convs[i](h, adj_t)
    else:
        ei, ew = gcn_norm(edge_index, None, n, add_self_loops=True)
        adj_t = torch.sparse_coo_tensor(torch.stack([ei[1], ei[0]]), ew,
                                        (n, n)).coalesce().to_sparse_csr()
        lins = torch.nn.ModuleList(
            Linear(dims[i], dims[i + 1], bias=False, weight_initializer="glorot")
            for i in range(args.layers))
        biases = torch.nn.ParameterList(
            torch.nn.Parameter(torch.zeros(dims[i + 1])) for i in range(args.layers))
        params = list(lins.parameters()) + list(biases.parameters())

        def layer(i, h):
            if aggregate_first[i]:
                return lins[i](spmm(adj_t, h)) + biases[i]
            return spmm(adj_t, lins[i](h)) + biases[i]

opt = torch.optim.Adam(params, lr=0.01)


def forward(training):
    h = x
    for i in range(args.layers):
        h = torch.nn.functional.dropout(h, 0.5, training=training)
        h = layer(i, h)
        if i + 1 < args.layers:
            h = torch.relu(h)
    return h


steps, evals = [], []
for epoch in range(args.epochs):
    start = time.perf_counter()
    opt.zero_grad()
    out = forward(True)
    loss = torch.nn.functional.cross_entropy(out[train], y[train])
    loss.backward()
    opt.step()
    steps.append(time.perf_counter() - start)
    start = time.perf_counter()
    with torch.no_grad():
        forward(False).argmax(dim=1)
    evals.append(time.perf_counter() - start)
    print(f"{args.impl} epoch {epoch + 1}: step {steps[-1]:.3f} s, eval {evals[-1]:.3f} s, "
          f"loss {loss.item():.4f}", file=sys.stderr)
report = {"impl": args.impl, "torch": torch.__version__, "threads": args.threads,
          "median_step_s": statistics.median(steps[1:] or steps),
          "median_eval_s": statistics.median(evals[1:] or evals),
          "aggregate_first": aggregate_first}
if args.impl != "torch":
    report["torch_geometric"] = torch_geometric.__version__
print(json.dumps(report))
