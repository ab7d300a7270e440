"""Bayesian hypernetworks over the weight-norm scales of an MLP (``bhn_iaf``, ``bhn_realnvp``).

The primary net is a weight-normalised MLP, θ_j = g_j · v_j / ‖v_j‖ for every output unit j
of every layer. Only the scales g (Σ_layers #outputs of them) are random: g = h(ε) with
ε ~ N(0, I) and h a normalising flow (a :class:`~robustbnn.flows.LinearFlow` then IAF steps
or RealNVP couplings). The directions v and the biases are point estimates. The training
objective is the per-example negative ELBO with a N(0, 1) prior on g and one ε per minibatch.

Sampling shares exact work across samples: x · v̂ does not depend on g, and g only multiplies
the pre-activations, so the first layer is one (B, H) matmul for all S samples; later layers
take per-sample inputs through one matmul over S·B rows with the shared v̂.

Softmax clipping: the paper clips the softmax outputs to (0.001, 0.999) in the training loss
and in ``predict_proba``, and attacks the unclipped output ``y_unclipped`` [CODE BHNs.py].
Here the clip is applied in :meth:`BayesianHypernetMLP.loss` only; :meth:`sample_logits`
returns unclipped logits, which is what the attacks and the harness consume.

Where this differs from the authors' code (``MLPWeightNorm_BHN``): the data-dependent init
uses the first training minibatch and follows the RealNVP permutations (see
:meth:`BayesianHypernetMLP.init_from_data_`); the RealNVP couplings are weight-normalised by
default, as the paper's text recommends (``coupling_wn=False`` gives the code's layer); the KL
estimate keeps the constant-in-θ term log N(ε), which does not change any gradient.

The anomaly-detection script ``dk_anomaly_detection.py`` builds its hnet differently
(docs/protocols.md §1.5); each difference is a setting whose default keeps ``BHNs.py``'s:
``noise_std=0.01`` (its ε ~ N(0, 0.01²)), ``coupling_order="reverse"`` (a ``ReverseLayer``
before every coupling), ``data_init=False`` (it has none) and ``primary_init="glorot"``
(``stochasticDenseLayer2``'s Glorot-uniform directions).

References:
    Krueger, Huang, Islam, Turner, Lacoste & Courville, "Bayesian Hypernetworks",
    arXiv:1710.04759, 2017. docs/protocols.md §1.1–1.3; code ``CW-Huang/BayesianHypernet``
    (``BHNs.py::MLPWeightNorm_BHN``, ``Base_BHN``).
"""

from __future__ import annotations

import dataclasses
import math
from itertools import pairwise
from typing import ClassVar

import torch
from torch import Tensor, nn

from robustbnn.config import ADDED_LATER, NON_NEGATIVE, POSITIVE, POSITIVE_INT, OneOf, Range
from robustbnn.errors import ConfigError
from robustbnn.flows import Hypernet
from robustbnn.flows.chain import COUPLING_ORDERS
from robustbnn.models._blocks import sample_blocks
from robustbnn.models.base import MODELS, SMOKE, BayesianModule, ModelSpec
from robustbnn.models.mlp import MLPConfig
from robustbnn.models.nets import activation, flat_features

_LOG_2PI = math.log(2 * math.pi)
# Initialisations of the primary net's directions v (``WeightNormMLP``'s ``init``).
PRIMARY_INITS = ("normal", "glorot")


