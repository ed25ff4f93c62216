#!/usr/bin/python3
"""Peer for Strata's GCNII: GCNII (Chen et al. 2020, "Simple and Deep Graph Convolutional
Networks", the authors' model.py and train.py) on Cora in plain PyTorch (no PyG), CPU.

Recipe (the paper's Cora setting): 64 layers, hidden 64, lambda 0.5, alpha 0.1, dropout 0.6,
Adam lr 0.01 with two parameter groups (weight decay 0.01 on the conv weights W_l, 5e-4 on
fc_in/fc_out, their biases included), at most 1500 epochs, patience 100 on the validation loss,
test accuracy of the epoch with the best validation loss.

    h0 = ReLU(fc_in(dropout(X)))
    layer l = 1..L:  t = Â·dropout(h);  s = (1-α) t + α h0;  θ = ln(λ/l + 1)
                     h = ReLU(θ·(s W_l) + (1-θ)·s)
    logits = fc_out(dropout(h))

X: dense features, each row divided by its sum; Â = D^-1/2 (A+I) D^-1/2 as a torch sparse
matrix (COO by default, as the authors' torch.spmm; --sparse csr). Data: a Strata graph file
(docs/format.md; the public Planetoid split masks are in data/cora.h5).

    /usr/bin/python3 bench/gcnii_torch.py --threads 2                      # full training
    /usr/bin/python3 bench/gcnii_torch.py --threads 2 --timing-epochs 50   # ms per epoch only
"""
import argparse
import copy
import json
import math
import os
import random
import statistics
import sys
import time

# Threads that wait for work sleep instead of spinning (set before torch loads libgomp; an
# OMP_WAIT_POLICY in the environment wins). On a shared machine spinning costs the peer up to 13x
# (GCNII-64 on Cora, 2 threads, load 4-5: 4448 ms/epoch spinning, 338 ms passive).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path, sparse):
    """Row-normalized dense features, Â (sparse), labels and the three split masks."""
    with h5py.File(path, "r") as f:
        indptr = f["graph/indptr"][:]
        indices = f["graph/indices"][:]
        x = f["node/features"][:].astype(np.float32)
        labels = torch.from_numpy(f["node/labels"][:].astype(np.int64))
        # Graph format 2 stores [S, N] masks (S splits); the public split is split 0.
        masks = [torch.from_numpy(np.atleast_2d(f["node/" + m][:])[0].astype(bool))
                 for m in ("train_mask", "val_mask", "test_mask")]
    n = len(indptr) - 1
    # Row v holds v's in-neighbours (docs/format.md); Cora stores both directions. Duplicate
    # entries count once (a 0/1 adjacency, as the authors' networkx matrix), then + I.
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    a = torch.sparse_coo_tensor(np.vstack([rows, indices]), np.ones(len(rows), np.float32),
                                (n, n)).coalesce()
    a = torch.sparse_coo_tensor(a.indices(), torch.ones_like(a.values()), (n, n))
    eye = torch.arange(n)
    a = (a + torch.sparse_coo_tensor(torch.vstack([eye, eye]), torch.ones(n), (n, n))).coalesce()
    deg = torch.sparse.sum(a, dim=1).to_dense()
    d = deg.pow(-0.5)
    r, c = a.indices()
    a_hat = torch.sparse_coo_tensor(a.indices(), d[r] * a.values() * d[c], (n, n)).coalesce()
    if sparse == "csr":
        a_hat = a_hat.to_sparse_csr()
    rowsum = np.abs(x).sum(axis=1, keepdims=True)  # strata's: unit L1 norm (= the sum if x >= 0)
    with np.errstate(divide="ignore"):
        inv = np.where(rowsum > 0, 1.0 / rowsum, 0.0).astype(np.float32)
    return torch.from_numpy(x * inv), a_hat, labels, masks


class GraphConvolution(nn.Module):
    """One GCNII layer without the outer ReLU: θ·(s W) + (1-θ)·s, s = (1-α) Â h + α h0."""

    def __init__(self, features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features, features))
        stdv = 1.0 / math.sqrt(features)  # the authors' reset_parameters
        self.weight.data.uniform_(-stdv, stdv)

    def forward(self, h, a_hat, h0, lamda, alpha, layer):
        theta = math.log(lamda / layer + 1)
        t = a_hat @ h
        s = (1 - alpha) * t + alpha * h0
        return theta * torch.mm(s, self.weight) + (1 - theta) * s


class GCNII(nn.Module):
    def __init__(self, features, layers, hidden, classes, dropout, lamda, alpha):
        super().__init__()
        self.convs = nn.ModuleList(GraphConvolution(hidden) for _ in range(layers))
        self.fcs = nn.ModuleList([nn.Linear(features, hidden), nn.Linear(hidden, classes)])
        self.dropout, self.lamda, self.alpha = dropout, lamda, alpha

    def forward(self, x, a_hat):
        x = F.dropout(x, self.dropout, training=self.training)
        h0 = torch.relu(self.fcs[0](x))
        h = h0
        for i, conv in enumerate(self.convs):
            h = F.dropout(h, self.dropout, training=self.training)
            h = torch.relu(conv(h, a_hat, h0, self.lamda, self.alpha, i + 1))
        h = F.dropout(h, self.dropout, training=self.training)
        return F.log_softmax(self.fcs[-1](h), dim=1)


