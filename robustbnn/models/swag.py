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

Sampling (``local_reparam``). With ``"first"`` (the default) the first layer samples its
outputs instead of its weights: for input x its output under θ is Gaussian,
N(θ̄₁x, scale · (Σ₁^diag (x²) + D̂₁x (D̂₁x)ᵀ / (k − 1))), so the mean and the diagonal variance
are one GEMM each for all samples, the low-rank part is the k shared products D̂₁x combined
with each sample's z₂, and only the diagonal noise is drawn per example (Kingma et al. 2015).
The same z₂ then draws the later layers' weights, so the low-rank correlation across layers is
kept. Each example's predictive is exactly the weight-sampling one (``"none"``); the examples
of a batch no longer share the first layer's diagonal noise. Only the MLP arch has it (a CNN
samples weights).

References:
    Maddox, Garipov, Izmailov, Vetrov & Wilson, "A Simple Baseline for Bayesian Uncertainty in
    Deep Learning", NeurIPS 2019, arXiv:1902.02476 (Algorithm 1; code
    ``swag/posteriors/swag.py``, ``experiments/train/run_swag.py``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from typing import ClassVar

import torch
from torch import Tensor

from robustbnn.config import NON_NEGATIVE, POSITIVE_INT, OneOf, Range
from robustbnn.errors import ConfigError
from robustbnn.models._blocks import sample_blocks
from robustbnn.models._flat_params import FlatLayout
from robustbnn.models.base import MODELS, SMOKE, ModelSpec, NetWrapper
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
    # "first": the first layer samples its outputs (exact per example; robustbnn.models.swag);
    # "none": every sample draws a whole weight vector, shared by the batch.
    local_reparam: str = "first"

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "swa_start": Range(0, 1, high_open=True), "max_num_models": POSITIVE_INT,
        "scale": NON_NEGATIVE, "var_clamp": NON_NEGATIVE,
        "local_reparam": OneOf(("first", "none")),
    }


