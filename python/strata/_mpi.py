"""MPI for a Python process: initialised by strata or by mpi4py, whichever comes first, and
finalised by whoever initialised it. With more than one rank, an uncaught exception ends the whole
job (every rank, one line on stderr) instead of leaving the other ranks waiting in a collective;
set STRATA_NO_ABORT_HOOK=1 to keep Python's own hook."""

import atexit
import os
import sys
import traceback

from . import _strata

_state = {"ready": False, "owned": False}


def ensure() -> None:
    """Initialises MPI unless it is running (idempotent)."""
    if _state["ready"]:
        return
    owned = _strata.ensure_mpi()
    _state.update(ready=True, owned=owned)
    if owned:
        atexit.register(_strata.finalize_mpi)
    if _strata.world_size() > 1 and os.environ.get("STRATA_NO_ABORT_HOOK") != "1":
        _install_abort_hook()


def rank() -> int:
    """This process's rank in MPI_COMM_WORLD (initialises MPI)."""
    ensure()
    return _strata.world_rank()


def world_size() -> int:
    """The number of ranks in MPI_COMM_WORLD (initialises MPI)."""
    ensure()
    return _strata.world_size()


def _install_abort_hook() -> None:
    previous = sys.excepthook

    def hook(kind, value, tb):
        if issubclass(kind, KeyboardInterrupt) and _strata.world_size() == 1:
            previous(kind, value, tb)
            return
        traceback.print_exception(kind, value, tb, file=sys.stderr)
        sys.stderr.flush()
        line = f"[rank {_strata.world_rank()}] error: {kind.__name__}: {value}"
        _strata.end_job(line, 1)

    sys.excepthook = hook
