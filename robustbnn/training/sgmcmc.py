"""Stochastic-gradient MCMC update rules as torch optimizers: SGLD, SGHMC, and the cyclical
step size of cyclical SG-MCMC.

Scaling convention. The harness's losses are per example (:meth:`BayesianModule.loss`): here
the loss L is U / N, the negative log posterior scaled to the full dataset divided by N,

    L(θ) = (1/n) Σ_{i ∈ minibatch} −log p(y_i | x_i, θ) − log p(θ) / N,

so that N·∇L is the minibatch estimate of ∇U (Welling & Teh's (N/n) Σ ∇log p + ∇log p(θ)),
and ``lr`` is the per-example step size ℓ = η·N, where η is the papers' step size. In these
units SGLD's drift is a plain SGD step of ℓ/2 and SGHMC's is SGD with momentum 1 − α (as in
Zhang et al.'s code, which steps its per-example loss at ``lr_0 = 0.5``), and a learning rate
that suits the network does not change with N. With ``num_data = 1`` and L = U the optimizers
take the papers' steps in their own units (the Gaussian tests do that).

* SGLD (Welling & Teh 2011, eq. 4): θ ← θ − (η/2)∇U + N(0, η), i.e.

      θ ← θ − (ℓ/2)∇L + √(ℓ/N) z.

* SGHMC (Chen, Fox & Guestrin 2014, eq. 15, with β̂ = 0): v ← v − η∇U − αv + N(0, 2αη),
  θ ← θ + v, i.e.

      v ← (1 − α) v − ℓ∇L + √(2αℓ/N) z,   θ ← θ + v.

  The momentum v starts at 0 and is never resampled (Chen et al.'s Algorithm 2 resamples it
  each outer loop; with friction the chain forgets it within ~1/α steps either way).

* Cyclical step size (Zhang et al. 2020, eq. 1), with K total steps in M cycles:
  ℓ_k = (ℓ₀/2)(cos(π · mod(k − 1, ⌈K/M⌉) / ⌈K/M⌉) + 1), k = 1..K. While the cycle's
  fraction r(k) = mod(k − 1, ⌈K/M⌉) / ⌈K/M⌉ is below ``exploration`` (β) the step draws no
  noise (exploration: SGD, or SGD with momentum for SGHMC); from β on it samples.

The noise of a step is drawn per parameter, in parameter order, from the generator given to
the step (or else the one given at construction), ``randn(p.shape)`` on the parameter's device
and dtype. A parameter without a gradient is not moved (as torch's optimizers do). Neither
library we looked at fits: pyro has no SG-MCMC, and ``posteriors`` (0.1.3) steps functional
parameter trees, not a torch optimizer, and draws its noise from the global RNG.

References:
    Welling & Teh, "Bayesian Learning via Stochastic Gradient Langevin Dynamics", ICML 2011
    (eq. 4).
    Chen, Fox & Guestrin, "Stochastic Gradient Hamiltonian Monte Carlo", ICML 2014,
    arXiv:1402.4102 (eq. 15).
    Zhang, Li, Zhang, Chen & Wilson, "Cyclical Stochastic Gradient MCMC for Bayesian Deep
    Learning", ICLR 2020, arXiv:1902.03932 (eq. 1, Algorithm 1; code
    ``experiments/cifar_csghmc.py``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from robustbnn.errors import ConfigError

if TYPE_CHECKING:
    from robustbnn.models.sgmcmc import SGMCMCConfig

SGMCMC_OPTIMIZERS = ("sgld", "sghmc")
"""The ``TrainConfig.optimizer`` names that :func:`sgmcmc_optimizer` builds."""


@dataclasses.dataclass(frozen=True)
class Cyclical:
    """Zhang et al.'s cosine cycles of the step size (eq. 1) and their two stages.

    Attributes:
        total_steps: K, the optimizer steps of the whole run.
        cycles: M, the number of cycles.
        exploration: β, the fraction of each cycle that draws no noise, in [0, 1).
    """

    total_steps: int
    cycles: int
    exploration: float

    def __post_init__(self) -> None:
        if self.total_steps < 1 or not 1 <= self.cycles <= self.total_steps:
            raise ConfigError(f"cyclical step size: need 1 <= cycles <= total steps, got "
                              f"{self.cycles} cycles of {self.total_steps} steps")
        if not 0 <= self.exploration < 1:
            raise ConfigError(f"cyclical step size: exploration is a fraction in [0, 1), got "
                              f"{self.exploration}")

    def _position(self, step: int) -> float:
        """r(k) = mod(k − 1, ⌈K/M⌉) / ⌈K/M⌉ for the 1-based step k."""
        length = -(-self.total_steps // self.cycles)
        return ((step - 1) % length) / length

    def factor(self, step: int) -> float:
        """ℓ_k / ℓ₀ = (cos(π r(k)) + 1) / 2 for the 1-based step k."""
        return 0.5 * (math.cos(math.pi * self._position(step)) + 1.0)

    def samples(self, step: int) -> bool:
        """Whether step k is in its cycle's sampling stage (r(k) ≥ β) and so draws noise."""
        return self._position(step) >= self.exploration


