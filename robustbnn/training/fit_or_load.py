"""Build a model, then load its weights from the cache or train them, under the entry's lock.

Initial weights come from a CPU generator, so a seed gives the same initial model on every
device; the model is moved to the run device afterwards, and training draws (shuffling, the
model's noise) from a generator on the run device. Training holds the cache entry's file lock,
so two runs on one cache never train the same model at the same time.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from robustbnn import __version__
from robustbnn.contract.streams import make_generator
from robustbnn.data import DataBundle
from robustbnn.models import MODELS, BayesianModule
from robustbnn.models.base import code_identity
from robustbnn.training import cache
from robustbnn.training.fit import fit, validated_with

__all__ = ["FitRecord", "TrainSetup", "fit_or_load", "model_cache_key"]

log = logging.getLogger(__name__)

CPU = torch.device("cpu")


@dataclasses.dataclass(frozen=True)
class FitRecord:
    """What a training cell did: stored in its cell file and in ``run.json``.

    Attributes:
        config: The model's full config.
        cache_key: Its cache entry's key.
        cached: Whether the weights were loaded instead of trained.
        fit: The training report (epochs, best epoch, validation accuracies, seconds).
        parameters: Number of parameters.
    """

    config: dict[str, Any]
    cache_key: str
    cached: bool
    fit: dict[str, Any] | None
    parameters: int


def model_cache_key(name: str, mcfg: Any, data: DataBundle, seed: int) -> str:
    """The cache key of ``name`` trained with ``mcfg`` on ``data`` from ``seed``: its config,
    data, seed and code (:func:`robustbnn.models.base.code_identity`)."""
    return cache.cache_key(name, mcfg, data.fingerprint, seed, code_identity(MODELS.get(name)))


@dataclasses.dataclass(frozen=True)
class TrainSetup:
    """Where and from what seed a run trains its models.

    Attributes:
        seed: The run's seed; a model's init and training streams derive from it and its name.
        device: The run device the model trains on.
        cache_dir: The model cache's root, or None to train without caching.
        progress: Show a progress bar per training.
    """

    seed: int
    device: torch.device
    cache_dir: Path | None
    progress: bool = False


def fit_or_load(name: str, mcfg: Any, data: DataBundle, setup: TrainSetup
                ) -> tuple[BayesianModule, FitRecord]:
    """Build ``name`` with config ``mcfg``, then load its weights from the cache or train it.

    A damaged cache entry is discarded whole by :func:`robustbnn.training.cache.load` before any
    weight is copied, so training always starts from the freshly initialised model. A model
    with its own ``ModelSpec.fit`` trains through it, its parts cached one by one.

    Args:
        name: The registered model name.
        mcfg: Its config.
        data: The splits it trains on.
        setup: The seed, device, cache and progress bars of the run.

    Returns:
        The model (on ``setup.device``) and what training did.
    """
    spec = MODELS.get(name)
    shape = tuple(data.train.x.shape[1:])
    seed, device = setup.seed, setup.device
    model = spec.build(mcfg, shape, data.num_classes, make_generator(CPU, seed, name, "init"))
    model = model.to(device)
    key = model_cache_key(name, mcfg, data, seed)
    meta = {"model": name, "seed": seed, "data": data.fingerprint, "robustbnn": __version__,
            "config": dataclasses.asdict(mcfg)}

    def train() -> dict:
        if spec.fit is not None:
            return spec.fit(model, mcfg, data, _PartTrainer(name, data, setup, key, meta))
        report = fit(model, validated_with(mcfg, spec.stochastic), data, name=name,
                     generator=make_generator(device, seed, name, "train"),
                     progress=setup.progress)
        return dataclasses.asdict(report)

    report, cached = _load_or_train(setup.cache_dir, name, key, model, train, meta)
    if cached:
        log.info("loaded %s from the cache (%s)", name, key)
    params = sum(p.numel() for p in model.parameters())
    return model, FitRecord(meta["config"], key, cached, report, params)


def _load_or_train(cache_dir: Path | None, name: str, key: str, module: torch.nn.Module,
                   train: Callable[[], dict], meta: dict[str, Any]) -> tuple[dict | None, bool]:
    """``module``'s fit report and whether it came from the cache entry (name, key), which
    is trained and saved under the entry's lock on a miss."""
    if cache_dir is None:
        return train(), False
    problem = cache.read_only(cache_dir)
    if problem is not None:  # no writer can come, so no lock (whose file it could not open)
        found = cache.load(cache_dir, name, key, module)
        if found is None:
            raise cache.read_only_error(cache_dir, problem, [name])
        return found.get("fit"), True
    with cache.lock(cache_dir, name, key):
        found = cache.load(cache_dir, name, key, module)
        if found is not None:
            return found.get("fit"), True
        report = train()
        cache.save(cache_dir, name, key, module, {**meta, "fit": report})
    return report, False


@dataclasses.dataclass(frozen=True)
class _PartTrainer:
    """The :class:`~robustbnn.models.base.PartTrainer` of one model's ``ModelSpec.fit``."""

    name: str
    data: DataBundle
    setup: TrainSetup
    key: str
    meta: dict[str, Any]

    def fit(self, part: BayesianModule, cfg: Any, *, tag: str,
            stochastic: bool = True) -> dict[str, Any]:
        setup = self.setup

        def train() -> dict:
            generator = make_generator(setup.device, setup.seed, self.name, "train", tag)
            return dataclasses.asdict(fit(part, validated_with(cfg, stochastic), self.data,
                                          name=f"{self.name} {tag}", generator=generator,
                                          progress=setup.progress))

        report, cached = _load_or_train(setup.cache_dir, self.name, f"{self.key}-{tag}", part,
                                        train, {**self.meta, "part": tag})
        if cached:
            log.info("loaded %s %s from the cache", self.name, tag)
        return report or {}

    def generator(self, tag: str) -> torch.Generator:
        return make_generator(torch.device("cpu"), self.setup.seed, self.name, "train", tag)

    @property
    def progress(self) -> bool:
        return self.setup.progress