@dataclasses.dataclass(frozen=True)
class BHNConfig(MLPConfig):
    """A BHN over the weight-norm scales of an MLP (flow kind = the registry name)."""

    hidden: tuple[int, ...] = (800, 800)  # MNIST-5000 (A): 2 hidden layers of 800 [SEED §4.2]
    coupling: int = 8  # IAF steps / RealNVP couplings; 8 in Table 1 & Fig. 3 [SEED §4.2]
    flow_hidden: int = 200  # ReLU units of each MADE / coupling MLP [SEED §4]
    coupling_wn: bool = True  # RealNVP: WN couplings [SEED §3.3]; False = MLPWeightNorm_BHN
    prior_std: float = 1.0  # p(g) = N(0, 1) [SEED §4; CODE lbda = 1]
    prob_clip: float = 0.001  # softmax clipped to (0.001, 0.999) in the loss [SEED §3.3]
    init_log_scale: float = -7.0  # LinearFlow w ~ N(-7, 0.01²): q starts at std ≈ 0.002 [CODE]
    data_init: bool = True  # data-dependent init on the first minibatch [CODE --reinit 1]
    grad_clip_norm: float = 10.0  # total-norm constraint [CODE Base_BHN.max_norm]
    grad_clip_value: float = 5.0  # then elementwise clip ±5 [CODE Base_BHN.clip_grad]
    # Settings of the anomaly-detection script's hnet (docs/protocols.md §1.5), added later:
    # their defaults keep BHNs.py's hnet and every earlier cache key and cell id.
    # σ of ε ~ N(0, σ²I): 1 [SEED, CODE BHNs.py]; 0.01 [CODE dk_anomaly_detection.py]
    noise_std: float = dataclasses.field(default=1.0, metadata=ADDED_LATER)
    # RealNVP: "permute" (random permutation between couplings, BHNs.py) or "reverse"
    # (ReverseLayer before every coupling, dk_anomaly_detection.py)
    coupling_order: str = dataclasses.field(default="permute", metadata=ADDED_LATER)
    # Primary-net directions v: "normal" N(0, 0.05²) [CODE WeightNormLayer] or "glorot"
    # U(±sqrt(6/(fan_in+fan_out))) [CODE stochasticDenseLayer2, dk_anomaly_detection.py]
    primary_init: str = dataclasses.field(default="normal", metadata=ADDED_LATER)

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "coupling": NON_NEGATIVE, "flow_hidden": POSITIVE_INT, "prior_std": POSITIVE,
        "prob_clip": Range(0, 0.5, high_open=True), "noise_std": POSITIVE,
        "coupling_order": OneOf(COUPLING_ORDERS), "primary_init": OneOf(PRIMARY_INITS),
    }


def clipped_nll(logits: Tensor, y: Tensor, clip: float) -> Tensor:
    """Mean −log p(y | x) with the softmax clipped to (clip, 1 − clip) before the log.

    Args:
        logits: Shape (B, C).
        y: Labels, shape (B,).
        clip: The clip level (0.001 in the paper; 0 = plain cross-entropy).

    Returns:
        A scalar. As in the paper, the gradient is zero for examples whose true-class
        probability is outside the clip range.
    """
    p = logits.softmax(-1).gather(-1, y[:, None]).squeeze(-1)  # (B,)
    if clip > 0:
        p = p.clamp(clip, 1 - clip)
    return -p.log().mean()


def gaussian_log_prior(theta: Tensor, std: float) -> Tensor:
    """log N(θ; 0, std² I) summed over the last axis: shape (...,) for θ of shape (..., D)."""
    d = theta.shape[-1]
    return (-0.5 * (theta / std).square().sum(-1) - d * math.log(std) - 0.5 * d * _LOG_2PI)


def _direction(n_in: int, n_out: int, init: str, generator: torch.Generator | None) -> Tensor:
    """A layer's initial directions v, shape (out, in), drawn as ``init`` names."""
    if init == "normal":
        return 0.05 * torch.randn(n_out, n_in, generator=generator)
    bound = math.sqrt(6 / (n_in + n_out))
    return (2 * torch.rand(n_out, n_in, generator=generator) - 1) * bound


