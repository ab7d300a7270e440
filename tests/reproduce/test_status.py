"""Each experiment's status from its report files alone: never run, what ran, partial, |Δ|."""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.bench_config import BenchConfig
from robustbnn.cli import main
from robustbnn.errors import PathError
from robustbnn.report.published import Entry
from robustbnn.reproduce import EXPERIMENTS, Compare, Experiment, Run
from robustbnn.reproduce import status as st
from robustbnn.reproduce.report import RunResults, write_report
from robustbnn.results.schema import Result, setting

REPO = Path(__file__).resolve().parents[2]
TINY = BenchConfig(models=("mlp",), dataset="mnist5k")
MATCH = {"task": "clean", "metric": "accuracy"}


def _experiment(name: str = "toy") -> Experiment:
    def runs(budget: str, variant: str) -> tuple[Run, ...]:
        return (Run("main", TINY), Run("extra", TINY))

    def compares(variant: str) -> tuple[Compare, ...]:
        entry = Entry("toy", "MLP", "acc", ("mlp",), MATCH, 50.0, {"bench.dataset": "mnist5k"})
        return (Compare("MLP", "acc", "main", "mlp", MATCH, entry),
                Compare("MLP", "extra acc", "extra", "mlp", MATCH))

    return Experiment(name, f"The {name} reproduction", "nothing", runs, compares,
                      {"only": "the one variant", "other": "another"}, seeds=(0, 1))


# The CSV and header write_report wrote before the sidecar (a committed report of that time).
LEGACY_CSV = """row,column,run,model,unit,seeds,mean,std,paper,delta,differs,seed0,\
experiment,budget,variant
BHN 0,A,A-bhn0,bhn_realnvp,percent,1,95.07,,92.06,3.01,,95.07,toy,ci,paper
BHN 12,A,A-bhn12,bhn_realnvp,percent,1,94.41,,96.16,-3.75,,94.41,toy,ci,paper
MLP,A,A-base,mlp,percent,1,79510,,79400,,"model.bias: published False",79510,toy,ci,paper
BHN 0,B,B-bhn0,bhn_realnvp,percent,0,,,90.91,,,,toy,ci,paper
"""
LEGACY_MD = """# Toy

Reproduces **the toy paper**. Budget **ci**, variant **paper** (two hidden layers, as the
paper's text says), seeds [0], device cpu; the cells took 7.8 min when they ran (this \
invocation: 7.8 min wall, reusing finished cells).

Ran only the runs ['A-base', 'A-bhn0', 'A-bhn12']; not run: ['B-base', 'B-bhn0'] (their \
cells show –).
"""


def _legacy(folder: Path, name: str = "toy") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.csv").write_text(LEGACY_CSV)
    (folder / f"{name}.md").write_text(LEGACY_MD)


def test_never_run_and_run_status_from_the_report_files(tmp_path: Path) -> None:
    _legacy(tmp_path, "toy")
    ran, never = _experiment("toy"), _experiment("other")
    assert st.experiment_status(never, tmp_path) == ()
    (status,) = st.experiment_status(ran, tmp_path)
    assert (status.folder, status.budget, status.variant, status.seeds) == ("", "ci", "paper",
                                                                           (0,))
    assert status.date == "" and status.minutes == pytest.approx(7.8)
    assert (status.compared, status.published) == (2, 4)
    text = st.list_text([ran, never], tmp_path)
    assert "toy\tThe toy reproduction\n    variants: only, other; needs: MNIST" in text
    assert "other\tThe other reproduction\n    variants: only, other; needs: MNIST (data root)\n" \
           "    status: never run\n" in text
    assert "status: ci budget, variant paper, seeds 0, date unknown, cells 7.8 min" in text
    assert "largest |Δ| -3.75 points (BHN 12, A), 2 of 4 published numbers" in text
    assert max(len(line.expandtabs()) for line in text.splitlines()) <= 120
    table = st.markdown_table([ran, never], tmp_path)
    assert "| other | never run |" in table and "| toy | ci | paper | 0 | unknown |" in table


def test_full_subfolder_is_a_second_report(tmp_path: Path) -> None:
    _legacy(tmp_path / "full")
    (status,) = st.experiment_status(_experiment(), tmp_path)  # no ci report, a full one
    assert status.folder == "full"
    assert "(in full/)" in st.list_text([_experiment()], tmp_path)


def test_folders_inside_full_are_reports_of_their_own_after_full(tmp_path: Path) -> None:
    for sub in ("full/cpu_seed1", "full", "full/cpu_seed0"):
        _legacy(tmp_path / sub)
    (tmp_path / "full" / "figures").mkdir()  # a folder without the report: not a status
    found = st.experiment_status(_experiment(), tmp_path)
    assert [s.folder for s in found] == ["full", "full/cpu_seed0", "full/cpu_seed1"]
    assert "(in full/cpu_seed1/)" in st.list_text([_experiment()], tmp_path)
    assert "| toy | ci (full/cpu_seed0/) |" in st.markdown_table([_experiment()], tmp_path)


