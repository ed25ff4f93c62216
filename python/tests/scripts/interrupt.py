"""A SIGINT (Ctrl-C) to this process during fit(): the run stops at an epoch boundary and
fit() raises KeyboardInterrupt; prints the epoch it stopped after."""
import os
import signal

import strata

t = strata.Trainer(strata.datasets.cora(), seed=1, threads=1, epochs=1000)
try:
    t.fit(callback=lambda r: os.kill(os.getpid(), signal.SIGINT) if r["epoch"] == 3 else None)
except KeyboardInterrupt as e:
    print(f"KeyboardInterrupt after epoch {t.result.epoch}: {e}")