class WeightNormMLP(nn.Module):
    """An MLP whose weights are θ_j = g_j · v_j / ‖v_j‖, evaluated for S scale vectors at once.

    Args:
        sizes: Layer widths [D_in, *hidden, C].
        act: Hidden nonlinearity name.
        generator: Source of the directions v; biases start at 0.
        init: One of :data:`PRIMARY_INITS`: ``"normal"``, v ~ N(0, 0.05²) [CODE BHNs.py
            ``WeightNormLayer(W=Normal(0.05))``]; ``"glorot"``, v ~ U(±sqrt(6/(in + out)))
            [CODE dk_anomaly_detection.py ``stochasticDenseLayer2(W=GlorotUniform())``].
            Only the directions v/‖v‖ enter the net, but ‖v‖ sets how fast Adam turns them.

    Raises:
        ConfigError: For an unknown ``init``.
    """

    def __init__(self, sizes: list[int], act: str, *,
                 generator: torch.Generator | None = None, init: str = "normal") -> None:
        super().__init__()
        if init not in PRIMARY_INITS:
            raise ConfigError(f"unknown primary_init {init!r}; known: {list(PRIMARY_INITS)}")
        self.act = activation(act)
        self.out_sizes = sizes[1:]
        self.directions = nn.ParameterList(
            nn.Parameter(_direction(n_in, n_out, init, generator))
            for n_in, n_out in pairwise(sizes))
        self.biases = nn.ParameterList(nn.Parameter(torch.zeros(n)) for n in self.out_sizes)

    @property
    def num_scales(self) -> int:
        """Σ_layers #outputs: the dimension of g."""
        return sum(self.out_sizes)

    def unit_directions(self) -> list[Tensor]:
        """v / ‖v‖ per layer, each of shape (out, in)."""
        return [v / v.norm(dim=1, keepdim=True) for v in self.directions]

    def forward(self, x: Tensor, g: Tensor) -> Tensor:
        """Logits for inputs x of shape (B, *) and scales g of shape (S, num_scales): (S, B, C).

        x·v̂₁ᵀ is computed once for all samples; the samples then go through the net in
        cache-sized blocks (:func:`~robustbnn.models._blocks.sample_blocks`).
        """
        directions = self.unit_directions()
        shared = x.flatten(1) @ directions[0].T  # (B, H): x·v̂ does not depend on g
        blocks, start = [], 0
        for size in sample_blocks(g.shape[0], shared.shape[0], max(self.out_sizes),
                                  shared.device):
            blocks.append(self._scaled(shared, directions, g[start : start + size]))
            start += size
        return blocks[0] if len(blocks) == 1 else torch.cat(blocks)

    def _scaled(self, shared: Tensor, directions: list[Tensor], g: Tensor) -> Tensor:
        """Logits (S, B, C) of the scales g (S, num_scales), from the shared x·v̂₁ᵀ (B, H)."""
        last = len(self.out_sizes) - 1
        scales = g.split(self.out_sizes, dim=-1)
        h = shared
        for i, (v, b, gi) in enumerate(zip(directions, self.biases, scales, strict=True)):
            if i > 0:
                h = h @ v.T  # one matmul over S·B rows with the shared v̂
            # b + (h v̂ᵀ) ⊙ g in one pass (addcmul) instead of two: (S, B, H)
            h = torch.addcmul(b, h, gi[:, None, :])
            if i < last:
                h = self.act(h)
        return h

    @torch.no_grad()
    def init_from_data_(self, x: Tensor, g: Tensor) -> Tensor:
        """Data-dependent init: standardise every pre-activation over the batch x.

        Sets each bias to −mean/std of g·(x·v̂) and returns the factor 1/std by which the
        scales must be multiplied (Salimans & Kingma 2016, §3; ``Base_BHN._init_pnet`` [CODE]).

        Args:
            x: A batch of training inputs, shape (B, *).
            g: The scales to standardise, shape (num_scales,).

        Returns:
            The multiplicative correction of g, shape (num_scales,).
        """
        h = x.flatten(1)
        last = len(self.out_sizes) - 1
        factors = []
        for i, (v, b, gi) in enumerate(zip(self.unit_directions(), self.biases,
                                           g.split(self.out_sizes), strict=True)):
            t = (h @ v.T) * gi  # (B, H)
            mean = t.mean(0)
            std = (t - mean).square().mean(0).sqrt()
            std = torch.where(std > 0, std, torch.ones_like(std))
            b.copy_(-mean / std)
            factors.append(1 / std)
            h = (t - mean) / std
            if i < last:
                h = self.act(h)
        return torch.cat(factors)