def test_partial_run_is_shown_as_partial(tmp_path: Path) -> None:
    _legacy(tmp_path)
    status = st.read_report(tmp_path, "toy")
    assert status is not None and status.partial
    assert status.not_run == ("B-base", "B-bhn0")  # from the header: B-base has no cell at all
    assert "; partial: runs B-base, B-bhn0 not run;" in st.list_text([_experiment()], tmp_path)
    (tmp_path / "toy.md").unlink()  # the CSV alone: the runs whose every cell has no seed
    status = st.read_report(tmp_path, "toy")
    assert status is not None and status.not_run == ("B-bhn0",)
    assert status.budget == "ci" and status.seeds == (0,)


def test_largest_delta_is_the_brute_force_max_over_the_csv(tmp_path: Path) -> None:
    rnd = random.Random(0)
    lines = []
    for i in range(40):
        delta = math.nan if i % 3 == 0 else rnd.uniform(-20, 20)
        lines.append({"row": f"r{i}", "column": f"c{i % 4}", "unit": "percent", "delta": delta})
    lines[7]["delta"] = -25.0  # a negative Δ of largest magnitude, beside a NaN one of none
    lines[9]["delta"] = math.nan
    pd.DataFrame(lines).to_csv(tmp_path / "d.csv", index=False)
    frame = pd.read_csv(tmp_path / "d.csv")
    shown = [line for line in lines if not math.isnan(line["delta"])]
    best = max(shown, key=lambda line: abs(line["delta"]))
    got = st.largest_delta(frame)
    assert got is not None
    assert (got.value, got.row, got.column) == (best["delta"], best["row"], best["column"])
    assert st.largest_delta(frame.assign(delta=math.nan)) is None


def test_write_report_records_a_sidecar_the_status_reads(tmp_path: Path) -> None:
    exp = _experiment()
    rows = [Result("mlp", 0, "clean", "mnist5k", setting(S_eval=2), "", "accuracy", 0.9)]
    meta = {"budget": "ci", "variant": "only", "seeds": [0], "seconds": 3.0,
            "compute_seconds": 120.0, "started": "2026-01-02T03:04:05+00:00", "device": "cpu",
            "runs": ["main"], "all_runs": ["main", "extra"], "command": "robustbnn reproduce toy"}
    write_report(exp, [RunResults("main", 0, TINY, rows, {})], meta, tmp_path)
    side = json.loads((tmp_path / "toy.json").read_text())
    assert side["runs_not_run"] == ["extra"] and side["seeds"] == [0]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    status = st.read_report(tmp_path, "toy")
    assert status is not None
    assert (status.date, status.not_run, status.minutes) == (today, ("extra",), 2.0)
    assert status.largest is not None and status.largest.value == pytest.approx(40.0)
    # A sidecar of another invocation (another budget than the CSV's) is not believed.
    (tmp_path / "toy.json").write_text(json.dumps(side | {"budget": "full"}))
    stale = st.read_report(tmp_path, "toy")
    assert stale is not None and (stale.budget, stale.date) == ("ci", "")


def test_cli_list_shows_the_status_of_the_out_folder(tmp_path: Path, capsys) -> None:
    _legacy(tmp_path, "bhn_table1_mnist5000")
    assert main(["reproduce", "--list", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "bhn_table1_mnist5000\tBHN Table 1, MNIST 5,000: test accuracy (%)\n" in out
    assert "    status: ci budget, variant paper, seeds 0, date unknown" in out
    assert "bhn_table2\tBHN Table 2" in out and "variants: code, test_split" in out
    assert out.count("status: never run") == len(EXPERIMENTS.names()) - 1
    assert main(["reproduce", "--list", "--out", str(tmp_path / "nowhere")]) == 0
    out = capsys.readouterr().out
    assert "status not known" in out and "never run" not in out


def test_update_page_replaces_only_between_the_markers(tmp_path: Path, capsys) -> None:
    page = "intro\n<!-- status:begin -->\nold\n<!-- status:end -->\nafter\n"
    assert st.update_page(page, "| t |\n") == ("intro\n<!-- status:begin -->\n\n| t |\n\n"
                                            "<!-- status:end -->\nafter\n")
    with pytest.raises(PathError, match="no <!-- status:begin -->"):
        st.update_page("no markers", "| t |\n")
    path = tmp_path / "page.md"
    path.write_text(page)
    assert st.main(["--check", str(path), "--reports", str(tmp_path)]) == 1
    assert "the status table is stale; run python -m" in capsys.readouterr().err
    assert st.main(["--write", str(path), "--reports", str(tmp_path)]) == 0
    assert st.main(["--check", str(path), "--reports", str(tmp_path)]) == 0


def test_docs_status_table_matches_the_committed_reports() -> None:
    page = (REPO / "docs" / "reproducing.md").read_text(encoding="utf-8")
    experiments = [EXPERIMENTS.get(n) for n in EXPERIMENTS.names()]
    table = st.markdown_table(experiments, REPO / "reports" / "reproductions")
    assert st.update_page(page, table) == page, (
        "docs/reproducing.md's status table is stale: run python -m robustbnn.reproduce.status "
        "--write docs/reproducing.md")
