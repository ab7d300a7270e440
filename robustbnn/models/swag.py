"""SWAG: a Gaussian over the weights fitted to the SGD trajectory (SWA mean, diagonal plus
low-rank covariance), over the registry's MLP.

From ``swa_start`` on, the weights are collected once per epoch (``on_epoch_end``, after the
epoch's optimizer steps): the running first moment θ̄ (the SWA solution), the running second
moment m (the diagonal variance is Σ_diag = m − θ̄², elementwise) and the last K deviations
θ_i − θ̄_i from the running mean (the columns of D̂, K = ``max_num_models``). A posterior sample
is

    θ = θ̄ + √scale · (Σ_diag^½ z₁ + D̂ z₂ / √(K − 1)),  z₁ ~ N(0, I_P), z₂ ~ N(0, I_K),

which with the paper's ``scale = 0.5`` is its eq. θ̄ + Σ_diag^½ z₁ / √2 + D̂ z₂ / √(2(K − 1)),
i.e. N(θ̄, ½ (Σ_diag + D̂D̂ᵀ / (K − 1))). While fewer than K deviations are stored, K is the
number stored (the paper's code divides by max_num_models − 1 regardless; both agree once D̂
is full). Before the first collection a sample is the current weights (deterministic).

Not as in the paper: the paper trains with SGD (momentum 0.9) on a schedule that holds
``lr_init`` for half the pre-SWA budget, decays it linearly to ``swa_lr`` and keeps that
constant while collecting. Here the harness's optimizer runs (Adam by default, as for ``mlp``)
at its own schedule: with the default ``lr_decay = 1`` the learning rate is constant
throughout, so the SWA learning rate is ``lr``. SWAG also re-estimates BatchNorm statistics for
every sample; this MLP has no BatchNorm, so there is nothing to update. Training keeps the last
epoch (``selection = "last"``): restoring the best validation epoch would roll the collected
moments back too.

References:
    Maddox, Garipov, Izmailov, Vetrov & Wilson, "A Simple Baseline for Bayesian Uncertainty in
    Deep Learning", NeurIPS 2019, arXiv:1902.02476 (Algorithm 1; code
    ``swag/posteriors/swag.py``, ``experiments/train/run_swag.py``).
"""

from __future__ import annotations

import dataclasses
import logging
import math

import torch
from torch import Tensor
from torch.func import functional_call, vmap

from robustbnn.errors import ConfigError
from robustbnn.models._blocks import sample_blocks
from robustbnn.models.base import MODELS, SMOKE, BayesianModule, ModelSpec
from robustbnn.models.mlp import MLEConfig, build_net

log = logging.getLogger(__name__)

# Floats of sampled weights drawn at once (64 MiB): 13 draws of a 784-800-800-10 net. Each
# draw reads all of D̂ (K · P floats), so drawing one sample at a time was memory-bound.
WEIGHT_FLOATS = 1 << 24


@dataclasses.dataclass(frozen=True)
class SWAGConfig(MLEConfig):
    """The ``mlp`` network and training, with SWAG moments collected from ``swa_start``."""

    # Collect at the end of every epoch e > swa_start · epochs (1-based), once per epoch: the
    # paper's CIFAR runs collect from epoch 161 of 300 (run_swag.py --swa_start 160/161,
    # --swa_c_epochs 1), a fraction of 0.53.
    swa_start: float = 0.5
    max_num_models: int = 20  # K, the rank of D̂ (paper; code --max_num_models=20)
    scale: float = 0.5  # covariance scale of the samples (the paper's ½; code --scale=0.5)
    var_clamp: float = 1e-30  # floor of the diagonal variance (code SWAG(var_clamp=1e-30))
    # The last epoch carries the collected moments; best_val would restore an earlier epoch's.
    selection: str = "last"


