#!/usr/bin/python3
"""Baseline of bench/gpu_epoch: the same GCN in PyTorch Geometric on the graph bench_gpu_epoch
wrote as .npy files (indptr int64, indices int32, features float32 N x F, labels int64,
train_mask bool).

Model, as layers/model_builder.cpp builds ours: [dropout 0.5 -> GCNConv -> ReLU] x (layers-1),
dropout 0.5 -> GCNConv; hidden width `hidden`; Adam lr 0.01 with weight decay 5e-4 (L2) on the
first layer's weight only; full batch; mean cross-entropy over the training vertices.
Â is PyG's own normalization (GCNConv(cached=True), add_self_loops). The adjacency goes in as a
sparse matrix (torch_sparse.SparseTensor if torch_sparse imports, else a torch sparse CSR
tensor): edge_index message passing would materialize E x F messages (120M x 256 x 4 B =
123 GB). Without torch_geometric, or if it fails, the same model runs in plain torch
(torch.sparse.mm with Â built in numpy, as bench/gcn_peer.py --impl torch does).

Usage: gpu_epoch_pyg.py NPY_DIR HIDDEN LAYERS EPOCHS WARMUP DEVICE(cuda|cpu)
Prints one JSON object on stdout (progress on stderr); out-of-memory is reported in it.
"""
import json
import os
import statistics
import sys
import time
import traceback

import numpy as np
import torch

npy_dir, hidden, layers, epochs, warmup, device = (sys.argv[1], int(sys.argv[2]),
                                                   int(sys.argv[3]), int(sys.argv[4]),
                                                   int(sys.argv[5]), sys.argv[6])
dev = torch.device(device)
report = {"bench": "gpu_epoch_pyg", "device": device, "torch": torch.__version__,
          "hidden": hidden, "layers": layers, "epochs": epochs, "warmup": warmup}
if device == "cuda":
    report["gpu"] = torch.cuda.get_device_name(0)
    report["matmul_allow_tf32"] = torch.backends.cuda.matmul.allow_tf32  # ours: plain FP32


def log(message):
    print(f"gpu_epoch_pyg: {message}", file=sys.stderr, flush=True)


def sync():
    if device == "cuda":
        torch.cuda.synchronize()


def is_oom(error):
    oom = getattr(torch.cuda, "OutOfMemoryError", ())
    return (oom and isinstance(error, oom)) or "out of memory" in str(error).lower()


def load():
    arrays = {name: np.load(os.path.join(npy_dir, name + ".npy"))
              for name in ("indptr", "indices", "features", "labels", "train_mask")}
    n = len(arrays["indptr"]) - 1
    assert arrays["indptr"][-1] == len(arrays["indices"]), "indptr[-1] != len(indices)"
    assert arrays["features"].shape[0] == n and arrays["labels"].shape == (n,)
    return n, arrays


def pyg_model(in_dim, classes):
    """GCNConv stack; the adjacency (a sparse N x N, rows = destinations) and its kind."""
    from torch_geometric.nn import GCNConv

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            dims = [in_dim] + [hidden] * (layers - 1) + [classes]
            self.convs = torch.nn.ModuleList(
                GCNConv(dims[i], dims[i + 1], cached=True, add_self_loops=True)
                for i in range(layers))

        def forward(self, x, adj):
            for i, conv in enumerate(self.convs):
                x = torch.nn.functional.dropout(x, 0.5, training=self.training)
                x = conv(x, adj)
                if i + 1 < layers:
                    x = torch.relu(x)
            return x

    model = Net()
    first = getattr(model.convs[0], "lin", model.convs[0]).weight  # PyG >= 2.0: conv.lin
    others = [p for p in model.parameters() if p is not first]
    groups = [{"params": [first], "weight_decay": 5e-4}, {"params": others, "weight_decay": 0.0}]
    return model, groups


def pyg_adjacency(n, indptr, indices):
    rowptr = torch.from_numpy(indptr)
    col = torch.from_numpy(indices.astype(np.int64))
    try:
        from torch_sparse import SparseTensor
        adj = SparseTensor(rowptr=rowptr, col=col, sparse_sizes=(n, n))
        return adj.to(dev), "torch_sparse.SparseTensor"
    except ImportError:
        values = torch.ones(len(indices), dtype=torch.float32)
        adj = torch.sparse_csr_tensor(rowptr, col, values, size=(n, n))
        return adj.to(dev), "torch.sparse_csr_tensor"


