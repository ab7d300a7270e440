"""The SG-MCMC update rules (robustbnn.training.sgmcmc): one step by hand, the cyclical step
size, and the stationary mean and variance on a Gaussian target."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.linalg import solve_discrete_lyapunov

from robustbnn.errors import ConfigError
from robustbnn.training.sgmcmc import SGHMC, SGLD, Cyclical
from tests._helpers import seeded

MU = torch.tensor([1.0, -2.0], dtype=torch.float64)
SIGMA = torch.tensor([[1.0, 0.6], [0.6, 2.0]], dtype=torch.float64)
PRECISION = torch.linalg.inv(SIGMA)
CHAINS = 1000


def _params() -> list[torch.Tensor]:
    """Two parameters of distinct shapes, so a swapped noise draw fails."""
    gen = seeded(3)
    return [torch.randn(3, generator=gen).requires_grad_(),
            torch.randn(2, 4, generator=gen).requires_grad_()]


def _backward(params: list[torch.Tensor]) -> list[torch.Tensor]:
    """A quadratic loss with a gradient that depends on θ; returns the gradients."""
    for p in params:
        p.grad = None
    loss = sum((p - 0.5).square().sum() * (i + 1) for i, p in enumerate(params))
    loss.backward()
    return [p.grad.clone() for p in params]


def test_sgld_step_is_welling_teh_eq4_by_hand() -> None:
    params, lr, n = _params(), 0.3, 7
    before = [p.detach().clone() for p in params]
    grads = _backward(params)
    SGLD(params, lr=lr, num_data=n, generator=seeded(11)).step()
    twin = seeded(11)  # the noise in parameter order, randn(p.shape) each
    for p, p0, g in zip(params, before, grads, strict=True):
        z = torch.randn(p.shape, generator=twin)
        torch.testing.assert_close(p.detach(), p0 - lr / 2 * g + math.sqrt(lr / n) * z)


def test_sghmc_two_steps_are_chen_eq15_by_hand() -> None:
    params, lr, alpha, n = _params(), 0.2, 0.3, 5
    theta = [p.detach().clone() for p in params]
    opt = SGHMC(params, lr=lr, friction=alpha, num_data=n, generator=seeded(0))
    v = [torch.zeros_like(t) for t in theta]
    for _ in range(2):  # the second step carries the first's momentum
        grads = _backward(params)
        opt.step(generator=seeded(4))  # a step's own generator wins over the optimizer's
        twin = seeded(4)
        for i, g in enumerate(grads):
            z = torch.randn(theta[i].shape, generator=twin)
            v[i] = (1 - alpha) * v[i] - lr * g + math.sqrt(2 * alpha * lr / n) * z
            theta[i] = theta[i] + v[i]
        for p, t in zip(params, theta, strict=True):
            torch.testing.assert_close(p.detach(), t)


def test_cyclical_step_size_is_zhang_eq1() -> None:
    sched = Cyclical(total_steps=10, cycles=2, exploration=0.6)  # cycles of ⌈10/2⌉ = 5 steps
    factors = [sched.factor(k) for k in range(1, 11)]
    expected = [0.5 * (math.cos(math.pi * ((k - 1) % 5) / 5) + 1) for k in range(1, 11)]
    assert factors == pytest.approx(expected)
    assert factors[0] == factors[5] == 1.0  # each cycle restarts at ℓ₀
    # r(k) = 0, .2, .4 explore; .6, .8 sample (r ≥ β), in both cycles
    assert [sched.samples(k) for k in range(1, 11)] == [False, False, False, True, True] * 2


def test_cyclical_exploration_draws_no_noise_and_sampling_scales_lr() -> None:
    params, lr, n = _params(), 0.4, 3
    sched = Cyclical(total_steps=4, cycles=1, exploration=0.5)  # steps 1, 2 explore
    gen = seeded(5)
    opt = SGLD(params, lr=lr, num_data=n, generator=gen, schedule=sched)
    state = gen.get_state()
    for k in (1, 2):
        before = [p.detach().clone() for p in params]
        grads = _backward(params)
        opt.step()
        ell = lr * sched.factor(k)
        for p, p0, g in zip(params, before, grads, strict=True):
            torch.testing.assert_close(p.detach(), p0 - ell / 2 * g)  # plain SGD, no noise
    assert torch.equal(gen.get_state(), state)  # nothing was drawn
    before = [p.detach().clone() for p in params]
    grads = _backward(params)
    opt.step()  # k = 3: r = 0.5 ≥ β samples, at ℓ₀ (cos(π/2) + 1) / 2
    twin = torch.Generator().set_state(state)
    ell = lr * 0.5 * (math.cos(math.pi / 2) + 1)
    for p, p0, g in zip(params, before, grads, strict=True):
        z = torch.randn(p.shape, generator=twin)
        torch.testing.assert_close(p.detach(), p0 - ell / 2 * g + math.sqrt(ell / n) * z)


def test_equal_generators_give_equal_chains_and_others_differ() -> None:
    def chain(seed: int) -> torch.Tensor:
        params = _params()
        opt = SGHMC(params, lr=0.1, friction=0.2, num_data=4, generator=seeded(seed))
        for _ in range(3):
            _backward(params)
            opt.step()
        return torch.cat([p.detach().reshape(-1) for p in params])

    assert torch.equal(chain(1), chain(1))
    assert not torch.equal(chain(1), chain(2))


@pytest.mark.parametrize(("make", "match"), [
    (lambda p: SGHMC(p, lr=0.1, friction=0.0, num_data=1), r"friction \(alpha\) must be in"),
    (lambda p: SGHMC(p, lr=0.1, friction=1.5, num_data=1), r"friction \(alpha\) must be in"),
    (lambda p: SGLD(p, lr=0.0, num_data=1), "lr must be > 0"),
    (lambda p: SGLD(p, lr=0.1, num_data=0), r"num_data \(N\) must be >= 1"),
    (lambda p: Cyclical(total_steps=3, cycles=4, exploration=0.5), "cycles <= total steps"),
    (lambda p: Cyclical(total_steps=8, cycles=2, exploration=1.0), r"fraction in \[0, 1\)"),
])
def test_bad_settings_are_config_errors(make, match: str) -> None:  # noqa: ANN001
    with pytest.raises(ConfigError, match=match):
        make(_params())


def _gaussian_chains(make_opt, steps: int) -> np.ndarray:  # noqa: ANN001
    """CHAINS independent chains on U(θ) = ½(θ − μ)ᵀΣ⁻¹(θ − μ) with exact gradients, from
    θ = 0; their states after ``steps`` steps, shape (CHAINS, 2). With ``num_data = 1`` the loss
    is U itself, so ``lr`` is the papers' η."""
    theta = torch.zeros(CHAINS, 2, dtype=torch.float64, requires_grad=True)
    opt = make_opt([theta])
    for _ in range(steps):
        d = theta.detach() - MU
        # ∇U = Σ⁻¹(θ − μ) per chain, written out: a tiny matmul is slow on busy threads
        theta.grad = d[:, :1] * PRECISION[0] + d[:, 1:] * PRECISION[1]
        opt.step()
    return theta.detach().numpy()


