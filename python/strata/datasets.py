"""Bundled datasets (no downloads)."""

from __future__ import annotations

import os

from .graph import Graph


def _repo_data() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.environ.get("STRATA_DATA", ""),
                      os.path.join(here, "data"),
                      os.path.join(here, "..", "..", "data")):
        if candidate and os.path.exists(os.path.join(candidate, "cora.h5")):
            return candidate
    raise FileNotFoundError("cora.h5 not found: set STRATA_DATA to the repository's data/")


def path(name: str) -> str:
    """The path of a bundled file ("cora.h5")."""
    return os.path.join(_repo_data(), name)


def cora() -> Graph:
    """The bundled Cora (2708 vertices, 10556 edges, 1433 features, 7 classes, Planetoid split):
    the repository's data/cora.h5, also installed with the package."""
    return Graph.load(os.path.join(_repo_data(), "cora.h5"))
