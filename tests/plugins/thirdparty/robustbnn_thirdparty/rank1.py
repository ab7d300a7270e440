"""``tp_rank1``: a rank-1 Bayesian MLP, registered in ``MODELS`` (entry point robustbnn.models).

One shared weight matrix per layer, and per posterior sample a Gaussian rank-1 factor on each
layer's inputs (r) and outputs (s): W_s = W ∘ (s rᵀ), so (W ∘ s rᵀ) h = s ∘ (W (r ∘ h)). Every
draw comes from the ``generator`` passed to ``sample_logits``; samples differ in ``eval()``.

References:
    Dusenberry, Jerfel, Wen, Ma, Snoek, Heller, Lakshminarayanan & Tran, "Efficient and
    Scalable Bayesian Neural Nets with Rank-1 Factors", ICML 2020, arXiv:2005.07186.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.config import POSITIVE, POSITIVE_INT, Range, TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class Rank1Config(TrainConfig):
    """The rank-1 MLP's settings (``--set tp_rank1.hidden=64``)."""

    hidden: int = 100  # units of the one hidden layer
    init_std: float = 0.05  # initial std of the rank-1 factors
    prior_std: float = 0.1  # std of their N(1, prior_std²) prior

    ranges: ClassVar[dict[str, Range]] = {"hidden": POSITIVE_INT, "init_std": POSITIVE,
                                          "prior_std": POSITIVE}


class _Rank1Linear(nn.Module):
    """A linear layer whose input and output are scaled by sampled rank-1 factors."""

    def __init__(self, d_in: int, d_out: int, init_std: float,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        bound = d_in ** -0.5
        self.weight = nn.Parameter((2 * torch.rand(d_out, d_in, generator=generator) - 1) * bound)
        self.bias = nn.Parameter(torch.zeros(d_out))
        log_std = torch.full((1,), init_std).log()
        self.r_mean, self.s_mean = nn.Parameter(torch.ones(d_in)), nn.Parameter(torch.ones(d_out))
        self.r_log_std = nn.Parameter(log_std.expand(d_in).clone())
        self.s_log_std = nn.Parameter(log_std.expand(d_out).clone())

    def forward(self, h: Tensor, generator: torch.Generator | None) -> Tensor:
        """(S, B, d_in) -> (S, B, d_out), one (r, s) pair per sample."""
        S = h.shape[0]
        eps_r = torch.randn(S, 1, self.r_mean.numel(), generator=generator, device=h.device)
        eps_s = torch.randn(S, 1, self.s_mean.numel(), generator=generator, device=h.device)
        r = self.r_mean + self.r_log_std.exp() * eps_r  # (S, 1, d_in)
        s = self.s_mean + self.s_log_std.exp() * eps_s  # (S, 1, d_out)
        return s * F.linear(r * h, self.weight) + self.bias

    def kl(self, prior_std: float) -> Tensor:
        """KL[q(r) q(s) || N(1, prior_std²)] summed over every factor."""
        terms = []
        for mean, log_std in ((self.r_mean, self.r_log_std), (self.s_mean, self.s_log_std)):
            var_ratio = (log_std.exp() / prior_std) ** 2
            terms.append(0.5 * (var_ratio + ((mean - 1) / prior_std) ** 2 - 1
                                - var_ratio.log()).sum())
        return torch.stack(terms).sum()


class Rank1MLP(BayesianModule):
    """A one-hidden-layer rank-1 BNN (ReLU)."""

    def __init__(self, cfg: Rank1Config, input_shape: tuple[int, ...], num_classes: int,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        self.num_classes, self.prior_std = num_classes, cfg.prior_std
        d = torch.Size(input_shape).numel()
        self.hidden = _Rank1Linear(d, cfg.hidden, cfg.init_std, generator)
        self.out = _Rank1Linear(cfg.hidden, num_classes, cfg.init_std, generator)

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """Logits of ``n_samples`` rank-1 draws, shape (S, B, C)."""
        h = x.flatten(1).expand(n_samples, -1, -1)  # (S, B, D)
        return self.out(F.relu(self.hidden(h, generator)), generator)  # (S, B, C)

    def loss(self, x: Tensor, y: Tensor, *, n_train: int,
             generator: torch.Generator | None = None, batch: tuple[int, int] = (0, 1)) -> Tensor:
        """Per-example ELBO: the NLL of one draw plus KL / N."""
        nll = F.cross_entropy(self.sample_logits(x, 1, generator=generator)[0], y)
        kl = self.hidden.kl(self.prior_std) + self.out.kl(self.prior_std)
        return nll + kl / n_train


MODELS.register("tp_rank1", ModelSpec(
    Rank1MLP, Rank1Config, "rank-1 Bayesian MLP (third-party plug-in)",
    "Dusenberry et al. 2020, arXiv:2005.07186", shrink={"smoke": {"hidden": 32, "epochs": 10}}))
