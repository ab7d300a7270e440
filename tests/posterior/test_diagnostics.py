"""Split R-hat and ESS against arviz (the oracle) on fixed chains, and the mixing check."""

from __future__ import annotations

import warnings
from types import ModuleType

import numpy as np
import pytest
import torch

from robustbnn.errors import ConfigError, UserError
from robustbnn.posterior.diagnostics import (
    ChainsNotMixedError,
    check_mixed,
    ess,
    split_rhat,
    summarize,
)

# arviz and our code run the same formulas; they differ only in the FFT length (next_fast_len
# vs 2n) and the order of sums, i.e. by rounding: ~1e-15 seen, 1e-9 asserted.
RTOL = 1e-9


@pytest.fixture(scope="module")
def az() -> ModuleType:
    with warnings.catch_warnings():  # arviz announces its refactor on import
        warnings.simplefilter("ignore", FutureWarning)
        import arviz

    return arviz


def ar1(chains: int, draws: int, q: int, phi: float, *, seed: int,
        shift: float = 0.0) -> np.ndarray:
    """AR(1) chains x_t = phi x_{t-1} + e_t, shape (chains, draws, q); chain k moved by k*shift."""
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((chains, draws, q))
    x = np.zeros_like(e)
    x[:, 0] = e[:, 0]
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x + shift * np.arange(chains)[:, None, None]


CASES = [  # (chains, draws, phi): even and odd draws, slow, white, antithetic, the minimum
    (4, 101, 0.5), (3, 50, 0.9), (4, 200, 0.0), (5, 33, -0.6), (2, 7, 0.3), (4, 4, 0.1),
    (4, 6, 0.1),
]


@pytest.mark.parametrize(("chains", "draws", "phi"), CASES)
def test_rhat_and_ess_equal_arviz(az: ModuleType, chains: int, draws: int, phi: float) -> None:
    x = ar1(chains, draws, 5, phi, seed=draws)
    t = torch.from_numpy(x)
    for rank, r_method, e_method in ((True, "rank", "bulk"), (False, "split", "mean")):
        ours_r, ours_e = split_rhat(t, rank=rank).numpy(), ess(t, rank=rank).numpy()
        ref_r = [az.rhat(x[:, :, i], method=r_method) for i in range(5)]
        ref_e = [az.ess(x[:, :, i], method=e_method) for i in range(5)]
        np.testing.assert_allclose(ours_r, ref_r, rtol=RTOL)
        np.testing.assert_allclose(ours_e, ref_e, rtol=RTOL)


def test_plain_split_rhat_equals_pyro() -> None:
    from pyro.ops.stats import split_gelman_rubin

    x = torch.from_numpy(ar1(4, 51, 3, 0.7, seed=1))
    torch.testing.assert_close(split_rhat(x, rank=False), split_gelman_rubin(x), rtol=RTOL,
                               atol=0)


def test_quantity_axes_keep_their_shape() -> None:
    x = torch.from_numpy(ar1(3, 40, 5 * 7, 0.2, seed=2)).reshape(3, 40, 5, 7)
    assert split_rhat(x).shape == (5, 7) and ess(x).shape == (5, 7)
    flat = torch.from_numpy(ar1(3, 40, 5 * 7, 0.2, seed=2))
    torch.testing.assert_close(split_rhat(x).flatten(), split_rhat(flat))


def test_shifted_chains_are_refused_with_the_numbers_and_the_way_out() -> None:
    x = ar1(4, 100, 6, 0.5, seed=3, shift=1.0)
    rhat = split_rhat(torch.from_numpy(x))
    assert (rhat > 1.1).all()
    summary = summarize(torch.from_numpy(x).reshape(4, 100, 2, 3))
    assert summary.max_rhat == pytest.approx(float(rhat.max()))
    with pytest.raises(ChainsNotMixedError) as info:
        check_mixed(summary)
    message = str(info.value)
    assert isinstance(info.value, UserError) and "\n" not in message
    assert f"max split R-hat {summary.max_rhat:.3f}" in message
    assert "bound 1.1" in message and "more warm-up or draws" in message
    assert "more chains" in message


def test_mixed_chains_pass_the_check() -> None:
    summary = summarize(torch.from_numpy(ar1(4, 200, 12, 0.5, seed=4)).reshape(4, 200, 3, 4))
    check_mixed(summary)
    assert summary.max_rhat < 1.05 and (summary.quantities, summary.chains) == (12, 4)
    assert 0 < summary.min_ess <= summary.median_ess and summary.constant == 0
    with pytest.raises(ChainsNotMixedError, match="bound 1.0"):
        check_mixed(summary, bound=1.0)


def test_constant_quantities_count_as_mixed(az: ModuleType) -> None:
    x = np.concatenate([ar1(3, 20, 1, 0.1, seed=5), np.ones((3, 20, 1))], axis=2)
    t = torch.from_numpy(x)
    assert split_rhat(t)[1] == 1.0
    assert ess(t)[1] == 60 == az.ess(x[:, :, 1], method="bulk")
    assert summarize(t).constant == 1


def test_too_few_chains_or_draws_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"need >= 2 chains.*got \(1, 10, 2\)"):
        split_rhat(torch.zeros(1, 10, 2))
    with pytest.raises(ConfigError, match="run more chains or draws"):
        ess(torch.zeros(2, 3))