class HypernetClassifier(BayesianModule):
    """A classifier whose parameters θ (all or some) are drawn from a flow :class:`Hypernet`.

    Subclasses set ``hypernet``, ``prior_std`` and ``prob_clip`` and implement
    :meth:`primary_logits`; sampling and the ELBO are shared.
    """

    hypernet: Hypernet
    prior_std: float
    prob_clip: float

    def primary_logits(self, x: Tensor, theta: Tensor) -> Tensor:
        """Logits, shape (S, B, C), of the primary net for x of shape (B, *), θ of shape (S, D)."""
        raise NotImplementedError

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Unclipped logits of ``n_samples`` draws of θ, shape (S, B, C)."""
        theta, _ = self.hypernet.rsample(n_samples, generator=generator, device=x.device,
                                         dtype=x.dtype)  # (S, D)
        return self.primary_logits(x, theta)

    def elbo_terms(self, x: Tensor, y: Tensor, *,
                   generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
        """One-sample estimates of the clipped NLL (mean over the batch) and of KL(q ‖ p).

        The KL estimate is log q(θ) − log p(θ) at one θ = h(ε) shared by the minibatch
        [SEED App. B eq. 8–10; CODE ``Base_BHN._get_elbo``]. The code drops log N(ε; 0, I),
        whose gradient is zero; it is kept here so the value is an unbiased KL estimate.
        """
        theta, log_q = self.hypernet.rsample(1, generator=generator, device=x.device,
                                             dtype=x.dtype)
        nll = clipped_nll(self.primary_logits(x, theta)[0], y, self.prob_clip)
        kl = (log_q - gaussian_log_prior(theta, self.prior_std))[0]
        return nll, kl

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """Per-example negative ELBO: clipped NLL + KL / n_train (one ε per minibatch)."""
        nll, kl = self.elbo_terms(x, y, generator=generator)
        return nll + kl / n_train


class BayesianHypernetMLP(HypernetClassifier):
    """A weight-normalised MLP whose scales g come from a flow hypernet.

    Args:
        input_shape: Shape of one input, e.g. (1, 28, 28).
        num_classes: C.
        cfg: The config.
        flow: ``"iaf"`` or ``"realnvp"``.
        generator: Source of every random draw at construction.
    """

    def __init__(self, input_shape: tuple[int, ...], num_classes: int, cfg: BHNConfig,
                 flow: str, *, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.prior_std, self.prob_clip = cfg.prior_std, cfg.prob_clip
        sizes = [flat_features(input_shape), *cfg.hidden, num_classes]
        self.primary = WeightNormMLP(sizes, cfg.activation, generator=generator,
                                     init=cfg.primary_init)
        self.hypernet = Hypernet(self.primary.num_scales, flow, cfg.coupling, cfg.flow_hidden,
                                 log_scale_mean=cfg.init_log_scale,
                                 coupling_weight_norm=cfg.coupling_wn,
                                 coupling_order=cfg.coupling_order, noise_std=cfg.noise_std,
                                 generator=generator)
        # A buffer, so that a checkpoint restored from the cache is not re-initialised.
        self.register_buffer("needs_init", torch.tensor(cfg.data_init))

    def primary_logits(self, x: Tensor, theta: Tensor) -> Tensor:
        """Logits, shape (S, B, C), for scales θ = g of shape (S, num_scales)."""
        return self.primary(x, theta)

    @torch.no_grad()
    def init_from_data_(self, x: Tensor) -> None:
        """Data-dependent init from one batch, so that every unit starts standardised.

        With g = b, the LinearFlow shift (its output at ε = 0) routed through the flow's
        permutations, b is multiplied by 1/std of g·(x·v̂) and the primary biases are set to
        −mean/std [CODE ``Base_BHN._init_pnet``, which uses the last 64 training examples;
        ``fit`` calls :meth:`loss` on a random minibatch first, and that batch is used here].
        Exact for 0 flow steps; the couplings and IAF steps start near the identity (weights
        ~1e-4), so it is nearly exact with them. (The BHN code rescales b without undoing the
        RealNVP permutations, which scrambles the init across units; this does not.)
        """
        shift = self.hypernet.linear.shift
        index = self.hypernet.flow.output_index(len(shift)).to(shift.device)
        shift[index] *= self.primary.init_from_data_(x, shift[index])
        self.needs_init.fill_(False)

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """Per-example negative ELBO; the first call with ``data_init`` initialises from x."""
        if self.needs_init:
            self.init_from_data_(x)
        return super().loss(x, y, n_train=n_train, generator=generator, batch=batch)


def _builder(flow: str):  # noqa: ANN202
    def build(cfg: BHNConfig, input_shape: tuple[int, ...], num_classes: int,
              generator: torch.Generator | None) -> BayesianHypernetMLP:
        return BayesianHypernetMLP(input_shape, num_classes, cfg, flow, generator=generator)

    build.__doc__ = f"Build a weight-norm BHN with a {flow} hypernet."
    return build


build_bhn_iaf = _builder("iaf")
build_bhn_realnvp = _builder("realnvp")

MODELS.register(
    "bhn_iaf",
    ModelSpec(
        build=build_bhn_iaf,
        config=BHNConfig,
        description="Bayesian hypernet: IAF (MADE) flow over weight-norm scales",
        reference="Krueger et al. 2017, arXiv:1710.04759",
        stochastic=True,
        family="hypernetwork",
        shrink={"smoke": SMOKE},
    ),
)
MODELS.register(
    "bhn_realnvp",
    ModelSpec(
        build=build_bhn_realnvp,
        config=BHNConfig,
        description="Bayesian hypernet: RealNVP flow over weight-norm scales",
        reference="Krueger et al. 2017, arXiv:1710.04759",
        stochastic=True,
        family="hypernetwork",
        shrink={"smoke": SMOKE},
    ),
)
