"""Temperature scaling: T fitted on the validation NLL, predictions unchanged, T cached."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F

from robustbnn.data import load_dataset
from robustbnn.data.types import DataBundle, Split
from robustbnn.models import MODELS
from robustbnn.models.temperature_scaled import TemperatureScaled, fit_log_temperature
from robustbnn.settings import model_config
from robustbnn.training import cache
from robustbnn.training.fit import fit, validated_with
from tests._helpers import seeded

SETTINGS = ("temperature_scaled.hidden=(64,)", "temperature_scaled.epochs=40",
            "temperature_scaled.batch_size=32", "temperature_scaled.selection=last")


def _build(seed: int = 0) -> TemperatureScaled:
    return MODELS.get("temperature_scaled").build(model_config("temperature_scaled", SETTINGS),
                                                  (1, 28, 28), 10, seeded(seed))


def _nll_and_pred(model: TemperatureScaled, split: Split) -> tuple[float, torch.Tensor]:
    with torch.no_grad():
        logits = model.sample_logits(split.x, 1)[0]
    return F.cross_entropy(logits, split.y).item(), logits.argmax(-1)


@pytest.fixture(scope="module")
def fitted() -> tuple[TemperatureScaled, DataBundle, float, torch.Tensor]:
    """A 784-64-10 MLP trained to overconfidence on 500 mnist5k digits (640 steps), and its
    validation NLL and predictions before temperature scaling."""
    full = load_dataset("mnist5k")
    data = DataBundle("mnist5k", Split(full.train.x[:500], full.train.y[:500]), full.val,
                      full.test, 10, full.fingerprint, full.source)
    with torch.random.fork_rng():
        model = _build()
        before: dict[str, object] = {}
        hook = model.after_fit

        def record(train: Split, val: Split, *, generator: torch.Generator | None = None) -> None:
            before["val"] = _nll_and_pred(model, val)
            hook(train, val, generator=generator)

        model.after_fit = record
        fit(model, validated_with(model_config("temperature_scaled", SETTINGS), stochastic=False),
            data, name="temperature_scaled", generator=seeded(1), progress=False)
        del model.after_fit
    nll, pred = before["val"]
    return model, data, nll, pred


def test_shares_the_mlp_config_and_is_deterministic() -> None:
    spec = MODELS.get("temperature_scaled")
    assert spec.config is MODELS.get("mlp").config and not spec.stochastic
    assert spec.version == "1" and "smoke" in spec.shrink
    assert _build().temperature == 1.0


def test_fitted_temperature_lowers_validation_nll_and_keeps_predictions(fitted) -> None:
    model, data, nll_before, pred_before = fitted
    assert model.temperature > 1.05  # an overfitted MLE net is overconfident
    nll_after, pred_after = _nll_and_pred(model, data.val)
    assert nll_after < nll_before
    assert torch.equal(pred_after, pred_before)
    with torch.no_grad():
        torch.testing.assert_close(model.sample_logits(data.test.x, 1)[0],
                                   model.net.sample_logits(data.test.x, 1)[0] / model.temperature)


def test_fitted_temperature_is_the_grid_minimum_of_the_validation_nll(fitted) -> None:
    model, data, _, _ = fitted
    with torch.no_grad():
        logits = model.net.sample_logits(data.val.x, 1)[0].double()  # (N, C)

        def argmin(grid: torch.Tensor) -> float:
            nll = torch.stack([F.cross_entropy(logits * (-t).exp(), data.val.y) for t in grid])
            return grid[nll.argmin()].item()

        coarse = argmin(torch.linspace(-2, 2, 401, dtype=torch.float64))  # log T, steps of 0.01
        fine = argmin(torch.linspace(coarse - 0.01, coarse + 0.01, 201, dtype=torch.float64))
    assert abs(model.log_temperature.item() - fine) < 1e-3


def test_temperature_survives_a_cache_round_trip(fitted, tmp_path) -> None:
    model, data, _, _ = fitted
    cache.save(tmp_path, "temperature_scaled", "k", model, {})
    fresh = _build(seed=5)
    assert cache.load(tmp_path, "temperature_scaled", "k", fresh) is not None
    assert fresh.temperature == model.temperature != 1.0
    x = data.test.x[:8]
    torch.testing.assert_close(fresh.sample_logits(x, 3), model.sample_logits(x, 3), rtol=0,
                               atol=0)


def test_recovers_the_temperature_of_sharpened_calibrated_logits() -> None:
    gen = seeded(2)
    calibrated = 2 * torch.randn(20_000, 5, generator=gen)
    y = torch.multinomial(calibrated.softmax(-1), 1, generator=gen).squeeze(1)
    assert fit_log_temperature(3 * calibrated, y).exp().item() == pytest.approx(3, rel=0.03)


def test_without_a_validation_split_temperature_stays_one(caplog) -> None:
    model = _build()
    empty = Split(torch.zeros(0, 1, 28, 28), torch.zeros(0, dtype=torch.long))
    with caplog.at_level(logging.WARNING):
        model.after_fit(empty, empty)
    assert model.temperature == 1.0
    assert "no validation split" in caplog.text
