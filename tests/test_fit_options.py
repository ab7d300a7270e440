"""The small settings objects that replaced wide signatures: what a deterministic model
validates with (``validated_with``), and where and at which sizes a model check runs
(``CheckOptions``)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from robustbnn.data.types import DataBundle, Split
from robustbnn.models import MODELS
from robustbnn.settings import model_config
from robustbnn.testing import CheckOptions, smoke_config
from robustbnn.testing.clauses import Clauses
from robustbnn.training import fit as fit_module
from robustbnn.training.fit import fit, validated_with
from tests._toys import build


def test_a_deterministic_model_validates_with_one_sample() -> None:
    cfg = model_config("mlp", ())
    assert cfg.val_samples > 1
    assert validated_with(cfg, stochastic=True) is cfg
    one = validated_with(cfg, stochastic=False)
    assert one.val_samples == 1
    assert dataclasses.replace(one, val_samples=cfg.val_samples) == cfg  # nothing else changed


@pytest.mark.parametrize("stochastic", [True, False])
def test_fit_validates_with_the_samples_of_its_config(
        stochastic: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    sample_probs = fit_module.sample_probs

    def spy(model, x, n_samples, **kwargs):  # noqa: ANN001, ANN003, ANN202
        seen.append(n_samples)
        return sample_probs(model, x, n_samples, **kwargs)

    monkeypatch.setattr(fit_module, "sample_probs", spy)
    gen = torch.Generator().manual_seed(0)
    x, y = torch.rand(16, 1, 6, 7, generator=gen), torch.randint(0, 7, (16,), generator=gen)
    split = Split(x, y)
    data = DataBundle("toy", split, split, split, 7, "f", "toy")
    cfg = dataclasses.replace(model_config("mlp", ("*.hidden=(11,)",)), epochs=2, val_samples=4)
    fit(build("mlp"), validated_with(cfg, stochastic), data, name="mlp",
        generator=torch.Generator().manual_seed(1), progress=False)
    assert seen == [4 if stochastic else 1] * 2  # one validation per epoch


def test_check_options_set_the_device_and_sizes_of_the_check_inputs() -> None:
    assert CheckOptions() == CheckOptions(device="cpu", input_shape=(1, 6, 7), num_classes=7,
                                          batch=5, n_samples=3)  # distinct: S=3, B=5, C=7
    spec, cfg = MODELS.get("mlp"), smoke_config("mlp")
    model = spec.build(cfg, (1, 4, 4), 3, torch.Generator().manual_seed(0))
    clauses = Clauses(model, spec, cfg, CheckOptions(input_shape=(1, 4, 4), batch=2,
                                                     n_samples=6))
    assert tuple(clauses.x.shape) == (2, 1, 4, 4) and clauses.S == 6 and clauses.C == 3
    assert clauses.device == torch.device("cpu")
