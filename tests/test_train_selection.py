"""Which epoch training keeps: best validation accuracy (BHN) or the last (tutorials)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from robustbnn.data.types import DataBundle, Split
from robustbnn.errors import ConfigError
from robustbnn.settings import model_config
from robustbnn.training.fit import fit
from tests._toys import build as _build


def build(name: str):  # noqa: ANN201
    return _build(name), model_config(name, ("*.hidden=(11,13)",))


def _data(n_val: int) -> DataBundle:
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(64, 1, 6, 7, generator=gen)
    y = torch.randint(0, 7, (64,), generator=gen)
    val = Split(x[:n_val], y[:n_val])
    return DataBundle("toy", Split(x, y), val, Split(x[:8], y[:8]), 7, "f", "toy")


def test_last_keeps_the_final_epoch_and_best_val_the_best() -> None:
    model, cfg = build("mlp")
    cfg = dataclasses.replace(cfg, epochs=4, selection="last")
    report = fit(model, cfg, _data(16), name="mlp", generator=torch.Generator().manual_seed(0),
                 progress=False)
    assert report.best_epoch == 4 and report.best_val_accuracy == report.val_accuracy[-1]
    model, cfg = build("mlp")
    report = fit(model, dataclasses.replace(cfg, epochs=4), _data(16), name="mlp",
                 generator=torch.Generator().manual_seed(0), progress=False)
    assert report.best_val_accuracy == max(report.val_accuracy)


def test_no_validation_split_needs_selection_last() -> None:
    model, cfg = build("mlp")
    with pytest.raises(ConfigError, match="has no validation split to select an epoch on; set "
                                          "--set mlp.selection=last"):
        fit(model, dataclasses.replace(cfg, epochs=1), _data(0), name="mlp", progress=False)
    report = fit(model, dataclasses.replace(cfg, epochs=2, selection="last"), _data(0),
                 name="mlp", generator=torch.Generator().manual_seed(0), progress=False)
    assert report.best_epoch == 2


def test_unknown_selection_is_one_clear_error() -> None:
    model, cfg = build("mlp")
    with pytest.raises(ConfigError, match="unknown selection 'best'; known: \\['best_val', "):
        fit(model, dataclasses.replace(cfg, selection="best"), _data(8), name="mlp",
            progress=False)