class SWAG(NetWrapper):
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
        local_reparam: ``"first"`` (the first layer samples its outputs) or ``"none"``.
    """

    def __init__(self, net: torch.nn.Module, *, start_epoch: int, rank: int, scale: float,
                 var_clamp: float, local_reparam: str = "first") -> None:
        if local_reparam not in ("first", "none"):
            raise ConfigError(f"swag: unknown local_reparam {local_reparam!r}; known: "
                              "['first', 'none'] (set it with --set swag.local_reparam=none)")
        super().__init__(net)
        self.local_reparam = local_reparam
        self.start_epoch, self.rank = start_epoch, rank
        self.scale, self.var_clamp = scale, var_clamp
        self._layout = FlatLayout.of(net)
        n = self._layout.size
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

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` posterior samples, shape (S, B, C).

        With ``local_reparam="first"`` (MLP arch) see :meth:`_local_logits`. Otherwise each
        sample is a weight draw shared by the batch: the weights are drawn
        ``WEIGHT_FLOATS // P`` samples at a time (as :meth:`sample_weights` of each block's
        size, in turn: the draws do not depend on the batch), and each block runs through
        the net in the cache-sized pieces of :func:`~robustbnn.models._blocks.sample_blocks`.
        """
        if int(self.n_collected) == 0:
            logits = self(x)
            return logits.expand(n_samples, *logits.shape)
        if self.local_reparam == "first" and self.net.features is None:
            return self._local_logits(x, n_samples, generator)
        moments = self._moments()
        per_draw = max(1, WEIGHT_FLOATS // self.swa_mean.numel())
        width = max(p.shape[0] for p in self.net.parameters())
        out = []
        for s in range(0, n_samples, per_draw):
            flat = self._draw(min(per_draw, n_samples - s), moments, generator)  # (s, P)
            sizes = sample_blocks(flat.shape[0], x.shape[0], width, x.device)
            out += [self._layout.logits(self, x, part) for part in flat.split(sizes)]
        return out[0] if len(out) == 1 else torch.cat(out)

    def _local_logits(self, x: Tensor, n_samples: int,
                      generator: torch.Generator | None) -> Tensor:
        """Logits with the first layer's outputs sampled, shape (S, B, C).

        Per block of samples the draws are, in turn: ε (s, B, H₁), the first layer's diagonal
        noise per example; z₁ (s, P − P₁) of the later layers; z₂ (s, k). The first layer's
        low-rank part is z₂ D̂₁x from the k products D̂₁x, shared by all samples when S ≥ k
        (else each sample's D̂₁z₂ is formed, as cheaper).
        """
        std, dev, alpha = self._moments()
        first = self.net.layers[0]
        n_out, n_in = first.weight.shape
        p1 = n_out * n_in + n_out  # the first layer's weight, then its bias
        if self._layout.numels[:2] != (n_out * n_in, n_out):  # a layer without bias: not this net
            raise RuntimeError("swag: the first two parameters are not the first layer's")
        h0 = x.flatten(1)  # (B, in), shared by every sample
        n_w = n_out * n_in
        w_mean, b_mean = self.swa_mean[:n_w].view(n_out, n_in), self.swa_mean[n_w:p1]
        w_sd, b_sd = std[:n_w].view(n_out, n_in), std[n_w:p1]
        mean1 = torch.addmm(b_mean, h0, w_mean.t())  # (B, H1)
        # The diagonal part's variance, floored so the square root keeps a finite gradient.
        sd1 = torch.addmm(b_sd.square(), h0.square(), w_sd.square().t()).clamp_min(1e-30).sqrt()
        k = dev.shape[0]
        shared = None
        if alpha and n_samples >= k:  # D̂₁x for each stored deviation: (k, B, H1)
            dw = dev[:, :n_w].reshape(k, n_out, n_in)
            shared = torch.matmul(h0, dw.transpose(1, 2)) + dev[:, None, n_w:p1]
        rest_mean, rest_sd, rest_dev = self.swa_mean[p1:], std[p1:], dev[:, p1:]
        per_draw = max(1, WEIGHT_FLOATS // max(1, rest_mean.numel()))
        out = []
        for start in range(0, n_samples, per_draw):
            s = min(per_draw, n_samples - start)
            eps = torch.randn(s, *mean1.shape, generator=generator, device=x.device,
                              dtype=mean1.dtype)
            h1 = torch.addcmul(mean1, sd1, eps)  # (s, B, H1)
            z1 = torch.randn(s, rest_mean.numel(), generator=generator, device=x.device,
                             dtype=rest_mean.dtype)
            theta = torch.addcmul(rest_mean, z1, rest_sd, out=z1)  # (s, P - P1)
            if alpha:
                z2 = torch.randn(s, k, generator=generator, device=x.device, dtype=dev.dtype)
                theta.addmm_(z2, rest_dev, alpha=alpha)
                if shared is not None:
                    h1 = h1 + alpha * (z2 @ shared.flatten(1)).view(s, *mean1.shape)
                else:
                    low = alpha * (z2 @ dev[:, :p1])  # (s, P1)
                    w1 = low[:, :n_w].view(s, n_out, n_in)
                    h1 = h1 + torch.matmul(h0, w1.transpose(1, 2)) + low[:, None, n_w:]
            out.append(self._tail(self.net.act(h1), theta))
        return out[0] if len(out) == 1 else torch.cat(out)

    def _tail(self, h: Tensor, theta: Tensor) -> Tensor:
        """Layers 2... of the net for activations h (s, B, H1) and their flat weights theta
        (s, P − P1), one weight set per sample, shape (s, B, C)."""
        parts = theta.split(self._layout.numels[2:], dim=1)
        last = len(self.net.layers) - 2
        for i in range(last + 1):
            w = parts[2 * i].view(-1, *self._layout.shapes[2 + 2 * i])  # (s, out, in)
            b = parts[2 * i + 1]  # (s, out)
            h = torch.baddbmm(b[:, None, :], h, w.transpose(1, 2))
            if i < last:
                h = self.net.act(h)
        return h


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
                rank=cfg.max_num_models, scale=cfg.scale, var_clamp=cfg.var_clamp,
                local_reparam=cfg.local_reparam)


MODELS.register(
    "swag",
    ModelSpec(
        build=build_swag,
        config=SWAGConfig,
        description="SWA-Gaussian over the MLP's trajectory: diagonal + rank-20 covariance",
        reference="Maddox et al. 2019 (NeurIPS), arXiv:1902.02476",
        stochastic=True,
        family="ensemble & post-hoc",
        version="1",
        shrink={"smoke": SMOKE},
    ),
)
