"""strata.Trainer: one training run through the same Session `strata train` runs
(training/session.hpp): `Trainer(graph, model="gcnii", epochs=..., **options).fit(callback=...)`,
then `.predict()`. Keyword names are the run configuration's (docs/training.md) and the model's
(docs/models.md); unset ones take the model's recipe."""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from . import _mpi, _strata
from .graph import Graph
from .slice import GraphSlice

_ALIASES = {"lambda_": "lambda"}


def _config_json(data, model, options: dict) -> str:
    run_keys = set(_strata.run_options())
    model_keys = set(_strata.model_options())
    spec: dict[str, Any]
    if isinstance(model, dict):
        spec = dict(model)
    else:
        spec = {"model": model}
    config: dict[str, Any] = {}
    for key, value in options.items():
        key = _ALIASES.get(key, key)
        if key in model_keys and key not in run_keys:
            spec[key] = value
        elif key in run_keys and key != "model":
            config[key] = value
        else:
            raise _strata.OptionError(
                f"{key} = {value!r}: not an option (run options: docs/training.md; "
                f"model options: docs/models.md)")
    config["model"] = spec
    if isinstance(data, (str, os.PathLike)):
        config["data"] = os.fspath(data)
    return json.dumps(config)


@dataclass
class FitResult:
    """How a run ended. Records are dicts with the metrics file's keys (docs/training.md)."""
    best: Optional[dict]
    selection: str
    epoch: int
    early_stopped: bool
    stop_reason: str
    checkpoint: str
    history: list = field(default_factory=list)

    @property
    def best_epoch(self) -> Optional[int]:
        return None if self.best is None else self.best["epoch"]

    @property
    def test_acc(self) -> Optional[float]:
        return None if self.best is None else self.best.get("test_acc")

    @property
    def val_acc(self) -> Optional[float]:
        return None if self.best is None else self.best.get("val_acc")


@dataclass
class Predictions:
    """This rank's rows: node_ids [R] (original vertex ids), logits [R, C], pred [R],
    embeddings [R, H] or None. The arrays own the C++ buffers the predictor wrote (no copy)."""
    node_ids: np.ndarray
    logits: np.ndarray
    pred: np.ndarray
    embeddings: Optional[np.ndarray]
    counts: list
    num_nodes: int
    split: int
    comm: Any = field(default=None, repr=False)  # the Trainer's mpi4py communicator, if given

    def accuracy(self, which: str = "test") -> float:
        i = {"train": 0, "val": 1, "test": 2}[which]
        correct, total = self.counts[2 * i], self.counts[2 * i + 1]
        return correct / total if total else float("nan")

    def in_vertex_order(self) -> "Predictions":
        """One rank's rows sorted by vertex id (on one rank: every vertex)."""
        order = np.argsort(self.node_ids, kind="stable")
        return Predictions(self.node_ids[order], self.logits[order], self.pred[order],
                           None if self.embeddings is None else self.embeddings[order],
                           self.counts, self.num_nodes, self.split, self.comm)

    def gather(self, root: int = 0) -> Optional["Predictions"]:
        """Every rank's rows collected on `root` in vertex order (None on the other ranks).
        Collective; needs mpi4py with more than one rank."""
        if self.comm is None:
            if _mpi.world_size() == 1:
                return self.in_vertex_order()
            from mpi4py import MPI
            comm = MPI.COMM_WORLD
        else:
            comm = self.comm
            if comm.Get_size() == 1:
                return self.in_vertex_order()
        parts = comm.gather((self.node_ids, self.logits, self.pred, self.embeddings), root=root)
        if comm.Get_rank() != root:
            return None
        ids = np.concatenate([p[0] for p in parts])
        order = np.argsort(ids, kind="stable")
        emb = None if parts[0][3] is None else np.concatenate([p[3] for p in parts])[order]
        return Predictions(ids[order], np.concatenate([p[1] for p in parts])[order],
                           np.concatenate([p[2] for p in parts])[order], emb, self.counts,
                           self.num_nodes, self.split, self.comm)


