"""Rank 1 raises while rank 0 goes on (argv[1]: before: before the Trainer, while rank 0
constructs it; callback: in fit's callback; after: after fit, while rank 0 predicts)."""
import sys
import time

import strata

where = sys.argv[1]
graph = strata.datasets.cora()
if where == "before" and strata.rank() == 1:
    raise RuntimeError("rank 1 failed before training")


def callback(record):
    if where == "callback" and strata.rank() == 1 and record["epoch"] == 3:
        raise RuntimeError("rank 1 failed in the callback")


t = strata.Trainer(graph, seed=1, threads=1, epochs=5 if where == "after" else 100000,
                   comm_timeout=5, partition_method="random")
t.fit(callback=callback)
if where == "after" and strata.rank() == 1:
    raise RuntimeError("rank 1 failed after training")
t.predict()
time.sleep(60)  # rank 0 must not get here and linger: the job ends