class _SGMCMC(torch.optim.Optimizer):
    """The shared part: the step counter, the cyclical factor and the noise's generator."""

    def __init__(self, params: Iterable[Tensor], defaults: dict, *, num_data: int,
                 generator: torch.Generator | None, schedule: Cyclical | None) -> None:
        if defaults["lr"] <= 0:
            raise ConfigError(f"{type(self).__name__}: lr must be > 0, got {defaults['lr']}")
        if num_data < 1:
            raise ConfigError(f"{type(self).__name__}: num_data (N) must be >= 1, got "
                              f"{num_data}")
        super().__init__(params, {**defaults, "num_data": num_data, "step": 0})
        self.generator = generator
        self.schedule = schedule

    def _stage(self, group: dict) -> tuple[float, bool]:
        """Advance the group's step counter; return this step's ℓ and whether it draws noise."""
        group["step"] += 1
        if self.schedule is None:
            return group["lr"], True
        k = group["step"]
        return group["lr"] * self.schedule.factor(k), self.schedule.samples(k)

    def _noise(self, p: Tensor, generator: torch.Generator | None) -> Tensor:
        return torch.randn(p.shape, generator=generator, device=p.device, dtype=p.dtype)

    @torch.no_grad()
    def step(self, closure: Callable[[], Tensor] | None = None, *,
             generator: torch.Generator | None = None) -> Tensor | None:
        """Take one step from the parameters' ``.grad`` (the gradient of L = U / N).

        Args:
            closure: Re-evaluates the loss and its gradients (optional, as in torch).
            generator: Source of this step's noise (default: the one given at construction).

        Returns:
            The closure's loss, or None.
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        gen = self.generator if generator is None else generator
        for group in self.param_groups:
            lr, noisy = self._stage(group)
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, group, lr, noisy, gen)
        return loss

    def _update(self, p: Tensor, group: dict, lr: float, noisy: bool,
                generator: torch.Generator | None) -> None:
        raise NotImplementedError


class SGLD(_SGMCMC):
    """Stochastic gradient Langevin dynamics (Welling & Teh 2011, eq. 4).

    θ ← θ − (ℓ/2)∇L + √(ℓ/N) z, z ~ N(0, I): eq. 4 with η = ℓ/N and ∇U = N∇L (module
    docstring). In a cyclical schedule's exploration stage the noise is left out.

    Args:
        params: The parameters θ.
        lr: ℓ = η·N, the per-example step size.
        num_data: N, the training set size (1 when the loss is U itself).
        generator: Default source of the noise.
        schedule: A :class:`Cyclical` step size, or None for a constant one.

    Example:
        >>> theta = torch.zeros(2, requires_grad=True)
        >>> opt = SGLD([theta], lr=0.1, num_data=1, generator=torch.Generator().manual_seed(0))
        >>> (0.5 * (theta - 1).square().sum()).backward()
        >>> opt.step()
        >>> theta.shape
        torch.Size([2])
    """

    def __init__(self, params: Iterable[Tensor], *, lr: float, num_data: int,
                 generator: torch.Generator | None = None,
                 schedule: Cyclical | None = None) -> None:
        super().__init__(params, {"lr": lr}, num_data=num_data, generator=generator,
                         schedule=schedule)

    def _update(self, p: Tensor, group: dict, lr: float, noisy: bool,
                generator: torch.Generator | None) -> None:
        p.add_(p.grad, alpha=-lr / 2)
        if noisy:
            p.add_(self._noise(p, generator), alpha=math.sqrt(lr / group["num_data"]))


class SGHMC(_SGMCMC):
    """Stochastic gradient Hamiltonian Monte Carlo (Chen et al. 2014, eq. 15, β̂ = 0).

    v ← (1 − α)v − ℓ∇L + √(2αℓ/N) z, θ ← θ + v: eq. 15 with η = ℓ/N and ∇U = N∇L (module
    docstring). The momentum v (``state[p]["momentum"]``) starts at 0. In a cyclical
    schedule's exploration stage the noise is left out (SGD with momentum 1 − α).

    Args:
        params: The parameters θ.
        lr: ℓ = η·N, the per-example step size.
        friction: α, in (0, 1].
        num_data: N, the training set size (1 when the loss is U itself).
        generator: Default source of the noise.
        schedule: A :class:`Cyclical` step size, or None for a constant one.
    """

    def __init__(self, params: Iterable[Tensor], *, lr: float, friction: float, num_data: int,
                 generator: torch.Generator | None = None,
                 schedule: Cyclical | None = None) -> None:
        if not 0 < friction <= 1:
            raise ConfigError(f"SGHMC: friction (alpha) must be in (0, 1], got {friction}")
        super().__init__(params, {"lr": lr, "friction": friction}, num_data=num_data,
                         generator=generator, schedule=schedule)

    def _update(self, p: Tensor, group: dict, lr: float, noisy: bool,
                generator: torch.Generator | None) -> None:
        state = self.state[p]
        if "momentum" not in state:
            state["momentum"] = torch.zeros_like(p)
        v, alpha = state["momentum"], group["friction"]
        v.mul_(1 - alpha).add_(p.grad, alpha=-lr)
        if noisy:
            v.add_(self._noise(p, generator), alpha=math.sqrt(2 * alpha * lr / group["num_data"]))
        p.add_(v)


def sgmcmc_optimizer(params: Iterable[Tensor], cfg: SGMCMCConfig, *, n_train: int,
                     generator: torch.Generator | None) -> SGLD | SGHMC:
    """The SG-MCMC optimizer that ``cfg.optimizer`` names, as the training loop steps it.

    Args:
        params: The model's parameters.
        cfg: An SG-MCMC config (:class:`robustbnn.models.sgmcmc.SGMCMCConfig`): ``lr``,
            ``optimizer``, ``schedule``, ``cycles``, ``exploration``, ``epochs``,
            ``batch_size`` and, for SGHMC, ``friction``.
        n_train: N, the training set size.
        generator: Source of the noise (the training loop's generator).

    Raises:
        ConfigError: For an unknown optimizer or schedule, or a nonzero ``weight_decay`` (the
            prior is the model's ``prior_std``).
    """
    name = cfg.optimizer
    if name not in SGMCMC_OPTIMIZERS:
        raise ConfigError(f"unknown SG-MCMC optimizer {name!r}; known: {list(SGMCMC_OPTIMIZERS)}")
    if cfg.weight_decay:
        raise ConfigError(f"{name}: weight_decay must be 0, got {cfg.weight_decay}: the Gaussian "
                          f"prior is in the loss; set its scale with prior_std")
    schedule = None
    if cfg.schedule == "cyclical":
        steps = cfg.epochs * -(-n_train // cfg.batch_size)
        schedule = Cyclical(steps, cfg.cycles, cfg.exploration)
    elif cfg.schedule != "constant":
        raise ConfigError(f"{name}: unknown schedule {cfg.schedule!r}; known: "
                          "['constant', 'cyclical']")
    if name == "sgld":
        return SGLD(params, lr=cfg.lr, num_data=n_train, generator=generator, schedule=schedule)
    return SGHMC(params, lr=cfg.lr, friction=cfg.friction, num_data=n_train,
                 generator=generator, schedule=schedule)
