"""Black-box α-divergence minimisation with MC dropout (BB-α dropout), α ∈ {0, 0.5, 1}.

MC-dropout networks (dropout before every weight layer, kept on at test time) trained with
the BB-α energy of K stochastic passes per example (Li & Gal eq. 7 and 9), in the
logsumexp form of the authors' code:

    loss = mean_n −(1/α)·(logsumexp_k(α·log p(y_n | x_n, ω_k)) − log K) + wd·Σ‖W‖²

α → 0 (and K = 1) recovers MC variational inference, α = 0.5 is the Hellinger value and
α = 1 maximises the MC estimate of the predictive log-likelihood log mean_k p(y_n | x_n, ω_k).
At test time the masks stay on and the harness averages S_eval softmax samples (K_test = 100
in the paper [TEXT-LG §5.2], the default suite's S_eval).

References:
    Li & Gal, "Dropout Inference in Bayesian Neural Networks with Alpha-divergences",
    ICML 2017, arXiv:1703.02914. Code: YingzhenLi/Dropout_BBalpha @ c2f1733
    (``BBalpha_dropout.py``, ``train_model.py``), docs/protocols.md §3.1-3.3.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import torch
from torch import Tensor, nn

from robustbnn.config import DROP_RATE, NON_NEGATIVE, POSITIVE_INT, OneOf, Range
from robustbnn.metrics.classification import log_mean_exp
from robustbnn.models._kept_units import ATTACK_MASKS, check_attack_masks
from robustbnn.models.base import MODELS, SMOKE, ModelSpec
from robustbnn.models.mlp import DropoutMLP, NetConfig, build_net


@dataclasses.dataclass(frozen=True)
class BBAlphaConfig(NetConfig):
    """BB-α dropout; this class carries the Hellinger value α = 0.5 (``bbalpha_05``)."""

    alpha: float = 0.5  # α ∈ {0, 0.5, 1} [TEXT-LG §5.2]; 0 = MC-VI (mean CE of the K passes)
    k_train: int = 10  # K stochastic passes per example in the loss [TEXT-LG §5.2, CODE K_mc]
    p: float = 0.5  # drop rate before every hidden and output layer [TEXT-LG §5.2]
    # Dropout on the input pixels too: "dropout layers before every weight layer" [SEED §5,
    # CODE get_logit_mlp_layers]. MLP only: the CNN drops its conv features, never pixels.
    input_p: float = 0.5
    # Keras W_regularizer=l2(wd): wd·ΣW² over weights (dense and conv), not biases, added in
    # full to the minibatch-mean loss; prior lengthscale l² = 0.1 [TEXT-LG §5.2, CODE wd=1e-6].
    l2: float = 1e-6
    hidden: tuple[int, ...] = (100, 100)  # MNIST FC net, 2 × 100 ReLU [TEXT-LG §5.2]
    epochs: int = 500  # 100 × model.fit(nb_epoch=5) on full MNIST [CODE train_model.py]
    optimizer: str = "sgd"  # Keras 'sgd': lr 0.01, no momentum, batch 128 [CODE train_model.py]
    lr: float = 0.01  # Keras SGD default [CODE train_model.py]
    # The masks of attack gradients, as MCDropoutConfig.attack_masks.
    attack_masks: str = "per_sample"

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "alpha": NON_NEGATIVE, "k_train": POSITIVE_INT, "p": DROP_RATE, "input_p": DROP_RATE,
        "l2": NON_NEGATIVE, "attack_masks": OneOf(ATTACK_MASKS),
    }


@dataclasses.dataclass(frozen=True)
class BBAlpha0Config(BBAlphaConfig):
    """BB-α dropout at α = 0: MC variational inference (``bbalpha_0``)."""

    alpha: float = 0.0  # the VI value [TEXT-LG §5.2]


@dataclasses.dataclass(frozen=True)
class BBAlpha1Config(BBAlphaConfig):
    """BB-α dropout at α = 1, the EP value (``bbalpha_1``)."""

    alpha: float = 1.0  # the EP value [TEXT-LG §5.2]


def bbalpha_loss(logits: Tensor, y: Tensor, alpha: float) -> Tensor:
    """The BB-α energy of K dropout passes per example, averaged over the minibatch.

    Args:
        logits: Logits of K passes with independent masks, shape (K, B, C).
        y: Labels, shape (B,).
        alpha: α; 0 gives the mean cross-entropy of the K passes (MC-VI), as the code does.

    Returns:
        mean_n −(1/α)·(logsumexp_k(α·ll_kn) − log K), with ll_kn = log softmax(logits_kn)[y_n].
    """
    k = logits.shape[0]
    ll = logits.log_softmax(-1).gather(-1, y.expand(k, -1).unsqueeze(-1)).squeeze(-1)  # (K, B)
    if alpha == 0:
        return -ll.mean()
    return -(log_mean_exp(alpha * ll) / alpha).mean()


class BBAlphaDropout(DropoutMLP):
    """An MC-dropout network whose training objective is the BB-α energy.

    Args:
        *args: As :class:`~robustbnn.models.mlp.DropoutMLP` (masks always on: ``mc=True``).
        alpha: α of the energy.
        k_train: K, the dropout passes per example in the loss.
        l2: Weight of wd·ΣW² over the weights of every dense and conv layer (not biases).
        **kwargs: As :class:`~robustbnn.models.mlp.DropoutMLP`.
    """

    def __init__(self, *args: object, alpha: float, k_train: int, l2: float,
                 **kwargs: object) -> None:
        super().__init__(*args, mc=True, **kwargs)  # type: ignore[arg-type]
        self.alpha, self.k_train, self.l2 = alpha, k_train, l2

    def weight_penalty(self) -> Tensor:
        """ΣW² over the weights of every dense and conv layer (biases excluded)."""
        weights = [m.weight for m in self.modules() if isinstance(m, (nn.Linear, nn.Conv2d))]
        return sum(w.square().sum() for w in weights)  # type: ignore[return-value]

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """BB-α energy of ``k_train`` passes (batched over the sample axis) plus the L2 term."""
        logits = self._forward(x, self.k_train, generator, stochastic=True)  # (K, B, C)
        loss = bbalpha_loss(logits, y, self.alpha)
        if self.l2 > 0:
            loss = loss + self.l2 * self.weight_penalty()
        return loss


def build_bbalpha(cfg: BBAlphaConfig, input_shape: tuple[int, ...], num_classes: int,
                  generator: torch.Generator | None) -> BBAlphaDropout:
    """Build a BB-α dropout network (MLP or CNN, per ``cfg.arch``)."""
    check_attack_masks(cfg.attack_masks, {0.0: "bbalpha_0", 1.0: "bbalpha_1"}.get(cfg.alpha,
                                                                          "bbalpha_05"))
    net = build_net(cfg, input_shape, num_classes, generator, cls=BBAlphaDropout, p=cfg.p,
                    input_p=cfg.input_p, alpha=cfg.alpha, k_train=cfg.k_train, l2=cfg.l2,
                    attack_masks=cfg.attack_masks)
    return net  # type: ignore[return-value]


def _spec(config: type[BBAlphaConfig], which: str) -> ModelSpec:
    return ModelSpec(
        build=build_bbalpha,
        config=config,
        description=f"MC dropout (p = 0.5, input too) trained with the BB-α loss, {which}",
        reference="Li & Gal 2017, arXiv:1703.02914",
        stochastic=True,
        shrink={"smoke": SMOKE},
        family="MC dropout",
    )


MODELS.register("bbalpha_0", _spec(BBAlpha0Config, "α = 0 (MC-VI)"))
MODELS.register("bbalpha_05", _spec(BBAlphaConfig, "α = 0.5 (Hellinger)"))
MODELS.register("bbalpha_1", _spec(BBAlpha1Config, "α = 1 (EP)"))
