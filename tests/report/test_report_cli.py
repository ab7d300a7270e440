"""`robustbnn report`: byte-identical re-rendering from the stored results, and clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from robustbnn.cli import main

from ._runs import rows, write_run

RENDERED = ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html",
            "all_columns.csv", "all_columns.json", "table_attacks.md", "table_attacks.csv",
            "table_ood.md", "table_shift.md", "table_sanity.csv", "ood.md", "ood.csv", "attack.md")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `robustbnn bench --suite smoke` folder, shared by the tests of this module."""
    root = tmp_path_factory.mktemp("smoke")
    assert main(["bench", "--suite", "smoke", "--quiet", "--out", str(root / "run"),
                 "--cache-dir", str(root / "cache")]) == 0
    return root / "run"


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, f"expected one error line, got {err}"
    assert "Traceback" not in err[0]
    return err[0]


@pytest.mark.bench
def test_report_reproduces_the_bench_outputs_byte_for_byte(smoke_run: Path,
                                                           tmp_path: Path) -> None:
    stored = tmp_path / "stored"
    stored.mkdir()
    for name in ("results.csv", "results.jsonl", "run.json"):
        shutil.copy(smoke_run / name, stored / name)
    shutil.copytree(smoke_run / "scores", stored / "scores")
    shutil.copytree(smoke_run / "examples", stored / "examples")
    assert main(["report", "--quiet", str(stored)]) == 0
    for name in RENDERED:
        assert (stored / name).read_bytes() == (smoke_run / name).read_bytes(), name
    figures = sorted(p.name for p in (smoke_run / "figures").iterdir())
    assert sorted(p.name for p in (stored / "figures").iterdir()) == figures
    assert {"ood_mlp.png", "attack_mc_dropout.png", "fgsm_accuracy.png"} <= set(figures)


@pytest.mark.bench
def test_report_into_another_folder_leaves_the_run_alone(smoke_run: Path,
                                                         tmp_path: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in smoke_run.rglob("*")}
    assert main(["report", "--quiet", str(smoke_run), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "leaderboard.md").read_bytes() == \
        (smoke_run / "leaderboard.md").read_bytes()
    assert {p: p.stat().st_mtime_ns for p in smoke_run.rglob("*")} == before


@pytest.mark.bench
def test_smoke_leaderboard_has_the_cost_and_legend(smoke_run: Path) -> None:
    board = json.loads((smoke_run / "leaderboard.json").read_text())
    robust = [r["robust_accuracy_allk_eps0.1"] for r in board["rows"]]
    assert {r["model"] for r in board["rows"]} == {"mlp", "mc_dropout"}
    assert board["sort"] == "robust_accuracy_allk_eps0.1"
    assert robust == sorted(robust, reverse=True)  # best first
    every = json.loads((smoke_run / "all_columns.json").read_text())
    assert {r["parameters"] for r in every["rows"]} == {25450}  # 784*32+32 + 32*10+10
    legend = " ".join(board["legend"])
    for knob in ("S_attack ∈ {1, 32}", "S_eval = 20", "objective `predictive`", "label `true`",
                 "clip to [0, 1] = True", "preprocessing `unit`"):
        assert knob in legend
    md = (smoke_run / "leaderboard.md").read_text()
    assert md.startswith("# robustbnn leaderboard\n\nSorted by PGD-EOT all-3 acc ε=0.1 (S=4×5) "
                         "(higher is better")


@pytest.mark.bench
def test_report_sorts_by_any_column(smoke_run: Path, tmp_path: Path) -> None:
    assert main(["report", "--quiet", str(smoke_run), "--out", str(tmp_path),
                 "--sort", "clean_nll", "--no-figures"]) == 0
    board = json.loads((tmp_path / "leaderboard.json").read_text())
    nll = [r["clean_nll"] for r in board["rows"]]
    assert nll == sorted(nll) and board["sort"] == "clean_nll"
    assert "Sorted by NLL (lower is better" in (tmp_path / "leaderboard.md").read_text()


@pytest.mark.bench
def test_several_runs_combine_as_mean_and_std(tmp_path: Path) -> None:
    write_run(tmp_path / "s0", rows("m", seed=0, acc=0.9), seed=0)
    write_run(tmp_path / "s1", rows("m", seed=1, acc=0.7), seed=1)
    assert main(["report", "--quiet", str(tmp_path / "s0"), str(tmp_path / "s1"),
                 "--out", str(tmp_path / "both")]) == 0
    md = (tmp_path / "both" / "leaderboard.md").read_text()
    assert r"| m | other | 0.8000 \[0.000, 1.000\] |" in md  # mean 0.8, t interval 0.8 ± 1.27


def test_several_runs_need_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(tmp_path / "s0", rows("m"))
    assert main(["report", str(tmp_path / "s0"), str(tmp_path / "s0")]) == 2
    assert "--out DIR" in _error_line(capsys)


def test_missing_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "nowhere")]) == 1
    line = _error_line(capsys)
    assert "nowhere: no results.jsonl here" in line and "rerun robustbnn bench" in line


def test_corrupt_results_are_one_line_naming_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", rows("m"))
    path = run / "results.jsonl"
    good = path.read_text().splitlines()
    row = json.loads(good[1])
    for field, bad in (("value", "not-a-number"), ("setting", "S_eval=4"), ("seed", 0.5)):
        path.write_text("\n".join([good[0], json.dumps({**row, field: bad}), *good[2:]]) + "\n")
        assert main(["report", str(run)]) == 1
        line = _error_line(capsys)
        assert "results.jsonl line 2 is corrupt" in line and f"'{field}'" in line, line
        assert "rerun robustbnn bench" in line
    path.write_text("{not json\n")
    assert main(["report", str(run)]) == 1
    assert "results.jsonl line 1 is corrupt" in _error_line(capsys)
    path.unlink()  # results.csv alone is for people: the reports never parse it
    assert main(["report", str(run)]) == 1
    line = _error_line(capsys)
    assert "results.csv but no results.jsonl" in line and "rerun robustbnn bench" in line


def test_missing_or_corrupt_run_json_is_one_line(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", rows("m"))
    (run / "run.json").write_text("{not json")
    assert main(["report", str(run)]) == 1
    assert "run.json is corrupt" in _error_line(capsys)
    (run / "run.json").unlink()
    assert main(["report", str(run)]) == 1
    assert "no run.json" in _error_line(capsys)
