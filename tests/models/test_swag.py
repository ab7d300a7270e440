"""SWAG: the moments collected during training and the Gaussian its samples come from."""

from __future__ import annotations

import copy
import dataclasses
import math

import pytest
import torch
from torch.nn.utils import vector_to_parameters

from robustbnn.data.types import DataBundle, Split
from robustbnn.errors import ConfigError
from robustbnn.models import MODELS
from robustbnn.models.swag import SWAG
from robustbnn.settings import model_config
from robustbnn.training import cache
from robustbnn.training.fit import fit
from tests._helpers import seeded

S, B, C = 3, 5, 7
SHAPE = (1, 6, 7)


def _data() -> DataBundle:
    """Two noisy class prototypes per class: learnable, with minibatch noise left over."""
    gen = seeded(0)
    y = torch.randint(0, C, (96,), generator=gen)
    centres = torch.rand(C, *SHAPE, generator=gen)
    x = (centres[y] + 0.3 * torch.randn(96, *SHAPE, generator=gen)).clamp(0, 1)
    return DataBundle("toy", Split(x[:64], y[:64]), Split(x[64:], y[64:]), Split(x[64:], y[64:]),
                      C, "f", "toy")


def _trained(epochs: int = 12, rank: int = 4) -> tuple[SWAG, list[torch.Tensor], list[int]]:
    """A 42-11-13-7 SWAG after ``epochs`` of training, and the weights it collected (with the
    epochs they came from), recorded at every ``on_epoch_end``."""
    cfg = model_config("swag", ("swag.hidden=(11,13)", f"swag.epochs={epochs}",
                                f"swag.max_num_models={rank}", "swag.batch_size=16",
                                "swag.lr=0.01"))
    model = MODELS.get("swag").build(cfg, SHAPE, C, seeded(0))
    snapshots, epochs_seen, hook = [], [], model.on_epoch_end

    def record(epoch: int, *, generator: torch.Generator | None = None) -> None:
        before = int(model.n_collected)
        hook(epoch, generator=generator)
        if int(model.n_collected) > before:
            snapshots.append(model.weights().clone())
            epochs_seen.append(epoch)

    model.on_epoch_end = record
    report = fit(model, cfg, _data(), name="swag", generator=seeded(1), progress=False)
    del model.on_epoch_end
    assert report.best_epoch == epochs  # selection="last": the moments are not rolled back
    return model, snapshots, epochs_seen


@pytest.fixture(scope="module")
def trained() -> tuple[SWAG, list[torch.Tensor], list[int]]:
    with torch.random.fork_rng():
        return _trained()


def _total_var(model: SWAG) -> torch.Tensor:
    """The diagonal of the sampling covariance, scale · (Σ_diag + D̂D̂ᵀ / (k − 1)), (P,)."""
    k = min(int(model.n_collected), model.rank)
    var = (model.swa_sq_mean - model.swa_mean.square()).clamp_min(model.var_clamp)
    return model.scale * (var + model.deviations[:k].square().sum(0) / (k - 1))


def test_defaults_are_the_papers() -> None:
    spec = MODELS.get("swag")
    cfg = spec.config()
    assert (cfg.max_num_models, cfg.scale, cfg.swa_start, cfg.selection) == (20, 0.5, 0.5, "last")
    assert cfg.hidden == MODELS.get("mlp").config().hidden and spec.stochastic
    assert spec.version == "1" and "smoke" in spec.shrink


def test_collects_once_per_epoch_after_swa_start(trained) -> None:
    model, snapshots, epochs = trained
    assert epochs == list(range(7, 13))  # 12 epochs, swa_start 0.5
    assert int(model.n_collected) == len(snapshots) == 6