class Trainer:
    """Trainer(data, model="gcn", **options): `data` is a strata.Graph (the same on every rank),
    a strata.GraphSlice (each rank its own rows) or a path (`.h5`: on K ranks each rank reads its
    slice; a partition directory: each rank its part). `model` is a zoo name or a ModelSpec dict ({"model": "gcnii", "layers": 16}). Options
    are run options (epochs, lr, seed, threads, eval_every, select_by, patience, recompute,
    partition_method, metrics, overwrite, trace, checkpoint_dir, checkpoint_every, resume, plan,
    comm_timeout, ...) and model options (layers, hidden, dropout, alpha, lambda_, heads, ...).
    `comm` is the run option (auto, mpi, nccl) or an mpi4py communicator: the run's ranks are
    then that communicator's (a sub-communicator of MPI_COMM_WORLD; the run works on a duplicate
    of it, and predictions gather over it); the default is MPI_COMM_WORLD.
    Collective: every rank constructs it with the same arguments. Raises strata.OptionError
    for an option that cannot work ("ways = 0: must be at least 1")."""

    def __init__(self, data: Graph | str | os.PathLike, model: str | dict = "gcn", **options):
        _mpi.ensure()
        graph = data._g if isinstance(data, Graph) else data._s if isinstance(data, GraphSlice) \
            else None
        if graph is None and not isinstance(data, (str, os.PathLike)):
            raise TypeError("Trainer: data must be a strata.Graph, a strata.GraphSlice or a "
                            f"path, got {type(data)}")
        self._graph = data if graph is not None else None
        self._comm = None  # an mpi4py communicator: the run's ranks
        if "comm" in options and not isinstance(options["comm"], str):
            self._comm = options.pop("comm")
            if self._comm is not None and not hasattr(self._comm, "py2f"):
                raise TypeError("Trainer: comm must be an mpi4py communicator or a string "
                                f"(auto, mpi, nccl), got {type(self._comm)}")
        handle = None if self._comm is None else self._comm.py2f()
        self._t = _strata.Trainer(_config_json(data, model, options), graph, handle)
        self._warn()
        self.result: Optional[FitResult] = None

    def _warn(self) -> None:
        for text in self._t.take_warnings():
            warnings.warn(text, stacklevel=3)

    @property
    def config(self) -> dict:
        """The run configuration in force (recipe and layout resolved)."""
        return json.loads(self._t.config_json())

    @property
    def summary(self) -> dict:
        """The prepared run: ranks, device, model, planned memory (bytes), threads."""
        return self._t.summary()

    @property
    def notes(self) -> list:
        """What the run chose, one line each (split, recipe, threads, order, features, ...)."""
        return list(self._t.notes())

    def fit(self, callback: Optional[Callable[[dict], Any]] = None) -> FitResult:
        """Trains (collective; the GIL is released). `callback(record)` is called on every rank
        after each epoch with its metrics record (a dict, the metrics file's keys); returning
        True or a non-empty string stops every rank after that epoch (the string is the reason).
        An exception in the callback stops the run on every rank and is raised again here.
        Ctrl-C (SIGINT) stops every rank at an epoch boundary, then raises KeyboardInterrupt."""
        history: list = []

        def on_epoch(text: str):
            record = json.loads(text)
            history.append(record)
            if callback is None:
                return None
            answer = callback(record)
            if answer is True:
                return "the callback asked to stop"
            return str(answer) if answer else None

        out = self._t.fit(on_epoch)
        self._warn()
        best = None if out["best"] is None else json.loads(out["best"])
        self.result = FitResult(best, out["selection"], out["epoch"], out["early_stopped"],
                                out["stop_reason"], out["checkpoint"], history)
        if out["stopped_by_interrupt"]:
            raise KeyboardInterrupt(f"strata: stopped after epoch {out['epoch']} (SIGINT)")
        return self.result

    def predict(self, *, embeddings: bool = False,
                checkpoint: Optional[str | os.PathLike] = None) -> Predictions:
        """The best evaluated epoch's outputs for this rank's rows (evaluation mode), computed
        as `strata predict` does; from a checkpoint file when given. Collective."""
        out = self._t.predict(embeddings, os.fspath(checkpoint) if checkpoint else "")
        return Predictions(out["node_ids"], out["logits"], out["pred"], out["embeddings"],
                           list(out["counts"]), out["num_nodes"], out["split"], self._comm)
