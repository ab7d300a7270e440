"""Bayes by Backprop: a factorised Gaussian posterior over every weight and bias of an MLP.

Each weight is w = μ + softplus(ρ)·ε with ε ~ N(0, 1). One weight draw is shared by all the
examples of a batch (the paper's semantics); ``n_samples`` draws are batched over a leading
sample axis, so a draw of layer k has weights of shape (S, out, in). Two priors: a Gaussian
N(0, σ²) (``bbb_gaussian``, closed-form KL) and the scale mixture
π N(0, σ1²) + (1 − π) N(0, σ2²) (``bbb_mixture``, Monte Carlo KL log q(w) − log p(w) at the
sampled weights, eq. 2).

Not as in the paper: inputs stay in [0, 1] (the paper divides raw pixels by 126), the optimiser
is Adam (the paper's is an unspecified SGD variant), and the Gaussian prior's KL is in closed
form by default (same expectation as eq. 2, less variance; ``kl_estimator`` selects eq. 2's
Monte Carlo estimate, or the BbB tutorial's with the mean detached in log q). With Adam every
ρ moves by about ``lr`` per step while the KL dominates its gradient, so after a short run
σ ≈ softplus(ρ_init + lr·steps) for most weights: the posterior std reflects the budget until
training has converged.

References:
    Blundell, Cornebise, Kavukcuoglu & Wierstra, "Weight Uncertainty in Neural Networks",
    ICML 2015, arXiv:1505.05424. docs/protocols.md §4.
"""

from __future__ import annotations

import dataclasses
import math
from itertools import pairwise
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.config import (
    ADDED_LATER,
    NON_NEGATIVE,
    POSITIVE_INT,
    PROBABILITY,
    OneOf,
    Range,
)
from robustbnn.errors import ConfigError
from robustbnn.models._local_reparam import (
    LOCAL_REPARAM,
    check_local_reparam,
    draw_outputs,
    is_local,
)
from robustbnn.models.base import MODELS, SMOKE, BayesianModule, ModelSpec
from robustbnn.models.mlp import MLPConfig
from robustbnn.models.nets import INIT, activation, flat_features, init_linear_

# Weight draws made at a time in sample_logits: a few draws of a 784-400-400-10 net stay in
# cache; all 100 at once (190 MB) made the batched path slower than a loop over samples.
SAMPLES_PER_DRAW = 8
_LOG_2PI = math.log(2 * math.pi)
# How the KL term of the loss is estimated: "closed_form" (Gaussian prior only), "mc" the
# one-sample-per-draw log q(w) − log p(w) of eq. 2, "mc_detached_mean" the same with μ detached
# in log q, as the BbB tutorial's ``Normal(self.w_mu.data, σ).log_prob(w)`` [SEED 004].
KL_ESTIMATORS = ("closed_form", "mc", "mc_detached_mean")


@dataclasses.dataclass(frozen=True)
class BBBConfig(MLPConfig):
    """Settings shared by both priors (the MLP is 784-400-400-10 ReLU, BbB Table 1)."""

    train_samples: int = 1  # weight draws per step; paper grid {1, 2, 5, 10} [TEXT-BBB §5.1]
    kl_weighting: str = "uniform"  # "uniform" π_i = 1/M or "blundell" 2^(M-i)/(2^M-1) [eq. 9]
    # ρ = −6 as in the BbB tutorial [SEED 004]: initial std softplus(−6) ≈ 0.0025 ≈ e^−6, the
    # mixture's narrow σ2. The paper's init is [NOT FOUND]. −3 fails on mnist5k (70% at 30
    # epochs: the initial noise drowns the signal); −5 needs ~2x the epochs of −6.
    rho_init: float = -6.0
    # μ's initialisation (robustbnn.models.nets.INITS); the tutorial's is "uniform" at 0.6.
    init: str = "torch"
    init_scale: float = 0.0
    # Prediction and attacks only (training draws weights): "none" draws weights shared by
    # the batch, "first" samples the first layer's outputs N(xμ, x²σ²) once per example and
    # draws the later layers' weights, "all" samples every layer's outputs (Kingma et al.
    # 2015; robustbnn.models._local_reparam). Exact for every example's predictive.
    local_reparam: str = "first"

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "train_samples": POSITIVE_INT, "kl_weighting": OneOf(("uniform", "blundell")),
        "init": INIT, "init_scale": NON_NEGATIVE, "local_reparam": OneOf(LOCAL_REPARAM),
    }