def accuracy(logp, labels):
    return (logp.argmax(1) == labels).double().mean().item()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(ROOT, "data", "cora.h5"))
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: default)")
    p.add_argument("--epochs", type=int, default=1500)
    p.add_argument("--patience", type=int, default=100)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--layers", type=int, default=64)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lamda", type=float, default=0.5)
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--dropout", type=float, default=0.6)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--wd-conv", type=float, default=0.01, help="weight decay of the W_l")
    p.add_argument("--wd-fc", type=float, default=5e-4, help="weight decay of fc_in, fc_out")
    p.add_argument("--sparse", choices=("coo", "csr"), default="coo",
                   help="Â as COO (torch.sparse.mm, the authors' torch.spmm; faster here) or CSR")
    p.add_argument("--timing-epochs", type=int, default=0,
                   help="only time K training epochs (forward, backward, step) after 5 warm-up "
                        "epochs and print the mean ms/epoch")
    p.add_argument("--json", action="store_true", help="end with one JSON line of the results")
    args = p.parse_args()

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    x, a_hat, labels, (train, val, test) = load(args.data, args.sparse)
    model = GCNII(x.shape[1], args.layers, args.hidden, int(labels.max()) + 1, args.dropout,
                  args.lamda, args.alpha)
    optimizer = torch.optim.Adam([
        dict(params=model.convs.parameters(), weight_decay=args.wd_conv),
        dict(params=model.fcs.parameters(), weight_decay=args.wd_fc)], lr=args.lr)
    setup = (f"gcnii_torch: {os.path.basename(args.data)}, N={x.shape[0]}, F={x.shape[1]}, "
             f"nnz(Â)={a_hat._nnz()} ({args.sparse}), {args.layers} layers, hidden "
             f"{args.hidden}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
             f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}, "
             f"load {os.getloadavg()[0]:.2f}")
    print(setup, file=sys.stderr)

    def train_step():
        model.train()
        optimizer.zero_grad()
        logp = model(x, a_hat)
        loss = F.nll_loss(logp[train], labels[train])
        loss.backward()
        optimizer.step()
        return loss.item(), accuracy(logp[train], labels[train])

    def evaluate(mask):
        model.eval()
        with torch.no_grad():
            logp = model(x, a_hat)
        return F.nll_loss(logp[mask], labels[mask]).item(), accuracy(logp[mask], labels[mask])

    result = {"model": "gcnii", "layers": args.layers, "hidden": args.hidden,
              "threads": torch.get_num_threads(), "sparse": args.sparse, "seed": args.seed,
              "torch": torch.__version__, "omp_wait_policy": os.environ["OMP_WAIT_POLICY"]}
    if args.timing_epochs > 0:
        for _ in range(5):
            train_step()
        times = []
        for _ in range(args.timing_epochs):
            start = time.perf_counter()
            train_step()
            times.append(time.perf_counter() - start)
        result.update(timing_epochs=args.timing_epochs,
                      epoch_ms_mean=1e3 * statistics.mean(times),
                      epoch_ms_median=1e3 * statistics.median(times),
                      load=os.getloadavg()[0])
        print(f"train epoch (forward + backward + Adam step): mean {result['epoch_ms_mean']:.1f} "
              f"ms, median {result['epoch_ms_median']:.1f} ms over {args.timing_epochs} epochs "
              f"(after 5 warm-up), load {result['load']:.2f}")
    else:
        best_loss, best_epoch, best_state, bad = math.inf, 0, None, 0
        step_s, eval_s = [], []
        start_all = time.perf_counter()
        epoch = 0
        for epoch in range(1, args.epochs + 1):
            start = time.perf_counter()
            loss, train_acc = train_step()
            mid = time.perf_counter()
            val_loss, val_acc = evaluate(val)
            step_s.append(mid - start)
            eval_s.append(time.perf_counter() - mid)
            if epoch == 1 or epoch % 50 == 0:
                print(f"epoch {epoch:4d}  loss {loss:.4f}  train {train_acc:.4f}  val_loss "
                      f"{val_loss:.4f}  val {val_acc:.4f}  {1e3 * step_s[-1]:.1f} ms", flush=True)
            if val_loss < best_loss:
                best_loss, best_epoch, bad = val_loss, epoch, 0
                best_state = copy.deepcopy(model.state_dict())
            else:
                bad += 1
            if bad == args.patience:
                break
        total_s = time.perf_counter() - start_all
        model.load_state_dict(best_state)
        _, test_acc = evaluate(test)
        _, best_val_acc = evaluate(val)
        result.update(epochs_run=epoch, best_epoch=best_epoch, best_val_loss=best_loss,
                      val_acc=best_val_acc, test_acc=test_acc, total_s=total_s,
                      step_ms_mean=1e3 * statistics.mean(step_s),
                      epoch_ms_mean=1e3 * (total_s / epoch), load=os.getloadavg()[0])
        print(f"stopped after epoch {epoch}; best val loss {best_loss:.4f} at epoch {best_epoch} "
              f"(val acc {best_val_acc:.4f})")
        print(f"training step {result['step_ms_mean']:.1f} ms/epoch (mean), step + validation "
              f"{result['epoch_ms_mean']:.1f} ms/epoch, {total_s:.1f} s in all, load "
              f"{result['load']:.2f}")
        print(f"test_accuracy={test_acc:.4f}")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
