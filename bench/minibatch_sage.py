#!/usr/bin/env python3
"""The mini-batch peer of bench/time_to_accuracy: GraphSAGE trained on sampled neighbourhoods
(PyTorch Geometric's NeighborLoader when it and a sampling backend, torch-sparse or pyg-lib, import:
bench/pyg-venv builds torch-sparse against Debian's torch; otherwise a uniform neighbour sampler
written in torch below, which stands in and says so).

Reads a Strata graph file (.h5, docs/format.md) with h5py. The model is the SAGE of Strata's
`--model sage` (docs/models.md): per layer h' = mean_{u->v} h_u W + b + h_v R, ReLU and dropout
between layers. Each epoch trains over the training vertices in shuffled batches of `--batch`
seeds with fan-out `--fanout` hop by hop from the seeds (NeighborLoader's num_neighbors order:
"15,10" keeps 15 in-neighbours of each seed, then 10 of each of those), then evaluates the
validation and test accuracy with FULL neighbourhoods (layer by layer over the whole graph; D^-1 A
as a sparse CSR product), which is timed with the epoch. One JSON line per epoch on stdout (and
in --out): {"epoch", "t" (seconds since this script started, imports and loading included),
"train_s", "eval_s", "val_acc", "test_acc", "loss", "sampler", "steps", "epoch_fraction"}.
--cap-s is checked before every batch: when it passes inside an epoch, training stops there and
that partial epoch is evaluated (epoch_fraction < 1), so the last line is the accuracy at the cap
(its "t" is the cap plus one evaluation).

  /path/to/venv/bin/python bench/minibatch_sage.py --data G.h5 --threads 2 --epochs 20
"""
import argparse
import json
import sys
import time
import warnings

START = time.time()

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

warnings.filterwarnings("ignore", message=".*is in beta")  # CSR products, scatter_reduce
warnings.filterwarnings("ignore", message=".*without a 'pyg-lib' installation")  # torch-sparse's


def load(path):
    with h5py.File(path, "r") as f:
        indptr = torch.from_numpy(f["graph/indptr"][...])
        indices = torch.from_numpy(f["graph/indices"][...])
        x = torch.from_numpy(f["node/features"][...])
        y = torch.from_numpy(f["node/labels"][...])
        masks = {k: torch.from_numpy(f[f"node/{k}_mask"][0].astype(bool))
                 for k in ("train", "val", "test")}
        classes = int(f.attrs["num_classes"])
    return indptr, indices, x, y, masks, classes


class Sage(torch.nn.Module):
    """Strata's sage: mean aggregation W (with bias) + root R (no bias)."""

    def __init__(self, sizes, dropout):
        super().__init__()
        self.neigh = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.root = torch.nn.ModuleList(torch.nn.Linear(a, b, bias=False)
                                        for a, b in zip(sizes, sizes[1:]))
        self.dropout = dropout

    def layer(self, i, h_dst, mean):
        out = self.neigh[i](mean) + self.root[i](h_dst)
        if i < len(self.neigh) - 1:
            out = torch.nn.functional.dropout(torch.relu(out), self.dropout, self.training)
        return out

    def forward_blocks(self, x, blocks):
        """blocks: per layer (edge_src, edge_dst, dst_count) over the nodes of the previous
        layer; the first dst_count nodes of a layer are the next layer's nodes."""
        h = torch.nn.functional.dropout(x, self.dropout, self.training)
        for i, (src, dst, n_dst) in enumerate(blocks):
            total = torch.zeros(n_dst, h.shape[1]).index_add_(0, dst, h[src])
            deg = torch.zeros(n_dst).index_add_(0, dst, torch.ones(dst.numel()))
            h = self.layer(i, h[:n_dst], total / deg.clamp(min=1).unsqueeze(1))
        return h

    @torch.no_grad()
    def full(self, x, mean_operator):
        h = x
        for i in range(len(self.neigh)):
            h = self.layer(i, h, torch.mm(mean_operator, h))
        return h


