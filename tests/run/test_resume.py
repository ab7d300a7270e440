"""Resuming: a run SIGKILLed anywhere and rerun ends with the bytes of an uninterrupted run;
executors agree; two concurrent runs on one cache train each model once."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.run._grid import bench_cmd, env, results_bytes, run

pytestmark = pytest.mark.bench  # every test here runs the smoke suite


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """An uninterrupted local run of the smoke suite, and its wall time."""
    out = tmp_path_factory.mktemp("baseline") / "out"
    start = time.perf_counter()
    done = run(bench_cmd(out, "--quiet"))
    assert done.returncode == 0, done.stderr
    return out, time.perf_counter() - start


def test_sigkill_at_three_random_moments_then_resume_gives_identical_results(
        baseline: tuple[Path, float], tmp_path: Path) -> None:
    reference, seconds = baseline
    out, rng = tmp_path / "out", random.Random(12)
    logs, kills = [], 0
    for _ in range(3):
        proc = subprocess.Popen(bench_cmd(out), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=env())
        time.sleep(rng.uniform(0.2, 0.8) * seconds)
        proc.send_signal(signal.SIGKILL)
        logs.append(proc.communicate()[0])
        if proc.returncode != -signal.SIGKILL:  # a resumed run had less left than the sleep
            assert proc.returncode == 0, logs[-1]
            break
        kills += 1
    assert kills >= 1, "the first run ended before it was killed"
    final = run(bench_cmd(out))
    assert final.returncode == 0, final.stderr
    assert "reusing" in "".join(logs) + final.stderr, "no finished cell was ever reused"
    assert results_bytes(out) == results_bytes(reference)
    stored = json.loads((out / "run.json").read_text())["cells"]
    assert stored["reused"] > 0 and stored["reused"] + stored["ran"] == stored["total"]
    assert not list(out.rglob("*.tmp")), "temporary files of killed runs were left"


def test_rerun_reuses_every_cell_and_rewrites_the_same_bytes(baseline: tuple[Path, float]
                                                             ) -> None:
    out, _ = baseline
    before = (out / "results.csv").read_bytes()
    again = run(bench_cmd(out))
    assert again.returncode == 0, again.stderr
    assert "cells: 40 reused, 0 run, 0 failed" in again.stderr
    assert (out / "results.csv").read_bytes() == before


def test_process_pool_gives_the_local_results(baseline: tuple[Path, float],
                                              tmp_path: Path) -> None:
    done = run(bench_cmd(tmp_path / "out", "--quiet", "--jobs", "2"))
    assert done.returncode == 0, done.stderr
    assert results_bytes(tmp_path / "out") == results_bytes(baseline[0])


def test_ray_gives_the_local_results(baseline: tuple[Path, float], tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'robustbnn[ray]')")
    from robustbnn.cli import main

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        code = main(["bench", "--suite", "smoke", "--executor", "ray", "--threads", "1",
                     "--no-cache", "--quiet", "--out", str(tmp_path / "out")])
    finally:
        ray.shutdown()
    assert code == 0
    assert results_bytes(tmp_path / "out") == results_bytes(baseline[0])


def test_two_concurrent_runs_on_one_cache_train_each_model_once(
        baseline: tuple[Path, float], tmp_path: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    procs = [subprocess.Popen(bench_cmd(out, cache=cache), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env()) for _ in range(2)]
    logs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], logs
    trained = "".join(logs).count("trained mlp:"), "".join(logs).count("trained mc_dropout:")
    assert trained == (1, 1), logs
    assert results_bytes(out) == results_bytes(baseline[0])
    entries = sorted(p.parent.parent.name for p in cache.glob("*/*/model.safetensors"))
    assert entries == ["mc_dropout", "mlp"]


def test_a_cell_of_an_older_output_format_is_recomputed_with_its_old_id(tmp_path: Path) -> None:
    from robustbnn.cli import main
    from robustbnn.run.cells import OUTPUT_FORMAT

    out = tmp_path / "out"
    args = ["bench", "--suite", "smoke", "--models", "mlp", "--attacks", "fgsm",
            "--robustness", "none", "--shift", "none", "--ood", "uniform", "--no-cache",
            "--quiet", "--out", str(out)]
    assert main(args) == 0
    before = results_bytes(out)
    (clean,) = [p for p in (out / "cells").glob("*.json")
                if json.loads(p.read_text()).get("cell", {}).get("task") == "clean"]
    payload = json.loads(clean.read_text())
    assert payload["format"] == OUTPUT_FORMAT
    # As an older robustbnn stored it: no format, no Brier or reliability rows.
    del payload["format"]
    payload["rows"] = [r for r in payload["rows"] if r["task"] == "clean"
                       and r["metric"] != "brier"]
    clean.write_text(json.dumps(payload))
    assert main(args) == 0
    again = json.loads(clean.read_text())
    assert again["format"] == OUTPUT_FORMAT and again["cell"]["id"] == clean.stem
    assert any(r["metric"] == "brier" for r in again["rows"])
    # Same id, same random streams: the recomputed cell gives the same results, byte for byte
    # (the wall-clock cost row aside).
    assert results_bytes(out) == before
