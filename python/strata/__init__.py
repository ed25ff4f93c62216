"""Strata from Python: full-graph GNN training across many processes (docs/python.md).

    import strata
    graph = strata.datasets.cora()                 # or Graph.from_pyg(data), from_arrays, load
    trainer = strata.Trainer(graph, model="gcn", seed=1)
    result = trainer.fit(callback=strata.callbacks.Print(every=50))
    pred = trainer.predict().gather()              # rank 0: every vertex, in vertex order

Under MPI: `mpirun -np K .venv/bin/python train.py` (one process per rank).
"""

from . import _strata
from ._mpi import rank, world_size
from ._strata import Error, OptionError
from .graph import Graph, load
from .slice import GraphSlice
from .trainer import FitResult, Predictions, Trainer
from . import callbacks, datasets
from .tools import partition, plan

__version__ = _strata.__version__


def _launched_with_ranks() -> bool:
    """Started by mpirun/srun with more than one rank (then MPI and the abort hook start now)."""
    import os
    for key in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"):
        if int(os.environ.get(key, "1") or 1) > 1:
            return True
    return False


if _launched_with_ranks():
    from . import _mpi as _m
    _m.ensure()


def build_info() -> dict:
    """What this module was built with and runs under."""
    import os
    import sys
    return {
        "version": __version__,
        "build_type": _strata.build_type,
        "built_for_python": _strata.built_for_python,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "module": _strata.__file__,
        "cli": cli_path(),
        "cli_exists": os.path.exists(cli_path()),
    }


def cli_path() -> str:
    """The `strata` program installed beside this module."""
    import os
    return os.path.join(os.path.dirname(__file__), "bin", "strata")


__all__ = ["Error", "OptionError", "Graph", "GraphSlice", "load", "Trainer", "FitResult", "Predictions",
           "callbacks", "datasets", "partition", "plan", "rank", "world_size", "build_info", "cli_path",
           "__version__"]
