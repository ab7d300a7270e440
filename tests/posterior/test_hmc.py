"""The reference sampler: an exact conjugate posterior, reproducibility, shapes, predictive."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from robustbnn.errors import ConfigError
from robustbnn.posterior import hmc
from robustbnn.posterior.diagnostics import ess, split_rhat
from robustbnn.posterior.hmc import (
    NUTSConfig,
    initial_points,
    predictive_probs,
    reference_predictive,
    run_nuts,
    sample_posterior,
)
from robustbnn.posterior.reference_task import ReferenceData, ReferenceTask, potential_fn

D64 = torch.float64


def _gaussian() -> Callable[[torch.Tensor], torch.Tensor]:
    """U of a standard normal, in any dimension."""
    return lambda w: 0.5 * w.pow(2).sum()


@pytest.mark.bench  # 6.5-7.2 s measured on the shared 2-core machine
def test_nuts_recovers_the_conjugate_linear_regression_posterior() -> None:
    # y = X w + eps, eps ~ N(0, s2), w ~ N(0, a2 I): the posterior is N(mu, cov) exactly,
    # cov = (X^T X / s2 + I / a2)^-1, mu = cov X^T y / s2 (Bishop 2006, eq. 3.53-3.54).
    g = torch.Generator().manual_seed(1)
    n, d, s2, a2 = 50, 3, 0.25, 1.0
    x = torch.randn(n, d, generator=g, dtype=D64)
    y = x @ torch.tensor([1.0, -2.0, 0.5], dtype=D64) + s2**0.5 * torch.randn(
        n, generator=g, dtype=D64)
    cov = torch.linalg.inv(x.T @ x / s2 + torch.eye(d, dtype=D64) / a2)
    mu = cov @ x.T @ y / s2

    def u(w: torch.Tensor) -> torch.Tensor:
        return 0.5 * (y - x @ w).pow(2).sum() / s2 + 0.5 * w.pow(2).sum() / a2

    config = NUTSConfig(chains=2, warmup=100, draws=300, dtype="float64")
    init = 3 * torch.randn(2, d, generator=g, dtype=D64)  # over-dispersed: 3 prior sds
    out = run_nuts(u, init, config, generator=torch.Generator().manual_seed(0))
    s = out.samples  # (2, 300, 3)
    assert (split_rhat(s) < 1.05).all()  # 1.002 here; 1.002-1.018 over generator seeds 0-5
    draws = s.flatten(0, 1)
    # Mean: within 4 Monte Carlo standard errors sd / sqrt(ESS) (ESS of the mean, arviz "mean").
    mcse = cov.diag().sqrt() / ess(s, rank=False).sqrt()
    assert ((draws.mean(0) - mu).abs() < 4 * mcse).all(), (draws.mean(0) - mu) / mcse
    # Variance: the sample variance is the mean of (w - mean)^2, so its standard error is
    # sd((w - mean)^2) / sqrt(ESS of (w - mean)^2); 5 of them, looser than the mean's 4
    # because that ESS is itself estimated from the squares' heavier (chi^2) tail.
    sq = (s - draws.mean(0)).pow(2)
    mcse_var = sq.flatten(0, 1).std(0) / ess(sq, rank=False).sqrt()
    assert ((draws.var(0) - cov.diag()).abs() < 5 * mcse_var).all()
    assert all(st.divergences == 0 and 0.6 < st.acceptance_rate <= 1 for st in out.stats)


def _tiny() -> tuple[NUTSConfig, torch.Tensor]:
    return NUTSConfig(chains=2, warmup=5, draws=8, max_tree_depth=3, dtype="float64"), \
        torch.zeros(2, 3, dtype=D64)


def test_same_generator_seed_same_draws_and_global_rng_untouched() -> None:
    config, init = _tiny()
    state = torch.get_rng_state()
    a = run_nuts(_gaussian(), init, config, generator=torch.Generator().manual_seed(7))
    assert torch.equal(torch.get_rng_state(), state)  # the caller's stream is untouched
    torch.manual_seed(123)  # and the draws do not depend on it
    b = run_nuts(_gaussian(), init, config, generator=torch.Generator().manual_seed(7))
    c = run_nuts(_gaussian(), init, config, generator=torch.Generator().manual_seed(8))
    assert torch.equal(a.samples, b.samples)
    assert [s.seed for s in a.stats] == [s.seed for s in b.stats]
    assert not torch.equal(a.samples, c.samples)
    assert not torch.equal(a.samples[0], a.samples[1])  # chains get distinct seeds


def test_progress_shows_pyro_s_bar_per_chain_and_leaves_the_draws_unchanged(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Pyro hides its bar when CI or PYTEST_XDIST_WORKER is set (pyro.infer.mcmc.logger).
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    config, init = _tiny()
    quiet = run_nuts(_gaussian(), init, config, generator=torch.Generator().manual_seed(7))
    assert capsys.readouterr().err == ""
    shown = run_nuts(_gaussian(), init, config, generator=torch.Generator().manual_seed(7),
                     progress=True)
    err = capsys.readouterr().err
    assert err.count("Warmup") >= 2 and "Sample" in err  # one bar per chain: 2 chains
    assert torch.equal(quiet.samples, shown.samples)


def test_run_nuts_wants_one_initial_point_per_chain() -> None:
    config, _ = _tiny()
    with pytest.raises(ConfigError, match=r"shape \(2, P\); got \(3, 3\)"):
        run_nuts(_gaussian(), torch.zeros(3, 3), config, generator=torch.Generator())


@pytest.mark.parametrize(("field", "value"), [("chains", 0), ("draws", 0),
                                              ("target_accept", 1.0), ("dtype", "float16")])
def test_nuts_config_refuses_bad_values(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"NUTSConfig.{field}"):
        NUTSConfig(**{field: value})


def _task_and_data(n: int = 12, b: int = 7) -> tuple[ReferenceTask, ReferenceData]:
    task = ReferenceTask(n_train=n, n_test=b, pool=14, hidden=3)  # 4 inputs, P = 55
    g = torch.Generator().manual_seed(0)
    x, xt = torch.rand(n, 1, 28, 28, generator=g), torch.rand(b, 1, 28, 28, generator=g)
    y, yt = torch.randint(0, 10, (n,), generator=g), torch.randint(0, 10, (b,), generator=g)
    return task, ReferenceData(x, y, xt, yt, fingerprint="test", source="synthetic")


def _brute_logits(task: ReferenceTask, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The MLP written out by hand from the flat vector (W1, b1, W2, b2 in nn.Linear layout)."""
    f, h, c = task.in_features, task.hidden, task.num_classes
    w1, rest = theta[: h * f].reshape(h, f), theta[h * f:]
    b1, rest = rest[:h], rest[h:]
    w2, b2 = rest[: c * h].reshape(c, h), rest[c * h:]
    feats = x.reshape(len(x), 28 // task.pool, task.pool, 28 // task.pool, task.pool)
    feats = feats.mean((2, 4)).flatten(1).to(theta.dtype)
    return torch.tanh(feats @ w1.T + b1) @ w2.T + b2


def test_potential_is_the_tempered_negative_log_joint() -> None:
    task, data = _task_and_data()
    theta = torch.randn(task.num_params, dtype=D64)
    logits = _brute_logits(task, theta, data.x_train)
    nll = F.cross_entropy(logits, data.y_train, reduction="sum")
    for temperature in (1.0, 0.5):
        t = ReferenceTask(n_train=12, n_test=7, pool=14, hidden=3, prior_var=0.3,
                          temperature=temperature)
        u = potential_fn(t, t.features(data.x_train).to(D64), data.y_train)
        expected = (nll + 0.5 * theta.pow(2).sum() / 0.3) / temperature
        torch.testing.assert_close(u(theta), expected)


def test_posterior_samples_and_predictive_shapes_and_values() -> None:
    task, data = _task_and_data()
    config = NUTSConfig(chains=2, warmup=3, draws=5, max_tree_depth=2, dtype="float64")
    out = sample_posterior(task, data, config, generator=torch.Generator().manual_seed(0))
    assert task.num_params == 55 and out.samples.shape == (2, 5, 55)  # chains != draws != P
    assert out.samples.dtype == D64 and len(out.stats) == 2
    assert all(s.gradients > s.warmup_gradients > 0 for s in out.stats)
    probs = predictive_probs(task, out.samples, data.x_test, chunk=3)  # (2, 5, 7, 10)
    assert probs.shape == (2, 5, 7, 10)
    brute = torch.stack([_brute_logits(task, th, data.x_test).softmax(-1)
                         for th in out.samples.flatten(0, 1)]).reshape(2, 5, 7, 10)
    torch.testing.assert_close(probs, brute)
    mean = reference_predictive(task, out.samples, data.x_test)
    assert mean.shape == (7, 10)
    torch.testing.assert_close(mean, brute.mean((0, 1)))
    torch.testing.assert_close(mean.sum(-1), torch.ones(7, dtype=D64))


def test_predictive_is_differentiable_in_x() -> None:
    task, data = _task_and_data()
    theta = torch.randn(2, 3, task.num_params, dtype=D64)
    x = data.x_test.double().requires_grad_()
    (grad,) = torch.autograd.grad(predictive_probs(task, theta, x)[..., 0].sum(), x)
    assert grad.abs().sum() > 0


def test_chains_start_over_dispersed_from_scaled_prior_draws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = ReferenceTask(pool=7, hidden=20, prior_var=0.3)  # P = 17 * 20 + 21 * 10 = 550
    config = NUTSConfig(chains=3, init_scale=2.0, dtype="float64")
    init = initial_points(task, config, generator=torch.Generator().manual_seed(3))
    assert init.shape == (3, 550) and init.dtype == D64
    # sd of 550 N(0, (2 * sqrt(0.3))^2) draws per chain: within 4 of its standard errors
    sd = 2 * 0.3**0.5
    assert ((init.std(1) / sd - 1).abs() < 4 / (2 * 549) ** 0.5).all()
    assert not torch.equal(init[0], init[1])
    # sample_posterior starts its chains there: the first draw of its generator's stream
    seen = {}
    monkeypatch.setattr(hmc, "run_nuts", lambda u, start, cfg, *, generator: seen.update(
        start=start, rest=torch.randint(0, 9, (4,), generator=generator)))
    small, data = _task_and_data()
    hmc.sample_posterior(small, data, config, generator=torch.Generator().manual_seed(3))
    g = torch.Generator().manual_seed(3)
    torch.testing.assert_close(seen["start"], initial_points(small, config, generator=g))
    assert torch.equal(seen["rest"], torch.randint(0, 9, (4,), generator=g))
