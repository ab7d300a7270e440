"""Pool workers exit when the main process dies (issue 28, defect 9): after a SIGKILL of the
main process they, and the multiprocessing resource tracker, used to idle forever."""

from __future__ import annotations

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
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in left) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [(p, _cmdline(p)) for p in left if _alive(p)]
    finally:  # whatever outlived the test (today's behaviour) must not outlive the session
        if main.poll() is None:
            left |= _children(main.pid)
            main.kill()
            main.wait()
        for pid in left:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
