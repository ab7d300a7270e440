"""Base class of registry models, the model spec, and the ``MODELS`` registry."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import os
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.contract.types import check_sample_logits
from robustbnn.registry import Registry

if TYPE_CHECKING:
    from robustbnn.data import DataBundle, Split


class BayesianModule(nn.Module):
    """A classifier with a posterior to sample from.

    Subclasses implement :meth:`sample_logits`; the default :meth:`loss` is the negative
    log-likelihood of one posterior sample, which is maximum likelihood for deterministic
    models and MC-dropout training for dropout models. Variational models override
    :meth:`loss` with their per-example ELBO (NLL + KL / N).

    The lifecycle, as :func:`~robustbnn.training.fit.fit` runs it: for each epoch, :meth:`loss` on
    every minibatch, then :meth:`on_epoch_end` (methods that collect during training, e.g. SWAG),
    then validation; after the last epoch the best epoch's weights are restored and
    :meth:`after_fit` runs once (post-hoc methods: Laplace, temperature scaling), under
    ``torch.enable_grad()``. Everything these hooks compute must live in parameters or
    buffers: the cache stores the state dict after :meth:`after_fit`, and a cache hit loads
    it without running any hook.
    """

    num_classes: int

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` posterior samples.

        Args:
            x: Inputs in [0, 1], shape (B, 1, 28, 28) or (B, D).
            n_samples: S, the number of posterior samples.
            generator: Source of all randomness in the call.

        Returns:
            Logits, shape (S, B, C).
        """
        raise NotImplementedError

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """The per-example training objective for a minibatch (a scalar to minimise).

        Args:
            x: Inputs, shape (B, *).
            y: Labels, shape (B,).
            n_train: Size of the training set, to weigh per-dataset terms such as the KL.
            generator: Source of randomness.
            batch: (i, M): this minibatch's 0-based index in the epoch and the number of
                minibatches, for per-minibatch KL weighting (Blundell et al. 2015, eq. 9).
        """
        out = self.sample_logits(x, 1, generator=generator)  # (1, B, C)
        # The contract's shape and dtype clauses, here too: a plug-in's wrong shape would
        # otherwise fail inside cross_entropy. A NaN loss is the training loop's to report.
        check_sample_logits(out, 1, x, getattr(self, "num_classes", -1), type(self).__name__,
                            finite=False)
        return F.cross_entropy(out[0], y)

    def on_epoch_end(self, epoch: int, *, generator: torch.Generator | None = None) -> None:
        """Called after the optimizer steps of each epoch (1-based), before validation.

        Runs under ``torch.no_grad()``. The default does nothing.
        """

    def after_fit(self, train: Split, val: Split, *,
                  generator: torch.Generator | None = None) -> None:
        """Called once after training, on the restored best-epoch weights, before caching.

        Runs under ``torch.enable_grad()`` (validation runs under ``no_grad``), with the
        training and validation splits already on the model's device. Store the result in
        parameters or buffers (registered before training, with their final shapes), so the
        cache keeps it. The default does nothing.

        Args:
            train: The training split.
            val: The validation split (may be empty: ``len(val) == 0``).
            generator: Source of any randomness.
        """


class NetWrapper(BayesianModule):
    """A posterior built around one network that trains by its own loss (``self.net``).

    Post-hoc and trajectory methods (Laplace, temperature scaling, SWAG) train exactly as the
    network they wrap; their posterior comes from :meth:`on_epoch_end` or :meth:`after_fit`.
    Subclasses call ``super().__init__(net)`` before registering their own buffers.

    Args:
        net: The wrapped network; its ``num_classes`` is the model's.
    """

    def __init__(self, net: BayesianModule) -> None:
        super().__init__()
        self.net = net
        self.num_classes = net.num_classes

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """The wrapped network's loss (see :meth:`BayesianModule.loss`)."""
        return self.net.loss(x, y, n_train=n_train, generator=generator, batch=batch)