class SWAG(BayesianModule):
    """An MLP whose posterior is the SWAG Gaussian of its training trajectory.

    Buffers (final shapes from build time, so the cache keeps them): ``swa_mean`` and
    ``swa_sq_mean`` (P,), ``deviations`` (K, P), a ring whose row (n − 1) mod K holds the n-th
    collected deviation, and ``n_collected`` (), where P counts the net's parameters.

    Args:
        net: The deterministic network (:func:`~robustbnn.models.mlp.build_net`).
        start_epoch: Collect after every epoch > ``start_epoch``.
        rank: K, the number of deviation columns kept.
        scale: Covariance scale of the samples.
        var_clamp: Floor of the diagonal variance.
    """

    def __init__(self, net: torch.nn.Module, *, start_epoch: int, rank: int, scale: float,
                 var_clamp: float) -> None:
        super().__init__()
        self.net = net
        self.num_classes = net.num_classes
        self.start_epoch, self.rank = start_epoch, rank
        self.scale, self.var_clamp = scale, var_clamp
        named = [(f"net.{k}", p) for k, p in net.named_parameters()]
        self._names = [k for k, _ in named]
        self._shapes = [p.shape for _, p in named]
        self._numels = [p.numel() for _, p in named]
        n = sum(self._numels)
        self.register_buffer("swa_mean", torch.zeros(n))
        self.register_buffer("swa_sq_mean", torch.zeros(n))
        self.register_buffer("deviations", torch.zeros(rank, n))
        self.register_buffer("n_collected", torch.zeros((), dtype=torch.long))

    def forward(self, x: Tensor) -> Tensor:
        """Logits of the current weights, shape (B, C)."""
        return self.net.sample_logits(x, 1)[0]

    def weights(self) -> Tensor:
        """The current weights as one vector, shape (P,), detached."""
        return torch.cat([p.detach().reshape(-1) for p in self.net.parameters()])

    @torch.no_grad()
    def collect(self) -> None:
        """Fold the current weights into the moments and the deviation ring (Algorithm 1)."""
        theta = self.weights()
        n = int(self.n_collected)
        self.swa_mean.mul_(n / (n + 1)).add_(theta / (n + 1))
        self.swa_sq_mean.mul_(n / (n + 1)).add_(theta.square() / (n + 1))
        self.deviations[n % self.rank] = theta - self.swa_mean  # from the updated mean
        self.n_collected += 1

    def on_epoch_end(self, epoch: int, *, generator: torch.Generator | None = None) -> None:
        """Collect the weights once per epoch after ``start_epoch``."""
        if epoch > self.start_epoch:
            self.collect()

    def _moments(self) -> tuple[Tensor, Tensor, float]:
        """The sampler's pieces: the (P,) standard deviation √scale · Σ_diag^½, the (k, P)
        stored deviations and the factor √(scale / (k − 1)) of D̂ z₂ (0 when k < 2)."""
        var = (self.swa_sq_mean - self.swa_mean.square()).clamp_min(self.var_clamp)
        k = min(int(self.n_collected), self.rank)
        # One stored deviation is the zero vector θ₁ − θ̄₁: with k < 2 there is no low rank.
        alpha = math.sqrt(self.scale / (k - 1)) if k > 1 else 0.0
        return var.sqrt_().mul_(math.sqrt(self.scale)), self.deviations[:k], alpha

    def _draw(self, n_samples: int, moments: tuple[Tensor, Tensor, float],
              generator: torch.Generator | None) -> Tensor:
        """``n_samples`` flat weight vectors (S, P): z₁ (S, P) first, then z₂ (S, k)."""
        std, dev, alpha = moments
        mean = self.swa_mean
        z = torch.randn(n_samples, mean.numel(), generator=generator, device=mean.device,
                        dtype=mean.dtype)
        theta = torch.addcmul(mean, z, std, out=z)  # (S, P), in z's memory
        if alpha:
            z2 = torch.randn(n_samples, dev.shape[0], generator=generator, device=mean.device,
                             dtype=mean.dtype)
            theta.addmm_(z2, dev, alpha=alpha)
        return theta

    def sample_weights(self, n_samples: int, *,
                       generator: torch.Generator | None = None) -> Tensor:
        """Flat weight samples, shape (S, P): z₁ (S, P) is drawn first, then z₂ (S, k).

        Before any collection, S copies of the current weights.
        """
        if int(self.n_collected) == 0:
            return self.weights().expand(n_samples, -1)
        return self._draw(n_samples, self._moments(), generator)

    def _logits(self, x: Tensor, flat: Tensor) -> Tensor:
        """The net's logits for each weight vector in ``flat`` (S, P), shape (S, B, C)."""
        params = {name: part.view(-1, *shape) for name, part, shape in
                  zip(self._names, flat.split(self._numels, dim=1), self._shapes, strict=True)}
        return vmap(lambda p: functional_call(self, p, (x,)))(params)

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` weight draws, each shared by the batch, shape (S, B, C).

        The weights are drawn ``WEIGHT_FLOATS // P`` samples at a time (as
        :meth:`sample_weights` of each block's size, in turn: the draws do not depend on the
        batch), and each block runs through the net in the cache-sized pieces of
        :func:`~robustbnn.models._blocks.sample_blocks`.
        """
        if int(self.n_collected) == 0:
            logits = self(x)
            return logits.expand(n_samples, *logits.shape)
        moments = self._moments()
        per_draw = max(1, WEIGHT_FLOATS // self.swa_mean.numel())
        width = max(p.shape[0] for p in self.net.parameters())
        out = []
        for s in range(0, n_samples, per_draw):
            flat = self._draw(min(per_draw, n_samples - s), moments, generator)  # (s, P)
            sizes = sample_blocks(flat.shape[0], x.shape[0], width, x.device)
            out += [self._logits(x, part) for part in flat.split(sizes)]
        return out[0] if len(out) == 1 else torch.cat(out)

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """The MLP's negative log-likelihood at the current weights."""
        return self.net.loss(x, y, n_train=n_train, generator=generator, batch=batch)


def build_swag(cfg: SWAGConfig, input_shape: tuple[int, ...], num_classes: int,
               generator: torch.Generator | None) -> SWAG:
    """Build the MLP and the (empty) SWAG moments of its parameters.

    Raises:
        ConfigError: For ``swa_start`` outside [0, 1) or ``max_num_models`` < 1.
    """
    if not 0 <= cfg.swa_start < 1:
        raise ConfigError(f"swag: swa_start is the fraction of epochs before collecting, in "
                          f"[0, 1), got {cfg.swa_start}")
    start = int(cfg.swa_start * cfg.epochs)
    if cfg.epochs - start < 2:  # a quick pipeline check (--set '*.epochs=1') should still run
        log.warning("swag collects only epoch %d: one snapshot has no covariance, so its "
                    "samples are all the SWA mean; lower swag.swa_start or raise swag.epochs",
                    cfg.epochs)
    if cfg.max_num_models < 1:
        raise ConfigError(f"swag: max_num_models must be >= 1, got {cfg.max_num_models}")
    return SWAG(build_net(cfg, input_shape, num_classes, generator), start_epoch=start,
                rank=cfg.max_num_models, scale=cfg.scale, var_clamp=cfg.var_clamp)


MODELS.register(
    "swag",
    ModelSpec(
        build=build_swag,
        config=SWAGConfig,
        description="SWA-Gaussian over the MLP's trajectory: diagonal + rank-20 covariance",
        reference="Maddox et al. 2019 (NeurIPS), arXiv:1902.02476",
        stochastic=True,
        version="1",
        shrink={"smoke": SMOKE},
    ),
)
