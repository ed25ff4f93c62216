"""Ready-made fit() callbacks."""

from __future__ import annotations

import sys

from . import _mpi


class Print:
    """Prints one line every `every` epochs (and evaluated epochs' accuracies) on rank 0."""

    def __init__(self, every: int = 1, file=None):
        self.every = every
        self.file = file

    def __call__(self, record: dict):
        if _mpi.rank() != 0 or record["epoch"] % self.every != 0:
            return None
        line = f"epoch {record['epoch']:4d} loss {record['loss']:.4f}"
        if record.get("evaluated"):
            line += (f" train {record['train_acc']:.4f} val {record['val_acc']:.4f}"
                     f" test {record['test_acc']:.4f}")
        line += f" {record['epoch_s'] * 1e3:.1f} ms"
        print(line, file=self.file or sys.stdout, flush=True)
        return None


class StopAt:
    """Stops the run once `key` (e.g. "val_acc") reaches `value` on an evaluated epoch."""

    def __init__(self, key: str, value: float):
        self.key, self.value = key, value

    def __call__(self, record: dict):
        v = record.get(self.key)
        if v is not None and v >= self.value:
            return f"{self.key} = {v:.4f} reached {self.value}"
        return None
