"""Mixing diagnostics of the reference chains: split R-hat and ESS per predictive probability.

A BNN's parameters are not identifiable (hidden units permute, signs flip), so R-hat on
weights says little; Izmailov et al. (2021) judge HMC's convergence in function space, on the
predictions. Here every quantity is one predictive probability p(y = c | x_b, theta) seen as a
chain of draws: ``probs`` of shape (chains, draws, B, C) gives B * C R-hats and ESSs.

Definitions (Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021), which arviz implements and
the tests compare against:

* **split R-hat** (``rank=False``): each chain cut in halves (the middle draw dropped when the
  count is odd), then Gelman & Rubin's sqrt(var+ / W) (their eq. 3-4). Equal to
  ``arviz.rhat(method="split")`` and to ``pyro.ops.stats.split_gelman_rubin``.
* **rank-normalized split R-hat** (``rank=True``, the default): the same on the normal scores
  of the pooled ranks, and on those of the values folded about their median; the larger of
  the two (their eq. 14 and Section 4.2). Equal to ``arviz.rhat(method="rank")``. Predictive
  probabilities are bounded and skewed near 0 and 1, where the plain version is unreliable.
* **ESS** (Geyer's initial monotone sequence with Stan's last-even-term correction and the
  floor tau >= 1 / log10(chains * draws), their eq. 10-11): on rank-normalized split chains
  it is the bulk-ESS, ``arviz.ess(method="bulk")``; with ``rank=False``, on split chains,
  ``arviz.ess(method="mean")``. Not ``pyro.ops.stats.effective_sample_size``: it weighs lag k
  by 1 / (N - k) instead of 1 / N, omits the correction and the floor (so it differs from
  arviz), and its running minimum allocates draws^2 * B * C numbers.

A quantity whose draws are all equal (a saturated probability) has nothing to mix: R-hat 1,
ESS chains * draws (arviz gives NaN and chains * draws).

References:
    Vehtari et al., "Rank-normalization, folding, and localization: An improved R-hat for
    assessing convergence of MCMC", Bayesian Analysis 2021, https://arxiv.org/abs/1903.08008
    Gelman & Rubin, "Inference from iterative simulation using multiple sequences", 1992.
    Izmailov et al., "What Are Bayesian Neural Network Posteriors Really Like?", ICML 2021.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.special import ndtri
from scipy.stats import rankdata
from torch import Tensor

from robustbnn.errors import ConfigError, UserError

__all__ = [
    "DEFAULT_RHAT_BOUND",
    "ChainsNotMixedError",
    "MixingSummary",
    "check_mixed",
    "ess",
    "split_rhat",
    "summarize",
]

# The bound on the largest R-hat over all B * C predictive probabilities. Vehtari et al. (2021)
# ask for 1.01 on each quantity with ESS > 400; Izmailov et al. (2021) read HMC's predictions
# against Gelman & Rubin's 1.1. The check takes the maximum over ~10^4 quantities of a reference
# limited to ~30 CPU minutes (per-chain ESS ~ 10^2), where R-hat's own noise alone exceeds 1.01,
# so 1.1 refuses chains stuck in different modes or still drifting, not sampling noise.
DEFAULT_RHAT_BOUND = 1.1


class ChainsNotMixedError(UserError):
    """The reference chains disagree (R-hat above the bound): no reference is recorded."""


def _check(chains: Tensor, *, min_chains: int) -> None:
    """Refuse tensors without enough chains or draws for a split diagnostic."""
    if chains.ndim < 2 or chains.shape[0] < min_chains or chains.shape[1] < 4:
        raise ConfigError(f"split diagnostics need >= {min_chains} chains of >= 4 draws, "
                          f"shape (chains, draws, ...); got {tuple(chains.shape)}; run more "
                          f"chains or draws")


def _split(x: np.ndarray) -> np.ndarray:
    """(K, N, Q) -> (2K, N // 2, Q): each chain's halves, the middle draw dropped if N is odd."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]])


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Normal scores of the pooled average ranks per quantity (Blom's offset 3/8)."""
    k, n, q = x.shape
    ranks = rankdata(x.reshape(k * n, q), method="average", axis=0)
    return ndtri((ranks - 0.375) / (k * n + 0.25)).reshape(k, n, q)


def _rhat(x: np.ndarray) -> np.ndarray:
    """Gelman-Rubin sqrt(var+ / W) of chains (K, N, Q) -> (Q,)."""
    n = x.shape[1]
    within = x.var(axis=1, ddof=1).mean(0)
    between = n * x.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + n - 1) / n)


