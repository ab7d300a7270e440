"""Dataset-shift reports: the leaderboard's shift columns, ``shift.md``, the shift and
reliability figures, and the legend, from synthetic results with known numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.report.columns import compute_columns
from robustbnn.report.render import render
from robustbnn.report.shift_detail import shift_markdown
from robustbnn.report.shift_figures import reliability_frame
from robustbnn.results import names as N
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import results_frame
from tests.report._runs import rows, write_run

ANGLES = (0, 15, 30, 60, 90, 180)  # uneven spacing: the area is not the plain mean
CORRUPTIONS = ("shot_noise", "fog", "zigzag")


def _rotated(angle: float, model: str, seed: int) -> float:
    """Accuracy at ``angle``: falls linearly to 180, model ``b`` 0.1 lower, seed 1 0.02 lower."""
    return 0.95 - 0.8 * angle / 180 - 0.1 * (model == "b") - 0.02 * seed


def shift_rows(model: str, *, seed: int = 0, kinds: tuple[str, ...] = N.SHIFTS) -> list[Result]:
    out = []
    base = {"S_eval": 4, "n": 50}
    if N.ShiftKind.ROTATED in kinds:
        for angle in ANGLES:
            knobs = setting(shift=N.ShiftKind.ROTATED, angle=angle, **base)
            acc = _rotated(angle, model, seed)
            out += [Result(model, seed, N.SHIFT, "toy", knobs, "", N.ACCURACY, acc),
                    Result(model, seed, N.SHIFT, "toy", knobs, "", N.ECE, 0.01 + angle / 1000),
                    Result(model, seed, N.SHIFT, "toy", knobs, "", N.NLL, 0.2 + angle / 100),
                    Result(model, seed, N.SHIFT, "toy", knobs, "", N.BRIER, 1 - acc),
                    Result(model, seed, N.SHIFT, "toy", knobs, "predictive_entropy",
                           N.MEAN_UNCERTAINTY, 0.1 + angle / 90)]
    if N.ShiftKind.CORRUPTED in kinds:
        for i, name in enumerate(CORRUPTIONS):
            knobs = setting(shift=N.ShiftKind.CORRUPTED, corruption=name, **base)
            out += [Result(model, seed, N.SHIFT, "toy", knobs, "", N.ACCURACY, 0.9 - 0.2 * i),
                    Result(model, seed, N.SHIFT, "toy", knobs, "", N.ECE, 0.05 * (i + 1)),
                    Result(model, seed, N.SHIFT, "toy", knobs, "predictive_entropy",
                           N.MEAN_UNCERTAINTY, 0.3 + i)]
    for shift, (low, high) in ((N.ShiftKind.NONE, (40, 60)), (N.ShiftKind.CORRUPTED, (90, 60))):
        for b, count in ((3, low), (14, high)):
            knobs = setting(shift=shift, S_eval=4, bin=b, n_bins=15)
            out += [Result(model, seed, N.RELIABILITY, "toy", knobs, "", N.COUNT, count),
                    Result(model, seed, N.RELIABILITY, "toy", knobs, "", N.CONFIDENCE,
                           (b + 0.5) / 15),
                    Result(model, seed, N.RELIABILITY, "toy", knobs, "", N.ACCURACY,
                           0.5 if b == 3 else 0.97)]
        out.append(Result(model, seed, N.RELIABILITY, "toy",
                          setting(shift=shift, S_eval=4, bin=7, n_bins=15), "", N.COUNT, 0))
    out.append(Result(model, seed, N.CLEAN, "toy", setting(S_eval=4), "", N.BRIER,
                      0.1 + 0.05 * (model == "b")))
    return out


def _frame(results: list[Result], runs: int = 1) -> pd.DataFrame:
    frame = results_frame(results)
    return frame.assign(run=frame["seed"] if runs > 1 else 0)


def _trapezoid_loop(points: list[tuple[float, float]]) -> float:
    """Area under the piecewise-linear curve through ``points``, one segment at a time,
    divided by the x range."""
    points = sorted(points)
    pairs = zip(points, points[1:], strict=False)
    area = sum((x1 - x0) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in pairs)
    return area / (points[-1][0] - points[0][0])


def test_shift_columns_are_the_area_under_accuracy_and_means_over_corruptions() -> None:
    frame = _frame(rows("a") + shift_rows("a") + rows("b") + shift_rows("b"))
    cols, values = compute_columns(frame)
    keys = [c.key for c in cols]
    assert keys[:4] == ["clean_accuracy", "clean_nll", "clean_ece", "clean_brier"]
    shift = ["rotated_accuracy_auc", "rotated_ece_mean", "corrupted_accuracy_mean",
             "corrupted_ece_mean"]
    assert [k for k in keys if k in shift] == shift
    assert keys.index("corrupted_ece_mean") < keys.index(N.SECONDS_PER_1000_PREDICTIONS)
    titles = {c.key: c.title for c in cols}
    assert titles["rotated_accuracy_auc"] == "rotated acc AUC 0–180°"
    assert titles["corrupted_accuracy_mean"] == "MNIST-C acc (mean of 3)"
    assert titles["rotated_ece_mean"] == "rotated ECE (mean of 6 angles)"
    for model in ("a", "b"):
        expected = _trapezoid_loop([(a, _rotated(a, model, 0)) for a in ANGLES])
        assert values["rotated_accuracy_auc"][(model, 0)] == pytest.approx(expected, abs=1e-12)
        assert values["corrupted_accuracy_mean"][(model, 0)] == pytest.approx(0.7)
        assert values["corrupted_ece_mean"][(model, 0)] == pytest.approx(0.1)
        assert values["rotated_ece_mean"][(model, 0)] == pytest.approx(
            0.01 + sum(ANGLES) / len(ANGLES) / 1000)
    # A linear fall from 0.95 to 0.15 has area 0.55: the trapezoid rule is exact on a line.
    assert values["rotated_accuracy_auc"][("a", 0)] == pytest.approx(0.55)
    assert values["clean_brier"][("b", 0)] == pytest.approx(0.15)
    directions = {c.key: c.higher_is_better for c in cols}
    assert directions["rotated_accuracy_auc"] and not directions["corrupted_ece_mean"]
    assert not directions["clean_brier"]


def test_one_kind_alone_gives_its_columns_only() -> None:
    frame = _frame(rows("a") + shift_rows("a", kinds=(N.ShiftKind.ROTATED,)))
    keys = [c.key for c in compute_columns(frame)[0]]
    assert "rotated_accuracy_auc" in keys and "corrupted_accuracy_mean" not in keys
    frame = _frame(rows("a") + shift_rows("a", kinds=(N.ShiftKind.CORRUPTED,)))
    keys = [c.key for c in compute_columns(frame)[0]]
    assert "corrupted_accuracy_mean" in keys and "rotated_accuracy_auc" not in keys
    assert shift_markdown(_frame(rows("a"))) is None


def test_shift_markdown_lays_out_angles_and_corruptions_with_their_mean() -> None:
    text = shift_markdown(_frame(shift_rows("a") + shift_rows("b")))
    assert text is not None
    lines = text.splitlines()
    header = lines[lines.index("## Rotated MNIST: accuracy") + 2]
    assert header == "| model | 0 | 15 | 30 | 60 | 90 | 180 |"
    row = lines[lines.index("## Rotated MNIST: accuracy") + 4]
    assert row == ("| a | 0.9500 | 0.8833 | 0.8167 | 0.6833 | 0.5500 | 0.1500 |")
    at = lines.index("## MNIST-C: accuracy")
    assert lines[at + 2] == "| model | shot_noise | fog | zigzag | mean |"
    assert lines[at + 4] == "| a | 0.9000 | 0.7000 | 0.5000 | 0.7000 |"
    unc = lines.index("## MNIST-C: mean uncertainty per measure (higher = more uncertain)")
    assert lines[unc + 4] == "| a | predictive_entropy | 0.3000 | 1.3000 | 2.3000 | 1.3000 |"
    assert "## MNIST-C: NLL" not in text  # no NLL rows for MNIST-C in these results


def test_two_runs_give_mean_and_sample_std_in_shift_md() -> None:
    text = shift_markdown(_frame(shift_rows("a", seed=0) + shift_rows("a", seed=1), runs=2))
    lines = text.splitlines()
    row = lines[lines.index("## Rotated MNIST: accuracy") + 4]
    assert row.startswith("| a | 0.9400 ± 0.0141 |")  # 0.95 and 0.93


def test_reliability_frame_averages_bins_over_runs_and_keeps_empty_bins() -> None:
    frame = _frame(shift_rows("a", seed=0) + shift_rows("a", seed=1), runs=2)
    table = reliability_frame(frame)
    clean = table[(table[N.SHIFT] == N.ShiftKind.NONE)].set_index(N.BIN)
    assert sorted(clean.index) == [3, 7, 14]
    assert clean.loc[3, N.COUNT] == 40 and clean.loc[3, N.ACCURACY] == 0.5
    assert clean.loc[7, N.COUNT] == 0 and pd.isna(clean.loc[7, N.CONFIDENCE])


@pytest.mark.bench
def test_render_writes_shift_md_figures_and_legend(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", rows("a") + shift_rows("a") + rows("b") + shift_rows("b"))
    render([run], tmp_path / "out")
    out = tmp_path / "out"
    assert (out / "shift.md").read_text(encoding="utf-8").startswith(
        "# Calibration under dataset shift")
    for name in ("shift_rotation.png", "shift_corruption.png", "reliability.png",
                 "shift_a.png", "shift_b.png", "reliability_a.png", "reliability_b.png"):
        assert (out / "figures" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    board = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "**Dataset shift.** The first 50 test points rotated by {0, 15, 30, 60, 90, 180}" \
        in board
    assert "corrupted by the 3 MNIST-C corruptions" in board and "**Calibration.**" in board
    html = (out / "leaderboard.html").read_text(encoding="utf-8")
    assert re.search(r'data-file="shift_rotation\.(png|svg)"', html)  # embedded
    assert 'href="shift.md"' in html
    # A render of the same folder without shift rows removes shift.md and the shift figures.
    write_run(tmp_path / "plain", rows("a"))
    render([tmp_path / "plain"], out)
    assert not (out / "shift.md").exists() and not (out / "figures" / "shift_a.png").exists()