@dataclasses.dataclass(frozen=True)
class BBBGaussianConfig(BBBConfig):
    """Bayes by Backprop with a Gaussian prior N(0, σ²)."""

    # The paper's σ is [NOT FOUND] (docs/protocols.md §4.1); σ = 1 is the −log σ = 0 end of the
    # grid {0, ..., 4} swept by torchbayes [3RD] and of the mixture's −log σ1 grid {0, 1, 2}.
    neg_log_sigma: float = 0.0
    # The KL estimator (KL_ESTIMATORS). The closed form has the least variance; the BbB
    # tutorial's code uses "mc_detached_mean" (docs/protocols.md §4.4, issue 31).
    kl_estimator: str = dataclasses.field(default="closed_form", metadata=ADDED_LATER)

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "kl_estimator": OneOf(KL_ESTIMATORS),
    }


@dataclasses.dataclass(frozen=True)
class BBBMixtureConfig(BBBConfig):
    """Bayes by Backprop with the scale-mixture prior (eq. 7)."""

    # Published grid [TEXT-BBB §5.1]: π ∈ {1/4, 1/2, 3/4}, −log σ1 ∈ {0, 1, 2},
    # −log σ2 ∈ {6, 7, 8}; the selected point is [NOT FOUND], these are the [3RD] defaults.
    pi: float = 0.5
    neg_log_sigma1: float = 0.0
    neg_log_sigma2: float = 6.0

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "pi": PROBABILITY,
    }


@dataclasses.dataclass(frozen=True)
class GaussianPrior:
    """The prior N(0, σ²) on every weight."""

    sigma: float

    def log_prob(self, w: Tensor) -> Tensor:
        """Elementwise log density, same shape as ``w``."""
        return -0.5 * (w / self.sigma) ** 2 - math.log(self.sigma) - 0.5 * _LOG_2PI

    def kl(self, mu: Tensor, sigma: Tensor) -> Tensor:
        """Closed-form KL[N(μ, σ²) ‖ N(0, s²)] summed over all elements (a scalar)."""
        quadratic = (sigma.square().sum() + mu.square().sum()) / (2 * self.sigma**2)
        return quadratic - sigma.log().sum() + mu.numel() * (math.log(self.sigma) - 0.5)


@dataclasses.dataclass(frozen=True)
class ScaleMixturePrior:
    """The prior π N(0, σ1²) + (1 − π) N(0, σ2²) on every weight (eq. 7)."""

    pi: float
    sigma1: float
    sigma2: float

    def log_prob(self, w: Tensor) -> Tensor:
        """Elementwise log density, same shape as ``w``.

        log(e^a + e^b) = a + softplus(b − a) with a, b the log-weighted components: b − a is
        c − k w², so this costs one softplus and never underflows the narrow component.
        """
        if self.pi in (0.0, 1.0):  # a single component; avoids log 0
            return GaussianPrior(self.sigma1 if self.pi == 1.0 else self.sigma2).log_prob(w)
        w2 = w.square()
        c = math.log1p(-self.pi) - math.log(self.pi) + math.log(self.sigma1 / self.sigma2)
        k = 0.5 / self.sigma2**2 - 0.5 / self.sigma1**2
        a0 = math.log(self.pi) - math.log(self.sigma1) - 0.5 * _LOG_2PI
        return F.softplus(w2.mul(-k).add_(c)).sub_(w2, alpha=0.5 / self.sigma1**2).add_(a0)


