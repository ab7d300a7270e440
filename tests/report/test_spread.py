"""The seed spread: per-seed values of a multi-seed render, the check against them, the margins
measured for every column, and which differences between models exceed the spread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.errors import UserError
from robustbnn.report.leaderboard import format_cell, leaderboard
from robustbnn.report.regression import RegressionError, check
from robustbnn.report.render import load_runs, render
from robustbnn.report.separable import SAME_MARK
from robustbnn.report.spread import SEEDS_FILE
from robustbnn.report.tolerances import measure
from robustbnn.results import names as N
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import write_json

from ._runs import pgd_rows, rows, write_run

ROOT = Path(__file__).resolve().parents[2]
# Clean accuracy per seed: a and c overlap (a is best), b lies below both.
ACC = {"a": (0.90, 0.93, 0.92), "c": (0.89, 0.905, 0.91), "b": (0.80, 0.82, 0.81)}


def _rows(model: str, seed: int, acc: float) -> list[Result]:
    """The toy rows without the targeted task, whose 9 test digits would set every margin's
    floor (one test point, 1/9)."""
    return [r for r in rows(model, seed=seed, acc=acc) if r.task != N.TARGETED]


def _seeds(tmp_path: Path, acc: dict[str, tuple[float, ...]] = ACC) -> list[Path]:
    return [write_run(tmp_path / f"s{seed}", [r for m, v in acc.items()
                                              for r in _rows(m, seed, v[seed])],
                      seed=seed) for seed in range(3)]


@pytest.fixture
def committed(tmp_path: Path) -> Path:
    """Seeds 0-2 rendered together, with the margins measured from them."""
    runs = _seeds(tmp_path)
    out = tmp_path / "default"
    render(runs, out, figures=False)
    write_json(out / "tolerances.json", measure(runs))
    return out


def _new(tmp_path: Path, acc_a: float, *, seed: int = 5) -> Path:
    run = write_run(tmp_path / f"new{acc_a}", [r for m, v in ACC.items()
                                               for r in _rows(m, seed, v[0])
                                               if m != "a"] + _rows("a", seed, acc_a),
                    seed=seed)
    render([run], run, figures=False)
    return run


def test_a_multi_seed_render_writes_every_columns_per_seed_values(committed: Path,
                                                                  tmp_path: Path) -> None:
    spread = json.loads((committed / SEEDS_FILE).read_text())
    assert spread["seeds"] == [0, 1, 2]
    assert spread["models"]["a"]["clean_accuracy"] == [0.9, 0.93, 0.92]
    assert spread["models"]["b"]["parameters"] == [1000, 1000, 1000]
    board = json.loads((committed / "all_columns.json").read_text())
    numeric = [c["key"] for c in board["columns"] if c["kind"] == "number"]
    assert [c["key"] for c in spread["columns"]] == numeric
    # one run has no spread: a later render of one seed into the folder removes the file
    render([tmp_path / "s0"], committed, figures=False)
    assert not (committed / SEEDS_FILE).exists()


def test_a_value_inside_the_widened_range_passes(committed: Path, tmp_path: Path) -> None:
    margin = json.loads((committed / "tolerances.json").read_text())["spread_margin"][
        "clean_accuracy"]
    assert margin == 0.03  # a's range, the widest
    assert check(committed, _new(tmp_path, 0.93 + 0.9 * margin)) > 0
    assert check(committed, _new(tmp_path, 0.90 - 0.9 * margin)) > 0


def test_a_value_outside_the_widened_range_fails_in_one_line(
        committed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = _new(tmp_path, 0.97)
    with pytest.raises(RegressionError, match=r"a clean_accuracy: new 0\.97 is outside the "
                       r"committed range \[0\.9, 0\.93\] of seeds 0, 1, 2 widened by the margin "
                       r"0\.03"):
        check(committed, new)
    assert main(["report", str(new), "--check", str(committed), "--no-figures", "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "1 number(s)" in err[0] and "a clean_accuracy: new 0.97" in err[0]


def test_the_cli_says_which_reference_it_checked_against(committed: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    new = _new(tmp_path, 0.91)
    assert main(["report", str(new), "--check", str(committed), "--no-figures"]) == 0
    assert f"within the committed seed range, widened by its margin, of {committed / SEEDS_FILE}" \
        in capsys.readouterr().out


def test_margins_measured_before_the_spread_check_are_refused_by_name(committed: Path,
                                                                     tmp_path: Path) -> None:
    tolerances = json.loads((committed / "tolerances.json").read_text())
    del tolerances["spread_margin"]
    write_json(committed / "tolerances.json", tolerances)
    with pytest.raises(UserError, match=r"tolerances\.json has no 'spread_margin' .*python -m "
                       r"robustbnn\.report\.tolerances"):
        check(committed, _new(tmp_path, 0.91))


def _full_suite(model: str, seed: int, acc: float) -> list[Result]:
    """Every family of leaderboard columns the default suite has (robustness, shift, PGD)."""

    def row(task: str, name: str, metric: str, value: float, **knobs: object) -> Result:
        return Result(model, seed, task, "toy", setting(**knobs), name, metric, value)

    out = rows(model, seed=seed, acc=acc) + pgd_rows(model, seed=seed)
    for eps in (0.1, 0.3):
        out += [row(N.WORST_OF_K, "", N.ALL_K_ACCURACY, acc / 3, eps=eps, k=10, S_attack=16,
                    steps=40, n=100),
                row(N.ROBUST_FLAGS, "eot_not_converged", N.RAISED, 0.0, eps=eps, tol=0.01)]
    for name in ("bald", "max_prob"):
        for flag in (True, False):
            out.append(row(N.DETECTOR_AWARE, name, N.DETECTION_AWARE_ACCURACY, acc / 2,
                           eps=0.1, adaptive=flag, fpr=0.05, n=100))
        for eps in (0.0, 0.1):
            out.append(row(N.ADV_OOD, name, N.AUROC, 0.7 - eps, eps=eps, n=100))
    for metric in (N.ACCURACY, N.ECE):
        out += [row(N.SHIFT, "", metric, acc - angle / 400, shift=N.ShiftKind.ROTATED,
                    angle=angle, S_eval=4, n=500) for angle in (0, 90, 180)]
        out.append(row(N.SHIFT, "", metric, acc / 2, shift=N.ShiftKind.CORRUPTED,
                       corruption="shot_noise", S_eval=4, n=500))
    return out


def test_every_column_of_a_full_suite_gets_a_margin_but_timing(tmp_path: Path) -> None:
    runs = [write_run(tmp_path / f"s{seed}", [r for m, v in ACC.items()
                                              for r in _full_suite(m, seed, v[seed])],
                      seed=seed) for seed in range(3)]
    results, _ = load_runs(runs)
    board = leaderboard(results)
    numbers = [c for c in board.columns if c.kind == "number"]
    keys = {c.key for c in numbers}
    assert {"robust_accuracy_allk_eps0.1", "detection_aware_eps0.1", "adv_ood_auroc_eps0.1",
            "rotated_accuracy_auc", "corrupted_ece_mean", "pgd_accuracy_eps0.1_S32"} <= keys
    payload = measure(runs)
    timing = {c.key for c in numbers if c.timing}
    assert timing == {"seconds_per_1000_predictions"}
    assert set(payload["spread_margin"]) == keys - timing == set(payload["columns"])
    assert set(payload["not_checked"]) == timing
    assert payload["spread_margin"]["parameters"] == 0.0  # counts: exact
    # a column equal over the seeds still gets one test point of the smallest set (n = 9,
    # the targeted rows): 1/9 rounded up to two digits
    assert payload["spread_margin"]["adv_ood_auroc_eps0.1"] == 0.12
    # each seed checked against the other two: 3 models x 3 seeds per checked column
    assert payload["spread_leave_one_out"]["checked"] == 9 * len(keys - timing)


def test_committed_default_reports_have_a_margin_for_every_column() -> None:
    default = ROOT / "reports" / "default"
    if not (default / SEEDS_FILE).is_file():
        pytest.skip("reports/default is not yet rendered from several seeds (.ci/reports "
                    "default)")
    spread = json.loads((default / SEEDS_FILE).read_text())
    tolerances = json.loads((default / "tolerances.json").read_text())
    checked = {c["key"] for c in spread["columns"] if not c["timing"]}
    assert checked == set(tolerances["spread_margin"])
    assert tolerances["seeds"] == spread["seeds"]


@pytest.mark.parametrize("run", sorted(p.name for p in (ROOT / "reports" / "default_checks")
                                        .iterdir() if p.is_dir()))
def test_committed_runs_from_other_machines_pass_the_committed_seed_spread(run: str) -> None:
    # reports/default_checks/README.md: each is a default-suite run on another machine; a
    # re-measured reports/default (or narrower margins) must still pass them.
    folder = ROOT / "reports" / "default_checks" / run
    judged = json.loads((folder / "all_columns.json").read_text())["rows"]
    seeds = json.loads((ROOT / "reports" / "default" / SEEDS_FILE).read_text())
    assert {r["model"] for r in judged} == set(seeds["models"])  # every model is judged
    check(ROOT / "reports" / "default", folder)  # raises RegressionError naming each miss


def test_overlapping_seed_ranges_are_marked_not_separable_from_the_best(tmp_path: Path
                                                                        ) -> None:
    results, _ = load_runs(_seeds(tmp_path))
    board = leaderboard(results, sort="clean_accuracy")
    assert list(board.table.index) == ["a", "c", "b"]
    # c's range [0.89, 0.91] overlaps a's [0.90, 0.93]; b's [0.80, 0.82] is disjoint
    assert board.groups == (("a", "c"), ("b",))
    col = board.column("clean_accuracy")
    assert format_cell(board, "c", col).endswith(f" {SAME_MARK}")
    assert SAME_MARK not in format_cell(board, "a", col) + format_cell(board, "b", col)
    assert SAME_MARK not in format_cell(board, "c", board.column("clean_nll"))


def test_disjoint_seed_ranges_leave_every_model_separable(tmp_path: Path) -> None:
    acc = {"a": (0.95, 0.96, 0.97), "c": (0.90, 0.91, 0.92), "b": (0.80, 0.82, 0.81)}
    results, _ = load_runs(_seeds(tmp_path, acc))
    board = leaderboard(results, sort="clean_accuracy")
    assert board.groups == (("a",), ("c",), ("b",))
    assert not any(SAME_MARK in format_cell(board, m, board.column("clean_accuracy"))
                   for m in board.table.index)


def test_the_headline_says_which_differences_exceed_the_seed_spread(committed: Path) -> None:
    markdown = (committed / "leaderboard.md").read_text()
    # No examples in these runs: the t interval of the seeds, 0.9017 ± 4.30 · 0.0104 / √3.
    assert rf"| c | other | 0.9017 \[0.876, 0.928\] {SAME_MARK} |" in markdown
    assert ("**Seed spread.** On clean acc at seeds 0, 1, 2, ≈ marks a model whose seed "
            "range") in markdown and "{`a`, `c`}; {`b`}" in markdown
    head = json.loads((committed / "leaderboard.json").read_text())
    assert head["seed_groups"] == [["a", "c"], ["b"]]
    assert len(head["columns"]) + 1 <= 10


def test_one_run_has_no_seed_groups(tmp_path: Path) -> None:
    run = _seeds(tmp_path)[0]
    render([run], run, figures=False)
    assert "Seed spread" not in (run / "leaderboard.md").read_text()
    assert "seed_groups" not in json.loads((run / "leaderboard.json").read_text())


def test_a_run_of_some_models_is_judged_on_those_and_an_unknown_model_fails(
        committed: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``bench --models a,b`` on another machine: c is not judged (said), a and b are; a model
    the committed seeds do not have cannot be judged and fails by name."""
    subset = {m: v for m, v in ACC.items() if m != "c"}
    run = write_run(tmp_path / "subset", [r for m, v in subset.items()
                                          for r in _rows(m, 5, v[0])], seed=5)
    render([run], run, figures=False)
    full = check(committed, _new(tmp_path, 0.91))
    with caplog.at_level("WARNING"):
        assert check(committed, run) == full * 2 // 3
    assert "1 committed model(s) not in" in caplog.text and "not judged: c" in caplog.text
    outside = write_run(tmp_path / "outside", [r for r in _rows("a", 5, 0.99)], seed=5)
    render([outside], outside, figures=False)
    with pytest.raises(RegressionError, match=r"a clean_accuracy: new 0\.99 is outside"):
        check(committed, outside)
    stranger = write_run(tmp_path / "stranger", [r for m, v in ACC.items()
                                                 for r in _rows(m, 5, v[0])]
                         + _rows("z", 5, 0.9), seed=5)
    render([stranger], stranger, figures=False)
    with pytest.raises(RegressionError, match="model z is only in the regenerated leaderboard"):
        check(committed, stranger)
