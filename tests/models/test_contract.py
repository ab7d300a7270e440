"""The model contract, for every registered model (new models are covered automatically).

Every clause of :mod:`robustbnn.testing` runs on every model twice: at its smoke size, as
``robustbnn check`` builds it, and, where the config has hidden layers, with two of distinct
widths (11, 13), so a swapped weight axis fails too. S = 3, B = 5, C = 7 and inputs (1, 6, 7)
are distinct, so a swapped sample, batch or class axis fails.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest
import torch

from robustbnn.contract.types import check_sample_logits
from robustbnn.models import MODELS
from robustbnn.testing import CLAUSES, CheckOptions, CheckReport, check_model, smoke_config

SIZES = ("smoke", "two_layers")


@functools.cache
def _report(name: str, size: str, device: str) -> CheckReport:
    cfg = smoke_config(name)
    if size == "two_layers":
        if "hidden" not in {f.name for f in dataclasses.fields(cfg)}:
            pytest.skip(f"{name} has no hidden layers to size")
        cfg = dataclasses.replace(cfg, hidden=(11, 13))
    options = CheckOptions(device=device, input_shape=(1, 6, 7), num_classes=7, batch=5,
                           n_samples=3)
    return check_model(name, config=cfg, options=options)


@pytest.mark.bench
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", MODELS.names())
def test_every_clause_holds(name: str, size: str, device: torch.device) -> None:
    report = _report(name, size, str(device))
    assert [r.clause for r in report.results] == list(CLAUSES)
    report.raise_if_failed()
    skipped = {r.clause: r.detail for r in report.results if r.status == "skipped"}
    assert skipped.keys() <= {"attack_logits"}, skipped  # only a clause that may not apply


def test_dropout_models_check_their_attack_samples(device: torch.device) -> None:
    for name in ("mc_dropout", "bbalpha_05"):
        gen = torch.Generator().manual_seed(0)
        assert hasattr(MODELS.get(name).build(smoke_config(name), (1, 6, 7), 7, gen),
                       "attack_logits")
        assert _report(name, "smoke", str(device)).result("attack_logits").status == "ok"


def test_check_sample_logits_names_model_and_shapes() -> None:
    with pytest.raises(ValueError, match=r"model 'toy'.*\(3, 5, 7\).*\(5, 3, 7\)"):
        check_sample_logits(torch.zeros(5, 3, 7), 3, torch.zeros(5, 2), 7, "toy")
    with pytest.raises(ValueError, match="NaN or inf"):
        check_sample_logits(torch.full((3, 5, 7), float("nan")), 3, torch.zeros(5, 2), 7, "toy")
