#!/usr/bin/python3
"""End-to-end tests of `strata convert --from npz`, `--from geom-gcn-splits` and
`--split-index`, through the real binary. Fixtures are made here with numpy (both
np.savez and np.savez_compressed, arrays in C and in Fortran order); every converted file is
read back with h5py and compared with the numpy arrays it came from. Bad inputs must fail
with exactly one stderr line holding the expected message.

Usage: check_npz_and_splits.py STRATA MPIEXEC DATA_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import h5py
import numpy as np
import scipy.sparse as sp

STRATA, MPIEXEC, DATA = sys.argv[1], sys.argv[2], sys.argv[3]
CORA = os.path.join(DATA, "cora.h5")
GEOM = os.path.join(DATA, "cora", "geom_gcn_splits")
failures = []
checks = 0


def run(*args, mpi=0):
    cmd = ([MPIEXEC, "-n", str(mpi)] if mpi else []) + [STRATA] + [str(a) for a in args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def check(name, ok, detail=""):
    global checks
    checks += 1
    if ok:
        print(f"ok: {name}")
    else:
        print(f"FAIL: {name}: {detail}")
        failures.append(name)


def expect_ok(name, *args, mpi=0):
    r = run(*args, mpi=mpi)
    check(name, r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def is_error(returncode):
    """An error exit: non-zero, not a signal (negative here, or >= 128 through a shell)."""
    return 0 < returncode < 128


def expect_error(name, message, *args):
    r = run(*args)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    ok = is_error(r.returncode) and len(lines) == 1 and message in lines[0]
    check(name, ok, f"exit {r.returncode}, stderr: {r.stderr!r} (expected {message!r})")
    return r


def csr_by_destination(n, src, dst, weight=None):
    """Rows = destinations, sources ascending, first of duplicates kept (list order)."""
    rows = [[] for _ in range(n)]
    seen = set()
    for k, (u, v) in enumerate(zip(src, dst)):
        if (u, v) in seen:
            continue
        seen.add((u, v))
        rows[v].append((u, None if weight is None else weight[k]))
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices, weights = [], []
    for v in range(n):
        rows[v].sort(key=lambda e: e[0])
        indptr[v + 1] = indptr[v] + len(rows[v])
        indices += [u for u, _ in rows[v]]
        weights += [w for _, w in rows[v]]
    return indptr, np.array(indices, dtype=np.int64), np.array(weights, dtype=np.float32)


def compare_graph(name, path, indptr, indices, features, labels, masks, weights=None):
    with h5py.File(path, "r") as f:
        check(f"{name}: format version 3", f.attrs["strata_format_version"] == 3)
        check(f"{name}: indptr (rows = destinations)", np.array_equal(f["graph/indptr"][:], indptr),
              f"{f['graph/indptr'][:]} vs {indptr}")
        check(f"{name}: indices", np.array_equal(f["graph/indices"][:], indices),
              f"{f['graph/indices'][:]} vs {indices}")
        if weights is None:
            check(f"{name}: no edge weights", "graph/edge_weight" not in f)
        else:
            check(f"{name}: edge weights", np.array_equal(f["graph/edge_weight"][:], weights))
        check(f"{name}: features", np.array_equal(f["node/features"][:],
                                                  features.astype(np.float32)))
        check(f"{name}: labels", np.array_equal(f["node/labels"][:], labels.astype(np.int64)))
        check(f"{name}: num_classes", f.attrs["num_classes"] == labels.max() + 1)
        for key, want in zip(("train_mask", "val_mask", "test_mask"), masks):
            got = f["node/" + key][:]
            check(f"{name}: {key} [S, N]", got.dtype == np.uint8 and got.shape == want.shape and
                  np.array_equal(got, want.astype(np.uint8)), f"{got.shape} vs {want.shape}")


def save(path, compressed, **arrays):
    (np.savez_compressed if compressed else np.savez)(path, **arrays)


rng = np.random.default_rng(7)
tmp = tempfile.mkdtemp(prefix="strata_npz_")

# --- heterophilous-graphs layout -------------------------------------------------------------
n, f, s = 9, 4, 3
het = {
    "node_features": rng.standard_normal((n, f)).astype(np.float32),
    "node_labels": rng.integers(0, 3, n).astype(np.int64),
    # (source, target); one duplicate (2,5), one self loop (4,4), one reverse pair (0,1)/(1,0)
    "edges": np.array([[0, 1], [1, 0], [2, 5], [3, 8], [2, 5], [4, 4], [8, 7], [6, 2]],
                      dtype=np.int64),
    "train_masks": rng.random((s, n)) < 0.4,
    "val_masks": rng.random((s, n)) < 0.3,
    "test_masks": rng.random((s, n)) < 0.3,
}
het["node_labels"][0] = 2  # num_classes = 3 for sure
masks = (het["train_masks"], het["val_masks"], het["test_masks"])
src, dst = het["edges"][:, 0], het["edges"][:, 1]
for compressed in (False, True):
    tag = "compressed" if compressed else "stored"
    path = os.path.join(tmp, f"het_{tag}.npz")
    save(path, compressed, **het)
    out = os.path.join(tmp, f"het_{tag}.h5")
    r = expect_ok(f"npz heterophilous ({tag}) converts", "convert", "--from", "npz", "--input",
                  path, "--out", out)
    check(f"npz heterophilous ({tag}): layout and duplicate reported",
          "heterophilous-graphs layout" in r.stdout and "1 duplicates dropped" in r.stdout,
          r.stdout)
    ip, ix, _ = csr_by_destination(n, src, dst)
    compare_graph(f"het {tag}", out, ip, ix, het["node_features"], het["node_labels"], masks)
    with h5py.File(out, "r") as h:
        check(f"het {tag}: name from the file stem", h.attrs["name"] in (f"het_{tag}",
                                                                         f"het_{tag}".encode()))
    info = expect_ok(f"het {tag}: info --json", "info", out, "--json")
    check(f"het {tag}: info shows 3 splits", json.loads(info.stdout)["num_splits"] == 3,
          info.stdout)

# Fortran order, as numpy writes a transposed array (the masks of real heterophilous releases
# are stored so): every 2-D member's header says fortran_order True; the graph is the same.
for compressed in (False, True):
    tag = "compressed" if compressed else "stored"
    path = os.path.join(tmp, f"het_fortran_{tag}.npz")
    save(path, compressed, **{k: np.asfortranarray(v) for k, v in het.items()})
    with zipfile.ZipFile(path) as z:
        flagged = [k for k in het if b"'fortran_order': True" in z.read(k + ".npy")[:128]]
    check(f"npz heterophilous Fortran order ({tag}): numpy flagged every 2-D member",
          flagged == [k for k, v in het.items() if v.ndim == 2], str(flagged))
    out = os.path.join(tmp, f"het_fortran_{tag}.h5")
    expect_ok(f"npz heterophilous in Fortran order ({tag}) converts", "convert", "--from", "npz",
              "--input", path, "--out", out)
    ip, ix, _ = csr_by_destination(n, src, dst)
    compare_graph(f"het Fortran {tag}", out, ip, ix, het["node_features"], het["node_labels"],
                  masks)

# --undirected, and other dtypes: float64 features, int32 edges, uint8 masks, [N] masks
het2 = dict(het)
het2["node_features"] = het["node_features"].astype(np.float64)
het2["edges"] = het["edges"].astype(np.int32)
het2["train_masks"] = het["train_masks"][0].astype(np.uint8)
het2["val_masks"] = het["val_masks"][0].astype(np.uint8)
het2["test_masks"] = het["test_masks"][0].astype(np.uint8)
path = os.path.join(tmp, "het2.npz")
save(path, True, **het2)
out = os.path.join(tmp, "het2.h5")
expect_ok("npz heterophilous --undirected, f8/i4/u1, one split", "convert", "--from", "npz",
          "--input", path, "--out", out, "--undirected", "--name", "het2")
keep = src != dst
ip, ix, _ = csr_by_destination(n, np.concatenate([src, dst[keep]]),
                               np.concatenate([dst, src[keep]]))
compare_graph("het2", out, ip, ix, het["node_features"], het["node_labels"],
              tuple(m[0:1] for m in masks))

# --- gnn-benchmark layout --------------------------------------------------------------------
n, f = 7, 5
adj = sp.csr_matrix(np.array([  # rows = sources: adj[u, v] = 1 for the edge u -> v
    [0, 1, 1, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 1],
    [1, 0, 0, 1, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 1, 1, 0],
    [0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 1, 0]], dtype=np.float32))
attr = sp.random(n, f, density=0.4, format="csr", random_state=3, dtype=np.float32)
labels = np.array([0, 1, 2, 0, 1, 3, 2], dtype=np.int64)
coo = adj.tocoo()
no_split = tuple(np.zeros((1, n), dtype=bool) for _ in range(3))
for compressed in (False, True):
    tag = "compressed" if compressed else "stored"
    path = os.path.join(tmp, f"bench_{tag}.npz")
    save(path, compressed, adj_data=adj.data, adj_indices=adj.indices, adj_indptr=adj.indptr,
         adj_shape=np.array(adj.shape), attr_data=attr.data, attr_indices=attr.indices,
         attr_indptr=attr.indptr, attr_shape=np.array(attr.shape), labels=labels)
    out = os.path.join(tmp, f"bench_{tag}.h5")
    r = expect_ok(f"npz gnn-benchmark ({tag}) converts", "convert", "--from", "npz", "--input",
                  path, "--out", out)
    check(f"npz gnn-benchmark ({tag}): the missing split is announced",
          "gnn-benchmark layout" in r.stdout and "no split" in r.stdout, r.stdout)
    ip, ix, _ = csr_by_destination(n, coo.row, coo.col)
    # Cross-check the direction with scipy: our CSR is the transpose of adj.
    t = adj.T.tocsr()
    t.sort_indices()
    check(f"bench {tag}: CSR by destination = adj transposed",
          np.array_equal(ip, t.indptr) and np.array_equal(ix, t.indices))
    compare_graph(f"bench {tag}", out, ip, ix, attr.toarray(), labels, no_split)

# dense attr_matrix and weighted adjacency
wadj = adj.copy()
wadj.data = np.arange(1, wadj.nnz + 1, dtype=np.float32) / 2
dense = rng.standard_normal((n, f))
path = os.path.join(tmp, "bench_dense.npz")
save(path, True, adj_data=wadj.data, adj_indices=wadj.indices, adj_indptr=wadj.indptr,
     adj_shape=np.array(wadj.shape), attr_matrix=dense, labels=labels)
out = os.path.join(tmp, "bench_dense.h5")
expect_ok("npz gnn-benchmark: attr_matrix, weighted adjacency", "convert", "--from", "npz",
          "--input", path, "--out", out)
wcoo = wadj.tocoo()
ip, ix, w = csr_by_destination(n, wcoo.row, wcoo.col, wcoo.data)
compare_graph("bench dense", out, ip, ix, dense.astype(np.float32), labels, no_split, w)
path = os.path.join(tmp, "bench_fortran.npz")
save(path, False, adj_data=wadj.data, adj_indices=wadj.indices, adj_indptr=wadj.indptr,
     adj_shape=np.array(wadj.shape), attr_matrix=np.asfortranarray(dense), labels=labels)
out = os.path.join(tmp, "bench_fortran.h5")
expect_ok("npz gnn-benchmark: attr_matrix in Fortran order", "convert", "--from", "npz",
          "--input", path, "--out", out)
compare_graph("bench Fortran", out, ip, ix, dense.astype(np.float32), labels, no_split, w)

# --- bad npz inputs: one line each ------------------------------------------------------------
bad = dict(het)
del bad["node_labels"]
save(os.path.join(tmp, "missing.npz"), True, **bad)
expect_error("npz missing a key", "missing key 'node_labels'", "convert", "--from", "npz",
             "--input", os.path.join(tmp, "missing.npz"), "--out", os.path.join(tmp, "x.h5"))
bad = dict(het)
bad["edges"] = np.zeros((4, 3), dtype=np.int64)
save(os.path.join(tmp, "shape.npz"), False, **bad)
expect_error("npz wrong shape", "edges: expected shape [E, 2] (source, target), found [4, 3]",
             "convert", "--from", "npz", "--input", os.path.join(tmp, "shape.npz"), "--out",
             os.path.join(tmp, "x.h5"))
bad = dict(het)
bad["train_masks"] = np.zeros((3, 8), dtype=bool)
save(os.path.join(tmp, "masks.npz"), False, **bad)
expect_error("npz masks of the wrong N", "train_masks: shape [3, 8] does not match N = 9",
             "convert", "--from", "npz", "--input", os.path.join(tmp, "masks.npz"), "--out",
             os.path.join(tmp, "x.h5"))
for dtype, descr in ((np.complex64, "<c8"), (np.dtype(">f4"), ">f4"), (np.int16, "<i2")):
    bad = dict(het)
    bad["node_features"] = het["node_features"].astype(dtype)
    save(os.path.join(tmp, "dtype.npz"), True, **bad)
    expect_error(f"npz unsupported dtype {descr}", f"node_features: unsupported dtype '{descr}'",
                 "convert", "--from", "npz", "--input", os.path.join(tmp, "dtype.npz"), "--out",
                 os.path.join(tmp, "x.h5"))
with open(os.path.join(tmp, "garbage.npz"), "wb") as g:
    g.write(b"this is not a zip archive at all" * 10)
expect_error("npz that is not a zip", "garbage.npz: cannot read as .npz: Not a zip archive",
             "convert", "--from", "npz", "--input", os.path.join(tmp, "garbage.npz"), "--out",
             os.path.join(tmp, "x.h5"))
with open(os.path.join(tmp, "het_compressed.npz"), "rb") as g:
    data = bytearray(g.read())
truncated = os.path.join(tmp, "truncated.npz")
with open(truncated, "wb") as g:
    g.write(data[: len(data) // 2])
expect_error("truncated npz", "truncated.npz: cannot read as .npz", "convert", "--from", "npz",
             "--input", truncated, "--out", os.path.join(tmp, "x.h5"))
# Damage inside the compressed features member (its data starts after the local header).
at = data.find(b"node_features.npy") + len("node_features.npy") + 20
for k in range(at, at + 40):
    data[k] ^= 0x5A
corrupt = os.path.join(tmp, "corrupt.npz")
with open(corrupt, "wb") as g:
    g.write(data)
expect_error("corrupt deflate data", "corrupt.npz: node_features: ", "convert", "--from", "npz",
             "--input", corrupt, "--out", os.path.join(tmp, "x.h5"))
check("no output left by the failures", not os.path.exists(os.path.join(tmp, "x.h5")))

# --- Geom-GCN splits on the real Cora ---------------------------------------------------------
geom = os.path.join(tmp, "cora-geom.h5")
expect_ok("geom-gcn splits applied to data/cora.h5", "convert", "--from", "geom-gcn-splits",
          "--data", CORA, "--splits", GEOM, "--out", geom)
files = sorted(os.listdir(GEOM), key=lambda name: int(name[:-4].rsplit("_", 1)[1]))
with h5py.File(geom, "r") as h, h5py.File(CORA, "r") as c:
    check("cora-geom: 10 splits", h["node/train_mask"].shape == (10, 2708))
    for i, name in enumerate(files):
        z = np.load(os.path.join(GEOM, name))
        same = all(np.array_equal(h["node/" + k][i], z[k].astype(np.uint8))
                   for k in ("train_mask", "val_mask", "test_mask"))
        check(f"cora-geom: split {i} = {name}", same)
    check("cora-geom: graph and features unchanged",
          np.array_equal(h["graph/indices"][:], c["graph/indices"][:]) and
          np.array_equal(h["node/features"][:], c["node/features"][:]))
info = expect_ok("info on the 10-split file", "info", geom)
check("info: 10 splits", "splits:            10" in info.stdout and
      "split 9:           train 1192, val 796, test 497" in info.stdout, info.stdout)

wrong = os.path.join(tmp, "wrong_n")
os.mkdir(wrong)
z = np.load(os.path.join(GEOM, files[0]))
np.savez(os.path.join(wrong, "cora_split_0.6_0.2_0.npz"), **{k: z[k] for k in z.files})
np.savez(os.path.join(wrong, "cora_split_0.6_0.2_1.npz"),
         **{k: z[k][:2700] for k in z.files})
expect_error("split file with the wrong N",
             "cora_split_0.6_0.2_1.npz: train_mask: has 2700 entries, but the graph has N = 2708",
             "convert", "--from", "geom-gcn-splits", "--data", CORA, "--splits", wrong, "--out",
             os.path.join(tmp, "y.h5"))
os.remove(os.path.join(wrong, "cora_split_0.6_0.2_1.npz"))
np.savez(os.path.join(wrong, "cora_split_0.6_0.2_2.npz"), **{k: z[k] for k in z.files})
expect_error("split numbers with a gap", "split 1 is missing", "convert", "--from",
             "geom-gcn-splits", "--data", CORA, "--splits", wrong, "--out",
             os.path.join(tmp, "y.h5"))
check("no output left by the split failures", not os.path.exists(os.path.join(tmp, "y.h5")))
expect_error("split index out of range",
             f"{geom}: --split-index 10 out of range: the file has 10 splits (0..9)", "train",
             "--data", geom, "--split-index", "10", "--epochs", "1")
expect_error("split index out of range on the one-split Cora",
             f"{CORA}: --split-index 1 out of range: the file has 1 split (0)", "train",
             "--data", CORA, "--split-index", "1", "--epochs", "1")

# --- --split-index selects the split: splits of distinct sizes on Cora --------------------------
sized = os.path.join(tmp, "sized")
os.mkdir(sized)
for i in range(4):
    m = {k: np.zeros(2708, dtype=bool) for k in ("train_mask", "val_mask", "test_mask")}
    order = np.random.default_rng(i).permutation(2708)
    m["train_mask"][order[: 100 + 10 * i]] = True
    m["val_mask"][order[1000:1200 + i]] = True
    m["test_mask"][order[2000:2300 - i]] = True
    np.savez_compressed(os.path.join(sized, f"cora_sized_{i}.npz"), **m)
four = os.path.join(tmp, "four.h5")
expect_ok("four splits of distinct sizes", "convert", "--from", "geom-gcn-splits", "--data", CORA,
          "--splits", sized, "--out", four)
metrics = os.path.join(tmp, "m.jsonl")
r = expect_ok("train --split-index 2 on the .h5", "train", "--data", four, "--split-index", "2",
              "--epochs", "2", "--metrics", metrics)
check("train (.h5) reports split 2 and its sizes",
      "split: 2 of 4 (train 120, val 202, test 298 vertices)" in r.stdout, r.stdout)
records = [json.loads(line) for line in open(metrics)]
check("metrics records carry split 2", len(records) == 2 and all(x["split"] == 2 for x in records),
      str(records))
ck = os.path.join(tmp, "ck")
expect_ok("train --split-index 1 with a checkpoint", "train", "--data", four, "--split-index", "1",
          "--epochs", "2", "--checkpoint-dir", ck, "--quiet")
r = expect_ok("predict --split-index 1", "predict", "--data", four, "--checkpoint", ck, "--out",
              os.path.join(tmp, "p.h5"), "--split-index", "1")
check("predict reports split 1", "split=1 train_accuracy=" in r.stdout, r.stdout)
expect_error("predict --split-index out of range",
             f"{four}: --split-index 4 out of range: the file has 4 splits (0..3)", "predict",
             "--data", four, "--checkpoint", ck, "--out", os.path.join(tmp, "q.h5"),
             "--split-index", "4")
parts = os.path.join(tmp, "four.2")
expect_ok("partition a four-split file", "partition", "--data", four, "--parts", "2", "--out",
          parts)
with h5py.File(four, "r") as g:
    for r_ in range(2):
        with h5py.File(os.path.join(parts, f"part-0000{r_}.h5"), "r") as p:
            ids = p["owned/original_ids"][:]
            same = all(np.array_equal(p["node/" + k][:], g["node/" + k][:, ids])
                       for k in ("train_mask", "val_mask", "test_mask"))
            check(f"part {r_}: masks [4, n] = the file's columns of its vertices",
                  p["node/train_mask"].shape == (4, len(ids)) and same)
r = expect_ok("train --split-index 3 on the partition directory, 2 ranks", "train", "--data",
              parts, "--split-index", "3", "--epochs", "2", "--threads", "1", mpi=2)
check("train (partition) reports split 3 and its sizes",
      "split: 3 of 4 (train 130, val 203, test 297 vertices)" in r.stdout, r.stdout)
r = run("train", "--data", parts, "--split-index", "4", "--epochs", "1", "--threads", "1", mpi=2)
check("split index out of range on a partition directory",
      is_error(r.returncode) and
      f"{parts}: --split-index 4 out of range: the file has 4 splits (0..3)" in r.stderr,
      r.stderr)

# --- two classes: ROC-AUC next to accuracy, gathered from every rank ------------------------------
def auc(scores, positive):
    """Pair counting (ties = 1/2): the definition, independent of strata's rank formula."""
    p, q = scores[positive], scores[~positive]
    return ((p[:, None] > q[None, :]).sum() + 0.5 * (p[:, None] == q[None, :]).sum()) / (
        len(p) * len(q))


