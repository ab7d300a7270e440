"""A third-party package installed through its entry points (``tests/plugins/thirdparty``), one
plug-in of each kind, run as a user runs it: the console script, no ``--plugin``, the default
``--jobs auto``, then ``--jobs 2`` and ``--executor ray``, each from a fresh model cache, and a
cached rerun. Every run gives the same results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.run._grid import results_bytes

SCRIPT = Path(sys.executable).with_name("robustbnn")  # the installed console script


def _bench(thirdparty, out: Path, cache: Path, *extra: str) -> str:  # noqa: ANN001
    """``robustbnn bench --suite tp_smoke`` as a subprocess; its log, after checking exit 0."""
    # The defaults as a user has them: on a 2-core machine --jobs auto is two one-thread
    # workers, --jobs 2 the same, and Ray one one-thread task per core (robustbnn.bench).
    cmd = [str(SCRIPT), "bench", "--suite", thirdparty.suite, "--device", "cpu",
           "--out", str(out), "--cache-dir", str(cache), *extra]
    done = subprocess.run(cmd, env=thirdparty.env(), capture_output=True, text=True,
                          timeout=900, cwd=out.parent)
    assert done.returncode == 0, done.stderr
    return done.stderr


def _weights(cache: Path, model: str) -> list[Path]:
    """The trained weights of ``model`` in a model cache."""
    return sorted((cache / model).glob("*/model.safetensors"))


@pytest.mark.slow
def test_the_plugin_suite_is_identical_under_every_executor_and_cached(
        thirdparty, tmp_path: Path) -> None:  # noqa: ANN001
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'robustbnn[ray]')")
    assert SCRIPT.is_file(), f"no console script at {SCRIPT}; pip install -e ."
    for label, extra in (("auto", ()), ("jobs2", ("--jobs", "2")),
                         ("ray", ("--executor", "ray"))):
        _bench(thirdparty, tmp_path / label, tmp_path / f"cache-{label}", *extra)
        # each run trained the plug-in model in a worker, into its own fresh cache
        assert len(_weights(tmp_path / f"cache-{label}", thirdparty.model)) == 1, label
    before = {p: p.stat().st_mtime_ns for p in _weights(tmp_path / "cache-auto",
                                                         thirdparty.model)}
    log = _bench(thirdparty, tmp_path / "cached", tmp_path / "cache-auto")
    assert {p: p.stat().st_mtime_ns for p in before} == before  # loaded, not trained again
    assert "0 failed, 0 skipped" in log
    reference = results_bytes(tmp_path / "auto")
    for label in ("jobs2", "ray", "cached"):
        assert results_bytes(tmp_path / label) == reference, label

    results = pd.read_csv(tmp_path / "auto" / "results.csv", keep_default_na=False)
    assert set(results["model"]) == {thirdparty.model}
    assert thirdparty.attack in set(results["task"])
    ood = results[results["task"] == "ood"]
    assert thirdparty.ood_set in set(ood["dataset"])
    assert thirdparty.measure in set(ood[ood["dataset"] == thirdparty.ood_set]["measure"])
