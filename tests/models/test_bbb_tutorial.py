"""Bayes by Backprop with the BbB tutorial's KL estimator: its expectation, its gradient, the
model's switch, and the default config's cache key (issue 31)."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from robustbnn.config import config_identity
from robustbnn.errors import ConfigError
from robustbnn.models.bbb import (
    BayesByBackpropMLP,
    BBBGaussianConfig,
    BBBMixtureConfig,
    GaussianPrior,
    ScaleMixturePrior,
    mc_kl,
    softplus_std,
)
from robustbnn.settings import model_config
from robustbnn.training import cache
from tests._helpers import seeded
from tests._toys import build


def test_detached_mean_mc_kl_is_unbiased_for_the_closed_form() -> None:
    g = seeded(0)
    mu = torch.randn(4, 3, generator=g, dtype=torch.float64) * 0.7
    sigma = torch.rand(4, 3, generator=g, dtype=torch.float64) * 0.5 + 0.05
    prior = GaussianPrior(math.exp(-1.0))
    eps = torch.randn(20_000, 4, 3, generator=g, dtype=torch.float64)  # std err 0.15%
    detached = mc_kl(mu + sigma * eps, sigma, eps, prior, mu=mu)
    closed = prior.kl(mu, sigma)
    assert closed.item() > 5  # far from 0, so a factor-2 error in any term would show
    torch.testing.assert_close(detached, closed, rtol=0.01, atol=0)
    torch.testing.assert_close(detached, mc_kl(mu + sigma * eps, sigma, eps, prior))


def test_detached_mean_mc_kl_has_the_tutorials_value_and_gradient() -> None:
    g = seeded(1)
    mu = torch.randn(6, generator=g, dtype=torch.float64).requires_grad_()
    rho = (torch.randn(6, generator=g, dtype=torch.float64) - 3).requires_grad_()
    eps = torch.randn(3, 6, generator=g, dtype=torch.float64)
    prior = GaussianPrior(6.0)

    def tutorial(mu: torch.Tensor, rho: torch.Tensor) -> torch.Tensor:
        sigma = softplus_std(rho)
        w = mu + sigma * eps  # its log_post: Normal(self.w_mu.data, sigma).log_prob(w)
        log_q = torch.distributions.Normal(mu.detach(), sigma).log_prob(w)
        return (log_q - prior.log_prob(w)).sum() / 3

    def ours(mu: torch.Tensor, rho: torch.Tensor) -> torch.Tensor:
        sigma = softplus_std(rho)
        return mc_kl(mu + sigma * eps, sigma, eps, prior, mu=mu)

    torch.testing.assert_close(ours(mu, rho), tutorial(mu, rho))
    got = torch.autograd.grad(ours(mu, rho), (mu, rho))
    torch.testing.assert_close(got, torch.autograd.grad(tutorial(mu, rho), (mu, rho)))
    # by hand: −ε/σ from log q, w/s² from −log p, each a mean over the 3 draws
    sigma = softplus_std(rho).detach()
    w = mu.detach() + sigma * eps
    expected_mu = (-eps / sigma + w / 36.0).mean(0)
    torch.testing.assert_close(got[0], expected_mu)
    attached = torch.autograd.grad(mc_kl(mu + softplus_std(rho) * eps, softplus_std(rho), eps,
                                         prior), mu)[0]
    torch.testing.assert_close(got[0] - attached, -eps.mean(0) / sigma)


def test_the_models_estimators_differ_by_minus_eps_over_sigma_in_mu() -> None:
    grads = {}
    for estimator in ("mc", "mc_detached_mean"):
        model = build("bbb_gaussian", kl_estimator=estimator)
        draws = model._draw(2, seeded(3))
        model.kl(draws).backward()
        grads[estimator] = [p.grad for layer in model.layers
                            for p in (layer.weight_mu, layer.bias_mu)]
        extra = [-d.eps.mean(0) / d.sigma.detach() for d in draws]
    assert len(extra) == 6  # weight and bias of 3 layers
    for plain, detached, term in zip(grads["mc"], grads["mc_detached_mean"], extra, strict=True):
        torch.testing.assert_close(detached - plain, term)
        assert term.abs().max() > 100  # σ ≈ 0.0025: the term dominates μ's KL gradient


def test_closed_form_stays_the_gaussian_default_and_needs_a_gaussian_prior() -> None:
    assert BBBGaussianConfig().kl_estimator == "closed_form"
    model = build("bbb_gaussian")
    kl = model.kl()  # no draws needed
    torch.testing.assert_close(kl, model.kl(model._draw(1, seeded(0))))
    mixture = ScaleMixturePrior(0.5, 1.0, math.exp(-6))
    assert build("bbb_mixture").kl_estimator == "mc"
    with pytest.raises(ConfigError, match="no closed form"):
        BayesByBackpropMLP((1, 2, 2), 3, (5,), "relu", mixture, kl_estimator="closed_form")
    with pytest.raises(ConfigError, match=r"unknown kl_estimator 'tutorial'; known: \["):
        BayesByBackpropMLP((1, 2, 2), 3, (5,), "relu", mixture, kl_estimator="tutorial")
    with pytest.raises(ConfigError, match="kl_estimator"):
        model_config("bbb_gaussian", ['bbb_gaussian.kl_estimator="tutorial"'])


def test_the_default_estimator_keeps_the_cache_keys_of_before_the_switch() -> None:
    # the keys of the default configs as commit 424190b computed them, before kl_estimator
    assert cache.cache_key("bbb_gaussian", BBBGaussianConfig(), "data", 0) == "12ffb7e3f772d188"
    assert cache.cache_key("bbb_mixture", BBBMixtureConfig(), "data", 0) == "a877820e0e884936"
    assert "kl_estimator" not in config_identity(BBBGaussianConfig())
    other = dataclasses.replace(BBBGaussianConfig(), kl_estimator="mc_detached_mean")
    assert config_identity(other)["kl_estimator"] == "mc_detached_mean"
    assert cache.cache_key("bbb_gaussian", other, "data", 0) != "12ffb7e3f772d188"