def uniform_blocks(indptr, indices, seeds, fanout, generator):
    """Stand-in sampler: for each hop from the seeds (fanout[0] first, as NeighborLoader's
    num_neighbors; the blocks come out input layer first), each frontier vertex keeps all its
    in-neighbours when it has at most k, else k drawn uniformly WITH replacement; the new
    frontier = the old one followed by the newly reached vertices (ids relabelled locally)."""
    nodes = seeds
    blocks = []
    for k in fanout:
        deg = indptr[nodes + 1] - indptr[nodes]
        small = deg <= k
        # all neighbours of low-degree vertices
        s_nodes = nodes[small]
        s_deg = deg[small]
        s_dst = torch.repeat_interleave(torch.nonzero(small).squeeze(1), s_deg)
        starts = torch.repeat_interleave(indptr[s_nodes], s_deg)
        within = torch.arange(s_dst.numel()) - torch.repeat_interleave(
            torch.cumsum(s_deg, 0) - s_deg, s_deg)
        s_src = indices[starts + within]
        # k draws for the others
        big = torch.nonzero(~small).squeeze(1)
        b_dst = big.repeat_interleave(k)
        draw = (torch.rand(b_dst.numel(), generator=generator) *
                deg[b_dst].to(torch.float32)).long()
        b_src = indices[indptr[nodes[b_dst]] + draw]
        src_global = torch.cat([s_src, b_src])
        dst_local = torch.cat([s_dst, b_dst])
        # relabel: frontier first, then new vertices in order of first appearance
        every = torch.cat([nodes, src_global])
        unique, inverse = torch.unique(every, return_inverse=True)
        first = torch.full((unique.numel(),), every.numel(), dtype=torch.long)
        first.scatter_reduce_(0, inverse, torch.arange(every.numel()), reduce="amin")
        order = torch.argsort(first)
        local = torch.empty_like(order)
        local[order] = torch.arange(order.numel())
        src_local = local[inverse[nodes.numel():]]
        blocks.append((src_local, dst_local, nodes.numel()))
        nodes = unique[order]
    return nodes, list(reversed(blocks))


def uniform_batches(indptr, indices, train_idx, fanout, batch, generator):
    """The stand-in's batches as (n_id, blocks, seeds): shuffled training vertices."""
    perm = train_idx[torch.randperm(train_idx.numel(), generator=generator)]
    for i in range(0, perm.numel(), batch):
        seeds = perm[i:i + batch]
        n_id, blocks = uniform_blocks(indptr, indices, seeds, fanout, generator)
        yield n_id, blocks, seeds.numel()


def pyg_loader(indptr, indices, train_idx, fanout, batch):
    """PyG's NeighborLoader over the graph, built once (its CSC copy included): the file's CSR
    rows are destinations, so edge_index = (indices, row of each entry) is already sorted by
    destination (is_sorted). It samples without replacement (PyG's default)."""
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader
    n = indptr.numel() - 1
    dst = torch.repeat_interleave(torch.arange(n), (indptr[1:] - indptr[:-1]).long())
    data = Data(edge_index=torch.stack([indices.long(), dst]), num_nodes=n)
    return NeighborLoader(data, num_neighbors=list(fanout), batch_size=batch,
                          input_nodes=train_idx, shuffle=True, is_sorted=True)


def pyg_batches(loader, layers):
    """NeighborLoader batches as (n_id, blocks, seeds): PyG's subgraph edges used at every
    layer, the first batch_size nodes are the seeds (PyG's usual mini-batch SAGE)."""
    for b in loader:
        src, dst = b.edge_index
        yield b.n_id, [(src, dst, b.num_nodes)] * layers, b.batch_size


