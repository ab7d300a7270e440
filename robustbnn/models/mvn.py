"""Matrix-variate Gaussian posterior: MN(M, diag(a), diag(b)) over each weight matrix.

The baseline Kristiadi (2018) compares the variational hypernetwork against: plain VI on the
native parameters (M, a, b) of a diagonal matrix normal per layer, with the prior MN(0, I, I)
and the same λ-weighted objective (Louizos & Welling 2016 without their inducing points or
pseudo-data). W_ij ~ N(M_ij, a_i b_j) independently; each posterior sample is one weight matrix
per layer shared by the whole batch, W_s = M + diag(√a) E_s diag(√b) with E_s ~ N(0, I).

With h̃ = [h, 1], h̃W_s = h̃M + ((h̃ ⊙ √a) E_s) ⊙ √b: the mean term h̃M of the first layer is
computed once for all S samples; only the noise term is a batched (S, B, r) @ (S, r, c) matmul.

References:
    Louizos & Welling, "Structured and Efficient Variational Deep Learning with Matrix Gaussian
    Posteriors", ICML 2016, arXiv:1603.04733.
    Kristiadi, "Variational Hypernetworks", note, 2018, Table 1 (MVN row, 80,394 parameters
    for 784-100-10 without biases).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import ClassVar

import torch
from torch import Tensor, nn

from robustbnn.config import NON_NEGATIVE, POSITIVE_INT, OneOf, Range
from robustbnn.models._local_reparam import LOCAL_REPARAM, check_local_reparam, draw_outputs
from robustbnn.models._matrix_normal import MatrixNormalMLP, kl_to_standard
from robustbnn.models.base import MODELS, SMOKE, ModelSpec
from robustbnn.models.mlp import MLPConfig
from robustbnn.models.nets import flat_features


@dataclasses.dataclass(frozen=True)
class MVNConfig(MLPConfig):
    """Diagonal matrix-normal VI, trained like the variational hypernetwork it baselines."""

    hidden: tuple[int, ...] = (100,)  # 784-100-10 [SEED §4.2, Table 1]
    batch_size: int = 200  # [SEED §4]
    grad_clip_value: float = 5.0  # as vhn [CODE-CDN]; the note trains all models alike [SEED §4]
    kl_weight: float = 1e-5  # λ as for vhn [SEED §4: only λ tuned, grid 1e-1 ... 1e-5]
    train_samples: int = 1  # S in the training loss, as vhn [CODE-CDN]
    bias: bool = True  # append a 1 to each layer input (r = in + 1); Table 1 counts: False
    log_var_init: float = -9.0  # initial log(a_i b_j), split evenly [INFERRED: not published]
    # Prediction and attacks only (training draws weight matrices): "all" draws each example's
    # outputs from N(h̃M, (Σ_i h̃_i² a_i) b) given the layer input (the local
    # reparameterisation, robustbnn.models._local_reparam), exact for every example's
    # predictive; "first" only in the first layer; "none" draws weights shared by the batch.
    local_reparam: str = "all"

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "kl_weight": NON_NEGATIVE, "train_samples": POSITIVE_INT,
        "local_reparam": OneOf(LOCAL_REPARAM),
    }


class MVNLayer(nn.Module):
    """One layer with the posterior MN(M, diag(a), diag(b)) over its r x c weight matrix.

    Args:
        in_dim: Input features.
        out_dim: Output features c.
        bias: Append a constant 1 to the input, so r = in_dim + 1 (else r = in_dim).
        log_var_init: Initial log(a_i b_j); log a and log b start at half of it each.
        generator: Source of the initialisation.
    """

    def __init__(self, in_dim: int, out_dim: int, *, bias: bool, log_var_init: float,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        self.bias = bias
        r = in_dim + int(bias)
        bound = 1 / math.sqrt(in_dim)  # PyTorch's nn.Linear range for weights and biases
        mean = torch.empty(r, out_dim).uniform_(-bound, bound, generator=generator)
        self.mean = nn.Parameter(mean)
        self.log_a = nn.Parameter(torch.full((r,), 0.5 * log_var_init))
        self.log_b = nn.Parameter(torch.full((out_dim,), 0.5 * log_var_init))

    def augment(self, h: Tensor) -> Tensor:
        """The input with the bias 1 appended, shape (*, r)."""
        return torch.cat([h, h.new_ones(*h.shape[:-1], 1)], -1) if self.bias else h

    def _noise(self, n_samples: int, generator: torch.Generator | None) -> Tensor:
        return torch.randn((n_samples, *self.mean.shape), generator=generator,
                           device=self.mean.device, dtype=self.mean.dtype)  # (S, r, c)

    def sample_weight(self, n_samples: int, generator: torch.Generator | None) -> Tensor:
        """Weight draws M + diag(√a) E diag(√b), shape (S, r, c)."""
        e = self._noise(n_samples, generator)
        return self.mean + (0.5 * self.log_a).exp()[:, None] * e * (0.5 * self.log_b).exp()

    def moments(self, h: Tensor) -> tuple[Tensor, Tensor]:
        """Mean h̃M and std √((Σ_i h̃_i² a_i) b) of the outputs given h (*, B, in): (*, B, c).

        The bias row is added rather than appended to h, which would copy h.
        """
        n = h.shape[-1]
        mean = h @ self.mean[:n]
        row_var = h.square() @ self.log_a[:n].exp()  # (*, B)
        if self.bias:
            mean = mean + self.mean[n]
            row_var = row_var + self.log_a[n].exp()
        return mean, row_var.clamp_min(1e-30).sqrt().unsqueeze(-1) * (0.5 * self.log_b).exp()

    def forward(self, h: Tensor, n_samples: int, generator: torch.Generator | None, *,
                local: bool = False) -> tuple[Tensor, Tensor]:
        """Outputs (S, B, c) and the KL (scalar).

        By default the S weight draws are shared over the batch, the same draws as
        :meth:`sample_weight` under the same generator state. ``local=True`` draws each
        example's outputs from their Gaussian given h̃: mean h̃M and variance
        (Σ_i h̃_i² a_i) b_j, a rank-one variance, so a draw costs the mean's GEMM and a
        matrix-vector product.
        """
        kl = kl_to_standard(self.mean.square().sum(), self.log_a, self.log_b)
        if local:
            return draw_outputs(*self.moments(h), n_samples, generator), kl
        ht = self.augment(h)  # (B, r) or (S, B, r)
        e = self._noise(n_samples, generator)  # (S, r, c)
        noise = ((ht * (0.5 * self.log_a).exp()) @ e) * (0.5 * self.log_b).exp()  # (S, B, c)
        return ht @ self.mean + noise, kl


def build_mvn(cfg: MVNConfig, input_shape: tuple[int, ...], num_classes: int,
              generator: torch.Generator | None) -> MatrixNormalMLP:
    """Build a matrix-normal VI MLP."""
    check_local_reparam(cfg.local_reparam, "mvn")
    sizes = [flat_features(input_shape), *cfg.hidden, num_classes]
    layers = nn.ModuleList(
        MVNLayer(a, b, bias=cfg.bias, log_var_init=cfg.log_var_init, generator=generator)
        for a, b in itertools.pairwise(sizes)
    )
    return MatrixNormalMLP(layers, num_classes, cfg.activation, kl_weight=cfg.kl_weight,
                           train_samples=cfg.train_samples, local_reparam=cfg.local_reparam)


MODELS.register(
    "mvn",
    ModelSpec(
        build=build_mvn,
        config=MVNConfig,
        description="matrix-variate Gaussian VI: MN(M, diag a, diag b) weights per layer",
        reference="Louizos & Welling 2016, arXiv:1603.04733 (baseline of Kristiadi 2018)",
        stochastic=True,
        family="variational",
        shrink={"smoke": SMOKE},
    ),
)