binary = os.path.join(tmp, "binary.h5")
expect_ok("generate a two-class graph", "generate", "--nodes", "600", "--avg-degree", "6",
          "--features", "8", "--classes", "2", "--feature-noise", "6", "--seed", "3", "--out",
          binary)
for ranks in (1, 2):
    ck = os.path.join(tmp, f"bck{ranks}")
    metrics = os.path.join(tmp, f"b{ranks}.jsonl")
    r = expect_ok(f"binary task trains on {ranks} rank(s)", "train", "--data", binary, "--epochs",
                  "12", "--threads", "1", "--metrics", metrics, "--checkpoint-dir", ck,
                  mpi=ranks if ranks > 1 else 0)
    records = [json.loads(line) for line in open(metrics)]
    best = records[0]
    for rec in records:  # strata's rule: the first epoch of highest val_acc
        if rec["val_acc"] > best["val_acc"]:
            best = rec
    check(f"binary ({ranks}): every record has val_auc and test_auc",
          all("val_auc" in x and "test_auc" in x for x in records), str(records[0]))
    check(f"binary ({ranks}): the epoch lines and the final lines show the AUC",
          "  auc val " in r.stdout and
          f"best epoch {best['epoch']} (by val_acc): val_auc={best['val_auc']:.4f} test_auc="
          f"{best['test_auc']:.4f}" in r.stdout, r.stdout[-400:])
    pred = os.path.join(tmp, f"bp{ranks}.h5")
    expect_ok(f"binary ({ranks}): predict with the best weights", "predict", "--data", binary,
              "--checkpoint", ck, "--out", pred)
    with h5py.File(pred, "r") as p, h5py.File(binary, "r") as g:
        logits = p["logits"][:]
        y = g["node/labels"][:]
        score = logits[:, 1] - logits[:, 0]
        for key, name in (("val_mask", "val_auc"), ("test_mask", "test_auc")):
            m = g["node/" + key][0].astype(bool) & (y >= 0)
            want = auc(score[m], y[m] == 1)
            check(f"binary ({ranks}): {name} of the best epoch = numpy's AUC of predict's "
                  f"logits", abs(best[name] - want) < 2e-3, f"{best[name]} vs {want}")
