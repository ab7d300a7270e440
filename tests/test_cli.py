"""The command line: listings, bench outputs, cache reuse, and one-line errors for bad input."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pandas as pd
import pytest
import torch

from robustbnn.cli import main
from robustbnn.data import write_idx
from robustbnn.models import MODELS
from robustbnn.results.store import read_results


def _bench(tmp_path: Path, *extra: str, out: str = "out") -> int:
    return main(["bench", "--suite", "smoke", "--quiet", "--out", str(tmp_path / out),
                 "--cache-dir", str(tmp_path / "cache"), *extra])


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, f"expected one error line, got {err}"
    assert "Traceback" not in err[0]
    return err[0]


def test_models_lists_names_first_column(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [row[0] for row in rows] == MODELS.names()  # every model, in registry order
    for name, description, reference in rows:
        assert (description, reference) == (MODELS.get(name).description,
                                            MODELS.get(name).reference)


def test_datasets_shows_availability(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "--data-root", str(tmp_path)]) == 0
    rows = {line.split("\t")[0]: line.split("\t")[1]
            for line in capsys.readouterr().out.splitlines() if not line.startswith("#")}
    assert rows["mnist5k"] == "available"
    assert rows["mnist"] == "missing"


def test_print_config_is_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--suite", "smoke", "--print-config"]) == 0
    cfg = json.loads(capsys.readouterr().out)
    assert cfg["suite"] == "smoke" and cfg["s_attack"] == [1, 32]
    assert cfg["model_configs"]["mlp"]["hidden"] == [32]


def test_targeted_samples_sets_the_targeted_attack_s_attack(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--suite", "smoke", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["targeted_s_attack"] == 10
    assert main(["bench", "--suite", "smoke", "--targeted-samples", "100", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["targeted_s_attack"] == 100


def test_targeted_samples_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--targeted-samples", "0"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--targeted-samples: expected a positive whole number, got '0'" in err


@pytest.mark.bench
def test_bench_writes_outputs_and_reuses_cache(tmp_path: Path) -> None:
    assert _bench(tmp_path, out="a") == 0
    assert _bench(tmp_path, out="b") == 0
    a, b = tmp_path / "a", tmp_path / "b"
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html",
                 "ood.md", "ood.csv", "results.csv", "results.jsonl", "run.json"):
        assert (a / name).is_file()
    assert not list(a.rglob("*.tmp")), "temporary files left behind"
    first, second = pd.read_csv(a / "results.csv"), pd.read_csv(b / "results.csv")
    assert list(first.columns) == ["model", "seed", "task", "dataset", "setting", "measure",
                                   "metric", "value"]
    timing = "seconds_per_1000_predictions"  # wall-clock: the one machine-dependent number
    assert (first["metric"] == timing).sum() == 2
    pd.testing.assert_frame_equal(first[first["metric"] != timing],
                                  second[second["metric"] != timing])  # same seed, same numbers
    run_a, run_b = (json.loads((d / "run.json").read_text()) for d in (a, b))
    assert not run_a["models"]["mlp"]["cached"] and run_b["models"]["mlp"]["cached"]
    assert run_b["models"]["mc_dropout"]["cached"]
    assert run_a["torch"] == torch.__version__ and run_a["seed"] == 0
    assert "mlp" in (a / "leaderboard.md").read_text()
    _check_attack_behaviour(read_results(a))


def _check_attack_behaviour(results: pd.DataFrame) -> None:
    """Accuracy falls as eps grows, and never rises above clean accuracy."""
    acc = results[(results["metric"] == "accuracy")]
    for model in acc["model"].unique():
        clean = acc[(acc["model"] == model) & (acc["task"] == "clean")]["value"].item()
        fgsm = acc[(acc["model"] == model) & (acc["task"] == "fgsm")]
        eps, s = (fgsm["setting"].map(lambda k, key=key: k[key]) for key in ("eps", "S_attack"))
        for s_attack in s.unique():
            curve = fgsm[s == s_attack].assign(eps=eps).sort_values("eps")
            values = [clean, *curve["value"]]
            assert all(b <= a for a, b in itertools.pairwise(values)), (model, s_attack, values)


def test_unknown_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench(tmp_path, "--models", "mlp,nope") == 2
    line = _error_line(capsys)
    assert "unknown model 'nope'" in line and "'mc_dropout'" in line


def test_unknown_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench(tmp_path, "--dataset", "mnits") == 2
    assert "unknown dataset 'mnits'; known: " in _error_line(capsys)


def test_missing_data_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench(tmp_path, "--dataset", "mnist", "--data-root", str(tmp_path / "nowhere")) == 2
    line = _error_line(capsys)
    assert "nowhere" in line and "does not exist" in line


def test_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "data"  # beside --out: a run inside the data root is refused
    root.mkdir()
    assert _bench(tmp_path, "--dataset", "mnist", "--data-root", str(root)) == 1
    line = _error_line(capsys)
    assert "train-images-idx3-ubyte" in line and "--data-root" in line


def test_checksum_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "data" / "mnist"
    folder.mkdir(parents=True)
    for name, shape in [("train-images-idx3-ubyte.gz", (4, 28, 28)),
                        ("train-labels-idx1-ubyte.gz", (4,)),
                        ("t10k-images-idx3-ubyte.gz", (2, 28, 28)),
                        ("t10k-labels-idx1-ubyte.gz", (2,))]:
        write_idx(folder / name, torch.zeros(shape, dtype=torch.uint8).numpy())
    assert _bench(tmp_path, "--dataset", "mnist", "--data-root", str(tmp_path / "data")) == 1
    line = _error_line(capsys)
    assert "sha256" in line.lower() and "mnist" in line


def test_cuda_without_cuda(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert _bench(tmp_path, "--device", "cuda") == 2
    assert "CUDA is not available" in _error_line(capsys)


def test_bad_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench(tmp_path, "--set", "mlp.hiden=(3,)") == 2
    assert "mlp has no setting 'hiden'" in _error_line(capsys)
    assert _bench(tmp_path, "--set", "mlp.epochs=two") == 2
    assert "mlp.epochs: expected int" in _error_line(capsys)


def test_debug_shows_the_exception(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="nope"):
        _bench(tmp_path, "--models", "nope", "--debug")


@pytest.mark.bench
def test_diverged_training_is_an_error_and_caches_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _bench(tmp_path, "--models", "mlp", "--set", "mlp.lr=1e30") == 1
    line = _error_line(capsys)
    assert "training mlp diverged" in line and "epoch" in line and "step" in line
    assert not list((tmp_path / "cache").rglob("*.safetensors"))
    assert not (tmp_path / "out" / "results.csv").exists()


def test_unknown_ood_set_fails_before_training(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench(tmp_path, "--ood", "uniform,svhn") == 2
    line = _error_line(capsys)
    assert "unknown OOD set 'svhn'; known: " in line and "'glyphs'" in line
    assert not (tmp_path / "cache").exists()  # nothing was trained


@pytest.mark.bench
def test_missing_ood_files_fail_before_training(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "data"  # beside --out: a run inside the data root is refused
    root.mkdir()
    assert _bench(tmp_path, "--ood", "notmnist", "--data-root", str(root)) == 1
    line = _error_line(capsys)
    assert "notmnist" in line and "--data-root" in line
    assert not (tmp_path / "cache").exists()


def test_datasets_lists_the_ood_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "--data-root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {line.split("\t")[0]: line.split("\t")[1] for line in out.splitlines()
            if not line.startswith("#")}
    assert "# OOD sets (--ood)" in out
    assert rows["glyphs"] == rows["uniform"] == "available"
    assert rows["notmnist"] == rows["omniglot"] == "missing"
    assert rows["folder:PATH"] == rows["heldout:K"] == "-"  # sets named by a pattern


@pytest.mark.bench
def test_ood_sets_and_preprocessing_reach_results_and_legend(tmp_path: Path) -> None:
    assert _bench(tmp_path, "--models", "mlp", "--ood", "gaussian,glyphs",
                  "--ood-preprocessing", "bhn_reference") == 0
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert set(results.loc[results["task"] == "ood", "dataset"]) == {"gaussian", "glyphs"}
    board = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "preprocessing `bhn_reference`" in board and "Sets ['gaussian', 'glyphs']" in board
    assert "| glyphs |" in (tmp_path / "out" / "ood.md").read_text()


@pytest.mark.bench
def test_bench_saves_per_example_scores_that_reproduce_the_metrics(tmp_path: Path) -> None:
    import numpy as np
    from sklearn.metrics import roc_auc_score

    assert _bench(tmp_path, "--models", "mlp") == 0
    out = tmp_path / "out"
    results = pd.read_csv(out / "results.csv", keep_default_na=False)
    with np.load(out / "scores" / "mlp" / "glyphs.npz") as data:
        expected = roc_auc_score(data["is_ood"], data["bald"])
        assert data["is_ood"].sum() == 200 and len(data["is_ood"]) == 400
    row = results[(results["task"] == "ood") & (results["dataset"] == "glyphs")
                  & (results["measure"] == "bald") & (results["metric"] == "auroc")]
    assert row["value"].item() == pytest.approx(expected, abs=1e-9)
    assert (out / "figures" / "ood_mlp.png").is_file()


@pytest.mark.bench
def test_heldout_class_trains_without_it_and_scores_it_as_ood(tmp_path: Path) -> None:
    assert _bench(tmp_path, "--models", "mlp", "--ood", "uniform,heldout:3") == 0
    out = tmp_path / "out"
    results = pd.read_csv(out / "results.csv", keep_default_na=False)
    ood = results[results["task"] == "ood"]
    assert set(ood["dataset"]) == {"uniform", "heldout:3"}
    held = ood[ood["dataset"] == "heldout:3"]
    n_out = int(held["setting"].iloc[0].split("n_out=")[1])
    assert 0 < n_out < 300  # the training images of class 3 among the first 300
    clean = results[results["task"] == "heldout_clean"]
    assert clean["dataset"].tolist() == ["heldout:3"] and 0.2 < clean["value"].item() <= 1
    assert (out / "scores" / "mlp" / "heldout_3.npz").is_file()
    run = json.loads((out / "run.json").read_text())
    assert "heldout:3" in run["models"]["mlp"]["heldout"]
    assert _bench(tmp_path, "--models", "mlp", "--ood", "heldout:12") == 2


@pytest.mark.parametrize("suite", ["default", "paper", "bhn_table2", "smoke", "ci"])
def test_every_suite_names_registered_models_sets_and_overrides(
        suite: str, capsys: pytest.CaptureFixture[str]) -> None:
    from robustbnn.bench import resolve_models
    from robustbnn.data import OOD_DATASETS
    from robustbnn.data.heldout import parse_heldout
    from robustbnn.settings import check_owners
    from robustbnn.suites import SUITES

    cfg = resolve_models(SUITES.get(suite))
    check_owners(cfg)
    assert all(parse_heldout(o) is not None or o in OOD_DATASETS for o in cfg.ood)
    assert main(["bench", "--suite", suite, "--print-config"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["model_configs"]) == set(cfg.models)


def test_ci_suite_needs_no_data_root_or_network() -> None:
    from robustbnn.data import DATASETS, OOD_DATASETS
    from robustbnn.suites import SUITES

    cfg = SUITES.get("ci")
    assert cfg.dataset == "mnist5k" and DATASETS.get(cfg.dataset).available(Path("/nowhere"))
    assert all(OOD_DATASETS.get(o).available(Path("/nowhere")) for o in cfg.ood)
    assert {"mlp", "mc_dropout", "bbb_gaussian"} == set(cfg.models)
    assert {0.1, 0.3} <= set(cfg.eps) and cfg.s_attack == (1, 32) and cfg.s_eval == 100
    assert cfg.targeted_steps == 100


@pytest.mark.bench
def test_quiet_writes_nothing_to_the_terminal(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert _bench(tmp_path, "--models", "mlp") == 0
    assert capsys.readouterr() == ("", "")


@pytest.mark.bench
def test_non_tty_gets_a_line_per_cell_but_no_progress_bars_or_summary_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    out = tmp_path / "out"
    assert main(["bench", "--suite", "smoke", "--models", "mlp", "--out", str(out),
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    captured = capsys.readouterr()
    assert "%|" not in captured.err
    lines = [line for line in captured.err.splitlines() if line.startswith("[")]
    # The model contract first, then the 19 cells of the smoke suite's mlp.
    assert len(lines) == 20 and lines[0].startswith("[1/20] contract mlp: ")
    assert lines[1].startswith("[2/20] train mlp: ")
    assert all(re.fullmatch(rf"\[{k}/20\] .+: \d+\.\d s", line)
               for k, line in enumerate(lines, 1))
    assert captured.out.startswith(
        f"wrote {len(pd.read_csv(out / 'results.csv'))} results (results.csv, run.json) and the "
        f"reports to {out}/:\n  leaderboard  {out}/leaderboard.md, {out}/leaderboard.html")


@pytest.mark.bench
def test_a_terminal_gets_stage_progress_bars_and_a_summary_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["bench", "--suite", "smoke", "--out", str(tmp_path / "out"),
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    captured = capsys.readouterr()
    for stage in ("cells:", "train mlp", "fgsm mlp S=32", "targeted mlp", "ood mlp glyphs",
                  "train mc_dropout", "sanity mc_dropout S=1", "ood mc_dropout uniform"):
        assert stage in captured.err
    lines = captured.out.splitlines()
    assert lines[0].startswith("Sorted by PGD-EOT all-3 acc ε=0.1")  # the honest robust acc
    assert lines[1].split()[:3] == ["model", "family", "clean"]  # the headline, two-line header
    assert {lines[4].split()[0], lines[5].split()[0]} == {"mlp", "mc_dropout"}
