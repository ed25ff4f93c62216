#!/usr/bin/python3
"""Planetoid raw pickles (ind.<name>.{x,y,tx,ty,allx,ally,graph,test.index}) -> strata graph HDF5.

Reproduces the node order of Kipf & Welling's gcn/utils.py::load_data (and PyG's
Planetoid(split='public')): features = vstack(allx, tx) with the test rows moved to the ids in
test.index; train = range(len(y)), val = the next 500, test = sorted(test.index). Edges: the
graph dict symmetrized, self loops removed, duplicates removed (PyG's edge_index), stored as CSR
by destination with sorted rows. Writes format version 1 (docs/format.md). Run by
`strata convert --from planetoid`, which writes to a temporary name and validates the result.

Usage: planetoid_to_h5.py --dir DIR --name NAME --out FILE.h5
"""
import argparse
import collections
import os
import pickle
import sys

import numpy as np
import scipy.sparse as sp

try:
    import h5py
except ImportError:  # reported as one line by the C++ caller
    sys.exit("planetoid_to_h5.py: the Python module h5py is missing (Debian: apt-get install python3-h5py)")

# The only globals the Planetoid pickles reference (checked with pickletools); anything else is
# refused, so a malicious pickle cannot run code.
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): np.core.multiarray._reconstruct,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("scipy.sparse.csr", "csr_matrix"): sp.csr_matrix,
    ("collections", "defaultdict"): collections.defaultdict,
    ("__builtin__", "list"): list,
    ("builtins", "list"): list,
}


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed") from None


def _load(path):
    with open(path, "rb") as f:
        return _RestrictedUnpickler(f, encoding="latin1").load()


def _fail(message):
    sys.exit(f"planetoid_to_h5.py: {message}")


def convert(directory, name, out):
    prefix = os.path.join(directory, f"ind.{name}.")
    parts = {}
    for key in ("x", "y", "tx", "ty", "allx", "ally", "graph"):
        path = prefix + key
        if not os.path.exists(path):
            _fail(f"{path}: missing")
        try:
            parts[key] = _load(path)
        except Exception as e:  # noqa: BLE001 - one line naming the file
            _fail(f"{path}: cannot unpickle: {e}")
    index_path = prefix + "test.index"
    if not os.path.exists(index_path):
        _fail(f"{index_path}: missing")
    test_idx_reorder = []
    with open(index_path) as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    test_idx_reorder.append(int(line))
                except ValueError:
                    _fail(f"{index_path}:{number}: '{line.strip()}' is not an integer")
    test_idx_range = np.sort(test_idx_reorder)

    x, y, tx, ty, allx, ally = (parts[k] for k in ("x", "y", "tx", "ty", "allx", "ally"))
    if name == "citeseer":
        # Isolated test ids without a row in tx/ty: pad with zero rows (Kipf's utils.py).
        full = range(min(test_idx_reorder), max(test_idx_reorder) + 1)
        tx_ext = sp.lil_matrix((len(full), tx.shape[1]))
        tx_ext[test_idx_range - min(test_idx_range), :] = tx
        tx = tx_ext
        ty_ext = np.zeros((len(full), ty.shape[1]))
        ty_ext[test_idx_range - min(test_idx_range), :] = ty
        ty = ty_ext

    features = sp.vstack((allx, tx)).tolil()
    features[test_idx_reorder, :] = features[test_idx_range, :]
    onehot = np.vstack((ally, ty))
    onehot[test_idx_reorder, :] = onehot[test_idx_range, :]
    n = features.shape[0]
    if onehot.shape[0] != n:
        _fail(f"{prefix}ally/ty: {onehot.shape[0]} label rows, but {n} feature rows")
    labels = np.where(onehot.sum(axis=1) > 0, onehot.argmax(axis=1), -1).astype(np.int64)
    num_classes = int(onehot.shape[1])

    graph = parts["graph"]
    src, dst = [], []
    for u, neighbours in graph.items():
        for v in neighbours:
            if not (0 <= u < n and 0 <= v < n):
                _fail(f"{prefix}graph: edge ({u}, {v}) out of range [0, {n})")
            src.append(u)
            dst.append(v)
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    # Symmetrize + deduplicate: a CSR of ones summed, then structure only.
    a = sp.coo_matrix((np.ones(2 * len(src)), (np.concatenate([dst, src]), np.concatenate([src, dst]))),
                      shape=(n, n)).tocsr()
    a.sum_duplicates()
    a.sort_indices()
    indptr = a.indptr.astype(np.int64)
    indices = a.indices.astype(np.int64)

    masks = {}
    for key, ids in (("train", range(len(y))), ("val", range(len(y), len(y) + 500)),
                     ("test", test_idx_range)):
        mask = np.zeros(n, dtype=np.uint8)
        mask[np.asarray(list(ids), dtype=np.int64)] = 1
        masks[key] = mask

    dense = np.asarray(features.todense(), dtype=np.float32)
    with h5py.File(out, "w") as f:
        f.attrs.create("strata_format", np.bytes_("graph"))
        f.attrs.create("strata_format_version", np.int64(1))
        f.attrs.create("name", np.bytes_(name))
        f.attrs.create("num_classes", np.int64(num_classes))
        f.create_dataset("graph/indptr", data=indptr)
        f.create_dataset("graph/indices", data=indices)
        rows = max(1, min(n, (1 << 20) // max(1, 4 * dense.shape[1])))
        f.create_dataset("node/features", data=dense, chunks=(rows, dense.shape[1]),
                         shuffle=True, compression="gzip", compression_opts=1)
        f.create_dataset("node/labels", data=labels)
        for key in ("train", "val", "test"):
            f.create_dataset(f"node/{key}_mask", data=masks[key])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="folder holding ind.<name>.* files")
    parser.add_argument("--name", required=True, help="dataset name: cora, citeseer, pubmed")
    parser.add_argument("--out", required=True, help="output .h5 (overwritten)")
    args = parser.parse_args()
    convert(args.dir, args.name, args.out)


if __name__ == "__main__":
    main()