def test_buffers_equal_a_brute_force_recomputation(trained) -> None:
    model, snapshots, _ = trained
    theta = torch.stack(snapshots).double()  # (n, P)
    torch.testing.assert_close(model.swa_mean.double(), theta.mean(0), rtol=0, atol=1e-6)
    torch.testing.assert_close(model.swa_sq_mean.double(), theta.square().mean(0), rtol=0,
                               atol=1e-6)
    # Deviation i is θ_i minus the mean of θ_1..θ_i; row (i − 1) mod K keeps the last K.
    n, k = len(snapshots), model.rank
    for i in range(n - k + 1, n + 1):
        want = theta[i - 1] - theta[:i].mean(0)
        torch.testing.assert_close(model.deviations[(i - 1) % k].double(), want, rtol=0,
                                   atol=1e-6)
    assert model.deviations.shape == (k, theta.shape[1])  # the build-time shape


def test_sample_mean_and_variance_approach_the_swag_gaussian(trained) -> None:
    model, _, _ = trained
    n = 20_000
    draws = model.sample_weights(n, generator=seeded(2)).double()  # (N, P)
    sd = _total_var(model).double().sqrt()
    moving = sd > 1e-6  # weights that never moved (dead units) have only var_clamp's 1e-15
    assert moving.float().mean() > 0.5
    error = (draws.mean(0) - model.swa_mean) / sd
    assert error[moving].abs().max() < 5 / math.sqrt(n)
    ratio = draws.var(0)[moving] / sd[moving].square()
    assert (ratio - 1).abs().max() < 6 * math.sqrt(2 / n)


@pytest.mark.parametrize(("rank", "want"), [(4, 4), (20, 5)])
def test_low_rank_part_spans_the_collected_deviations(rank: int, want: int) -> None:
    # 6 snapshots: with K = 4 the ring holds the last 4 (rank 4); with K = 20 it holds all 6,
    # the first of them the zero vector θ_1 − θ̄_1 (rank 5).
    model, snapshots, _ = _trained(rank=rank)
    stored = min(len(snapshots), rank)
    assert (model.deviations[stored:] == 0).all()
    assert torch.linalg.matrix_rank(model.deviations.double()) == want
    low_rank = copy.deepcopy(model)
    low_rank.swa_sq_mean.copy_(low_rank.swa_mean.square())  # no diagonal part
    centred = (low_rank.sample_weights(200, generator=seeded(3)) - model.swa_mean).double()
    assert torch.linalg.matrix_rank(centred, rtol=1e-4) == want
    basis = torch.linalg.qr(model.deviations[:stored].double().T).Q  # (P, stored)
    residual = centred - centred @ basis @ basis.T
    assert residual.abs().max() < 1e-4 * centred.abs().max()


def _weight_sampler(model: SWAG) -> SWAG:
    """A copy of ``model`` that draws whole weight vectors (``local_reparam="none"``)."""
    ref = copy.deepcopy(model)
    ref.local_reparam = "none"
    return ref


def test_sample_logits_is_the_mlp_at_sampled_weights(trained) -> None:
    model = _weight_sampler(trained[0])
    x = torch.rand(B, *SHAPE)
    out = model.sample_logits(x, S, generator=seeded(4))
    draws = model.sample_weights(S, generator=seeded(4))
    net = copy.deepcopy(model.net)
    for s in range(S):
        vector_to_parameters(draws[s], net.parameters())
        torch.testing.assert_close(out[s], net.sample_logits(x, 1)[0])


def test_samples_vary_reproduce_and_leave_the_state_alone(trained) -> None:
    model, _, _ = trained
    x = torch.rand(B, *SHAPE, requires_grad=True)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.eval()
    a = model.sample_logits(x, S, generator=seeded(5))
    model.train()
    b = model.sample_logits(x, S, generator=seeded(5))
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.equal(a, model.sample_logits(x, S, generator=seeded(6)))
    assert not torch.equal(a[0], a[1])
    a.logsumexp(-1).sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    for key, value in model.state_dict().items():
        torch.testing.assert_close(value, before[key], rtol=0, atol=0)


