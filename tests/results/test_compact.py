"""Compacting a run's per-example values changes no number of any report."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from robustbnn.results.compact import compact_arrays, main

ROOT = Path(__file__).resolve().parents[2]
TABLES = ("all_columns.json", "leaderboard.md", "leaderboard.json", "ood.md", "ood.csv",
          "attack.md", "table_attacks.md", "table_ood.md")


def _render(run: Path, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "robustbnn", "report", str(run), "--out", str(out),
                    "--no-figures", "--quiet"], check=True, cwd=ROOT)


def test_every_table_of_a_compacted_run_is_byte_for_byte_the_same(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for name in ("results.jsonl", "run.json"):
        shutil.copy(ROOT / "reports" / name, run / name)
    shutil.copytree(ROOT / "reports" / "examples", run / "examples")
    _render(run, tmp_path / "before")
    before = sum(f.stat().st_size for f in (run / "examples").iterdir())
    assert main([str(run / "examples")]) == 0
    after = sum(f.stat().st_size for f in (run / "examples").iterdir())
    assert after < 0.7 * before
    _render(run, tmp_path / "after")
    for name in TABLES:
        assert ((tmp_path / "after" / name).read_bytes()
                == (tmp_path / "before" / name).read_bytes()), name


def test_ranks_keep_ties_and_order_and_inexact_floats_stay() -> None:
    scores = np.array([0.5, 0.1, 0.5, np.float32(0.3), 0.9])
    out = compact_arrays({"g/adversary_detection_score": scores,
                          "g/expected_accuracy": np.array([0.1, 1 / 3]),
                          "g/accuracy": np.array([1.0, 0.0])})
    ranks = out["g/adversary_detection_score"]
    assert ranks.dtype == np.uint16 and ranks.tolist() == [2, 0, 2, 1, 3]
    assert out["g/expected_accuracy"].dtype == np.float64  # 1/3 is not a float32
    assert out["g/accuracy"].dtype == np.uint8


def test_a_folder_without_examples_is_refused(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path)]) == 2
    assert "holds no .npz files; pass a run's examples/ folder" in capsys.readouterr().err