def _stationary_cov(a: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The exact stationary covariance C = A C Aᵀ + Q of the linear chain s ← A s + noise(Q)."""
    return solve_discrete_lyapunov(a, q)


def _check_moments(samples: np.ndarray, exact_cov: np.ndarray) -> None:
    """Sample mean and variance against μ and diag Σ, within 4 Monte Carlo standard errors
    (the chains are independent: SE = sd/√n for a mean, var·√(2/(n − 1)) for a Gaussian's
    variance) plus the discretisation bias |C − Σ| of the chain's exact stationary law."""
    mu, var = MU.numpy(), np.diag(SIGMA.numpy())
    bias = np.abs(np.diag(exact_cov) - var)
    se_var = var * math.sqrt(2 / (CHAINS - 1))
    assert np.all(bias < se_var)  # η is small enough: the O(η) bias is below one SE
    assert np.all(np.abs(samples.mean(0) - mu) < 4 * np.sqrt(var / CHAINS))
    assert np.all(np.abs(samples.var(0, ddof=1) - var) < 4 * se_var + bias)


def test_sgld_samples_a_gaussian_target() -> None:
    # The stationary variance's bias is ~ηλ/4 (λ an eigenvalue of Σ⁻¹): 2.6% at most here,
    # below the 4.5% standard error; 400 steps shrink the start's distance by 1 − ηλ/2 each.
    eta = 0.1
    samples = _gaussian_chains(lambda p: SGLD(p, lr=eta, num_data=1, generator=seeded(0)), 400)
    a = np.eye(2) - eta / 2 * PRECISION.numpy()  # θ − μ ← A(θ − μ) + N(0, η I)
    _check_moments(samples, _stationary_cov(a, eta * np.eye(2)))


def test_sghmc_samples_a_gaussian_target() -> None:
    eta, alpha = 0.01, 0.1  # variance bias 0.3%; the slowest mode decays by ~0.95 a step
    samples = _gaussian_chains(
        lambda p: SGHMC(p, lr=eta, friction=alpha, num_data=1, generator=seeded(0)), 300)
    eye, prec = np.eye(2), PRECISION.numpy()
    # (θ − μ, v) ← A (θ − μ, v) + n, with n = (ξ, ξ), ξ ~ N(0, 2αη I): v enters θ's update
    a = np.block([[eye - eta * prec, (1 - alpha) * eye], [-eta * prec, (1 - alpha) * eye]])
    q = 2 * alpha * eta * np.block([[eye, eye], [eye, eye]])
    _check_moments(samples, _stationary_cov(a, q)[:2, :2])