def softplus_std(rho: Tensor) -> Tensor:
    """σ = log(1 + exp ρ), computed stably for large |ρ|."""
    return F.softplus(rho)


def blundell_weight(i: int, m: int) -> float:
    """π_i = 2^(M−i) / (2^M − 1) for minibatch i = 1..M (eq. 9), without overflow.

    Rewritten as 2^(−i) / (1 − 2^(−M)); for large i it underflows to 0 (no KL on late batches).
    """
    if not 1 <= i <= m:
        raise ValueError(f"minibatch index i={i} is outside 1..M={m}")
    return math.ldexp(1.0, -i) / -math.expm1(-m * math.log(2.0))


class BayesLinear(nn.Module):
    """A linear layer with a factorised Gaussian posterior over weight and bias."""

    def __init__(self, n_in: int, n_out: int, rho_init: float,
                 generator: torch.Generator | None, mu_init: str = "torch",
                 mu_init_scale: float = 0.0) -> None:
        super().__init__()
        # μ: as a plain layer of that init (BbB tutorial: U(±0.6) for weights and biases)
        init = init_linear_(nn.Linear(n_in, n_out), generator, mu_init, mu_init_scale)
        self.weight_mu = nn.Parameter(init.weight.detach().clone())  # (out, in)
        self.bias_mu = nn.Parameter(init.bias.detach().clone())  # (out,)
        self.weight_rho = nn.Parameter(torch.full((n_out, n_in), float(rho_init)))
        self.bias_rho = nn.Parameter(torch.full((n_out,), float(rho_init)))

    def posterior(self) -> list[tuple[Tensor, Tensor]]:
        """(μ, σ) of the weight and of the bias."""
        return [(self.weight_mu, softplus_std(self.weight_rho)),
                (self.bias_mu, softplus_std(self.bias_rho))]


@dataclasses.dataclass
class _Draw:
    """One tensor's posterior mean μ and std σ, its noise ε (S, *) and its sampled values
    w = μ + σε."""

    mu: Tensor
    sigma: Tensor
    eps: Tensor
    w: Tensor


