"""Matrix-normal weight posteriors (shared by vhn and mvn): the KL from MN(0, I, I) and the MLP.

A matrix normal MN(M, A, B) over an r x c matrix W, with row covariance A (r x r) and column
covariance B (c x c), is the Gaussian N(vec M, B ⊗ A) over the column-stacked vec W. With
A = diag(a) and B = diag(b) the entries are independent, W_ij ~ N(M_ij, a_i b_j), so

    KL[MN(M, diag a, diag b) || MN(0, I, I)]
        = ½ [tr(B ⊗ A) + ||vec M||² − rc − log det(B ⊗ A)]
        = ½ [Σa · Σb + ||M||²_F − rc − c Σ log a − r Σ log b],

using tr(B ⊗ A) = tr A · tr B and log det(B ⊗ A) = c log det A + r log det B
(Louizos & Welling 2016; Kristiadi 2018, [CODE-CDN ml_cdn_mnist.py ``ProbHypernet``]).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from robustbnn.metrics.classification import log_mean_exp
from robustbnn.models._blocks import sample_blocks
from robustbnn.models._local_reparam import draw_outputs, is_local
from robustbnn.models.base import BayesianModule
from robustbnn.models.nets import activation


def kl_to_standard(mean_sq_norm: Tensor, log_a: Tensor, log_b: Tensor) -> Tensor:
    """KL[MN(M, diag(a), diag(b)) || MN(0, I, I)] in closed form, batched over leading axes.

    Args:
        mean_sq_norm: ||M||²_F, shape (*).
        log_a: Log row variances, shape (*, r).
        log_b: Log column variances, shape (*, c).

    Returns:
        The KL divergence in nats, shape (*).
    """
    r, c = log_a.shape[-1], log_b.shape[-1]
    trace = log_a.exp().sum(-1) * log_b.exp().sum(-1)
    log_det = c * log_a.sum(-1) + r * log_b.sum(-1)
    return 0.5 * (trace + mean_sq_norm - r * c - log_det)


class MatrixNormalMLP(BayesianModule):
    """An MLP whose layers each have a matrix-normal weight posterior (vhn and mvn).

    Every layer maps its input, shape (B, in) or (S, B, in), to a sampled output (S, B, out)
    and a KL divergence from MN(0, I, I) (per example for input-dependent posteriors, so shape
    (B,) or (S, B), or a scalar). The training loss is Kristiadi's (2018) λ-weighted objective
    [CODE-CDN ml_cdn_mnist.py]:

        −mean_n log((1/S) Σ_s p(y_n | x_n, W_s)) + λ Σ_l KL_l,

    where KL_l is averaged over the examples (and samples) it depends on. λ replaces the 1/N of
    the per-example ELBO; λ = 1/N recovers it.

    Args:
        layers: Layers called as ``layer(h, n_samples, generator) -> (out, kl)``.
        num_classes: C.
        act: Hidden nonlinearity (a name in ``nets.ACTIVATIONS``).
        kl_weight: λ.
        train_samples: S in the training loss.
        local_reparam: Which layers :meth:`sample_logits` asks for each example's own draw of
            their outputs (``layer(h, S, generator, local=True)``): ``"none"``, ``"first"``
            or ``"all"`` (:mod:`robustbnn.models._local_reparam`); the loss never does.
    """

    def __init__(self, layers: nn.ModuleList, num_classes: int, act: str, *,
                 kl_weight: float, train_samples: int, local_reparam: str = "none") -> None:
        super().__init__()
        self.local_reparam = local_reparam
        self.num_classes = num_classes
        self.layers = layers
        self.act = activation(act)
        self.kl_weight, self.train_samples = kl_weight, train_samples

    def _forward(self, x: Tensor, n_samples: int, generator: torch.Generator | None,
                 local_reparam: str = "none") -> tuple[Tensor, Tensor]:
        h = x.flatten(1)  # (B, D): the first layer's deterministic work is shared over S
        kl = x.new_zeros(())
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            local = is_local(local_reparam, shared_input=h.dim() == 2)
            h, layer_kl = layer(h, n_samples, generator, local=local)  # (S, B, out)
            kl = kl + layer_kl.mean()
            if i < last:
                h = self.act(h)
        return h, kl  # (S, B, C), scalar

    def _local(self, layer: nn.Module, shared_input: bool) -> bool:
        return getattr(layer, "always_local", False) or is_local(self.local_reparam,
                                                                 shared_input)

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` posterior samples, shape (S, B, C).

        A first layer that samples its outputs computes their moments once for all samples;
        the samples then go through the rest in cache-sized blocks
        (:func:`~robustbnn.models._blocks.sample_blocks`), without the KL terms.
        """
        h = x.flatten(1)  # (B, D)
        first, last = self.layers[0], len(self.layers) - 1
        shared = first.moments(h) if self._local(first, shared_input=True) else None
        blocks = []
        width = max(layer.mean.shape[-1] for layer in self.layers)
        for s in sample_blocks(n_samples, h.shape[0], width, h.device):
            out = draw_outputs(*shared, s, generator) if shared else first(h, s, generator)[0]
            for i in range(1, last + 1):
                layer = self.layers[i]
                out = self.act(out)
                if self._local(layer, shared_input=False):
                    out = draw_outputs(*layer.moments(out), s, generator)
                else:
                    out = layer(out, s, generator)[0]
            blocks.append(out)
        return blocks[0] if len(blocks) == 1 else torch.cat(blocks)

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """MC predictive NLL of ``train_samples`` draws plus ``kl_weight`` times the KL.

        ``n_train`` is unused: the KL weight λ is a hyper-parameter of its own [SEED §4].
        """
        s = self.train_samples
        logits, kl = self._forward(x, s, generator)  # (S, B, C)
        log_lik = logits.log_softmax(-1).gather(-1, y.expand(s, -1).unsqueeze(-1))[..., 0]
        nll = -log_mean_exp(log_lik).mean()  # (S, B) -> (B,) -> scalar
        return nll + self.kl_weight * kl
