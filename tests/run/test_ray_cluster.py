"""Ray's processes live no longer than the run that started them; a cluster the run joined is
left running; a worker node killed mid-cell and a lost head end as docs/running.md says.

The first tests are cheap: the reaper on a tree of ``sleep`` processes, the executor on a
stand-in ``ray`` module. The last one starts a real two-node cluster (slow)."""

from __future__ import annotations

import concurrent.futures as cf
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import pytest

from robustbnn.run import executors
from robustbnn.run.executors import ClusterLost, RayExecutor
from tests.run._grid import bench_cmd, env, results_bytes, run

RAY_CLUSTER = Path(executors.__file__).with_name("ray_cluster.py")


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    """The processes of ``pids`` still alive after ``seconds`` (polled)."""
    deadline = time.monotonic() + seconds
    while (left := [p for p in pids if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


DRIVER = """
import subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from ray_cluster import Reaper, descendants
child = subprocess.Popen(["sleep", "300"])
# a process that starts its own child, as the raylet starts agents that outlive it
parent = subprocess.Popen([sys.executable, "-c",
    "import subprocess, time; subprocess.Popen(['sleep', '300']); time.sleep(300)"])
time.sleep(0.3)
reaper = Reaper([child.pid, parent.pid])
print(*descendants([child.pid, parent.pid]), flush=True)
time.sleep(300)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the reaper reads /proc (Linux)")
def test_the_reaper_kills_the_driver_s_tree_when_the_driver_is_sigkilled() -> None:
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(RAY_CLUSTER.parent)],
                              stdout=subprocess.PIPE, text=True)
    tree = [int(p) for p in driver.stdout.readline().split()]
    try:
        assert len(tree) == 3, tree  # sleep, the python parent and its own sleep
        driver.kill()
        driver.wait()
        assert _gone_within(tree, 5.0) == []
    finally:
        for pid in tree:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


class _FakeRay(types.ModuleType):
    """A stand-in ``ray``: records init/shutdown; ``init`` of a local Ray starts a ``sleep``
    child, as ``ray.init`` starts its GCS and raylet; the GCS answers ``session``."""

    def __init__(self) -> None:
        super().__init__("ray")
        self.calls: list[tuple] = []
        self.options: dict = {}
        self.session = b"session_1"
        self.started: list[subprocess.Popen] = []
        self.futures: list[cf.Future] = []
        gcs = types.SimpleNamespace(internal_kv_get=lambda *a, **k: self.session)
        worker = types.SimpleNamespace(global_worker=types.SimpleNamespace(gcs_client=gcs))
        self._private = types.SimpleNamespace(worker=worker)

    def is_initialized(self) -> bool:
        return False

    def init(self, *, address: str, **kwargs: object) -> None:
        self.calls.append(("init", address))
        if address == "local":
            self.started.append(subprocess.Popen(["sleep", "300"]))

    def shutdown(self) -> None:
        self.calls.append(("shutdown",))

    def remote(self, fn: object) -> object:
        fake = self

        class Task:
            def options(self, **kwargs: object) -> Task:
                fake.options = kwargs
                return self

            def remote(self, job: object) -> object:
                future: cf.Future = cf.Future()  # never finishes: a task on a lost cluster
                fake.futures.append(future)
                return types.SimpleNamespace(future=lambda: future)

        return Task()


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> _FakeRay:
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    yield fake
    for proc in fake.started:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the reaper reads /proc (Linux)")
def test_a_local_ray_is_its_run_s_own_and_stopped_on_close(fake_ray: _FakeRay) -> None:
    executor = RayExecutor(None, 1)
    (started,) = fake_ray.started
    # "local": never a Ray that `ray start` left on this machine
    assert fake_ray.calls == [("init", "local")]
    executor.submit(len, [1])
    # Ray resubmits a task whose node died; an exception is the scheduler's to retry
    assert fake_ray.options["max_retries"] == 3
    assert fake_ray.options["retry_exceptions"] is False
    executor.close()
    assert fake_ray.calls == [("init", "local"), ("shutdown",)]
    assert _gone_within([started.pid], 5.0) == []  # what shutdown left, the reaper killed


def test_a_joined_cluster_is_only_left_and_its_loss_ends_the_run_in_one_line(
        fake_ray: _FakeRay, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RayExecutor, "watch_interval", 0.02)
    executor = RayExecutor("10.0.0.1:6379", 1)
    waiting = executor.submit(len, [1])
    fake_ray.session = b"session_2"  # the head was restarted: a new, empty cluster
    with pytest.raises(RuntimeError) as err:  # not a UserError: the scheduler retries it ...
        waiting.result(timeout=5)
    assert str(err.value) == "the Ray cluster at 10.0.0.1:6379 was lost"
    message = ("lost the Ray cluster at 10.0.0.1:6379 (its head was restarted, which starts a "
               "new, empty cluster); every finished cell is kept: start the cluster again and "
               "rerun the same command to resume")
    with pytest.raises(ClusterLost) as lost:  # ... and the retry ends the run, in one line
        executor.submit(len, [1])
    assert str(lost.value) == message
    executor.close()
    # joined, so only disconnected: nothing of the cluster was started or stopped here
    assert fake_ray.calls == [("init", "10.0.0.1:6379"), ("shutdown",)]
    assert fake_ray.started == []


def _ray_start(ray_dir: Path, port: int, node: int) -> None:
    """``ray start``: the head (node 0) or worker node ``node``, one CPU, its own ports."""
    base = port + 10 * node
    cmd = [str(Path(sys.executable).with_name("ray")), "start", "--node-ip-address=127.0.0.1",
           "--num-cpus=1", "--object-store-memory=100000000", "--disable-usage-stats",
           f"--node-manager-port={base + 1}", f"--object-manager-port={base + 2}",
           f"--min-worker-port={30000 + 1000 * node}", f"--max-worker-port={30099 + 1000 * node}",
           f"--dashboard-agent-listen-port={base + 4}", f"--dashboard-agent-grpc-port={base + 5}",
           f"--runtime-env-agent-port={base + 6}", f"--metrics-export-port={base + 7}"]
    if node == 0:
        cmd += ["--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={ray_dir}"]
    else:
        cmd += [f"--address=127.0.0.1:{port}"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=_ray_env(), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


# The cluster's own token (Ray's format: 32 random bytes in hex). `ray start --head` under
# RAY_AUTH_MODE=token refuses to start without one and does not create it, so a test that
# relied on ~/.ray/auth_token passed only where an earlier ray.init() had left one there.
_TOKEN = secrets.token_hex(32)


def _ray_env() -> dict[str, str]:
    return {**env(), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": _TOKEN,
            "RAY_DISABLE_USAGE_STATS": "1"}


def _busy_raylet(port: int) -> int | None:
    """The raylet of the worker node at ``port`` if one of its workers runs a cell."""
    from robustbnn.run.ray_cluster import children, pids_with_arg

    for raylet in pids_with_arg(f"--node_manager_port={port + 11}"):
        for child in children(raylet):
            if Path(f"/proc/{child}/cmdline").read_bytes().startswith(b"ray::execute_cell"):
                return raylet
    return None


@pytest.mark.slow
def test_a_worker_node_killed_mid_cell_changes_no_number(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'robustbnn[ray]')")
    from robustbnn.run.ray_cluster import descendants, kill_tree, pids_with_arg

    # Ray's socket paths must fit in 107 bytes: a short folder, not pytest's tmp_path
    port, ray_dir = 6590, Path(tempfile.mkdtemp(prefix="rbray", dir="/tmp"))
    # Both training cells run 10-30 s (11 and 6 s on a 2-core Xeon; 1000 and 400 epochs took
    # 3.7 and 2.0 s there, too short to be seen busy twice), so whichever the worker node
    # gets, it is killed in one.
    longer = ("--set", "mlp.epochs=3000", "--set", "mc_dropout.epochs=1200")
    try:
        _ray_start(ray_dir, port, 0)
        _ray_start(ray_dir, port, 1)
        cmd = bench_cmd(tmp_path / "cluster", *longer, "--executor", "ray", "--ray-address",
                        f"127.0.0.1:{port}", cache=tmp_path / "cache-cluster")
        bench = subprocess.Popen(cmd, env=_ray_env(), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        deadline, victim = time.monotonic() + 300, None
        while victim is None and bench.poll() is None and time.monotonic() < deadline:
            if (busy := _busy_raylet(port)) is not None:
                time.sleep(1)  # still busy a second later: mid-cell
                victim = busy if _busy_raylet(port) == busy else None
            time.sleep(0.3)
        if victim is None:
            ended = bench.poll()
            bench.kill()
            pytest.fail("no cell ran on the worker node long enough to kill it (the bench "
                        f"{'exited ' + str(ended) if ended is not None else 'still ran'}): "
                        + bench.communicate(timeout=60)[1][-3000:])
        os.kill(victim, signal.SIGKILL)
        _, log = bench.communicate(timeout=600)
        assert bench.returncode == 0, log
        # Ray ran the killed cell again on the head. A retried task of a cell already stored
        # would find its file under the lock and count as reused: none was computed twice.
        assert "cells: 0 reused, 40 run, 0 failed, 0 skipped" in log
    finally:
        kill_tree(descendants(pids_with_arg(f"{ray_dir}/")))
        shutil.rmtree(ray_dir, ignore_errors=True)
    local = run(bench_cmd(tmp_path / "local", *longer, "--jobs", "1",
                          cache=tmp_path / "cache-local"))
    assert local.returncode == 0, local.stderr
    assert results_bytes(tmp_path / "cluster") == results_bytes(tmp_path / "local")
