"""Laplace approximation of the MLE network, fitted post hoc with laplace-torch.

The network trains exactly as ``mlp`` (maximum likelihood with Adam). After the best epoch is
restored, :meth:`LaplaceNet.after_fit` hands the MAP network to laplace-torch, which fits the
Gaussian posterior N(θ_MAP, P⁻¹) over the last layer (or all weights) with a
Kronecker-factored (KFAC), diagonal or full generalised Gauss-Newton curvature, and sets the
prior precision by maximising its marginal likelihood. The posterior's factors are copied into
buffers, so a model loaded from the cache samples without fitting anything again.

Samples are weight draws pushed through the network (the MC predictive), not laplace-torch's
probit approximation: they stay differentiable in x, which attacks need (laplace-torch detaches
its own predictive unless ``enable_backprop``).

References:
    Daxberger et al., "Laplace Redux -- Effortless Bayesian Deep Learning", NeurIPS 2021,
    arXiv:2106.14806.
    MacKay, "A Practical Bayesian Framework for Backpropagation Networks", Neural
    Computation 1992.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import logging
import warnings
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from torch import Tensor, nn

from robustbnn.config import POSITIVE, POSITIVE_INT, OneOf, Range
from robustbnn.errors import ConfigError
from robustbnn.models._blocks import sample_blocks
from robustbnn.models.base import MODELS, SMOKE, ModelSpec, NetWrapper
from robustbnn.models.mlp import DropoutMLP, MLEConfig, build_net

if TYPE_CHECKING:
    from robustbnn.data import Split

log = logging.getLogger(__name__)

# Hessian structures per weight subset. All weights with a full covariance is left out: its
# buffer holds P² floats (1.6e12 for 784-800-800-10).
STRUCTURES = {"last_layer": ("kron", "diag", "full"), "all": ("kron", "diag")}


def _import_quietly(module: str) -> Any:
    """Import a laplace-torch module without its import-time noise: INFO lines on the root
    logger (optional backends such as the old asdfghjkl are not installed) and its backends'
    ``torch.jit.script`` deprecation warnings."""
    previous = logging.root.manager.disable
    logging.disable(logging.INFO)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, message=".*jit.script")
            return importlib.import_module(module)
    finally:
        logging.disable(previous)


@dataclasses.dataclass(frozen=True)
class LaplaceConfig(MLEConfig):
    """The MLE network of ``mlp`` with a Laplace posterior fitted after training."""

    subset_of_weights: str = "last_layer"  # or "all" (MLP only); Laplace Redux's default
    hessian_structure: str = "kron"  # "kron", "diag" or (last layer only) "full"
    # The marginal likelihood's starting point; with marglik=False, the prior itself.
    prior_precision: float = 1.0
    marglik: bool = True  # optimise the prior precision by the marginal likelihood
    # Minibatch of the curvature pass. KFAC sums each factor over minibatches before taking
    # the Kronecker product, so this changes the posterior slightly.
    fit_batch_size: int = 256

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "prior_precision": POSITIVE, "fit_batch_size": POSITIVE_INT,
        # each subset supports its own structures; all weights of an MLP only
        "subset_of_weights": OneOf(tuple(STRUCTURES), needs=(
            *((s, "hessian_structure", OneOf(h)) for s, h in STRUCTURES.items()),
            ("all", "arch", OneOf(("mlp",))))),
        "hessian_structure": OneOf(tuple(dict.fromkeys(h for v in STRUCTURES.values()
                                                       for h in v))),
    }


class _MAPLogits(nn.Module):
    """The MAP network as laplace-torch takes it: x -> logits, shape (B, C)."""

    def __init__(self, net: DropoutMLP) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: Tensor) -> Tensor:
        """Logits of the deterministic network, shape (B, C)."""
        return self.net.sample_logits(x, 1)[0]


def _kron_sizes(param: Tensor) -> tuple[int, ...]:
    """Sides of laplace-torch's Kronecker factors of a parameter (a bias has one block)."""
    # A (out, in) weight has an out × out and an in × in factor, a bias one dense out × out.
    return tuple(param.shape) if param.ndim == 2 else (param.numel(),)


