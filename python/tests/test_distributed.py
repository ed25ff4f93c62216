"""Python under mpirun: equal to `mpirun strata train` bit for bit on 2 ranks, an exception
on one rank ends every rank (never a hang), Ctrl-C stops at an epoch boundary."""

import os
import time

import pytest

from support import CORA, PYTHON, SCRIPTS, cli, clean_env, records, run, same_config, stable

EPOCHS = 8


@pytest.fixture(scope="module")
def cli_two_ranks(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli2")
    run([cli(), "train", "--data", CORA, "--seed", "1", "--threads", "1", "--epochs",
         str(EPOCHS), "--metrics", str(d / "m.jsonl"), "--quiet"], ranks=2)
    return records(d / "m.jsonl")


@pytest.mark.parametrize("source", ["graph", "path"])
def test_two_ranks_equal_strata_train_bit_for_bit(cli_two_ranks, tmp_path, source):
    p = run([PYTHON, os.path.join(SCRIPTS, "train.py"), str(tmp_path / "m.jsonl"), source,
             str(EPOCHS)], ranks=2)
    assert "gathered 2708 rows" in p.stdout
    ours = records(tmp_path / "m.jsonl")
    same_config(ours[0]["config"], cli_two_ranks[0]["config"])
    assert [stable(r) for r in ours] == [stable(r) for r in cli_two_ranks]
    assert ours[0]["halo_bytes"] > 0


@pytest.mark.parametrize("where", ["before", "callback", "after"])
def test_an_exception_on_rank_1_ends_both_ranks(where):
    start = time.monotonic()
    p = run([PYTHON, os.path.join(SCRIPTS, "fail_on_rank1.py"), where], ranks=2, timeout=120,
            check=False)
    elapsed = time.monotonic() - start
    assert p.returncode != 0
    assert f"rank 1 failed {dict(before='before training', callback='in the callback', after='after training')[where]}" in p.stderr
    assert "[rank 1] error: RuntimeError" in p.stderr
    assert elapsed < 40, f"took {elapsed:.1f} s"


def test_without_the_abort_hook_the_communication_timeout_ends_the_job():
    """STRATA_NO_ABORT_HOOK=1: rank 1's exception ends rank 1 only; rank 0, waiting in
    predict(), gives up after comm_timeout (5 s) and ends the job."""
    start = time.monotonic()
    p = run([PYTHON, os.path.join(SCRIPTS, "fail_on_rank1.py"), "after"], ranks=2,
            timeout=120, check=False, env=clean_env(STRATA_NO_ABORT_HOOK="1"))
    elapsed = time.monotonic() - start
    assert p.returncode != 0, p.stdout + p.stderr
    assert "rank 1 failed after training" in p.stderr
    assert "no progress from rank 1 for 5 s" in p.stderr, p.stderr
    assert elapsed < 50, f"took {elapsed:.1f} s"


def test_ctrl_c_stops_at_an_epoch_boundary_and_raises_keyboard_interrupt():
    p = run([PYTHON, os.path.join(SCRIPTS, "interrupt.py")])
    assert "KeyboardInterrupt after epoch 3" in p.stdout, p.stdout + p.stderr