# --select-by val_auc: the best epoch is the first of the highest validation ROC-AUC.
metrics = os.path.join(tmp, "auc.jsonl")
r = expect_ok("binary task selects by val_auc", "train", "--data", binary, "--epochs", "12",
              "--threads", "1", "--select-by", "val_auc", "--metrics", metrics)
records = [json.loads(line) for line in open(metrics)]
best = records[0]
for rec in records:
    if rec["val_auc"] is not None and (best["val_auc"] is None or rec["val_auc"] > best["val_auc"]):
        best = rec
check("select-by val_auc: the best epoch is the first of the highest val_auc",
      f"best epoch {best['epoch']} (by val_auc): val_accuracy={best['val_acc']:.4f}" in r.stdout,
      r.stdout[-400:])
expect_error("select-by val_auc on a 7-class task",
             f"select_by = 'val_auc': needs a two-class task, but {CORA} has 7 classes (use "
             "val_acc or val_loss) (--select-by)", "train", "--data", CORA, "--epochs", "1",
             "--select-by", "val_auc")
r = expect_ok("no AUC for a 7-class task", "train", "--data", CORA, "--epochs", "1")
check("no AUC for a 7-class task (output)", " auc " not in r.stdout and "val_auc" not in r.stdout,
      r.stdout)

print(f"{checks - len(failures)} passed, {len(failures)} failed")
shutil.rmtree(tmp)
sys.exit(1 if failures else 0)
