"""The Laplace baseline: its posterior is laplace-torch's, its samples come from the generator,
and what after_fit computes survives the cache."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
import torch
from torch.func import functional_call
from torch.utils.data import DataLoader, TensorDataset

from robustbnn.data import DataBundle, Split
from robustbnn.errors import ConfigError
from robustbnn.models.laplace import LaplaceConfig, LaplaceNet, _MAPLogits, build_laplace
from robustbnn.models.mlp import MLEConfig, build_mlp
from robustbnn.training import cache
from robustbnn.training.fit import fit
from tests._helpers import seeded
from tests.models.test_fast_sampling import assert_same_distribution

laplace = pytest.importorskip("laplace", reason="laplace-torch is not installed")
# laplace-torch reminds every prior-precision fit that its own predictive defaults to probit.
pytestmark = pytest.mark.filterwarnings("ignore:By default `link_approx`")

SHAPE, C = (1, 2, 3), 3
STRUCTURES = [("last_layer", "kron"), ("last_layer", "diag"), ("last_layer", "full"),
              ("all", "kron"), ("all", "diag")]


def _split(n: int = 120, seed: int = 0) -> Split:
    x = torch.rand(n, *SHAPE, generator=seeded(seed))
    return Split(x, x.flatten(1)[:, :C].argmax(1))


EMPTY = Split(torch.zeros(0, *SHAPE), torch.zeros(0, dtype=torch.int64))


def _fitted(subset: str = "last_layer", structure: str = "kron", **changes) -> LaplaceNet:
    cfg = LaplaceConfig(hidden=(5,), subset_of_weights=subset, hessian_structure=structure,
                        **changes)
    model = build_laplace(cfg, SHAPE, C, seeded(0))
    model.after_fit(_split(), EMPTY)
    return model


def _weights(model: LaplaceNet, n_samples: int, seed: int) -> torch.Tensor:
    """Posterior draws of the covered weights, flattened in laplace-torch's order, (S, P)."""
    with torch.no_grad():
        return torch.cat([w.flatten(1) for w in model._draws(n_samples, seeded(seed))], dim=1)


def _library(model: LaplaceNet, cfg: LaplaceConfig):
    """laplace-torch fitted on its own, as docs/models.md shows users, on the same network."""
    extra = {"last_layer_name": "net.layers.1"} if cfg.subset_of_weights == "last_layer" else {}
    la = laplace.Laplace(_MAPLogits(copy.deepcopy(model.net)), "classification",
                         subset_of_weights=cfg.subset_of_weights,
                         hessian_structure=cfg.hessian_structure,
                         prior_precision=cfg.prior_precision, **extra)
    split = _split()
    la.fit(DataLoader(TensorDataset(split.x, split.y), batch_size=cfg.fit_batch_size))
    la.optimize_prior_precision(method="marglik", init_prior_prec=cfg.prior_precision)
    return la


def _covariance(la) -> torch.Tensor:
    """The posterior covariance laplace-torch holds, dense, (P, P)."""
    if hasattr(la, "posterior_covariance"):
        return la.posterior_covariance
    if hasattr(la, "posterior_variance"):
        return torch.diag(la.posterior_variance)
    return la.posterior_precision.to_matrix(exponent=-1)


@pytest.mark.bench
@pytest.mark.parametrize(("subset", "structure"), STRUCTURES)
def test_weight_samples_have_laplace_torch_posterior(subset: str, structure: str) -> None:
    cfg = LaplaceConfig(hidden=(5,), subset_of_weights=subset, hessian_structure=structure)
    model = _fitted(subset, structure)
    la = _library(model, cfg)
    torch.testing.assert_close(model.prior_precision, la.prior_precision)
    # Same draws of z: the buffers reproduce laplace-torch's own sample() exactly...
    torch.testing.assert_close(_weights(model, 4, seed=3), la.sample(4, generator=seeded(3)),
                               rtol=1e-4, atol=1e-5)
    # ...and many draws have its mean (the MAP) and covariance.
    draws = _weights(model, 20_000, seed=4)
    cov = _covariance(la)
    sd = cov.diagonal().sqrt()
    assert ((draws.mean(0) - la.mean).abs() / sd).max() < 5 / 20_000**0.5
    emp = torch.cov(draws.T)
    assert ((emp - cov).abs() / torch.outer(sd, sd)).max() < 0.06