def pyg_backend():
    """'torch_geometric X, pyg-lib Y' (or torch-sparse Y) when NeighborLoader can sample, else
    None."""
    try:
        import torch_geometric.loader
        pyg = f"torch_geometric {torch_geometric.__version__}"
        try:
            import pyg_lib
            return f"{pyg}, pyg-lib {pyg_lib.__version__}"
        except ImportError:
            import torch_sparse
            return f"{pyg}, torch-sparse {torch_sparse.__version__}"
    except ImportError:
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--fanout", default="15,10")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--cap-s", type=float, default=3600.0, help="stop after this many seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sampler", choices=["auto", "pyg", "uniform"], default="auto")
    p.add_argument("--out", default="")
    o = p.parse_args()
    torch.set_num_threads(o.threads)
    torch.manual_seed(o.seed)
    generator = torch.Generator().manual_seed(o.seed)
    fanout = [int(k) for k in o.fanout.split(",")]
    backend = pyg_backend() if o.sampler != "uniform" else None
    sampler = o.sampler if o.sampler != "auto" else ("pyg" if backend else "uniform")
    if sampler == "pyg" and backend is None:
        sys.exit("minibatch_sage: --sampler pyg: torch_geometric with pyg-lib or torch-sparse "
                 "does not import (bench/pyg-venv builds them)")
    sampler_name = (f"pyg NeighborLoader ({backend})" if sampler == "pyg" else
                    "uniform torch sampler (stand-in for NeighborLoader)")
    indptr, indices, x, y, masks, classes = load(o.data)
    n = indptr.numel() - 1
    deg = (indptr[1:] - indptr[:-1]).to(torch.float32)
    values = (1.0 / deg.clamp(min=1)).repeat_interleave((indptr[1:] - indptr[:-1]))
    mean_operator = torch.sparse_csr_tensor(indptr, indices, values, size=(n, n))
    train_idx = torch.nonzero(masks["train"]).squeeze(1)
    model = Sage([x.shape[1]] + [o.hidden] * (len(fanout) - 1) + [classes], o.dropout)
    optimizer = torch.optim.Adam(model.parameters(), lr=o.lr)
    loader = pyg_loader(indptr, indices, train_idx, fanout, o.batch) if sampler == "pyg" else None
    out = open(o.out, "w") if o.out else None
    per_epoch = -(-train_idx.numel() // o.batch)
    for epoch in range(1, o.epochs + 1):
        began = time.time()
        model.train()
        losses = []
        if sampler == "pyg":
            batches = pyg_batches(loader, len(fanout))
        else:
            batches = uniform_batches(indptr, indices, train_idx, fanout, o.batch, generator)
        steps = 0
        for n_id, blocks, size in batches:
            if time.time() - START > o.cap_s:
                break  # the cap falls inside this epoch: evaluate what was trained so far
            optimizer.zero_grad()
            logits = model.forward_blocks(x[n_id], blocks)[:size]
            loss = torch.nn.functional.cross_entropy(logits, y[n_id[:size]])
            loss.backward()
            optimizer.step()
            losses.append(float(loss))
            steps += 1
            if steps % 200 == 0:  # progress on long epochs (2.4M vertices: ~1400 batches)
                print(f"minibatch_sage: epoch {epoch}: batch {steps}/{per_epoch}, "
                      f"{time.time() - START:.0f} s", file=sys.stderr, flush=True)
        train_s = time.time() - began
        model.eval()
        logits = model.full(x, mean_operator)
        pred = logits.argmax(1)
        acc = {k: float((pred[m] == y[m]).float().mean()) for k, m in masks.items()}
        record = {"epoch": epoch, "t": time.time() - START, "train_s": train_s,
                  "eval_s": time.time() - began - train_s, "val_acc": acc["val"],
                  "test_acc": acc["test"], "loss": float(np.mean(losses)) if losses else None,
                  "sampler": sampler_name, "threads": o.threads, "steps": steps,
                  "epoch_fraction": steps / per_epoch}
        print(json.dumps(record), flush=True)
        if out:
            out.write(json.dumps(record) + "\n")
            out.flush()
        if time.time() - START > o.cap_s or steps == 0:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
