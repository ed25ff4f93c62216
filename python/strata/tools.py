"""strata.partition and strata.plan: the `strata partition` and `strata plan` commands, run as
the program installed beside this module (strata.cli_path()), their JSON reports returned."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Optional, Sequence

from . import _strata
from .graph import Graph


def _cli(args: list) -> str:
    from . import cli_path
    p = subprocess.run([cli_path()] + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode != 0:
        lines = [x for x in p.stderr.strip().splitlines() if x]
        raise _strata.Error(lines[-1].removeprefix("strata: error: ") if lines else
                            f"strata {args[0]} exited {p.returncode}")
    return p.stdout


def _with_file(data, run):
    """Runs run(path) on a graph file: `data`'s path, or a Graph saved to a temporary file."""
    if isinstance(data, Graph):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "graph.h5")
            data.save(path)
            return run(path)
    return run(os.fspath(data))


def partition(data: Graph | str | os.PathLike, num_parts: int, out: str | os.PathLike, *,
              method: str = "metis", seed: int = 0, chunks: int = 0,
              balance: str = "vertices,edges,train", overwrite: bool = False) -> dict:
    """Partitions a graph into `num_parts` parts written to the directory `out` (what
    `strata partition` does; docs/partition-format.md); returns its report (partition.json).
    Train on it with Trainer(out, ...) under mpirun -np num_parts: each rank reads its part."""
    args = ["--parts", num_parts, "--out", os.fspath(out), "--method", method, "--seed", seed,
            "--chunks", chunks, "--balance", balance, "--json"] + (["--force"] if overwrite else [])
    return _with_file(data, lambda p: json.loads(_cli(["partition", "--data", p] + args)))


def plan(data: Graph | str | os.PathLike, *, ranks: Sequence[int], model: str = "gcn",
         machine: Optional[str] = None, threads: int = 0, seed: int = 0, **model_options) -> dict:
    """The layout planner (`strata plan --json`, docs/planner.md) for `ranks` rank counts:
    the predicted epoch time and memory of each layout. Trainer(..., plan="auto") applies it."""
    args = ["--model", model, "--ranks", ",".join(str(r) for r in ranks), "--seed", seed, "--json"]
    if threads:
        args += ["--threads", threads]
    if machine:
        args += ["--machine", machine]
    for key, value in model_options.items():
        flag = "--" + key.rstrip("_").replace("_", "-")
        args += [flag] if value is True else [flag, value]
    return _with_file(data, lambda p: json.loads(_cli(["plan", "--data", p] + args)))
