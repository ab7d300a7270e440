"""SGLD and SGHMC over the registry's MLP: the weights an SG-MCMC chain visits, kept as samples.

The net trains through the harness's loop (:func:`robustbnn.training.fit.fit`) with the
SG-MCMC optimizer that ``optimizer`` names (:mod:`robustbnn.training.sgmcmc`, which states the
update rules and the scaling convention), on the per-example loss

    L(θ) = mean minibatch cross-entropy + ‖θ‖² / (2σ²N),

i.e. U / N for a Gaussian prior N(0, σ²I) (σ = ``prior_std``). The chain's state is collected
at the end of chosen epochs (``on_epoch_end``, after the epoch's steps) into the buffer
``samples`` (K, P), a ring holding the last K collected weight vectors (K = ``num_samples``):

* ``schedule="constant"``: after ``burn_in`` epochs, every ``thin``-th epoch (epochs
  burn_in + thin, burn_in + 2·thin, ...);
* ``schedule="cyclical"`` (Zhang et al. 2020): the epochs split into ``cycles`` equal cycles,
  and the last ``samples_per_cycle`` epochs of each cycle are collected; they must lie in the
  cycle's sampling stage (after its ``exploration`` fraction). ``burn_in`` and ``thin`` are
  not used.

A posterior sample is one stored weight vector. :meth:`SGMCMCModel.sample_logits` draws which:
S distinct stored vectors, without replacement, when S ≤ k (k = the number stored), and S
indices with replacement when S > k, all from the generator. Before the first collection it
returns the current weights (deterministic), as SWAG does.

Defaults. Zhang et al.'s cyclical runs (code ``experiments/cifar_csghmc.py``): 4 cycles, noise
in the last 10% of each cycle (``(epoch % 50) + 1 > 45`` of 200 epochs), 3 samples per cycle,
α = 0.9 in SGHMC; ``lr`` 0.5 there is for a ResNet, not this MLP. The constant schedule's
``lr``, ``friction``, ``prior_std``, ``burn_in``, ``thin`` and ``num_samples`` are ours, for the
harness's 50-epoch MLP budget (Welling & Teh and Chen et al. count iterations, not epochs):
20 samples, one every 2 epochs after 10 epochs of burn-in. ``selection`` must be ``"last"``:
restoring a best-validation epoch would roll the collected samples back.

References:
    Welling & Teh, "Bayesian Learning via Stochastic Gradient Langevin Dynamics", ICML 2011.
    Chen, Fox & Guestrin, "Stochastic Gradient Hamiltonian Monte Carlo", ICML 2014,
    arXiv:1402.4102.
    Zhang, Li, Zhang, Chen & Wilson, "Cyclical Stochastic Gradient MCMC for Bayesian Deep
    Learning", ICLR 2020, arXiv:1902.03932.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import ClassVar

import torch
from torch import Tensor

from robustbnn.config import NON_NEGATIVE, POSITIVE, POSITIVE_INT, OneOf, Range
from robustbnn.errors import ConfigError
from robustbnn.models._blocks import sample_blocks
from robustbnn.models._flat_params import FlatLayout
from robustbnn.models.base import MODELS, SMOKE, ModelSpec, NetWrapper
from robustbnn.models.mlp import NetConfig, build_net

log = logging.getLogger(__name__)

SCHEDULES = ("constant", "cyclical")


@dataclasses.dataclass(frozen=True)
class SGMCMCConfig(NetConfig):
    """The MLP, trained by an SG-MCMC optimizer whose visited weights are kept as samples."""

    optimizer: str = "sgld"  # "sgld" or "sghmc" (robustbnn.training.sgmcmc)
    lr: float = 0.1  # ℓ = η·N, the per-example step size (robustbnn.training.sgmcmc) [ours]
    prior_std: float = 1.0  # σ of the Gaussian prior N(0, σ²I) on every weight [ours]
    burn_in: int = 10  # epochs before the first collection (constant schedule) [ours]
    thin: int = 2  # epochs between collections (constant schedule) [ours]
    num_samples: int = 20  # K, the last K collected weight vectors are kept [ours]
    schedule: str = "constant"  # or "cyclical" (Zhang et al. 2020, eq. 1)
    cycles: int = 4  # M, cyclical only [Zhang et al. code: 4 cycles of 50 epochs]
    exploration: float = 0.9  # β, noise-free fraction of a cycle [their code: 45 of 50 epochs]
    samples_per_cycle: int = 3  # the cycle's last epochs collected [their code: 3]
    selection: str = "last"  # the last epoch carries the samples; best_val would roll back

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "optimizer": OneOf(("sgld", "sghmc")), "prior_std": POSITIVE,
        "burn_in": NON_NEGATIVE, "thin": POSITIVE_INT, "num_samples": POSITIVE_INT,
        "schedule": OneOf(SCHEDULES), "cycles": POSITIVE_INT,
        "exploration": Range(0, 1, high_open=True), "samples_per_cycle": POSITIVE_INT,
        "selection": OneOf(("last",)),
    }


@dataclasses.dataclass(frozen=True)
class SGLDConfig(SGMCMCConfig):
    """SGLD (Welling & Teh 2011) over the MLP."""

    ranges: ClassVar[dict[str, Range | OneOf]] = {"optimizer": OneOf(("sgld",))}


@dataclasses.dataclass(frozen=True)
class SGHMCConfig(SGMCMCConfig):
    """SGHMC (Chen et al. 2014) over the MLP."""

    optimizer: str = "sghmc"
    lr: float = 0.01  # ℓ; the drift is SGD with momentum 1 − α at ℓ, ~ℓ/α per step [ours]
    friction: float = 0.1  # α in (0, 1] [ours; Zhang et al.'s cyclical code uses 0.9]

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "optimizer": OneOf(("sghmc",)), "friction": Range(0, 1, low_open=True),
    }


def collect_epochs(cfg: SGMCMCConfig) -> tuple[int, ...]:
    """The 1-based epochs whose end collects a sample, as the module docstring states.

    Raises:
        ConfigError: When no epoch would be collected, or (cyclical) the epochs do not split
            into ``cycles`` equal cycles or a collected epoch falls in the exploration stage.
    """
    if cfg.schedule == "constant":
        out = tuple(range(cfg.burn_in + cfg.thin, cfg.epochs + 1, cfg.thin))
        if not out:
            raise ConfigError(f"{cfg.optimizer}: burn_in={cfg.burn_in} + thin={cfg.thin} is past "
                              f"the last epoch {cfg.epochs}, so nothing is collected; lower "
                              f"burn_in or raise epochs")
        return out
    if cfg.schedule != "cyclical":
        raise ConfigError(f"{cfg.optimizer}: unknown schedule {cfg.schedule!r}; known: "
                          f"{list(SCHEDULES)}")
    if cfg.epochs % cfg.cycles:
        raise ConfigError(f"{cfg.optimizer}: epochs={cfg.epochs} do not split into "
                          f"cycles={cfg.cycles} equal cycles; make epochs a multiple of cycles")
    length = cfg.epochs // cfg.cycles
    # The sampling stage starts at step fraction β of the cycle; every step of a collected
    # epoch must sample (their code: noise from epoch 46 of 50, collections from epoch 48).
    first = length - cfg.samples_per_cycle + 1  # 1-based epoch within the cycle
    if first < 1 or (first - 1) / length < cfg.exploration:
        raise ConfigError(f"{cfg.optimizer}: samples_per_cycle={cfg.samples_per_cycle} of a "
                          f"{length}-epoch cycle reach into its exploration stage (the first "
                          f"{cfg.exploration:g} of it); lower samples_per_cycle or exploration")
    return tuple(c * length + e for c in range(cfg.cycles) for e in range(first, length + 1))


class SGMCMCModel(NetWrapper):
    """An MLP whose posterior samples are weight vectors its SG-MCMC chain visited.

    Buffers (shapes from build time, so the cache keeps them): ``samples`` (K, P), a ring whose
    row (n − 1) mod K holds the n-th collected weight vector, and ``n_collected`` (), where P
    counts the net's parameters.

    Args:
        net: The deterministic network (:func:`~robustbnn.models.mlp.build_net`).
        prior_std: σ of the Gaussian prior in :meth:`loss`.
        collect_at: The 1-based epochs whose end collects a sample.
        num_samples: K, the samples kept.
    """

    def __init__(self, net: torch.nn.Module, *, prior_std: float, collect_at: tuple[int, ...],
                 num_samples: int) -> None:
        super().__init__(net)
        self.prior_std = prior_std
        self.collect_at = frozenset(collect_at)
        self._layout = FlatLayout.of(net)
        self.register_buffer("samples", torch.zeros(num_samples, self._layout.size))
        self.register_buffer("n_collected", torch.zeros((), dtype=torch.long))

    def forward(self, x: Tensor) -> Tensor:
        """Logits of the current weights, shape (B, C)."""
        return self.net.sample_logits(x, 1)[0]

    def loss(self, x: Tensor, y: Tensor, *, n_train: int,
             generator: torch.Generator | None = None,
             batch: tuple[int, int] = (0, 1)) -> Tensor:
        """U / N: the minibatch's mean cross-entropy plus ‖θ‖² / (2σ²N) (module docstring)."""
        nll = self.net.loss(x, y, n_train=n_train, generator=generator, batch=batch)
        sq = sum(p.square().sum() for p in self.net.parameters())
        return nll + sq / (2 * self.prior_std**2 * n_train)

    def weights(self) -> Tensor:
        """The current weights as one vector, shape (P,), detached."""
        return torch.cat([p.detach().reshape(-1) for p in self.net.parameters()])

    @torch.no_grad()
    def collect(self) -> None:
        """Store the current weights in the ring."""
        n = int(self.n_collected)
        self.samples[n % self.samples.shape[0]] = self.weights()
        self.n_collected += 1

    def on_epoch_end(self, epoch: int, *, generator: torch.Generator | None = None) -> None:
        """Collect the weights at the end of the chosen epochs."""
        if epoch in self.collect_at:
            self.collect()

    def sample_indices(self, n_samples: int, *,
                       generator: torch.Generator | None = None) -> Tensor:
        """Which stored samples S draws use, shape (S,): a permutation's first S of the k
        stored when S ≤ k, else S uniform draws with replacement.

        Raises:
            RuntimeError: Before any sample was collected.
        """
        k = min(int(self.n_collected), self.samples.shape[0])
        if k == 0:
            raise RuntimeError("no SG-MCMC sample collected yet")
        device = self.samples.device
        if n_samples <= k:
            return torch.randperm(k, generator=generator, device=device)[:n_samples]
        return torch.randint(k, (n_samples,), generator=generator, device=device)

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` stored posterior samples, shape (S, B, C).

        The samples are drawn by :meth:`sample_indices` (with replacement only when S exceeds
        the number stored) and run through the net in the blocks of
        :func:`~robustbnn.models._blocks.sample_blocks`. Before any collection: S copies of
        the current weights' logits.
        """
        if int(self.n_collected) == 0:
            logits = self(x)
            return logits.expand(n_samples, *logits.shape)
        flat = self.samples[self.sample_indices(n_samples, generator=generator)]  # (S, P)
        width = max(p.shape[0] for p in self.net.parameters())
        sizes = sample_blocks(n_samples, x.shape[0], width, x.device)
        out = [self._layout.logits(self, x, part) for part in flat.split(sizes)]
        return out[0] if len(out) == 1 else torch.cat(out)


def build_sgmcmc(cfg: SGMCMCConfig, input_shape: tuple[int, ...], num_classes: int,
                 generator: torch.Generator | None) -> SGMCMCModel:
    """Build the MLP and the (empty) sample buffer of its SG-MCMC chain.

    Raises:
        ConfigError: For a selection other than ``"last"``, a nonzero ``weight_decay`` or a
            collection schedule that collects nothing (:func:`collect_epochs`).
    """
    if cfg.selection != "last":
        raise ConfigError(f"{cfg.optimizer}: selection must be 'last' (a best-validation epoch "
                          f"would roll the collected samples back), got {cfg.selection!r}")
    if cfg.weight_decay:
        raise ConfigError(f"{cfg.optimizer}: weight_decay must be 0, got {cfg.weight_decay}: "
                          f"the Gaussian prior is prior_std")
    collect_at = collect_epochs(cfg)
    if len(collect_at) > cfg.num_samples:
        log.info("%s collects %d samples and keeps the last %d", cfg.optimizer, len(collect_at),
                 cfg.num_samples)
    return SGMCMCModel(build_net(cfg, input_shape, num_classes, generator),
                       prior_std=cfg.prior_std, collect_at=collect_at,
                       num_samples=cfg.num_samples)


# Smoke: 10 epochs, 8 samples from epoch 3 on (SMOKE's 10 epochs would leave none after 10).
_SMOKE = {**SMOKE, "burn_in": 2, "thin": 1, "num_samples": 8}

SGLD_SPEC = ModelSpec(
    build=build_sgmcmc,
    config=SGLDConfig,
    description="SGLD over the MLP: the chain's weights every 2 epochs after burn-in, 20 kept",
    reference="Welling & Teh 2011 (ICML); cyclical: Zhang et al. 2020, arXiv:1902.03932",
    stochastic=True,
    family="MCMC",
    shrink={"smoke": _SMOKE},
    in_default=False,
)
"""SGLD's registry entry (``sgld``)."""

SGHMC_SPEC = ModelSpec(
    build=build_sgmcmc,
    config=SGHMCConfig,
    description="SGHMC over the MLP: the chain's weights every 2 epochs after burn-in, 20 kept",
    reference="Chen et al. 2014 (ICML), arXiv:1402.4102; cyclical: Zhang et al. 2020",
    stochastic=True,
    family="MCMC",
    shrink={"smoke": _SMOKE},
    in_default=False,
)
"""SGHMC's registry entry (``sghmc``)."""

# Not in the default suite yet: the committed default leaderboard (reports/default, three
# seeds of every default model) does not hold them; the fidelity suite runs them.
MODELS.register("sgld", SGLD_SPEC)
MODELS.register("sghmc", SGHMC_SPEC)
