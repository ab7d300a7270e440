"""``hmc``: the Hamiltonian Monte Carlo reference posterior of the registry's MLP.

Full-batch NUTS (Pyro's, :mod:`robustbnn.posterior.hmc`) on the posterior of the registry's
MLP (``hidden``, ``activation``) under an isotropic Gaussian prior N(0, σ²I) on every weight
and bias (σ = ``prior_std``) and the categorical likelihood of the whole training split at
temperature ``temperature``:

    U(θ) = (Σ_n CE(f_θ(x_n), y_n) + ‖θ‖² / (2σ²)) / T.

``chains`` chains start from over-dispersed prior draws (``init_scale`` × a draw of the
prior), run ``warmup`` adaptation iterations (step size and diagonal mass matrix) and keep
``draws`` draws each. Training is this sampling (``ModelSpec.fit``): the draws are stored in
the ``samples`` buffer (chains · draws, P) and cached with the model like any weights, so a
rerun loads them. A posterior sample is one stored draw, chosen as SG-MCMC's are
(:class:`~robustbnn.models.sgmcmc.SGMCMCModel`: distinct draws while S ≤ chains · draws).

Mixing is checked before anything is stored: the rank-normalised split R-hat of every
predictive probability p(y = c | x, θ) on the validation split
(:func:`robustbnn.posterior.diagnostics.summarize`) must not exceed ``rhat_bound``, else the
training cell fails with :class:`~robustbnn.posterior.diagnostics.ChainsNotMixedError` and
nothing is cached. The fit report records R-hat, bulk-ESS, step sizes, divergences,
gradient counts and wall time.

Cost: every leapfrog step evaluates the whole training split, and NUTS takes up to
2^max_tree_depth − 1 steps per iteration, so this is a reference for small tasks only: the
``fidelity`` suite's 49-50-10 tanh MLP on 2,000 7×7 digits (docs/fidelity.md). It is not
in the default suite (``ModelSpec.in_default``).

References:
    Neal, "MCMC using Hamiltonian dynamics", Handbook of MCMC, 2011.
    Hoffman & Gelman, "The No-U-Turn Sampler", JMLR 2014, arXiv:1111.4246.
    Izmailov, Vikram, Hoffman & Wilson, "What Are Bayesian Neural Network Posteriors Really
    Like?", ICML 2021, arXiv:2104.14421 (full-batch HMC as the reference posterior).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor

from robustbnn.config import POSITIVE, POSITIVE_INT, OneOf, Range
from robustbnn.data import DataBundle
from robustbnn.errors import ConfigError
from robustbnn.models.base import MODELS, ModelSpec, PartTrainer
from robustbnn.models.mlp import NetConfig, build_net
from robustbnn.models.sgmcmc import SGMCMCModel
from robustbnn.posterior.diagnostics import check_mixed, summarize
from robustbnn.posterior.hmc import NUTSConfig, run_nuts

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class HMCConfig(NetConfig):
    """The MLP's posterior sampled by NUTS; the sampler's defaults of
    :class:`~robustbnn.posterior.hmc.NUTSConfig` (sized there for ~30 min on 2 CPU cores)."""

    activation: str = "tanh"  # a smooth potential, as the leapfrog error bound assumes
    hidden: tuple[int, ...] = (50,)
    prior_std: float = 0.2 ** 0.5  # σ² = 1/5, Izmailov et al. 2021's prior variance
    temperature: float = 1.0  # T = 1: the Bayes posterior
    # the sampler's defaults, from NUTSConfig (sized there)
    chains: int = NUTSConfig.chains
    warmup: int = NUTSConfig.warmup
    draws: int = NUTSConfig.draws
    max_tree_depth: int = NUTSConfig.max_tree_depth
    target_accept: float = NUTSConfig.target_accept
    init_scale: float = NUTSConfig.init_scale
    rhat_bound: float = 1.1  # robustbnn.posterior.diagnostics.DEFAULT_RHAT_BOUND
    diag_points: int = 200  # validation images whose predictive R-hat / ESS are checked
    # TrainConfig's epochs, lr, batch size and selection are unused: NUTS runs warmup + draws.

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "prior_std": POSITIVE, "temperature": POSITIVE, "chains": Range(2, None),
        "warmup": Range(0, None), "draws": Range(4, None), "max_tree_depth": POSITIVE_INT,
        "target_accept": Range(0, 1, low_open=True, high_open=True),
        "init_scale": POSITIVE, "rhat_bound": Range(1, None), "diag_points": POSITIVE_INT,
    }

    def nuts(self) -> NUTSConfig:
        """The sampler settings."""
        return NUTSConfig(chains=self.chains, warmup=self.warmup, draws=self.draws,
                          max_tree_depth=self.max_tree_depth, target_accept=self.target_accept,
                          init_scale=self.init_scale)


class HMCModel(SGMCMCModel):
    """The MLP with the NUTS draws of its posterior in ``samples`` (chains · draws, P)."""

    def unflatten(self, theta: Tensor) -> dict[str, Tensor]:
        """Flat parameters (P,) -> the named tensors ``functional_call(self, ...)`` takes."""
        return self._layout.unflatten(theta)

    def potential(self, x: Tensor, y: Tensor, *, temperature: float):  # noqa: ANN201
        """U(θ) of the module docstring on the full batch (x, y), for flat θ (P,)."""
        def u(theta: Tensor) -> Tensor:
            logits = torch.func.functional_call(self, self.unflatten(theta), (x,))
            nll = F.cross_entropy(logits, y, reduction="sum")
            return (nll + theta.square().sum() / (2 * self.prior_std**2)) / temperature

        return u

    def draw_probs(self, draws: Tensor, x: Tensor, *, chunk: int = 200) -> Tensor:
        """Softmax of every draw in ``draws`` (K, N, P) on ``x``, shape (K, N, B, C)."""
        flat = draws.reshape(-1, draws.shape[-1])
        with torch.no_grad():
            probs = torch.cat([self._layout.logits(self, x, part).softmax(-1)
                               for part in flat.split(chunk)])  # (K·N, B, C)
        return probs.reshape(*draws.shape[:2], *probs.shape[1:])


def build_hmc(cfg: HMCConfig, input_shape: tuple[int, ...], num_classes: int,
              generator: torch.Generator | None) -> HMCModel:
    """The MLP (initialised from ``generator``; replaced by a draw when sampled) and an empty
    buffer for chains · draws samples.

    Raises:
        ConfigError: For an MLP with dropout or a CNN: the potential is the plain MLP's.
    """
    if cfg.arch != "mlp":
        raise ConfigError(f"hmc samples the MLP's posterior only, got arch={cfg.arch!r}; "
                          f"--set hmc.arch=mlp")
    return HMCModel(build_net(cfg, input_shape, num_classes, generator),
                    prior_std=cfg.prior_std, collect_at=(),
                    num_samples=cfg.chains * cfg.draws)


def fit_hmc(model: HMCModel, cfg: HMCConfig, data: DataBundle,
            trainer: PartTrainer) -> dict[str, Any]:
    """Sample the posterior with NUTS, refuse chains that have not mixed, store the draws.

    Raises:
        ChainsNotMixedError: When the largest split R-hat exceeds ``cfg.rhat_bound``.
    """
    generator = trainer.generator("nuts")
    x, y = data.train.x, data.train.y
    init = torch.randn(cfg.chains, model.samples.shape[1], generator=generator)
    init = (init * cfg.init_scale * cfg.prior_std).to(x)  # (chains, P), over-dispersed
    log.info("hmc: %d chains x (%d warm-up + %d draws) of NUTS on %d points, P = %d",
             cfg.chains, cfg.warmup, cfg.draws, len(y), init.shape[1])
    run = run_nuts(model.potential(x, y, temperature=cfg.temperature), init, cfg.nuts(),
                   generator=generator, progress=trainer.progress)
    draws = run.samples  # (chains, draws, P)
    mixing = summarize(model.draw_probs(draws, data.val.x[:cfg.diag_points]))
    check_mixed(mixing, bound=cfg.rhat_bound)
    with torch.no_grad():
        model.samples.copy_(draws.reshape(-1, draws.shape[-1]))
        model.n_collected.fill_(draws.shape[0] * draws.shape[1])
        for p, v in zip(model.net.parameters(), model.unflatten(draws[0, -1]).values(),
                        strict=True):
            p.copy_(v)
    log.info("hmc: max split R-hat %.3f, min bulk-ESS %.0f, %.0f s", mixing.max_rhat,
             mixing.min_ess, run.wall_s)
    return {"seconds": run.wall_s, "mixing": dataclasses.asdict(mixing),
            "chains": [dataclasses.asdict(s) for s in run.stats]}


# Smoke: checks the pipeline, not the mixing (10 draws cannot show R-hat < 1.1).
_SMOKE = {"hidden": (8,), "chains": 2, "warmup": 10, "draws": 10, "max_tree_depth": 3,
          "rhat_bound": 1e6, "diag_points": 20}

MODELS.register("hmc", ModelSpec(
    build=build_hmc,
    config=HMCConfig,
    description="HMC reference: full-batch NUTS, 4 chains x 200 draws (small tasks only)",
    reference="Hoffman & Gelman 2014 (NUTS); Izmailov et al. 2021, arXiv:2104.14421",
    stochastic=True,
    family="MCMC",
    shrink={"smoke": _SMOKE},
    fit=fit_hmc,
    in_default=False,
))
