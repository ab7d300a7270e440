"""Variational hypernetwork: an input-dependent matrix-normal posterior over each weight matrix.

Each layer's posterior q(W | h) = MN(diag(d)·M₀, diag(a), diag(b)) over the r x c matrix W
(r = in + 1 with the bias row, c = out) has its row scaling d and variances a, b emitted by a
small hypernetwork from the layer's own input h ("vector scaling" parametrisation, §2.1), and
E is drawn per example, so every example gets its own weights [CODE-CDN ``ProbHypernet``].

Local reparameterisation (exact here). With h̃ = [h, 1] and W = diag(d)M₀ + diag(√a)E diag(√b),

    h̃W = (h̃ ⊙ d)M₀ + ((h̃ ⊙ √a)ᵀE) ⊙ √b.

For one example, (h̃ ⊙ √a)ᵀE is a sum of independent N(0, 1) entries: column j is
Σ_i h̃_i √a_i E_ij ~ N(0, Σ_i h̃_i² a_i), and distinct columns use distinct entries of E, so
they are independent. The output is therefore

    h̃W  =ᵈ  (h̃ ⊙ d)M₀ + √(Σ_i h̃_i² a_i) · √b ⊙ ε,    ε ~ N(0, I_c),

jointly over the c outputs, and independently over examples and samples because E is drawn
afresh for each of them. This is the same distribution as materialising the (S, B, r, c)
weights (the note's §5 suggestion), at the cost of c random numbers per example instead of rc.
(The successor code's local-reparameterised variant multiplies ε by the variance instead of
the standard deviation; this one does not.)

References:
    Kristiadi, "Variational Hypernetworks", note, 2018 (papers/kristiadi2018_*.txt).
    Kristiadi, Däubener, Fischer, "Predictive Uncertainty Quantification with Compound Density
    Networks", 2019; code wiseodd/compound-density-networks ``ml_cdn_mnist.py`` [CODE-CDN].
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.config import NON_NEGATIVE, POSITIVE_INT, OneOf, Range
from robustbnn.models._local_reparam import draw_outputs
from robustbnn.models._matrix_normal import MatrixNormalMLP, kl_to_standard
from robustbnn.models.base import MODELS, SMOKE, ModelSpec
from robustbnn.models.mlp import MLPConfig
from robustbnn.models.nets import flat_features

_TINY = 1e-30  # keeps sqrt differentiable when a bias-free layer sees an all-zero input


@dataclasses.dataclass(frozen=True)
class VHNConfig(MLPConfig):
    """Variational hypernetwork with vector scaling, trained with Adam and a λ-weighted KL."""

    hidden: tuple[int, ...] = (100,)  # 784-100-10 [SEED §4.2]
    batch_size: int = 200  # [SEED §4]
    grad_clip_value: float = 5.0  # clip_grad_value_(…, 5) [CODE-CDN]
    hyper_hidden: int = 50  # hypernet hidden units, OOD experiment [SEED §4.2]; Table 1 uses 30
    kl_weight: float = 1e-5  # λ, [CODE-CDN --lam]; paper grid 1e-1 ... 1e-5 [SEED §4]
    train_samples: int = 1  # S in the training loss [CODE-CDN --train_samples]
    bias: bool = True  # append a 1 to each layer input (r = in + 1) [CODE-CDN]; Table 1: False
    mean_init_std: float = 1.0  # M₀ ~ N(0, std²) [CODE-CDN MNIST]
    hyper_init: float = 1e-4  # hypernet weights ~ U(−x, x), biases PyTorch default [CODE-CDN]
    log_var_shift: float = 0.0  # added to the log a, log b biases at init; 0 = [CODE-CDN]

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "hyper_hidden": POSITIVE_INT, "kl_weight": NON_NEGATIVE, "train_samples": POSITIVE_INT,
        "mean_init_std": NON_NEGATIVE, "hyper_init": NON_NEGATIVE,
    }


LOG_VAR_LIMIT = 30.0  # exp(30) ~ 1e13: far beyond any trained variance, far below overflow


class VHNLayer(nn.Module):
    """One layer with an input-dependent posterior MN(diag(d)·M₀, diag(a), diag(b)).

    Args:
        in_dim: Input features.
        out_dim: Output features c.
        hyper_hidden: Hidden units H of the hypernetwork in -> H -> (d, log a, log b).
        bias: Append a constant 1 to the input, so r = in_dim + 1 (else r = in_dim).
        mean_init_std: M₀ is initialised N(0, mean_init_std²).
        hyper_init: Hypernet weights are initialised U(−hyper_init, hyper_init).
        log_var_shift: Added to the initial biases of log a and log b, so the initial weight
            variances a_i b_j are about exp(2 · log_var_shift) instead of about 1.
        generator: Source of the initialisation.
    """

    def __init__(self, in_dim: int, out_dim: int, hyper_hidden: int, *, bias: bool,
                 mean_init_std: float, hyper_init: float, log_var_shift: float = 0.0,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        self.bias = bias
        r = in_dim + int(bias)
        self.mean = nn.Parameter(torch.randn(r, out_dim, generator=generator) * mean_init_std)
        self.hyper = nn.Linear(in_dim, hyper_hidden)
        self.scale = nn.Linear(hyper_hidden, r)  # d
        self.log_a = nn.Linear(hyper_hidden, r)  # log row variances
        self.log_b = nn.Linear(hyper_hidden, out_dim)  # log column variances
        with torch.no_grad():
            for lin in (self.hyper, self.scale, self.log_a, self.log_b):
                nn.init.uniform_(lin.weight, -hyper_init, hyper_init, generator=generator)
                bound = 1 / math.sqrt(lin.in_features)
                nn.init.uniform_(lin.bias, -bound, bound, generator=generator)
            self.log_a.bias.add_(log_var_shift)
            self.log_b.bias.add_(log_var_shift)

    def posterior(self, h: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The hypernet outputs d (*, r), log a (*, r), log b (*, c) for inputs h (*, in).

        The log-variances are linear in the input, so inputs far from the data (large attack
        steps, noise) can push them past float32's exp range; they are clamped to
        ±``LOG_VAR_LIMIT``, which leaves every value seen on the data unchanged.
        """
        z = F.relu(self.hyper(h))
        lim = LOG_VAR_LIMIT
        return self.scale(z), self.log_a(z).clamp(-lim, lim), self.log_b(z).clamp(-lim, lim)

    def augment(self, h: Tensor) -> Tensor:
        """The input with the bias 1 appended, shape (*, r)."""
        return torch.cat([h, h.new_ones(*h.shape[:-1], 1)], -1) if self.bias else h

    always_local = True  # the posterior depends on the input: every example has its own draw

    def _moments(self, h: Tensor, d: Tensor, log_a: Tensor, log_b: Tensor
                 ) -> tuple[Tensor, Tensor]:
        ht = self.augment(h)  # (*, B, r)
        mean = (ht * d) @ self.mean  # (*, B, c)
        var_in = (ht.square() * log_a.exp()).sum(-1, keepdim=True)  # Σ_i h̃_i² a_i, (*, B, 1)
        return mean, var_in.clamp_min(_TINY).sqrt() * (0.5 * log_b).exp()  # (*, B, c)

    def moments(self, h: Tensor) -> tuple[Tensor, Tensor]:
        """Mean and std of the outputs given the input h (*, B, in), each (*, B, c)."""
        return self._moments(h, *self.posterior(h))

    def forward(self, h: Tensor, n_samples: int, generator: torch.Generator | None, *,
                local: bool = True) -> tuple[Tensor, Tensor]:
        """Sampled outputs (S, B, c) and per-example KL ((B,) or (S, B)) for h (B or S, B, in).

        The posterior depends on the input, so every example has its own draw (``local`` is
        accepted for the shared layer interface and is always true here)."""
        d, log_a, log_b = self.posterior(h)
        out = draw_outputs(*self._moments(h, d, log_a, log_b), n_samples, generator)
        m_sq = d.square() @ self.mean.square().sum(1)  # ||diag(d)M₀||²_F, (*, B)
        return out, kl_to_standard(m_sq, log_a, log_b)


def build_vhn(cfg: VHNConfig, input_shape: tuple[int, ...], num_classes: int,
              generator: torch.Generator | None) -> MatrixNormalMLP:
    """Build a variational-hypernetwork MLP."""
    sizes = [flat_features(input_shape), *cfg.hidden, num_classes]
    layers = nn.ModuleList(
        VHNLayer(a, b, cfg.hyper_hidden, bias=cfg.bias, mean_init_std=cfg.mean_init_std,
                 hyper_init=cfg.hyper_init, log_var_shift=cfg.log_var_shift, generator=generator)
        for a, b in itertools.pairwise(sizes)
    )
    return MatrixNormalMLP(layers, num_classes, cfg.activation, kl_weight=cfg.kl_weight,
                           train_samples=cfg.train_samples)


MODELS.register(
    "vhn",
    ModelSpec(
        build=build_vhn,
        config=VHNConfig,
        description="variational hypernet: input-dependent matrix-normal weights, vector scaling",
        reference="Kristiadi 2018, Variational Hypernetworks (note)",
        stochastic=True,
        family="hypernetwork",
        shrink={"smoke": SMOKE},
    ),
)
