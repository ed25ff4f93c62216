#!/usr/bin/python3
"""Writes the .npz fixtures of tests/datasets/test_npz_order.cpp into this directory (committed;
rerun after a change here: /usr/bin/python3 tests/datasets/npz/make_fixtures.py).

One small graph per converter layout, four files each: C order and Fortran order, stored and
deflated members. Every file holds the same graph; the dtypes change between files so that each
dtype the reader accepts (<f4 <f8 <i4 <i8 |b1 |u1) is read in Fortran order somewhere:

    ORDER_COMPRESSION.npz   dtype set
    c_stored                a
    c_deflated              b
    f_stored                b
    f_deflated              a

A Fortran-order member is numpy's own output for np.asfortranarray of a 2-D array (header
'fortran_order': True, payload first index fastest). numpy writes every 1-D array as C order;
the Fortran files flag their 1-D arrays True as well (same bytes: one layout), so that every
member of those files says Fortran. Zip entries carry a fixed date so the bytes are reproducible.
"""
import io
import os
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# heterophilous-graphs: N = 6, F = 3, S = 2; edges with a duplicate (2, 3) and a self loop (5, 5).
HET = {
    "node_features": np.arange(18).reshape(6, 3) / 4,
    "node_labels": np.array([0, 1, 2, 1, -1, 0]),
    "edges": np.array([[0, 1], [1, 0], [2, 3], [3, 4], [2, 3], [5, 5], [4, 2]]),
    "train_masks": np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]]),
    "val_masks": np.array([[0, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]]),
    "test_masks": np.array([[0, 0, 0, 1, 1, 1], [0, 1, 0, 0, 1, 1]]),
}
HET_DTYPES = {
    "a": {"node_features": "<f4", "node_labels": "<i8", "edges": "<i8", "train_masks": "|b1",
          "val_masks": "|b1", "test_masks": "|b1"},
    "b": {"node_features": "<f8", "node_labels": "<i4", "edges": "<i4", "train_masks": "|u1",
          "val_masks": "|u1", "test_masks": "|u1"},
}

# gnn-benchmark: N = 5, F = 4; adj rows are sources (edge u -> v at adj[u, v]), weights 0.5 .. 3.
BENCH = {
    "adj_data": np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0]),
    "adj_indices": np.array([1, 2, 0, 4, 3, 0]),
    "adj_indptr": np.array([0, 2, 3, 4, 5, 6]),
    "adj_shape": np.array([5, 5]),
    "attr_matrix": (np.arange(20).reshape(5, 4) - 7) / 8,
    "labels": np.array([1, 0, 2, 2, 0]),
}
BENCH_DTYPES = {
    "a": {"adj_data": "<f4", "adj_indices": "<i4", "adj_indptr": "<i4", "adj_shape": "<i8",
          "attr_matrix": "<f4", "labels": "<i8"},
    "b": {"adj_data": "<f8", "adj_indices": "<i8", "adj_indptr": "<i8", "adj_shape": "<i4",
          "attr_matrix": "<f8", "labels": "|u1"},
}

FILES = (("c_stored", "a"), ("c_deflated", "b"), ("f_stored", "b"), ("f_deflated", "a"))


def npy(array, fortran):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asfortranarray(array) if fortran else array)
    data = buffer.getvalue()
    if fortran and array.ndim < 2:  # numpy says C order for 1-D: flag it, same length
        data = data.replace(b"'fortran_order': False", b"'fortran_order': True ", 1)
    want = b"'fortran_order': True" if fortran else b"'fortran_order': False"
    assert want in data[:256], data[:128]
    return data


def write(path, arrays, dtypes, fortran, compression):
    with zipfile.ZipFile(path, "w") as z:
        for key, values in arrays.items():
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = compression
            z.writestr(info, npy(values.astype(dtypes[key]), fortran))
    loaded = np.load(path)  # numpy reads the file back as the same arrays
    for key, values in arrays.items():
        assert np.array_equal(loaded[key], values.astype(dtypes[key])), (path, key)


for layout, arrays, dtypes in (("het", HET, HET_DTYPES), ("bench", BENCH, BENCH_DTYPES)):
    for name, dtype_set in FILES:
        compression = zipfile.ZIP_DEFLATED if name.endswith("deflated") else zipfile.ZIP_STORED
        write(os.path.join(HERE, f"{layout}_{name}.npz"), arrays, dtypes[dtype_set],
              name.startswith("f_"), compression)
print("wrote", sorted(f for f in os.listdir(HERE) if f.endswith(".npz")))
