"""NaN/inf logits: flagged rows at evaluation, one line for a broken contract in training."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import torch

from robustbnn.attacks.fgsm import FGSM
from robustbnn.attacks.sanity import fixed_randomness_succeeds
from robustbnn.cli import main
from robustbnn.contract.checked import Checked
from robustbnn.contract.types import check_sample_logits
from robustbnn.data import DataBundle, Split
from robustbnn.errors import ModelContractError, NumericalFaultError
from robustbnn.training.fit import fit
from tests.plugins.fresh import forgotten_after_each_test

PLUGIN = "tests.plugins.nan_plugin"

_forgotten = forgotten_after_each_test(PLUGIN)


def test_nonfinite_logits_raise_a_numerical_fault_with_its_count() -> None:
    out = torch.zeros(3, 5, 7)
    out[0, 1, 2] = float("inf")
    out[2, 0, 0] = float("nan")
    with pytest.raises(NumericalFaultError, match="clause 'finite' failed") as err:
        check_sample_logits(out, 3, torch.zeros(5, 2), 7, "toy")
    assert err.value.count == 2 and err.value.model == "toy"
    assert isinstance(err.value, ModelContractError)
    assert check_sample_logits(out, 3, torch.zeros(5, 2), 7, "toy", finite=False) is out


@pytest.mark.parametrize(("out", "words"), [
    (torch.zeros(5, 3, 7), ["clause 'shape'", "(3, 5, 7)", "(5, 3, 7)", "samples last"]),
    (torch.zeros(15, 7), ["clause 'shape'", "flattened"]),
    (torch.zeros(3, 5, 7, dtype=torch.int64), ["clause 'dtype'", "torch.int64"]),
])
def test_contract_errors_name_model_and_clause(out: torch.Tensor, words: list[str]) -> None:
    with pytest.raises(ModelContractError) as err:
        check_sample_logits(out, 3, torch.zeros(5, 2), 7, "toy")
    assert str(err.value).startswith("model 'toy': ") and all(w in str(err.value)
                                                               for w in words)


class _Swapped(torch.nn.Module):
    num_classes = 3

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(4, 3))

    def sample_logits(self, x: torch.Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> torch.Tensor:
        return (x @ self.w).unsqueeze(1).expand(-1, n_samples, -1)  # (B, S, C)


def test_training_checks_the_contract_with_the_default_loss() -> None:
    from tests.plugins.nan_plugin import LinearConfig, SwappedAxes

    model = SwappedAxes(LinearConfig(), (1, 2, 2), 3, None)
    x, y = torch.rand(20, 1, 2, 2), torch.randint(3, (20,))
    data = DataBundle("toy", Split(x, y), Split(x[:0], y[:0]), Split(x, y), 3, "fp", "test")
    with pytest.raises(ModelContractError, match=r"training swapped: model 'SwappedAxes': "
                       r"clause 'shape' failed.*samples last"):
        fit(model, LinearConfig(selection="last", batch_size=8), data, name="swapped",
            progress=False)


def test_sanity_checks_check_the_frozen_sample() -> None:
    x, y = torch.rand(5, 4), torch.randint(3, (5,))
    with pytest.raises(ModelContractError, match="model 'swapped': clause 'shape'"):
        fixed_randomness_succeeds(Checked(_Swapped(), "swapped"), x, y,
                                  FGSM(eps=0.1, n_samples=1), member=torch.Generator())


def test_checked_names_attack_logits() -> None:
    class WithAttack(_Swapped):
        def attack_logits(self, x, n_samples, *, generator=None):  # noqa: ANN001, ANN202
            return self.sample_logits(x, n_samples, generator=generator)

    with pytest.raises(ModelContractError, match="attack_logits must return"):
        Checked(WithAttack(), "toy").attack_logits(torch.rand(5, 4), 2)


@pytest.mark.bench
def test_a_plugin_with_the_wrong_axis_order_is_one_line_naming_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--suite", "smoke", "--quiet", "--no-cache", "--models",
                 "swapped_model", "--plugin", PLUGIN, "--out", str(tmp_path / "out"),
                 "--robustness", "none", "--shift", "none", "--attacks", "fgsm"])
    assert code == 1
    err = capsys.readouterr().err
    # Its brief fit in the model contract fails too (the loss sees the wrong axes), which
    # leaves the verdict to its training cell: one line naming the model and the clause.
    assert "cell 'train swapped_model' failed (ModelContractError: training swapped_model: " \
           in err and "clause 'shape' failed" in err and "samples last" in err
    assert "Traceback" not in err


@pytest.mark.bench
def test_nan_logits_at_evaluation_are_flagged_and_the_run_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["bench", "--suite", "smoke", "--quiet", "--no-cache", "--models",
                 "mlp,nan_model", "--plugin", PLUGIN, "--out", str(out), "--robustness",
                 "none", "--shift", "none", "--attacks", "fgsm", "--ood", "uniform"])
    assert code == 1  # an incomplete run (issue 49), its reports written
    err = capsys.readouterr().err
    assert "robustbnn: error: incomplete run: " in err and "numerical_fault" in err
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(math.isfinite(r["value"]) for r in rows)
    flags = [r for r in rows if r["task"] == "numerical_fault"]
    assert {r["model"] for r in flags} == {"nan_model"}
    in_task = {r["setting"]["in_task"] for r in flags}
    assert {"clean", "ood", "fgsm", "sanity"} <= in_task
    clean = next(r for r in flags if r["setting"]["in_task"] == "clean")
    assert clean["metric"] == "nonfinite_logits" and clean["value"] > 0
    ood = next(r for r in flags if r["setting"]["in_task"] == "ood")
    assert ood["dataset"] == "uniform" and ood["setting"]["fault_in"] == "clean"
    assert not [r for r in rows if r["model"] == "nan_model" and r["task"] != "numerical_fault"
                and r["task"] != "cost"]
    mlp = [r for r in rows if r["model"] == "mlp"]
    assert {"clean", "fgsm", "ood"} <= {r["task"] for r in mlp}
    board = pd.read_csv(out / "all_columns.csv", keep_default_na=False).set_index("model")
    assert board.loc["mlp", "numerical_faults"] == "none"
    assert "clean" in board.loc["nan_model", "numerical_faults"]
    assert "ood on uniform" in board.loc["nan_model", "numerical_faults"]
    assert "numerical faults" in (out / "table_sanity.md").read_text()
    assert not (out / "scores" / "nan_model").exists()
