"""``--cell-timeout`` holds whatever a cell does with signals (issue 49, item 5): a cell that
swallows the alarm's exception, or sets ``SIGALRM`` to ``SIG_IGN``, is killed from the main
process once it is past its limit and a grace period, and fails in one line."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.run.limits import GRACE_S, CellLimitExceeded, CellLimits, guard
from robustbnn.run.watched import WatchedPool
from tests.plugins.fresh import forgotten_after_each_test
from tests.run import _watched_jobs
from tests.run.test_worker_lifetime import _alive

PLUGIN = "tests.run._stubborn_plugin"  # never imported here: it would register at collection
RUN_S = 60.0  # how long the stubborn model runs unless stopped ($RBNN_STUBBORN_S)

_forgotten = forgotten_after_each_test(PLUGIN)


def _bench(out: Path, *extra: str) -> list[str]:
    return ["bench", "--suite", "smoke", "--no-cache", "--attacks", "fgsm", "--robustness",
            "none", "--shift", "none", "--plugin", PLUGIN, "--models", "stubborn_model",
            "--out", str(out), *extra]


@pytest.mark.bench
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize(("how", "jobs"), [("swallow", "1"), ("ignore", "2")])
def test_a_cell_that_defeats_the_alarm_is_killed_and_fails_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        how: str, jobs: str) -> None:
    monkeypatch.setenv("RBNN_STUBBORN", how)
    monkeypatch.setenv("RBNN_STUBBORN_S", str(RUN_S))
    monkeypatch.setenv("RBNN_SLOW_MARK", str(tmp_path / "pids"))
    out = tmp_path / "out"
    start = time.monotonic()
    code = main(_bench(out, "--jobs", jobs, "--threads", "1", "--cell-timeout", "3"))
    wall = time.monotonic() - start
    err = capsys.readouterr().err
    assert code == 1
    assert ("robustbnn: error: cell 'train stubborn_model' failed (the cell ran past its time "
            f"limit of 3 s (--cell-timeout) and did not stop (it caught or ignored the alarm), "
            f"so its worker process was killed {GRACE_S:g} s later; raise the limit or make "
            "the cell smaller);") in err, err
    assert err.count("time limit") == 1  # not retried: it would run as long again
    assert wall < RUN_S - 10, f"the run took {wall:.1f} s: the cell was not stopped"
    pids = [int(p.name) for p in (tmp_path / "pids").iterdir()]
    assert pids and pids != [os.getpid()]  # it ran in a worker process, even with --jobs 1
    assert not any(_alive(pid) for pid in pids)  # and that worker is gone


def _swallow_the_alarm_once(limits: CellLimits) -> str:
    """A body that catches the alarm's exception, then returns as if all were well."""
    with guard(limits):
        try:
            time.sleep(5)
        except CellLimitExceeded:
            pass
    return "finished"


def test_a_body_that_swallows_the_alarm_and_returns_still_fails() -> None:
    # Before: the guard returned normally, and the cell's late result counted.
    with pytest.raises(CellLimitExceeded, match=r"^the cell ran past its time limit of 0.2 s"):
        _swallow_the_alarm_once(CellLimits(timeout_s=0.2))


@pytest.mark.bench
@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads /proc (Linux)")
def test_a_cell_that_ignores_the_memory_signal_is_killed_and_the_next_gets_a_new_worker(
) -> None:
    limits = CellLimits(memory_mb=200)
    pool = WatchedPool(1, limits)
    first = pool.submit(_watched_jobs.pid, limits).result(timeout=120)
    start = time.monotonic()
    error = pool.submit(_watched_jobs.grow_ignoring_the_alarm, limits).exception(timeout=120)
    assert time.monotonic() - start < 20
    assert isinstance(error, CellLimitExceeded)
    assert str(error) == (
        "the cell grew its process's memory past its limit of 200 MiB (--cell-memory-mb) and "
        f"did not stop (it caught or ignored the signal), so its worker process was killed "
        f"{GRACE_S:g} s later; raise the limit or make the cell smaller")
    assert not _alive(first)
    second = pool.submit(_watched_jobs.pid, limits).result(timeout=120)
    assert second != first and _alive(second)
    pool.close()
    assert not _alive(second)