class PartTrainer(Protocol):
    """What the harness gives a model that owns its training (``ModelSpec.fit``)."""

    def fit(self, part: BayesianModule, cfg: Any, *, tag: str,
            stochastic: bool = True) -> dict[str, Any]:
        """Train ``part`` (a sub-module) with :func:`robustbnn.training.fit.fit` and ``cfg``.

        The part trains from its own random stream, derived from the run's seed, the model's
        name and ``tag``, and is cached as its own entry: a run stopped between parts resumes
        with the parts already trained. Returns the part's fit report as a dict.
        """
        ...

    def generator(self, tag: str) -> torch.Generator:
        """A CPU generator of its own stream (the run's seed, the model's name and ``tag``),
        for a model whose training draws random numbers outside :meth:`fit` (a sampler)."""
        ...

    @property
    def progress(self) -> bool:
        """Whether the run shows progress bars: a model that trains outside :meth:`fit` (a
        sampler) shows its own when this is true."""
        ...


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A registry entry.

    Attributes:
        build: ``build(cfg, input_shape, num_classes, generator) -> BayesianModule``;
            parameters are initialised from ``generator`` so a model does not depend on
            what else ran before it.
        config: The frozen config dataclass; ``config()`` holds the paper defaults.
        description: One line for ``robustbnn models``.
        reference: The paper the method comes from.
        stochastic: Whether samples differ from each other.
        version: The version of the model's code. It is part of the cache key: change it when
            a change to ``build``, ``loss`` or a hook changes the trained weights, so old
            cache entries are not reused.
        shrink: How suites shrink the model: ``{budget: {field: value}}``, applied to the
            config before the suite's ``--set`` overrides when a suite asks for that budget
            (``"smoke"``: seconds per model, for pipeline checks). A model that declares no
            entry for a budget runs at its defaults, with a warning.
        fit: For a model that owns its training (a deep ensemble trains its members one by
            one): ``fit(model, cfg, data, trainer) -> dict`` replaces the harness's single
            :func:`robustbnn.training.fit.fit` call; ``trainer`` is a :class:`PartTrainer`. The
            returned dict is the fit report stored in the cache and ``run.json``.
        family: The family the reports group the model in, a short display name
            (``"deterministic"``, ``"MC dropout"``, ``"variational"``, ``"hypernetwork"``,
            ``"ensemble & post-hoc"``, or a new one); ``"other"`` when not given. It is
            recorded in ``run.json`` (``models.<name>.family``) for figures and filters only:
            it is no part of the cache key or any cell id.
        in_default: Whether a run that names no models (bare ``robustbnn bench``, the
            ``default`` suite) includes it. False for a model that only fits small tasks (the
            HMC reference) or that the committed default leaderboard does not hold yet.
    """

    build: Callable[[Any, tuple[int, ...], int, torch.Generator | None], BayesianModule]
    config: type
    description: str
    reference: str
    stochastic: bool = True
    version: str = "1"
    shrink: Mapping[str, Mapping[str, Any]] = dataclasses.field(
        default_factory=lambda: MappingProxyType({}))
    fit: Callable[[BayesianModule, Any, DataBundle, PartTrainer], dict[str, Any]] | None = None
    family: str = "other"
    in_default: bool = True


def code_identity(spec: ModelSpec) -> dict[str, str]:
    """What identifies the code of ``spec`` in its cache key.

    ``version`` unless it is the default ``"1"`` (so entries cached before models had
    versions stay valid); for a model outside robustbnn (a plug-in), also its distribution's
    version when it is installed as one, and the sha256 of the source file that defines its
    ``build``, so editing a plug-in retrains it instead of reusing old weights.
    """
    out = {} if spec.version == "1" else {"version": spec.version}
    module = sys.modules.get(getattr(spec.build, "__module__", "") or "")
    top = module.__name__.partition(".")[0] if module else ""
    if module is None or top == "robustbnn":
        return out
    dists = importlib.metadata.packages_distributions().get(top, [])
    if dists:
        out["package"] = f"{dists[0]} {importlib.metadata.version(dists[0])}"
    path = getattr(module, "__file__", None)
    if path and os.path.isfile(path):
        with open(path, "rb") as fh:
            out["source"] = hashlib.sha256(fh.read()).hexdigest()[:16]
    return out


SMOKE = MappingProxyType({"hidden": (32,), "epochs": 10})
"""The smoke budget of the registry's MLP-backbone models: one hidden layer of 32 units."""


MODELS: Registry[ModelSpec] = Registry("model")