class LaplaceNet(NetWrapper):
    """The MLE network and the Gaussian posterior that laplace-torch fitted around it.

    The posterior mean is the network's own weights; its covariance lives in buffers whose
    shapes are fixed at build: for ``kron``, the eigenvectors and eigenvalues of each
    parameter's Kronecker factors (laplace-torch's ``KronDecomposed``) with the prior
    precision; for ``diag``, the posterior variances; for ``full``, the posterior scale
    (a square root of the covariance). Before :meth:`after_fit` runs (validation during
    training) the model is the MAP network.

    Args:
        net: The deterministic network (no dropout).
        cfg: Weight subset, Hessian structure and prior settings.
    """

    def __init__(self, net: DropoutMLP, cfg: LaplaceConfig) -> None:
        super().__init__(net)
        self.subset, self.structure = cfg.subset_of_weights, cfg.hessian_structure
        self.prior_init, self.marglik = cfg.prior_precision, cfg.marglik
        self.fit_batch_size = cfg.fit_batch_size
        self.register_buffer("fitted", torch.zeros((), dtype=torch.bool))
        self.register_buffer("prior_precision", torch.full((1,), cfg.prior_precision))
        params = self._params()
        self.n_params = sum(p.numel() for p in params)
        self._kron: list[list[tuple[str, str]]] = []  # per parameter: (vectors, values) names
        if self.structure == "diag":
            self.register_buffer("posterior_variance", torch.zeros(self.n_params))
        elif self.structure == "full":
            self.register_buffer("posterior_scale", torch.zeros(self.n_params, self.n_params))
        else:
            for i, param in enumerate(params):
                names = []
                for k, side in enumerate(_kron_sizes(param)):
                    names.append((f"kron_{i}_{k}_vectors", f"kron_{i}_{k}_values"))
                    self.register_buffer(names[-1][0], torch.zeros(side, side))
                    self.register_buffer(names[-1][1], torch.zeros(side))
                self._kron.append(names)

    def _params(self) -> list[nn.Parameter]:
        """The parameters the posterior covers, in laplace-torch's order."""
        if self.subset == "last_layer":
            return list(self.net.layers[-1].parameters())
        return list(self.net.parameters())

    def after_fit(self, train: Split, val: Split, *,
                  generator: torch.Generator | None = None) -> None:
        """Fit laplace-torch's posterior on ``train`` and copy it into the buffers.

        Deterministic: neither the curvature nor the marginal likelihood draws anything, so
        ``generator`` and ``val`` are unused. laplace-torch works on a copy of the network,
        so the model's own modules gain no hooks.
        """
        laplace = _import_quietly("laplace")  # 2 s: only processes that fit a Laplace pay it
        from torch.utils.data import DataLoader, TensorDataset

        extra = {}
        if self.subset == "last_layer":
            extra["last_layer_name"] = f"net.layers.{len(self.net.layers) - 1}"
        la = laplace.Laplace(_MAPLogits(copy.deepcopy(self.net)), "classification",
                             subset_of_weights=self.subset,
                             hessian_structure=self.structure,
                             prior_precision=self.prior_init, **extra)
        la.fit(DataLoader(TensorDataset(train.x, train.y), batch_size=self.fit_batch_size))
        if self.marglik:
            with warnings.catch_warnings():
                # A reminder that its predictive defaults to probit; ours samples weights.
                warnings.filterwarnings("ignore", message="By default `link_approx`")
                la.optimize_prior_precision(method="marglik", init_prior_prec=self.prior_init)
        with torch.no_grad():
            self.prior_precision.copy_(la.prior_precision.reshape(1))
            if self.structure == "diag":
                self.posterior_variance.copy_(la.posterior_variance)
            elif self.structure == "full":
                self.posterior_scale.copy_(la.posterior_scale)
            else:
                for names, vectors, values in zip(self._kron, la.H.eigenvectors,
                                                  la.H.eigenvalues, strict=True):
                    for (vec_name, val_name), vec, val in zip(names, vectors, values,
                                                              strict=True):
                        self.get_buffer(vec_name).copy_(vec)
                        self.get_buffer(val_name).copy_(val)
            self.fitted.fill_(True)
        log.info("laplace (%s, %s): prior precision %.4g%s", self.subset, self.structure,
                 self.prior_precision.item(), " (marginal likelihood)" if self.marglik else "")

    def _noise(self, n_samples: int, generator: torch.Generator | None, like: Tensor) -> Tensor:
        """Draws of θ − θ_MAP from N(0, P⁻¹), shape (S, P), as laplace-torch's ``sample``."""
        z = torch.randn(n_samples, self.n_params, generator=generator, device=like.device,
                        dtype=like.dtype)
        if self.structure == "diag":
            return z * self.posterior_variance.sqrt()
        if self.structure == "full":
            return z @ self.posterior_scale.T
        KronDecomposed = _import_quietly("laplace.utils.matrix").KronDecomposed  # noqa: N806

        vectors = [[self.get_buffer(v) for v, _ in names] for names in self._kron]
        values = [[self.get_buffer(v) for _, v in names] for names in self._kron]
        # laplace-torch's KronLaplace.posterior_precision: H · (1 / temperature) + prior,
        # with temperature 1; P^(-1/2) z has covariance P⁻¹.
        precision = KronDecomposed(vectors, values) + self.prior_precision
        return precision.bmm(z.unsqueeze(1), exponent=-0.5).squeeze(1)

    def _draws(self, n_samples: int, generator: torch.Generator | None) -> list[Tensor]:
        """Posterior samples of each covered parameter, shape (S, *param.shape)."""
        params = self._params()
        noise = self._noise(n_samples, generator, params[0]).split(
            [p.numel() for p in params], dim=1)
        return [p + e.view(n_samples, *p.shape) for p, e in zip(params, noise, strict=True)]

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` weight draws from the Laplace posterior, shape (S, B, C)."""
        if not self.fitted:  # training's validation, before after_fit: the MAP network
            return self.net.sample_logits(x, n_samples)
        net = self.net
        h = x.flatten(1) if net.features is None else net.features(x)  # (B, D)
        if self.subset == "last_layer":
            for layer in net.layers[:-1]:  # the features are exact, shared by all samples
                h = net.act(layer(h))
            weight, bias = self._draws(n_samples, generator)  # (S, C, H), (S, C)
            return torch.einsum("bh,sch->sbc", h, weight) + bias.unsqueeze(1)
        # All weights: each block of samples carries its own weights, (S, B, D) activations.
        width = max(h.shape[1], *(layer.out_features for layer in net.layers),
                    -(-self.n_params // max(1, h.shape[0])))  # weights count as activations
        blocks = []
        for size in sample_blocks(n_samples, h.shape[0], width, x.device):
            draws, out = self._draws(size, generator), h
            for i in range(len(net.layers)):
                weight, bias = draws[2 * i], draws[2 * i + 1]  # (S, out, in), (S, out)
                out = torch.matmul(out, weight.transpose(1, 2)) + bias.unsqueeze(1)
                out = out if i == len(net.layers) - 1 else net.act(out)
            blocks.append(out)
        return blocks[0] if len(blocks) == 1 else torch.cat(blocks)  # (S, B, C)


def build_laplace(cfg: LaplaceConfig, input_shape: tuple[int, ...], num_classes: int,
                  generator: torch.Generator | None) -> LaplaceNet:
    """Build the MLE network (as ``mlp`` does) with empty posterior buffers.

    Raises:
        ConfigError: For an unsupported subset and structure, a CNN with all weights, or a
            prior precision or batch size that is not positive.
    """
    structures = STRUCTURES.get(cfg.subset_of_weights)
    if structures is None:
        raise ConfigError(f"laplace: unknown subset_of_weights {cfg.subset_of_weights!r}; "
                          f"known: {sorted(STRUCTURES)}")
    if cfg.hessian_structure not in structures:
        raise ConfigError(
            f"laplace: hessian_structure {cfg.hessian_structure!r} is not supported with "
            f"subset_of_weights={cfg.subset_of_weights!r}; supported: {list(structures)}"
            + (" (a full covariance of all weights has P² entries)"
               if cfg.hessian_structure == "full" else ""))
    if cfg.subset_of_weights == "all" and cfg.arch != "mlp":
        raise ConfigError("laplace: subset_of_weights='all' samples the weights of an MLP "
                          f"only, not arch={cfg.arch!r}; use subset_of_weights='last_layer'")
    if not cfg.prior_precision > 0:
        raise ConfigError(f"laplace: prior_precision must be > 0, got {cfg.prior_precision}")
    if cfg.fit_batch_size < 1:
        raise ConfigError(f"laplace: fit_batch_size must be >= 1, got {cfg.fit_batch_size}")
    return LaplaceNet(build_net(cfg, input_shape, num_classes, generator), cfg)


MODELS.register(
    "laplace",
    ModelSpec(
        build=build_laplace,
        config=LaplaceConfig,
        description="Laplace approximation of the MLE MLP (laplace-torch): last-layer KFAC, "
                    "prior precision by marginal likelihood, weight samples",
        reference="Daxberger et al. 2021 (Laplace Redux, NeurIPS), arXiv:2106.14806; "
                  "MacKay 1992",
        stochastic=True,
        family="ensemble & post-hoc",
        version="1",
        shrink={"smoke": SMOKE},
    ),
)