def _autocov(x: np.ndarray) -> np.ndarray:
    """Biased (1 / N) autocovariance along axis 1 of (K, N, Q), by FFT."""
    n = x.shape[1]
    centred = x - x.mean(axis=1, keepdims=True)
    spec = np.fft.rfft(centred, n=2 * n, axis=1)
    return np.fft.irfft(spec * spec.conj(), n=2 * n, axis=1)[:, :n] / n


def _ess(x: np.ndarray) -> np.ndarray:
    """ESS of chains (K, N, Q) -> (Q,): Geyer's initial monotone sequence, Stan's variant."""
    k, n, q = x.shape
    acov = _autocov(x)  # (K, N, Q)
    mean_var = acov[:, 0].mean(0) * n / (n - 1)  # W
    var_plus = mean_var * (n - 1) / n + (x.mean(axis=1).var(axis=0, ddof=1) if k > 1 else 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1 - (mean_var - acov.mean(0)) / var_plus  # (N, Q)
    rho[0] = 1.0
    # Pairs (rho_2j, rho_2j+1); the sequence is cut after the first pair whose sum is <= 0,
    # looking at pairs 1..k_max only (arviz and Stan stop at lag n - 3).
    k_max = max(0, math.ceil((n - 2) / 2) - 1)
    pairs = rho[: 2 * (k_max + 1)].reshape(k_max + 1, 2, q).sum(1)  # (k_max + 1, Q)
    stop = np.where((pairs <= 0).any(0), (pairs <= 0).argmax(0), k_max)
    cut = np.minimum(stop, k_max)  # K: pairs 0..K-1 enter the sum, pair K its even term
    cols = np.arange(q)
    kept = np.arange(k_max + 1)[:, None] < cut  # (k_max + 1, Q)
    monotone = np.minimum.accumulate(np.where(kept, pairs, np.inf), axis=0)
    total = np.where(kept, monotone, 0).sum(0)
    last_even = rho[2 * cut, cols]
    stored = (cut >= 1) & (pairs[cut, cols] >= 0)
    last = np.where(stored | (last_even > 0), last_even, 0.0)
    last = np.where(cut == 0, 1.0, last)
    tau = np.maximum(-1 + 2 * total + last, 1 / np.log10(k * n))
    out = k * n / tau
    return np.where(np.isnan(rho).any(0), np.nan, out)


def _constant(x: np.ndarray) -> np.ndarray:
    """True where a quantity's draws span less than float64 resolution (as arviz tests)."""
    return (x.max(axis=(0, 1)) - x.min(axis=(0, 1))) < np.finfo(float).resolution


def _as_numpy(chains: Tensor) -> tuple[np.ndarray, tuple[int, ...]]:
    """(K, N, *Q) tensor -> float64 array (K, N, Q) and the quantity shape Q."""
    x = chains.detach().to("cpu", torch.float64).numpy()
    return x.reshape(*x.shape[:2], -1), tuple(chains.shape[2:])


def split_rhat(chains: Tensor, *, rank: bool = True) -> Tensor:
    """Split R-hat of every quantity.

    Args:
        chains: Draws, shape (chains, draws, *Q); at least 2 chains of 4 draws.
        rank: Rank-normalized and folded (Vehtari et al. 2021, arviz ``"rank"``), or the
            plain split R-hat (arviz ``"split"``).

    Returns:
        R-hat per quantity, shape Q, float64; 1 for constant quantities.

    Raises:
        ConfigError: If there are fewer than 2 chains or 4 draws.

    Example:
        >>> g = torch.Generator().manual_seed(0)
        >>> x = torch.randn(4, 200, 3, generator=g, dtype=torch.float64)
        >>> bool((split_rhat(x) < 1.05).all()), bool(split_rhat(x + torch.arange(4.)
        ...     .reshape(4, 1, 1)).min() > 1.5)
        (True, True)
    """
    _check(chains, min_chains=2)
    x, shape = _as_numpy(chains)
    s = _split(x)
    if rank:
        folded = np.abs(s - np.median(s.reshape(-1, s.shape[-1]), axis=0))
        r = np.maximum(_rhat(_z_scale(s)), _rhat(_z_scale(folded)))
    else:
        r = _rhat(s)
    r = np.where(_constant(x), 1.0, r)
    return torch.from_numpy(r).reshape(shape)


def ess(chains: Tensor, *, rank: bool = True) -> Tensor:
    """Effective sample size of every quantity, on split chains.

    Args:
        chains: Draws, shape (chains, draws, *Q); at least 4 draws.
        rank: Bulk-ESS on rank-normalized split chains (arviz ``"bulk"``), or the ESS of the
            mean on the raw split chains (arviz ``"mean"``; it sets the Monte Carlo standard
            error of a posterior mean, sd / sqrt(ESS)).

    Returns:
        ESS per quantity, shape Q, float64; chains * draws for constant quantities.

    Raises:
        ConfigError: If there are fewer than 4 draws.
    """
    _check(chains, min_chains=1)
    x, shape = _as_numpy(chains)
    s = _split(x)
    e = _ess(_z_scale(s) if rank else s)
    e = np.where(_constant(x), float(s.shape[0] * s.shape[1]), e)
    return torch.from_numpy(e).reshape(shape)


@dataclass(frozen=True)
class MixingSummary:
    """The reference's mixing in one record (rank-normalized split R-hat, bulk-ESS).

    Args:
        max_rhat: Largest R-hat over all quantities.
        min_ess: Smallest bulk-ESS.
        median_ess: Median bulk-ESS.
        quantities: How many quantities (B * C predictive probabilities).
        constant: How many of them never changed (R-hat 1 by definition).
        chains: Chains.
        draws: Draws per chain.
    """

    max_rhat: float
    min_ess: float
    median_ess: float
    quantities: int
    constant: int
    chains: int
    draws: int


def summarize(probs: Tensor) -> MixingSummary:
    """R-hat and ESS of every predictive probability, reduced to max / min / median.

    Args:
        probs: p(y = c | x_b, theta) per draw, shape (chains, draws, B, C).

    Returns:
        The summary.
    """
    rhat, n_eff = split_rhat(probs), ess(probs)
    x, _ = _as_numpy(probs)
    return MixingSummary(max_rhat=float(rhat.max()), min_ess=float(n_eff.min()),
                         median_ess=float(n_eff.median()), quantities=rhat.numel(),
                         constant=int(_constant(x).sum()), chains=probs.shape[0],
                         draws=probs.shape[1])


def check_mixed(summary: MixingSummary, *, bound: float = DEFAULT_RHAT_BOUND) -> None:
    """Refuse a reference whose chains have not mixed.

    Args:
        summary: The chains' :class:`MixingSummary`.
        bound: The largest acceptable R-hat (see ``DEFAULT_RHAT_BOUND`` for the choice).

    Raises:
        ChainsNotMixedError: If ``summary.max_rhat`` exceeds ``bound`` (or is NaN), naming
            both and the way out.
    """
    if not summary.max_rhat <= bound:
        raise ChainsNotMixedError(
            f"HMC chains have not mixed: max split R-hat {summary.max_rhat:.3f} over "
            f"{summary.quantities} predictive probabilities exceeds the bound {bound} "
            f"(min bulk-ESS {summary.min_ess:.0f}, {summary.chains} chains x {summary.draws} "
            f"draws); run more warm-up or draws per chain, or more chains")
