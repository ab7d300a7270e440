"""The ``hmc`` reference model (robustbnn.models.hmc): its potential, its sampling as training,
the refusal of chains that have not mixed, and its place in the registry."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from robustbnn.bench import resolve_models
from robustbnn.bench_config import BenchConfig
from robustbnn.contract.streams import make_generator
from robustbnn.data.types import DataBundle, Split
from robustbnn.models import MODELS
from robustbnn.models.hmc import HMCConfig, HMCModel, build_hmc, fit_hmc
from robustbnn.posterior.diagnostics import ChainsNotMixedError
from tests._helpers import seeded

SHAPE, C = (1, 2, 3), 3


class _Trainer:
    """The part of PartTrainer that fit_hmc uses."""

    progress = False

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def generator(self, tag: str) -> torch.Generator:
        return make_generator(torch.device("cpu"), self.seed, "hmc", "train", tag)


def _data() -> DataBundle:
    gen = seeded(0)
    y = torch.randint(0, C, (80,), generator=gen)
    centres = torch.rand(C, *SHAPE, generator=gen)
    x = (centres[y] + 0.2 * torch.randn(80, *SHAPE, generator=gen)).clamp(0, 1)
    train, val = Split(x[:60], y[:60]), Split(x[60:], y[60:])
    return DataBundle("toy", train, val, val, C, "f", "toy")


def _cfg(**changes: object) -> HMCConfig:
    base = dict(hidden=(4,), chains=2, warmup=8, draws=6, max_tree_depth=2, diag_points=20,
                rhat_bound=1e6)
    return dataclasses.replace(HMCConfig(), **{**base, **changes})


def _fit(seed: int = 0, **changes: object) -> tuple[HMCModel, dict]:
    cfg = _cfg(**changes)
    model = build_hmc(cfg, SHAPE, C, seeded(1))
    return model, fit_hmc(model, cfg, _data(), _Trainer(seed))


def test_the_potential_is_the_full_batch_nll_plus_the_gaussian_prior() -> None:
    cfg = _cfg(hidden=(5,), prior_std=0.7)
    model = build_hmc(cfg, SHAPE, C, seeded(1))
    data = _data()
    theta = torch.randn(model.samples.shape[1], generator=seeded(2), requires_grad=True)
    u = model.potential(data.train.x, data.train.y, temperature=0.5)(theta)
    # brute force: the 6-5-3 tanh MLP written out by hand from the flat vector
    w1, b1 = theta[:30].view(5, 6), theta[30:35]
    w2, b2 = theta[35:50].view(3, 5), theta[50:53]
    logits = torch.tanh(data.train.x.flatten(1) @ w1.T + b1) @ w2.T + b2
    expected = (F.cross_entropy(logits, data.train.y, reduction="sum")
                + theta.square().sum() / (2 * 0.7**2)) / 0.5
    assert model.samples.shape == (cfg.chains * cfg.draws, 53)
    torch.testing.assert_close(u, expected)
    (g,) = torch.autograd.grad(u, theta)
    (g_ref,) = torch.autograd.grad(expected, theta)
    torch.testing.assert_close(g, g_ref)


@pytest.mark.bench
def test_sampling_stores_every_draw_reproducibly_and_reports_mixing() -> None:
    model, report = _fit(seed=0)
    again, _ = _fit(seed=0)
    assert int(model.n_collected) == 12 and model.samples.shape == (12, 43)
    assert torch.equal(model.samples, again.samples)
    assert len(torch.unique(model.samples, dim=0)) > 2  # the chains moved
    assert set(report["mixing"]) >= {"max_rhat", "min_ess", "median_ess"}
    assert len(report["chains"]) == 2 and report["seconds"] > 0
    x = _data().test.x[:4]
    logits = model.sample_logits(x, 7, generator=seeded(3))  # (S, B, C): stored draws
    assert logits.shape == (7, 4, C)
    assert len(torch.unique(logits.flatten(1), dim=0)) > 1
    expected = model.draw_probs(model.samples[None], x)[0]  # (K, B, C)
    assert all(any(torch.allclose(p, q, atol=1e-6) for q in expected)
               for p in logits.softmax(-1))
    torch.testing.assert_close(logits, model.sample_logits(x, 7, generator=seeded(3)))


@pytest.mark.bench
def test_chains_that_have_not_mixed_are_refused_and_nothing_is_stored() -> None:
    # no warm-up, over-dispersed starts far apart and four draws: R-hat far above 1.01
    cfg = _cfg(warmup=0, draws=4, init_scale=20.0, rhat_bound=1.01)
    model = build_hmc(cfg, SHAPE, C, seeded(1))
    with pytest.raises(ChainsNotMixedError, match="have not mixed: max split R-hat"):
        fit_hmc(model, cfg, _data(), _Trainer(0))
    assert int(model.n_collected) == 0 and not model.samples.any()


def test_the_reference_and_sg_mcmc_are_registered_but_not_in_the_default_suite() -> None:
    assert {"hmc", "sgld", "sghmc"} <= set(MODELS.names())
    default = resolve_models(BenchConfig()).models
    assert "mlp" in default and not {"hmc", "sgld", "sghmc"} & set(default)
    assert {MODELS.get(m).family for m in ("hmc", "sgld", "sghmc")} == {"MCMC"}