class BayesByBackpropMLP(BayesianModule):
    """An MLP whose weights and biases all have a factorised Gaussian posterior.

    Args:
        input_shape: Shape of one input, e.g. (1, 28, 28).
        num_classes: C.
        hidden: Hidden layer widths.
        act: Hidden nonlinearity name.
        prior: A :class:`GaussianPrior` or a :class:`ScaleMixturePrior`.
        rho_init: Initial ρ of every weight (σ = softplus(ρ)).
        train_samples: Weight draws per training step.
        kl_weighting: "uniform" or "blundell" (eq. 9).
        kl_estimator: One of :data:`KL_ESTIMATORS`; None picks "closed_form" for a Gaussian
            prior and "mc" for the mixture (which has no closed form).
        local_reparam: Where :meth:`sample_logits` samples outputs instead of weights
            (``"none"``, ``"first"`` or ``"all"``, see :mod:`robustbnn.models._local_reparam`).
        generator: Source of the initial μ.
    """

    def __init__(self, input_shape: tuple[int, ...], num_classes: int, hidden: tuple[int, ...],
                 act: str, prior: GaussianPrior | ScaleMixturePrior, *, rho_init: float = -6.0,
                 train_samples: int = 1, kl_weighting: str = "uniform",
                 kl_estimator: str | None = None, init: str = "torch",
                 init_scale: float = 0.0, local_reparam: str = "first",
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        check_local_reparam(local_reparam, "bbb")
        self.local_reparam = local_reparam
        if kl_weighting not in ("uniform", "blundell"):
            raise ConfigError(f"unknown kl_weighting {kl_weighting!r}; known: "
                              "['blundell', 'uniform']")
        if train_samples < 1:
            raise ConfigError(f"train_samples must be >= 1, got {train_samples}")
        if kl_estimator is None:
            kl_estimator = "closed_form" if isinstance(prior, GaussianPrior) else "mc"
        if kl_estimator not in KL_ESTIMATORS:
            raise ConfigError(f"unknown kl_estimator {kl_estimator!r}; known: "
                              f"{sorted(KL_ESTIMATORS)}")
        if kl_estimator == "closed_form" and not isinstance(prior, GaussianPrior):
            raise ConfigError("the scale-mixture prior's KL has no closed form; use "
                              "kl_estimator='mc' or 'mc_detached_mean'")
        self.kl_estimator = kl_estimator
        self.num_classes = num_classes
        self.prior, self.train_samples, self.kl_weighting = prior, train_samples, kl_weighting
        self.act = activation(act)
        sizes = [flat_features(input_shape), *hidden, num_classes]
        self.layers = nn.ModuleList(BayesLinear(a, b, rho_init, generator, init, init_scale)
                                    for a, b in pairwise(sizes))

    def _draw(self, n_samples: int, generator: torch.Generator | None) -> list[_Draw]:
        """``n_samples`` draws: per layer the weight (S, out, in), then the bias (S, out)."""
        draws = []
        for layer in self.layers:
            for mu, sigma in layer.posterior():
                eps = torch.randn(n_samples, *mu.shape, generator=generator, device=mu.device,
                                  dtype=mu.dtype)
                draws.append(_Draw(mu, sigma, eps, torch.addcmul(mu, sigma, eps)))  # μ + σε
        return draws

    def _forward(self, x: Tensor, draws: list[_Draw]) -> Tensor:
        """Logits (S, B, C) of the sampled weights, each draw shared by the whole batch."""
        h = x.flatten(1)  # (B, D)
        last = len(self.layers) - 1
        for k in range(len(self.layers)):
            w, b = draws[2 * k].w, draws[2 * k + 1].w  # (S, out, in), (S, out)
            if h.dim() == 2:  # the input is shared by all samples: one GEMM, no (S, B, D) copy
                h = torch.einsum("bi,soi->sbo", h, w) + b.unsqueeze(1)  # (S, B, out)
            else:
                h = torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2))  # (S, B, out)
            if k < last:
                h = self.act(h)
        return h

    @staticmethod
    def _moments(h: Tensor, layer: BayesLinear) -> tuple[Tensor, Tensor]:
        """Mean and std of the layer's outputs given its input h: h·μ + μ_b, √(h²·σ² + σ_b²)."""
        (w_mu, w_sigma), (b_mu, b_sigma) = layer.posterior()
        mean = F.linear(h, w_mu, b_mu)
        return mean, F.linear(h.square(), w_sigma.square(), b_sigma.square()).sqrt()

    @staticmethod
    def _drawn_linear(h: Tensor, layer: BayesLinear, n_samples: int,
                      generator: torch.Generator | None) -> Tensor:
        """The layer with ``n_samples`` weight draws shared by the batch, (S, B, out)."""
        (w_mu, w_sigma), (b_mu, b_sigma) = layer.posterior()
        kw = {"generator": generator, "device": w_mu.device, "dtype": w_mu.dtype}
        w = torch.addcmul(w_mu, w_sigma, torch.randn(n_samples, *w_mu.shape, **kw))
        b = torch.addcmul(b_mu, b_sigma, torch.randn(n_samples, *b_mu.shape, **kw))
        if h.dim() == 2:  # an input shared by all samples: one GEMM, no (S, B, D) copy
            return torch.einsum("bi,soi->sbo", h, w) + b.unsqueeze(1)
        return torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2))

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` posterior samples.

        ``local_reparam="none"`` draws weights shared by the whole batch, as in training.
        Otherwise the first layer (``"first"``) or every layer (``"all"``) samples its outputs
        per example; the first layer's moments are computed once for all samples. Weight
        draws are made ``SAMPLES_PER_DRAW`` samples at a time.

        Args:
            x: Inputs, shape (B, *).
            n_samples: S.
            generator: Source of the weight noise.

        Returns:
            Logits, shape (S, B, C).
        """
        mode = self.local_reparam
        if mode == "none":
            out = [self._forward(x, self._draw(min(SAMPLES_PER_DRAW, n_samples - s), generator))
                   for s in range(0, n_samples, SAMPLES_PER_DRAW)]
            return out[0] if len(out) == 1 else torch.cat(out)
        first = self._moments(x.flatten(1), self.layers[0])  # (B, out) each
        chunk = n_samples if mode == "all" else SAMPLES_PER_DRAW
        out = []
        for start in range(0, n_samples, chunk):
            s = min(chunk, n_samples - start)
            h = draw_outputs(*first, s, generator)  # (s, B, out)
            for k in range(1, len(self.layers)):
                h = self.act(h)
                if is_local(mode, shared_input=False):
                    h = draw_outputs(*self._moments(h, self.layers[k]), s, generator)
                else:
                    h = self._drawn_linear(h, self.layers[k], s, generator)
            out.append(h)
        return out[0] if len(out) == 1 else torch.cat(out)

    def kl(self, draws: list[_Draw] | None = None) -> Tensor:
        """KL[q ‖ p] over all weights, estimated as ``self.kl_estimator`` says.

        Args:
            draws: The weight draws of the Monte Carlo estimates (mean over the S draws of
                log q(w) − log p(w)); not needed for the closed form.
        """
        if self.kl_estimator == "closed_form":
            terms = [self.prior.kl(mu, sigma) for layer in self.layers
                     for mu, sigma in layer.posterior()]
        elif draws is None:
            raise ValueError("the Monte Carlo KL needs weight draws")
        else:
            detach = self.kl_estimator == "mc_detached_mean"
            terms = [mc_kl(d.w, d.sigma, d.eps, self.prior, mu=d.mu if detach else None)
                     for d in draws]
        return torch.stack(terms).sum()

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """Per-example minibatch cost F_i / (n_train / M) (eq. 8), to minimise.

        F_i = π_i KL − Σ_n E_q log p(y_n | x_n, w), divided by the mean minibatch size n/M:
        mean_n NLL + M π_i KL / n. With uniform π_i = 1/M this is mean NLL + KL / n, whose
        sum over an epoch (times the batch sizes) is the negative ELBO; with "blundell"
        weighting the KL weights of one epoch still sum to 1.

        The BbB tutorial's minibatch loss, (log q − log p) / num_batches + Σ_n NLL with
        num_batches = n / B (a float: 60000 / 128), is B times this one with uniform
        weighting and ``kl_estimator="mc_detached_mean"`` (docs/protocols.md §4.4). Adam
        does not see the constant factor B (up to its ε); the tutorial's last, smaller batch
        (96 of 128 examples) weighs its KL 128/96 times more than ours does.

        Args:
            x: Inputs, shape (B, *).
            y: Labels, shape (B,).
            n_train: Training-set size n.
            generator: Source of the weight noise.
            batch: (i, M), the 0-based minibatch index and the number of minibatches.
        """
        draws = self._draw(self.train_samples, generator)
        logits = self._forward(x, draws)  # (S_train, B, C)
        nll = F.cross_entropy(logits.flatten(0, 1), y.repeat(self.train_samples))
        i, m = batch
        weight = 1.0 if self.kl_weighting == "uniform" else m * blundell_weight(i + 1, m)
        if weight == 0.0:
            return nll
        return nll + weight * self.kl(draws) / n_train


def mc_kl(w: Tensor, sigma: Tensor, eps: Tensor, prior: GaussianPrior | ScaleMixturePrior,
          *, mu: Tensor | None = None) -> Tensor:
    """Monte Carlo KL: the mean over draws of Σ_j log q(w_j) − log p(w_j) (eq. 2).

    With ``mu``, log q is log N(w; stop_gradient(μ), σ²), as the BbB tutorial computes it
    (``Normal(self.w_mu.data, σ).log_prob(w)``): the same value, and through w = μ + σε it
    adds the zero-mean gradient −mean_s(ε)/σ to μ (σ's gradient is unchanged, −1/σ).

    Args:
        w: Sampled weights μ + σ·ε, shape (S, *).
        sigma: Posterior stds, shape (*).
        eps: The standard normal noise of ``w``, shape (S, *).
        prior: Anything with an elementwise ``log_prob``.
        mu: The posterior means (*) to detach in log q; None: log q is a function of σ and
            ε only (its μ-gradient is zero).

    Returns:
        A scalar.
    """
    n_samples, n = eps.shape[0], sigma.numel()
    # log q(w) = −log σ − ε²/2 − log(2π)/2 at w = μ + σε: the same value and total gradient
    # as log N(w; μ, σ²), without broadcasting σ over the S draws.
    log_q = -sigma.log().sum() - (0.5 * eps.square().sum() / n_samples + 0.5 * _LOG_2PI * n)
    if mu is not None:
        # −(w − μ̄)²/(2σ²) with w − μ̄ = σε + (μ − μ̄): the cross term −ε(μ − μ̄)/σ is 0 in
        # value and −ε/σ in μ's gradient; the square of (μ − μ̄) adds nothing to either.
        log_q = log_q - ((eps.mean(0) / sigma).detach() * (mu - mu.detach())).sum()
    return log_q - prior.log_prob(w).sum() / n_samples


def build_bbb_gaussian(cfg: BBBGaussianConfig, input_shape: tuple[int, ...], num_classes: int,
                       generator: torch.Generator | None) -> BayesByBackpropMLP:
    """Build Bayes by Backprop with a Gaussian prior."""
    prior = GaussianPrior(math.exp(-cfg.neg_log_sigma))
    return BayesByBackpropMLP(input_shape, num_classes, cfg.hidden, cfg.activation, prior,
                              rho_init=cfg.rho_init, train_samples=cfg.train_samples,
                              kl_weighting=cfg.kl_weighting, kl_estimator=cfg.kl_estimator,
                              init=cfg.init, init_scale=cfg.init_scale,
                              local_reparam=cfg.local_reparam, generator=generator)


def build_bbb_mixture(cfg: BBBMixtureConfig, input_shape: tuple[int, ...], num_classes: int,
                      generator: torch.Generator | None) -> BayesByBackpropMLP:
    """Build Bayes by Backprop with the scale-mixture prior."""
    if not 0.0 <= cfg.pi <= 1.0:
        raise ConfigError(f"bbb_mixture.pi must be in [0, 1], got {cfg.pi}")
    prior = ScaleMixturePrior(cfg.pi, math.exp(-cfg.neg_log_sigma1), math.exp(-cfg.neg_log_sigma2))
    return BayesByBackpropMLP(input_shape, num_classes, cfg.hidden, cfg.activation, prior,
                              rho_init=cfg.rho_init, train_samples=cfg.train_samples,
                              kl_weighting=cfg.kl_weighting, init=cfg.init,
                              init_scale=cfg.init_scale, local_reparam=cfg.local_reparam,
                              generator=generator)


MODELS.register(
    "bbb_gaussian",
    ModelSpec(
        build=build_bbb_gaussian,
        config=BBBGaussianConfig,
        description="Bayes by Backprop, factorised Gaussian posterior, Gaussian prior",
        reference="Blundell et al. 2015, arXiv:1505.05424",
        stochastic=True,
        family="variational",
        shrink={"smoke": SMOKE},
    ),
)
MODELS.register(
    "bbb_mixture",
    ModelSpec(
        build=build_bbb_mixture,
        config=BBBMixtureConfig,
        description="Bayes by Backprop, factorised Gaussian posterior, scale-mixture prior",
        reference="Blundell et al. 2015, arXiv:1505.05424",
        stochastic=True,
        family="variational",
        shrink={"smoke": SMOKE},
    ),
)
