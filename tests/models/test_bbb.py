"""Bayes by Backprop: KL, prior densities, minibatch weights, sampling and the loss."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from scipy import special, stats

from robustbnn.models.bbb import (
    GaussianPrior,
    ScaleMixturePrior,
    blundell_weight,
    mc_kl,
    softplus_std,
)
from tests._helpers import seeded
from tests._toys import build


def test_gaussian_kl_closed_form_matches_monte_carlo() -> None:
    g = seeded(0)
    mu = torch.randn(4, 3, generator=g, dtype=torch.float64) * 0.7
    sigma = torch.rand(4, 3, generator=g, dtype=torch.float64) * 0.5 + 0.05
    prior = GaussianPrior(math.exp(-1.0))
    eps = torch.randn(20_000, 4, 3, generator=g, dtype=torch.float64)  # std err 0.15%
    mc = mc_kl(mu + sigma * eps, sigma, eps, prior)
    closed = prior.kl(mu, sigma)
    assert closed.item() > 5  # far from 0, so a factor-2 error in any term would show
    torch.testing.assert_close(mc, closed, rtol=0.01, atol=0)


def test_gaussian_kl_zero_at_prior() -> None:
    prior = GaussianPrior(0.3)
    kl = prior.kl(torch.zeros(5), torch.full((5,), 0.3))
    torch.testing.assert_close(kl, torch.tensor(0.0), atol=1e-6, rtol=0)


def test_mc_kl_value_and_gradient_match_normal_log_prob() -> None:
    g = seeded(1)
    mu = torch.randn(6, generator=g, dtype=torch.float64).requires_grad_()
    rho = torch.randn(6, generator=g, dtype=torch.float64).requires_grad_()
    eps = torch.randn(3, 6, generator=g, dtype=torch.float64)
    prior = ScaleMixturePrior(0.25, math.exp(-1), math.exp(-7))

    def reference(mu: torch.Tensor, rho: torch.Tensor) -> torch.Tensor:
        sigma = softplus_std(rho)
        w = mu + sigma * eps
        log_q = torch.distributions.Normal(mu, sigma).log_prob(w)
        return (log_q - prior.log_prob(w)).sum() / 3

    def ours(mu: torch.Tensor, rho: torch.Tensor) -> torch.Tensor:
        sigma = softplus_std(rho)
        return mc_kl(mu + sigma * eps, sigma, eps, prior)

    torch.testing.assert_close(ours(mu, rho), reference(mu, rho))
    got = torch.autograd.grad(ours(mu, rho), (mu, rho))
    expected = torch.autograd.grad(reference(mu, rho), (mu, rho))
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize(("pi", "nls1", "nls2"), [(0.5, 0, 6), (0.25, 1, 7), (0.75, 2, 8)])
def test_scale_mixture_log_prob_matches_scipy(pi: float, nls1: float, nls2: float) -> None:
    s1, s2 = math.exp(-nls1), math.exp(-nls2)
    w = np.concatenate([np.linspace(-3, 3, 101), [0.0, 1e-4, -2e-3, 0.05, 8.0]])
    parts = [np.log(pi) + stats.norm.logpdf(w, 0, s1), np.log1p(-pi) + stats.norm.logpdf(w, 0, s2)]
    expected = special.logsumexp(parts, axis=0)  # float64; pdf itself underflows at w = 8
    got = ScaleMixturePrior(pi, s1, s2).log_prob(torch.tensor(w)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_scale_mixture_log_prob_finite_where_narrow_component_underflows() -> None:
    prior = ScaleMixturePrior(0.5, 1.0, math.exp(-6))
    w = torch.tensor([30.0, -50.0], dtype=torch.float64)
    expected = math.log(0.5) + stats.norm.logpdf(w.numpy(), 0, 1.0)
    np.testing.assert_allclose(prior.log_prob(w).numpy(), expected, rtol=1e-12)
    assert torch.isfinite(prior.log_prob(torch.tensor([1e3], dtype=torch.float32))).all()


def test_scale_mixture_degenerate_pi_is_one_gaussian() -> None:
    w = torch.linspace(-1, 1, 7, dtype=torch.float64)
    torch.testing.assert_close(ScaleMixturePrior(1.0, 0.5, 0.01).log_prob(w),
                               GaussianPrior(0.5).log_prob(w))
    torch.testing.assert_close(ScaleMixturePrior(0.0, 0.5, 0.01).log_prob(w),
                               GaussianPrior(0.01).log_prob(w))


@pytest.mark.parametrize("m", [1, 2, 7, 29, 60])
def test_blundell_weights_sum_to_one_and_decrease(m: int) -> None:
    pis = [blundell_weight(i, m) for i in range(1, m + 1)]
    assert math.isclose(math.fsum(pis), 1.0, rel_tol=1e-12)
    exact = [2.0 ** (m - i) / (2.0**m - 1) for i in range(1, m + 1)]
    np.testing.assert_allclose(pis, exact, rtol=1e-12)
    assert all(a > b for a, b in itertools.pairwise(pis))


def test_blundell_weights_stable_for_many_minibatches() -> None:
    m = 5000  # 2^M overflows a float; the rewritten form must not
    assert math.isclose(blundell_weight(1, m), 0.5)
    assert blundell_weight(m, m) == 0.0  # underflows: no KL on late minibatches
    assert math.isclose(math.fsum(blundell_weight(i, m) for i in range(1, m + 1)), 1.0)
    with pytest.raises(ValueError):
        blundell_weight(0, m)


def test_softplus_std_is_stable() -> None:
    rho = torch.tensor([-100.0, -5.0, 0.0, 100.0])
    sigma = softplus_std(rho)
    assert torch.isfinite(sigma).all() and (sigma > 0).all()
    torch.testing.assert_close(sigma[1:3], torch.log1p(torch.exp(rho[1:3])))
    assert sigma[3].item() == 100.0


def test_sampling_reproducible_under_generator() -> None:
    model = build("bbb_mixture")
    x = torch.rand(4, 1, 6, 7)
    a = model.sample_logits(x, 5, generator=seeded(7))
    torch.testing.assert_close(a, model.sample_logits(x, 5, generator=seeded(7)), rtol=0, atol=0)
    assert not torch.equal(a, model.sample_logits(x, 5, generator=seeded(8)))


def test_mean_of_sampled_weights_is_mu_and_std_is_sigma() -> None:
    model = build("bbb_gaussian", rho_init=-1.0)
    draws = model._draw(4000, seeded(0))
    layer = model.layers[0]
    w = draws[0].w  # (S, out, in)
    sigma = softplus_std(layer.weight_rho)
    assert w.shape == (4000, *layer.weight_mu.shape)
    # The error of a mean of 4000 draws is σ / 63; 5 standard errors bound every element.
    assert ((w.mean(0) - layer.weight_mu).abs() < 5 * sigma / math.sqrt(4000)).all()
    torch.testing.assert_close(w.std(0), sigma.detach(), rtol=0.08, atol=0)


def test_one_weight_draw_is_shared_by_the_batch_under_local_reparam_none() -> None:
    model = build("bbb_gaussian", rho_init=0.0, local_reparam="none")
    x = torch.rand(3, 1, 6, 7)
    both = model.sample_logits(torch.cat([x, x]), 2, generator=seeded(0))  # (2, 6, 7)
    # Equal up to float32 rounding (the matmul kernel may block rows differently); a second
    # weight draw would differ by O(1), since rho_init = 0 gives sigma = 0.69.
    torch.testing.assert_close(both[:, :3], both[:, 3:], rtol=1e-5, atol=1e-5)
    assert (both[0] - both[1]).abs().max() > 0.1  # the two samples are distinct draws


@pytest.mark.parametrize("mode", ["first", "all"])
def test_local_reparam_gives_each_example_its_own_draw(mode: str) -> None:
    model = build("bbb_gaussian", rho_init=0.0, local_reparam=mode)
    x = torch.rand(3, 1, 6, 7)
    both = model.sample_logits(torch.cat([x, x]), 2, generator=seeded(0))  # (2, 6, 7)
    assert (both[:, :3] - both[:, 3:]).abs().max() > 0.1


def test_unknown_local_reparam_is_one_clear_error() -> None:
    from robustbnn.errors import ConfigError

    with pytest.raises(ConfigError, match=r"unknown local_reparam 'yes'; known: \['none', "
                                          r"'first', 'all'\]"):
        build("bbb_gaussian", local_reparam="yes")


def test_sample_chunking_matches_draw_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    import robustbnn.models.bbb as bbb

    model = build("bbb_mixture", local_reparam="none")
    monkeypatch.setattr(bbb, "SAMPLES_PER_DRAW", 3)  # chunks of 3, 3, 3 and 2 draws
    x = torch.rand(5, 1, 6, 7)
    out = model.sample_logits(x, 11, generator=seeded(0))
    assert out.shape == (11, 5, 7) and torch.isfinite(out).all()
    assert not torch.equal(out[0], out[-1])
    # The chunks consume the generator as one draw of 11 would, chunk after chunk.
    gen = seeded(0)
    first = model._forward(x, model._draw(3, gen))
    torch.testing.assert_close(out[:3], first)


def test_loss_is_nll_plus_kl_over_n() -> None:
    model = build("bbb_gaussian")
    x, y = torch.rand(5, 1, 6, 7), torch.arange(5)
    loss = model.loss(x, y, n_train=1000, generator=seeded(3), batch=(2, 8))
    logits = model._forward(x, model._draw(1, seeded(3)))[0]
    nll = torch.nn.functional.cross_entropy(logits, y)
    torch.testing.assert_close(loss, nll + model.kl() / 1000)


def test_blundell_loss_weights_kl_by_m_pi_i() -> None:
    model = build("bbb_gaussian", kl_weighting="blundell")
    x, y = torch.rand(5, 1, 6, 7), torch.arange(5)
    logits = model._forward(x, model._draw(1, seeded(3)))[0]
    nll = torch.nn.functional.cross_entropy(logits, y)
    for i, m in [(0, 4), (3, 4)]:
        loss = model.loss(x, y, n_train=1000, generator=seeded(3), batch=(i, m))
        weight = m * 2.0 ** (m - i - 1) / (2.0**m - 1)
        torch.testing.assert_close(loss, nll + weight * model.kl() / 1000)


def test_mixture_loss_has_gradients_for_mu_and_rho() -> None:
    model = build("bbb_mixture", train_samples=3)
    loss = model.loss(torch.rand(5, 1, 6, 7), torch.arange(5), n_train=100, generator=seeded(0))
    loss.backward()
    for layer in model.layers:
        for p in (layer.weight_mu, layer.weight_rho, layer.bias_mu, layer.bias_rho):
            assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0
