"""Pool workers exit when the main process dies (issue 28, defect 9): after a SIGKILL of the
main process they, and the multiprocessing resource tracker, used to idle forever."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

# The main process: a pool of two workers, each busy with a long job, then wait to be killed.
MAIN = textwrap.dedent("""
    import sys
    import time
    from pathlib import Path

    from robustbnn.run.executors import PoolExecutor


    def busy(marker):
        Path(marker).touch()
        time.sleep(600)


    if __name__ == "__main__":
        pool = PoolExecutor(2)
        markers = [Path(sys.argv[1]) / f"{i}.started" for i in range(2)]
        futures = [pool.submit(busy, str(m)) for m in markers]
        while not all(m.exists() for m in markers):
            time.sleep(0.05)
        print("busy", flush=True)
        time.sleep(600)
""")


def _children(pid: int) -> set[int]:
    """Live (not zombie) processes whose parent is ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if int(ppid) == pid and state != "Z":
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.bench
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_workers_and_the_resource_tracker_exit_when_the_main_process_is_killed(
        tmp_path: Path) -> None:
    script = tmp_path / "main.py"
    script.write_text(MAIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    main = subprocess.Popen([sys.executable, str(script), str(tmp_path)],
                            stdout=subprocess.PIPE, env=env, text=True)
    left: set[int] = set()
    try:
        assert main.stdout.readline().strip() == "busy"  # both workers run a job
        assert len({p for p in _children(main.pid) if "spawn_main" in _cmdline(p)}) == 2
        left = _children(main.pid)  # the workers and the resource tracker
        assert any("resource_tracker" in _cmdline(p) for p in left)
        main.send_signal(signal.SIGKILL)
        main.wait()
        assert not _gone_within(left, 10)
    finally:
        _reap(main, left)


# A bench whose slow_model trains for minutes (tests/run/_slow_plugin.py) beside mlp, whose
# cells finish meanwhile: two workers, one stuck in slow_model's training.
REPO = Path(__file__).resolve().parents[2]


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_bench(tmp_path: Path, how: str) -> tuple[subprocess.Popen, Path, Path]:
    """``robustbnn bench --suite smoke --jobs 2`` with slow_model; returns once a worker is in
    slow_model's training (its marker file exists)."""
    out, mark = tmp_path / "out", tmp_path / "mark"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path]),
           "RBNN_SLOW": how, "RBNN_SLOW_MARK": str(mark)}
    main = subprocess.Popen(
        [sys.executable, "-m", "robustbnn", "bench", "--suite", "smoke", "--jobs", "2",
         "--threads", "1", "--no-cache", "--models", "mlp,slow_model", "--attacks", "fgsm",
         "--plugin", "tests.run._slow_plugin", "--out", str(out)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # As from a terminal: a test run started in the background (`.ci/run &`, nohup) has
        # SIGINT ignored, which its children inherit, and Python then leaves Ctrl-C ignored.
        preexec_fn=_sigint_default)
    deadline = time.monotonic() + 240
    while not (mark.is_dir() and any(mark.iterdir())):
        assert main.poll() is None, main.communicate()
        assert time.monotonic() < deadline, "slow_model's training never started"
        time.sleep(0.2)
    return main, out, mark


def _workers(pid: int) -> set[int]:
    """The pool workers and the resource tracker of the main process ``pid``."""
    return {p for p in _children(pid) if "multiprocessing" in _cmdline(p)}


def _gone_within(pids: set[int], seconds: float) -> list[tuple[int, str]]:
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [(p, _cmdline(p)) for p in pids if _alive(p)]


def _reap(main: subprocess.Popen, left: set[int]) -> None:
    """Whatever outlived a test must not outlive the session."""
    if main.poll() is None:
        left |= _children(main.pid)
        main.kill()
        main.wait()
    for pid in left:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.bench
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_workers_end_within_a_second_of_a_killed_bench_even_in_native_code(
        tmp_path: Path) -> None:
    # slow_model's worker sleeps in native code that holds the GIL: no watchdog thread of it
    # can run, so only the kernel (the parent-death signal) ends it in time.
    main, _, mark = _start_bench(tmp_path, "gil")
    left = _workers(main.pid)
    try:
        assert {int(p.name) for p in mark.iterdir()} <= left
        assert len([p for p in left if "spawn_main" in _cmdline(p)]) == 2
        main.send_signal(signal.SIGKILL)
        main.wait()
        assert _gone_within(left, 1.5) == []
    finally:
        _reap(main, left)


@pytest.mark.bench
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize(("sig", "code", "how"), [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                                  (signal.SIGINT, 130, "interrupted")])
def test_sigterm_and_sigint_stop_the_workers_keep_finished_cells_and_say_so_in_one_line(
        tmp_path: Path, sig: int, code: int, how: str) -> None:
    main, out, _ = _start_bench(tmp_path, "sleep")
    left = _workers(main.pid)
    try:
        deadline = time.monotonic() + 240
        while not [p for p in (out / "cells").glob("*.json") if p.name != "identity.json"]:
            assert time.monotonic() < deadline, "no cell finished"
            time.sleep(0.2)
        main.send_signal(sig)
        _, err = main.communicate(timeout=30)
        assert main.returncode == code
        assert _gone_within(left, 1.5) == []
        assert err.strip().splitlines()[-1] == (
            f"robustbnn: {how}; every finished cell is kept, so rerunning the same command "
            "resumes")
        assert "Traceback" not in err
        cells = [p for p in (out / "cells").glob("*.json") if p.name != "identity.json"]
        assert cells and all(json.loads(p.read_text())["digest"] for p in cells)
    finally:
        _reap(main, left)