def test_samples_are_drawn_block_by_block(trained, monkeypatch) -> None:
    import robustbnn.models.swag as swag

    model = _weight_sampler(trained[0])
    x = torch.rand(B, *SHAPE)
    monkeypatch.setattr(swag, "WEIGHT_FLOATS", model.swa_mean.numel() * 3)  # blocks of 3
    out = model.sample_logits(x, 8, generator=seeded(7))
    g = seeded(7)
    draws = torch.cat([model.sample_weights(n, generator=g) for n in (3, 3, 2)])
    net = copy.deepcopy(model.net)
    for s in range(8):
        vector_to_parameters(draws[s], net.parameters())
        torch.testing.assert_close(out[s], net.sample_logits(x, 1)[0])


@pytest.mark.parametrize("n_samples", [4000, 2])  # S >= k shares D̂₁x; S < k forms D̂₁z₂
def test_first_layer_output_sampling_has_the_weight_sampling_law(trained,
                                                                   n_samples: int) -> None:
    from tests.models.test_fast_sampling import assert_same_distribution

    model, _, _ = trained
    assert model.local_reparam == "first" and model.rank == 4
    x = torch.rand(3, *SHAPE, generator=seeded(1))
    with torch.no_grad():
        ref = _weight_sampler(model).sample_logits(x, 4000, generator=seeded(3))
        fast = torch.cat([model.sample_logits(x, n_samples, generator=seeded(10 + i))
                          for i in range(4000 // n_samples)])
    assert fast.shape == ref.shape == (4000, 3, C)
    assert fast.double().var(0).min() > 1e-4, "the test needs visible posterior noise"
    assert_same_distribution(fast, ref)


def test_the_check_catches_first_layer_sampling_without_its_low_rank_part(trained) -> None:
    from tests.models.test_fast_sampling import assert_same_distribution

    model = copy.deepcopy(trained[0])
    x = torch.rand(3, *SHAPE, generator=seeded(1))
    with torch.no_grad():
        ref = _weight_sampler(model).sample_logits(x, 4000, generator=seeded(3))
        model.deviations[:, : sum(model._layout.numels[:2])] = 0  # drop D̂₁ only
        broken = model.sample_logits(x, 4000, generator=seeded(4))
    with pytest.raises(AssertionError, match="variance ratios|standard errors"):
        assert_same_distribution(broken, ref)


def test_before_any_collection_samples_are_the_current_weights() -> None:
    model = MODELS.get("swag").build(model_config("swag", ("swag.hidden=(11,13)",)), SHAPE, C,
                                     seeded(0))
    x = torch.rand(B, *SHAPE)
    out = model.sample_logits(x, S, generator=seeded(0))
    for s in range(S):
        torch.testing.assert_close(out[s], model.net.sample_logits(x, 1)[0], rtol=0, atol=0)


def test_cache_round_trip_keeps_the_moments(trained, tmp_path) -> None:
    model, _, _ = trained
    cache.save(tmp_path, "swag", "k", model, {})
    cfg = model_config("swag", ("swag.hidden=(11,13)", "swag.epochs=12",
                                "swag.max_num_models=4"))
    fresh = MODELS.get("swag").build(cfg, SHAPE, C, seeded(9))
    assert cache.load(tmp_path, "swag", "k", fresh) is not None
    x = torch.rand(B, *SHAPE)
    torch.testing.assert_close(fresh.sample_logits(x, S, generator=seeded(8)),
                               model.sample_logits(x, S, generator=seeded(8)), rtol=0, atol=0)


def test_swa_start_outside_the_unit_interval_is_one_clear_error() -> None:
    cfg = dataclasses.replace(MODELS.get("swag").config(), swa_start=1.0)
    with pytest.raises(ConfigError, match=r"swa_start .* \[0, 1\), got 1.0"):
        MODELS.get("swag").build(cfg, SHAPE, C, seeded(0))
