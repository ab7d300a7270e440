"""Cells by content: a ``folder:PATH`` OOD set's images are in the ids of the cells that score
it, and a plug-in measure adds its own cells without recomputing the others."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tests.run._grid import bench_cmd, run

PLUGIN = "tests.run._measure_plugin"


def _write_images(folder: Path, seed: int, count: int = 6) -> None:
    rng = np.random.default_rng(seed)
    for i in range(count):
        pixels = rng.integers(0, 256, size=(40, 30, 3), dtype=np.uint8)  # resized to 28 x 28
        Image.fromarray(pixels).save(folder / f"img{i}.png")


def _todo(out: Path, *args: str) -> list[str]:
    """The labels of the cells ``--plan`` lists as to run."""
    plan = run(bench_cmd(out, *args, "--plan"))
    assert plan.returncode == 0, plan.stderr
    return sorted(line.split(None, 4)[4] for line in plan.stdout.splitlines()
                  if re.match(r"[0-9a-f]{12} \S+ +todo ", line))


def _counts(stderr: str) -> tuple[int, int]:
    match = re.search(r"cells: (\d+) reused, (\d+) run, 0 failed", stderr)
    assert match, stderr
    return int(match.group(1)), int(match.group(2))


@pytest.mark.bench
def test_replacing_one_image_of_a_folder_set_recomputes_exactly_its_cells(
        tmp_path: Path) -> None:
    folder = tmp_path / "letters"
    folder.mkdir()
    _write_images(folder, 0)
    out = tmp_path / "out"
    args = ("--models", "mlp", "--ood", f"uniform,folder:{folder}", "--robustness",
            "adversarial_ood", "--attacks", "fgsm", "--shift", "none")
    first = run(bench_cmd(out, *args))
    assert first.returncode == 0, first.stderr
    assert _todo(out, *args) == []
    before = pd.read_csv(out / "results.csv", keep_default_na=False)
    Image.fromarray(np.zeros((28, 28), np.uint8)).save(folder / "img3.png")
    todo = _todo(out, *args)
    assert todo == sorted(f"{kind} mlp folder:{folder}" for kind in ("ood", "adversarial ood"))
    again = run(bench_cmd(out, *args))
    assert again.returncode == 0, again.stderr
    reused, ran = _counts(again.stderr)
    assert ran == 2 and reused > 0
    after = pd.read_csv(out / "results.csv", keep_default_na=False)
    mine = after["dataset"] == f"folder:{folder}"
    assert not after[mine]["value"].equals(before[before["dataset"] == f"folder:{folder}"]
                                           ["value"].reset_index(drop=True))
    # Every other row is the same number: the other cells were reused, not recomputed.
    others = ~mine & (after["metric"] != "seconds_per_1000_predictions")
    kept = ~(before["dataset"] == f"folder:{folder}") & (
        before["metric"] != "seconds_per_1000_predictions")
    pd.testing.assert_frame_equal(after[others].reset_index(drop=True),
                                  before[kept].reset_index(drop=True))


@pytest.mark.bench
def test_a_plug_in_measure_adds_its_rows_and_reuses_every_other_cell(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ("--models", "mlp", "--ood", "uniform,gaussian", "--robustness", "none",
            "--attacks", "fgsm", "--shift", "none")
    first = run(bench_cmd(out, *args))
    assert first.returncode == 0, first.stderr
    before = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert "logit_spread" not in set(before["measure"])
    assert {"energy", "mean_energy", "max_logit", "mean_max_logit"} <= set(before["measure"])
    again = run(bench_cmd(out, *args, "--plugin", PLUGIN))
    assert again.returncode == 0, again.stderr
    reused, ran = _counts(again.stderr)
    assert ran == 2  # mlp x (uniform, gaussian)
    assert reused == _counts(first.stderr)[1]
    after = pd.read_csv(out / "results.csv", keep_default_na=False)
    new = after[after["measure"] == "logit_spread"]
    assert set(new["dataset"]) == {"uniform", "gaussian"} and set(new["task"]) == {"ood"}
    assert set(new["metric"]) >= {"auroc", "aupr_in", "aupr_out", "fpr_at_95_tpr"}
    timing = "seconds_per_1000_predictions"
    pd.testing.assert_frame_equal(
        after[(after["measure"] != "logit_spread") & (after["metric"] != timing)]
        .reset_index(drop=True),
        before[before["metric"] != timing].reset_index(drop=True))


def test_content_digests_enter_the_id_but_not_the_streams() -> None:
    from robustbnn.run.cells import Cell

    plain = Cell("ood", "mlp", {"set": "uniform"}, ("abc",))
    a = Cell("ood", "mlp", {"set": "uniform"}, ("abc",), content={"ood": "1" * 64})
    b = Cell("ood", "mlp", {"set": "uniform"}, ("abc",), content={"ood": "2" * 64})
    assert plain.id == plain.stream == a.stream == b.stream  # a cell without digests: as before
    assert len({plain.id, a.id, b.id}) == 3
    assert a.describe()["content"] == {"ood": "1" * 64} and "content" not in plain.describe()
