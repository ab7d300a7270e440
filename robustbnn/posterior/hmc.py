"""The HMC reference sampler: Pyro's NUTS on a flat parameter vector, several chains.

The sampler is Pyro's No-U-Turn sampler (Hoffman & Gelman 2014) with its warm-up adaptation:
dual-averaging step size towards ``target_accept`` and a diagonal mass matrix from windowed
variance estimates (Stan's schedule). It runs on a ``potential_fn`` (the negative log joint of
a flat vector, :func:`robustbnn.posterior.reference_task.potential_fn`), so no Pyro model is
written and the network stays a plain ``nn.Module`` called through
:func:`torch.func.functional_call`.

Randomness: Pyro has no ``generator`` argument; NUTS draws its momenta, tree directions and
acceptance thresholds from torch's global RNG. Each chain therefore runs inside
:func:`robustbnn.contract.rng.seeded_global` (``torch.random.fork_rng``, seeded from one draw of
the caller's ``torch.Generator``), which restores the global state on exit: a run is a pure
function of the generator's state and leaves the caller's global stream untouched. (Not
``pyro.set_rng_seed``: it also seeds Python's and NumPy's global RNGs, which NUTS does not use,
and ``torch.manual_seed`` queues a seed for CUDA devices that are not initialised yet, which
would outlive the fork.) Chains run one after another in this process.

References:
    Hoffman & Gelman, "The No-U-Turn Sampler", JMLR 2014, https://arxiv.org/abs/1111.4246
    Bingham et al., "Pyro: Deep Universal Probabilistic Programming", JMLR 2019.
    Izmailov et al., "What Are Bayesian Neural Network Posteriors Really Like?", ICML 2021,
    https://arxiv.org/abs/2104.14421 (full-batch HMC as the reference; predictive = the mean
    of the softmax over all retained draws of all chains).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from robustbnn.contract.rng import seeded_global
from robustbnn.errors import ConfigError
from robustbnn.posterior.reference_task import (
    ReferenceData,
    ReferenceTask,
    logits_fn,
    potential_fn,
)

__all__ = [
    "ChainStats",
    "HMCSamples",
    "NUTSConfig",
    "initial_points",
    "predictive_probs",
    "reference_predictive",
    "run_nuts",
    "sample_posterior",
]


@dataclass(frozen=True)
class NUTSConfig:
    """Settings of the reference sampler.

    Args:
        chains: Independent chains, run one after another (>= 2 for split R-hat).
        warmup: Warm-up (adaptation) iterations per chain; discarded.
        draws: Retained draws per chain.
        max_tree_depth: NUTS' cap: at most 2**max_tree_depth - 1 leapfrog steps per draw.
        target_accept: Dual-averaging target of the mean acceptance probability.
        init_scale: Over-dispersed inits: each chain starts at ``init_scale`` times a prior
            draw, i.e. N(0, init_scale^2 * prior_var I).
        dtype: ``"float32"`` (default) or ``"float64"``. A gradient costs 1.4-1.8x more in
            float64 (measured below); float32's rounding of a Hamiltonian of ~1e3 is ~1e-4,
            far below the energy errors (~0.1-1) that decide acceptance.

    Raises:
        ConfigError: If a count is below its minimum or ``target_accept`` is not in (0, 1).
    """

    # Sized for the default ReferenceTask (2,000 images, 3,010 parameters) to fit ~30 min on
    # the 2-core CPU. Measured (torch.set_num_threads(1), machine shared with two other jobs,
    # chains of 30 warm-up + 20 draws): 6.2 ms per potential+gradient inside Pyro in float32
    # (8.8 ms in float64; 3.4-4.4 ms and 6.3-8.1 ms for the bare gradient), and NUTS at the
    # depth cap, 127 gradients per draw (~97 per warm-up iteration). Upper bound:
    # 4 chains x (300 + 200) iterations x 127 gradients x 6.2 ms = 1,575 s = 26 min, plus
    # ~10 s of predictive and diagnostics. Depth is capped at 7 (the default 10 would allow
    # 1,023 gradients per draw, 8x the budget).
    chains: int = 4
    warmup: int = 300
    draws: int = 200
    max_tree_depth: int = 7
    target_accept: float = 0.8
    init_scale: float = 1.0
    dtype: str = "float32"

    def __post_init__(self) -> None:
        """Refuse settings NUTS cannot run with, naming the field."""
        for name, low in (("chains", 1), ("warmup", 0), ("draws", 1), ("max_tree_depth", 1)):
            if getattr(self, name) < low:
                raise ConfigError(f"NUTSConfig.{name} must be >= {low}, got "
                                  f"{getattr(self, name)}")
        if not 0 < self.target_accept < 1:
            raise ConfigError(f"NUTSConfig.target_accept must lie in (0, 1), got "
                              f"{self.target_accept}")
        if not self.init_scale > 0:
            raise ConfigError(f"NUTSConfig.init_scale must be > 0, got {self.init_scale}")
        if self.dtype not in ("float64", "float32"):
            raise ConfigError(f"NUTSConfig.dtype must be 'float64' or 'float32', got "
                              f"{self.dtype!r}")

    @property
    def torch_dtype(self) -> torch.dtype:
        """The torch dtype the chains run in."""
        return getattr(torch, self.dtype)


@dataclass(frozen=True)
class ChainStats:
    """What one chain's sampler reports.

    Args:
        step_size: The leapfrog step size after warm-up adaptation.
        acceptance_rate: Mean acceptance probability over the retained draws (the statistic
            the step size was tuned to bring to ``target_accept``), to 3 decimals as Pyro
            reports it.
        moved: Fraction of retained draws that left the previous point (Pyro's "acceptance
            rate" for NUTS).
        divergences: Divergent transitions among the retained draws.
        gradients: Potential-energy evaluations (each with its gradient), warm-up included.
        warmup_gradients: The part of ``gradients`` spent in warm-up.
        wall_s: Wall time of the chain in seconds, warm-up included.
        seed: The seed the chain's global RNG was set to (drawn from the generator).
    """

    step_size: float
    acceptance_rate: float
    moved: float
    divergences: int
    gradients: int
    warmup_gradients: int
    wall_s: float
    seed: int


@dataclass(frozen=True)
class HMCSamples:
    """Draws of all chains and the sampler's statistics.

    Args:
        samples: Retained draws, shape (chains, draws, P).
        stats: One :class:`ChainStats` per chain.
    """

    samples: Tensor
    stats: tuple[ChainStats, ...]

    @property
    def wall_s(self) -> float:
        """Total wall time of all chains."""
        return sum(s.wall_s for s in self.stats)


def run_nuts(
    potential: Callable[[Tensor], Tensor],
    init: Tensor,
    config: NUTSConfig,
    *,
    generator: torch.Generator,
    progress: bool = False,
) -> HMCSamples:
    """Run NUTS chains, one after another, on a potential of a flat parameter vector.

    Args:
        potential: ``U(theta)`` for theta of shape (P,): the negative log density, up to a
            constant, differentiable.
        init: Initial points, shape (chains, P); over-disperse them for R-hat to mean
            anything.
        config: Sampler settings (``config.chains`` must equal ``len(init)``).
        generator: Seeds every chain (one draw each); Pyro itself takes no generator.
        progress: Show Pyro's progress bar for each chain (warm-up, then draws, with the step
            size and acceptance rate).

    Returns:
        The retained draws (chains, draws, P), in ``init``'s dtype and device, and the stats.

    Raises:
        ConfigError: If ``init`` does not have ``config.chains`` rows.
    """
    from pyro.infer.mcmc import MCMC, NUTS  # Pyro loads only when a reference is sampled

    if init.ndim != 2 or len(init) != config.chains:
        raise ConfigError(f"run_nuts needs one initial point per chain, shape "
                          f"({config.chains}, P); got {tuple(init.shape)}")
    calls = [0]
    seen: dict[str, object] = {}

    def pe(params: dict[str, Tensor]) -> Tensor:
        calls[0] += 1
        return potential(params["theta"])

    def hook(kernel: NUTS, params: object, stage: str, i: int) -> None:
        # The kernel resets its counters when the run ends, so read them on the last draw
        # (MCMC.diagnostics() would also compute Pyro's R-hat and ESS over all P parameters).
        if stage.startswith("Warmup") and i == config.warmup - 1:
            seen["warmup_gradients"] = calls[0]
        if stage.startswith("Sample") and i == config.draws - 1:
            seen.update(kernel.diagnostics(), step_size=float(kernel.step_size),
                        accept_prob=float(kernel.logging()["acc. prob"]))

    draws, stats = [], []
    for start in init:
        seed_gen = torch.Generator().manual_seed(
            int(torch.randint(0, 2**62, (1,), generator=generator)))
        calls[0] = 0
        seen.clear()
        kernel = NUTS(potential_fn=pe, adapt_step_size=True, adapt_mass_matrix=True,
                      full_mass=False, target_accept_prob=config.target_accept,
                      max_tree_depth=config.max_tree_depth)
        mcmc = MCMC(kernel, num_samples=config.draws, warmup_steps=config.warmup,
                    initial_params={"theta": start.clone()}, num_chains=1,
                    disable_progbar=not progress, hook_fn=hook)
        t0 = time.perf_counter()
        with seeded_global(seed_gen):
            mcmc.run()
        wall = time.perf_counter() - t0
        draws.append(mcmc.get_samples()["theta"].detach())  # (draws, P)
        stats.append(ChainStats(
            step_size=seen["step_size"], acceptance_rate=seen["accept_prob"],
            moved=float(seen["acceptance rate"]), divergences=len(seen["divergences"]),
            gradients=calls[0], warmup_gradients=int(seen.get("warmup_gradients", 0)),
            wall_s=wall, seed=seed_gen.initial_seed()))
    return HMCSamples(torch.stack(draws).to(init), tuple(stats))  # (chains, draws, P)


def sample_posterior(
    task: ReferenceTask,
    data: ReferenceData,
    config: NUTSConfig | None = None,
    *,
    generator: torch.Generator,
    progress: bool = False,
) -> HMCSamples:
    """Sample the reference task's posterior with NUTS.

    Each chain starts from its own prior draw scaled by ``config.init_scale`` (over-dispersed
    relative to the posterior, as split R-hat assumes; :func:`initial_points`), drawn from
    ``generator`` before the chains' seeds are.

    Args:
        task: The reference task (net, prior, temperature).
        data: Its tensors (:func:`~robustbnn.posterior.reference_task.prepare_reference_data`).
        config: Sampler settings; the defaults if None.
        generator: The run's only source of randomness (CPU generator).

    Returns:
        Draws (chains, draws, P) in ``config.dtype`` and the chains' stats.
    """
    config = config or NUTSConfig()
    feats = task.features(data.x_train).to(config.torch_dtype)  # (N, F), pooled once
    init = initial_points(task, config, generator=generator).to(feats.device)
    return run_nuts(potential_fn(task, feats, data.y_train), init, config,
                    generator=generator)


def initial_points(
    task: ReferenceTask, config: NUTSConfig, *, generator: torch.Generator
) -> Tensor:
    """Over-dispersed starting points: ``init_scale`` times one prior draw per chain.

    Args:
        task: The reference task (its prior variance and P).
        config: The sampler settings (chains, init_scale, dtype).
        generator: Source of the draws.

    Returns:
        Initial flat parameters, shape (chains, P), drawn from
        N(0, init_scale^2 * prior_var I).
    """
    init = torch.randn(config.chains, task.num_params, generator=generator,
                       dtype=config.torch_dtype)
    return init * config.init_scale * task.prior_var ** 0.5  # (chains, P)


def predictive_probs(
    task: ReferenceTask, samples: Tensor, x: Tensor, *, chunk: int = 256
) -> Tensor:
    """Per-draw predictive probabilities p(y = c | x, theta) for every chain and draw.

    Args:
        task: The reference task the samples belong to.
        samples: Flat parameters, shape (chains, draws, P) (or any leading shape).
        x: Images in [0, 1], shape (B, 1, 28, 28).
        chunk: Draws evaluated at once (bounds memory at chunk * B * C).

    Returns:
        Softmax probabilities, shape (chains, draws, B, C), in ``samples``' dtype;
        differentiable in ``x``.
    """
    lead = samples.shape[:-1]
    flat = samples.reshape(-1, samples.shape[-1])  # (S, P)
    feats = task.features(x).to(samples.dtype)  # (B, F)
    f = torch.func.vmap(logits_fn(task), in_dims=(0, None))
    probs = torch.cat([f(flat[i:i + chunk], feats).softmax(-1)
                       for i in range(0, len(flat), chunk)])  # (S, B, C)
    return probs.reshape(*lead, *probs.shape[1:])


def reference_predictive(task: ReferenceTask, samples: Tensor, x: Tensor) -> Tensor:
    """The reference predictive: the mean over all retained draws of all chains of softmax.

    Args:
        task: The reference task the samples belong to.
        samples: Flat parameters, shape (chains, draws, P).
        x: Images in [0, 1], shape (B, 1, 28, 28).

    Returns:
        p(y = c | x, D) estimated by Monte Carlo, shape (B, C); rows sum to one.
    """
    probs = predictive_probs(task, samples, x)  # (chains, draws, B, C)
    return probs.flatten(0, -3).mean(0)