@pytest.mark.bench
@pytest.mark.parametrize(("subset", "structure"), [("last_layer", "kron"), ("all", "kron")])
def test_batched_samples_match_a_per_sample_reference(subset: str, structure: str) -> None:
    # The reference draws θ ~ N(θ_MAP, Σ) from laplace-torch's dense covariance, one sample at
    # a time, and runs the network with those weights put in (test_fast_sampling's check).
    cfg = LaplaceConfig(hidden=(5,), subset_of_weights=subset, hessian_structure=structure)
    model = _fitted(subset, structure)
    la = _library(model, cfg)
    wrapper = _MAPLogits(model.net)
    names = ["net.layers.1.weight", "net.layers.1.bias"] if subset == "last_layer" else [
        k for k, _ in wrapper.named_parameters()]
    shapes = [wrapper.get_parameter(k).shape for k in names]
    root = torch.linalg.cholesky(_covariance(la).double()).float()
    x, n = _split(3, seed=1).x, 4000
    gen = seeded(3)
    with torch.no_grad():
        fast = model.sample_logits(x, n, generator=seeded(2))
        ref = []
        for _ in range(n):
            theta = la.mean + root @ torch.randn(len(la.mean), generator=gen)
            parts = theta.split([shape.numel() for shape in shapes])
            params = {k: v.view(shape) for k, v, shape in zip(names, parts, shapes, strict=True)}
            ref.append(functional_call(wrapper, params, (x,)))
    assert fast.double().var(0).min() > 1e-6, "the test needs visible posterior noise"
    assert_same_distribution(fast, torch.stack(ref))


@pytest.mark.parametrize(("subset", "structure"), STRUCTURES)
def test_predictive_variance_shrinks_as_the_prior_precision_grows(subset: str,
                                                                  structure: str) -> None:
    x = _split(20, seed=1).x
    spread = []
    for prior in (0.1, 1.0, 10.0, 100.0):
        model = _fitted(subset, structure, prior_precision=prior, marglik=False)
        assert model.prior_precision.item() == pytest.approx(prior)
        with torch.no_grad():
            probs = model.sample_logits(x, 2000, generator=seeded(0)).softmax(-1)
        spread.append(probs.var(0).mean().item())
    assert spread == sorted(spread, reverse=True), spread
    assert spread[-1] < 0.2 * spread[0]


def test_samples_reproducible_under_a_seed_and_differ_across_seeds() -> None:
    model = _fitted()
    x = _split(7, seed=1).x
    a = model.sample_logits(x, 4, generator=seeded(1))
    torch.testing.assert_close(a, model.sample_logits(x, 4, generator=seeded(1)), rtol=0, atol=0)
    assert not torch.equal(a, model.sample_logits(x, 4, generator=seeded(2)))
    assert not torch.equal(a[0], a[1])


def test_fitted_samples_are_differentiable_mode_free_and_leave_the_state_alone() -> None:
    model = _fitted("all", "kron")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = _split(7, seed=1).x.requires_grad_()
    model.eval()
    out = model.sample_logits(x, 3, generator=seeded(5))
    out.logsumexp(-1).sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    model.train()
    torch.testing.assert_close(out, model.sample_logits(x, 3, generator=seeded(5)), rtol=0,
                               atol=0)
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, before[k], rtol=0, atol=0)


def test_before_after_fit_it_is_the_map_network_of_mlp() -> None:
    cfg = LaplaceConfig(hidden=(5,))
    model = build_laplace(cfg, SHAPE, C, seeded(0))
    mlp = build_mlp(MLEConfig(hidden=(5,)), SHAPE, C, seeded(0))
    x = _split(7, seed=1).x
    out = model.sample_logits(x, 3, generator=seeded(1))
    torch.testing.assert_close(out, mlp.sample_logits(x, 3), rtol=0, atol=0)
    assert not model.fitted


def test_cache_round_trip_gives_identical_samples(tmp_path: Path) -> None:
    model = _fitted()
    cache.save(tmp_path, "laplace", "k", model, {})
    fresh = build_laplace(LaplaceConfig(hidden=(5,)), SHAPE, C, seeded(9))  # other weights
    assert cache.load(tmp_path, "laplace", "k", fresh) == {}
    x = _split(7, seed=1).x
    torch.testing.assert_close(fresh.sample_logits(x, 5, generator=seeded(1)),
                               model.sample_logits(x, 5, generator=seeded(1)), rtol=0, atol=0)


def test_training_without_a_validation_split_fits_the_posterior() -> None:
    cfg = LaplaceConfig(hidden=(5,), epochs=2, batch_size=40, selection="last")
    model = build_laplace(cfg, SHAPE, C, seeded(0))
    data = DataBundle("toy", _split(), EMPTY, EMPTY, C, "fp", "test")
    report = fit(model, cfg, data, name="laplace", generator=seeded(1), progress=False)
    assert report.best_epoch == 2 and model.fitted
    out = model.sample_logits(_split(7, seed=1).x, 3, generator=seeded(1))
    assert not torch.equal(out[0], out[1])


@pytest.mark.parametrize(("change", "match"), [
    ({"subset_of_weights": "subnetwork"}, "unknown subset_of_weights"),
    ({"hessian_structure": "lowrank"}, "supported: \\['kron', 'diag', 'full'\\]"),
    ({"subset_of_weights": "all", "hessian_structure": "full"}, "P² entries"),
    ({"subset_of_weights": "all", "arch": "cnn"}, "MLP only"),
    ({"prior_precision": 0.0}, "prior_precision must be > 0"),
])
def test_config_errors_name_the_choices(change: dict, match: str) -> None:
    cfg = dataclasses.replace(LaplaceConfig(hidden=(5,)), **change)
    with pytest.raises(ConfigError, match=match):
        build_laplace(cfg, SHAPE, C, seeded(0))