class PlainGcn(torch.nn.Module):
    """The same model in plain torch: h <- Â (dropout(h) W) + b."""

    def __init__(self, in_dim, classes):
        super().__init__()
        dims = [in_dim] + [hidden] * (layers - 1) + [classes]
        self.weights = torch.nn.ParameterList(
            torch.nn.Parameter(torch.empty(dims[i], dims[i + 1])) for i in range(layers))
        self.biases = torch.nn.ParameterList(
            torch.nn.Parameter(torch.zeros(dims[i + 1])) for i in range(layers))
        for w in self.weights:
            torch.nn.init.xavier_uniform_(w)

    def forward(self, x, a_hat):
        for i in range(layers):
            x = torch.nn.functional.dropout(x, 0.5, training=self.training)
            x = torch.sparse.mm(a_hat, x @ self.weights[i]) + self.biases[i]
            if i + 1 < layers:
                x = torch.relu(x)
        return x


def plain_model(n, arrays, classes):
    """Â = D^-1/2 (A + I) D^-1/2 built in numpy (as bench/gcn_peer.py --impl torch), and PlainGcn."""
    indptr, indices = arrays["indptr"], arrays["indices"]
    rows = np.concatenate([np.repeat(np.arange(n), np.diff(indptr)), np.arange(n)])
    cols = np.concatenate([indices.astype(np.int64), np.arange(n)])
    deg = np.bincount(rows, minlength=n).astype(np.float32)
    vals = (1.0 / np.sqrt(deg[rows] * deg[cols])).astype(np.float32)
    a_hat = torch.sparse_coo_tensor(np.vstack([rows, cols]), vals,
                                    (n, n)).coalesce().to_sparse_csr().to(dev)
    model = PlainGcn(arrays["features"].shape[1], classes)
    groups = [{"params": [model.weights[0]], "weight_decay": 5e-4},
              {"params": list(model.weights[1:]) + list(model.biases), "weight_decay": 0.0}]
    return model, groups, a_hat


def train(model, groups, adj, x, y, mask):
    model = model.to(dev)
    opt = torch.optim.Adam(groups, lr=0.01)
    times = []
    for epoch in range(1, warmup + epochs + 1):
        model.train()
        sync()
        start = time.perf_counter()
        opt.zero_grad()
        out = model(x, adj)
        loss = torch.nn.functional.cross_entropy(out[mask], y[mask])
        loss.backward()
        opt.step()
        sync()
        step = time.perf_counter() - start
        if epoch > warmup:
            times.append(step)
        log(f"epoch {epoch}{'' if epoch > warmup else ' (warm-up)'}: "
            f"step {step:.3f} s loss {loss.item():.4f}")
    return times


def main():
    torch.manual_seed(1)
    start = time.perf_counter()
    n, arrays = load()
    classes = int(arrays["labels"].max()) + 1
    report["graph"] = {"vertices": n, "directed_edges": int(len(arrays["indices"])),
                       "features": int(arrays["features"].shape[1]), "classes": classes}
    x = torch.from_numpy(arrays["features"]).to(dev)
    y = torch.from_numpy(arrays["labels"]).to(dev)
    mask = torch.from_numpy(arrays["train_mask"]).to(dev)
    log(f"loaded {n} vertices, {len(arrays['indices'])} edges in "
        f"{time.perf_counter() - start:.1f} s")
    times = None
    try:
        import torch_geometric
        report["torch_geometric"] = torch_geometric.__version__
        model, groups = pyg_model(x.shape[1], classes)
        adj, kind = pyg_adjacency(n, arrays["indptr"], arrays["indices"])
        report["baseline"] = "PyG GCNConv"
        report["adjacency"] = kind
        times = train(model, groups, adj, x, y, mask)
    except ImportError as error:
        report["baseline_note"] = f"torch_geometric does not import: {error}"
    except Exception as error:  # noqa: BLE001 - reported, then the plain-torch model runs
        if is_oom(error):
            raise
        report["pyg_error"] = f"{type(error).__name__}: {error}"
        log("PyG failed, running plain torch instead:\n" + traceback.format_exc())
    if times is None:
        model = adj = None
        if device == "cuda":
            torch.cuda.empty_cache()
        model, groups, a_hat = plain_model(n, arrays, classes)
        report["baseline"] = "plain torch (no PyG)"
        report["adjacency"] = "torch.sparse_csr_tensor (Â built in numpy)"
        times = train(model, groups, a_hat, x, y, mask)
    report["step_s"] = statistics.median(times)
    report["step_times_s"] = times


try:
    main()
    report["oom"] = False
except Exception as error:  # noqa: BLE001 - out-of-memory goes into the JSON, others re-raise
    if not is_oom(error):
        raise
    report["oom"] = True
    report["error"] = f"{type(error).__name__}: {error}"[:2000]
    log(f"out of memory: {report['error'][:300]}")
if device == "cuda":
    report["peak_gpu_memory_bytes"] = torch.cuda.max_memory_allocated()
print(json.dumps(report))
