#!/usr/bin/python3
"""Read `strata predict` output, whichever K wrote it, in the original vertex order.

One rank writes one HDF5 file (strata_format "predictions"); K > 1 ranks write a directory of
per-rank part files and index.json (docs/checkpoints.md, "Predictions"). read_predictions(PATH)
returns the same thing for both: a dict with "predictions" (int64 [N]), "logits" (float32
[N, C]), "embeddings" (float32 [N, H], only when written) and "attrs" (checkpoint, epoch,
best_epoch, model, dataset). The parts are checked against the index: every part present with
its rows, part numbers, columns, and every vertex id in [0, N) exactly once.

Assembling holds N x C values in this one process: it is for analysis and tests, not for
graphs whose predictions do not fit one machine (read the parts one by one there: each has
/vertex_ids next to its rows).

Usage: scripts/read_predictions.py PATH [--out FILE.h5]
  prints N, C and the parts; --out writes the assembled predictions as one file in the
  one-rank format. Runs under any python3: without h5py and numpy it re-runs itself under
  /usr/bin/python3 (scripts/system_python.py). Exit status: 0 on success, 1 on a bad input (or
  no Python with h5py and numpy), 2 on bad usage.
"""

import argparse
import json
import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import system_python  # noqa: E402

    system_python.require("read_predictions.py", ["h5py", "numpy"])

import h5py  # noqa: E402
import numpy as np  # noqa: E402

ATTRS = ("checkpoint", "epoch", "best_epoch", "model", "dataset")


class PredictionsError(Exception):
    """A predictions file or directory that breaks the format (message names the file)."""


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _attrs(f):
    return {k: _text(f.attrs[k]) for k in ATTRS if k in f.attrs}


def _read_file(path):
    with h5py.File(path, "r") as f:
        if _text(f.attrs.get("strata_format")) != "predictions":
            raise PredictionsError(f"{path}: strata_format is not 'predictions'")
        out = {"predictions": f["predictions"][:], "logits": f["logits"][:], "attrs": _attrs(f)}
        if "embeddings" in f:
            out["embeddings"] = f["embeddings"][:]
        out["parts"] = [{"file": os.path.basename(path), "rows": len(out["predictions"])}]
        return out


def _read_directory(path):
    index_path = os.path.join(path, "index.json")
    if not os.path.exists(index_path):
        raise PredictionsError(f"{index_path}: missing (not a complete predictions directory)")
    with open(index_path) as f:
        index = json.load(f)
    if index.get("strata_format") != "predictions_index" or index.get("strata_format_version") != 1:
        raise PredictionsError(f"{index_path}: not a predictions index of version 1")
    n = int(index["total_rows"])
    columns = index["columns"]
    parts = index["parts"]
    if len(parts) != index["num_parts"] or sum(p["rows"] for p in parts) != n:
        raise PredictionsError(f"{index_path}: parts do not add up to total_rows {n}")
    out = {"predictions": np.full(n, -1, dtype=np.int64),
           "logits": np.zeros((n, columns["logits"]), dtype=np.float32),
           "attrs": {k: index[k] for k in ATTRS if k in index}, "parts": parts}
    if "embeddings" in columns:
        out["embeddings"] = np.zeros((n, columns["embeddings"]), dtype=np.float32)
    seen = np.zeros(n, dtype=bool)
    for r, p in enumerate(parts):
        part_path = os.path.join(path, p["file"])
        with h5py.File(part_path, "r") as f:
            if (_text(f.attrs.get("strata_format")) != "predictions_part" or
                    int(f.attrs["part"]) != r or int(f.attrs["num_parts"]) != len(parts)):
                raise PredictionsError(f"{part_path}: not part {r} of {len(parts)}")
            ids = f["vertex_ids"][:]
            if len(ids) != p["rows"]:
                raise PredictionsError(f"{part_path}: {len(ids)} rows, index says {p['rows']}")
            if len(ids) and (ids.min() < 0 or ids.max() >= n or seen[ids].any() or
                             len(np.unique(ids)) != len(ids)):
                raise PredictionsError(f"{part_path}: vertex ids out of range or repeated")
            seen[ids] = True
            for key in ("predictions", "logits", "embeddings"):
                if key in out:
                    if key not in f or f[key].shape[0] != len(ids):
                        raise PredictionsError(f"{part_path}: /{key} missing or of wrong length")
                    out[key][ids] = f[key][:]
    if not seen.all():
        raise PredictionsError(f"{path}: {int((~seen).sum())} vertices have no prediction")
    return out


def read_predictions(path):
    """The predictions at PATH (a file or a parts directory) in the original vertex order."""
    return _read_directory(path) if os.path.isdir(path) else _read_file(path)


def write_single_file(p, path):
    """Writes read_predictions' result as one file in the one-rank format."""
    with h5py.File(path, "w") as f:
        f.attrs["strata_format"] = "predictions"
        f.attrs["strata_format_version"] = np.int64(1)
        for k, v in p["attrs"].items():
            f.attrs[k] = np.int64(v) if isinstance(v, int) else v
        f["predictions"] = p["predictions"]
        f["logits"] = p["logits"]
        if "embeddings" in p:
            f["embeddings"] = p["embeddings"]


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="read_predictions.py",
        description="Read `strata predict` output (one file, or a directory of per-rank parts "
                    "and index.json) in the original vertex order; print N, C and the parts.",
        epilog="Exit status: 0 on success, 1 on a bad input, 2 on bad usage.")
    parser.add_argument("path", metavar="PATH",
                        help="predictions file (.h5) or predictions directory")
    parser.add_argument("--out", metavar="FILE.h5",
                        help="write the assembled predictions as one file in the one-rank format")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv[1:])  # exits 2 on bad usage, 0 after --help
    try:
        p = read_predictions(args.path)
    except (PredictionsError, OSError, KeyError, ValueError) as e:
        print(f"read_predictions: error: {e}", file=sys.stderr)
        return 1
    n, c = p["logits"].shape
    print(f"{args.path}: {n} vertices, {c} classes, {len(p['parts'])} part(s): " +
          ", ".join(f"{q['file']} {q['rows']} rows" for q in p["parts"]))
    if args.out:
        write_single_file(p, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
