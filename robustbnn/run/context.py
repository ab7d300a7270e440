"""What a cell runs with: the run's spec, its data, its model and its random streams.

A cell carries its own context, so no function on the bench path threads ten parameters: task
code reads ``ctx.cfg``, ``ctx.data``, ``ctx.model`` and draws from ``ctx.gen("attack")``.
Data and trained models are loaded once per process (memoised), whichever executor runs it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from typing import Any

import numpy as np
import torch
from torch import Tensor

from robustbnn.bench_config import BenchConfig
from robustbnn.contract.checked import Checked
from robustbnn.contract.streams import make_generator
from robustbnn.data import DataBundle, Split, load_dataset
from robustbnn.data.checks import check_channels
from robustbnn.data.heldout import heldout_split
from robustbnn.data.ood_sets import load_ood
from robustbnn.data.resize import resize_ood
from robustbnn.results.examples import attach
from robustbnn.results.schema import Result, setting
from robustbnn.run.cells import Cell
from robustbnn.settings import Settings, resolve_settings

__all__ = ["Context", "RunSpec", "bench_data", "ood_digest", "ood_images", "shift_images"]

# Model attributes that say how test-time samples are drawn; each becomes a result knob.
SAMPLER_KNOBS = ("local_reparam", "attack_masks")


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """Everything a worker needs to run any cell of a plan (picklable, sent to every worker).

    Attributes:
        cfg: The resolved bench config.
        data_root: The data folder (``--data-root``), None for the default.
        download: Whether loaders may download missing files.
        device: ``"cpu"`` or ``"cuda"``.
        cache_dir: The model cache (the run folder's own when ``--no-cache``).
        plugins: ``--plugin`` modules a worker imports first (with every entry point of
            :data:`robustbnn.plugins.GROUPS`), so plug-in names resolve there.
        plugin_paths: Folders a worker appends to ``sys.path`` before it loads the plug-ins
            (:func:`robustbnn.plugins.plugin_paths`: a Ray worker may start elsewhere).
        threads: torch threads per cell (None = torch's default).
        progress: Whether cells show their own progress bars (local executor only).
        settings: Every model's and attack's config, resolved once from ``cfg.overrides``
            (:func:`robustbnn.settings.resolve_settings`); None = resolve on first use.
    """

    cfg: BenchConfig
    data_root: str | None
    download: bool
    device: str
    cache_dir: str
    plugins: tuple[str, ...] = ()
    plugin_paths: tuple[str, ...] = ()
    threads: int | None = None
    progress: bool = False
    settings: Settings | None = None

    def resolved(self) -> Settings:
        """The run's settings (resolved from ``cfg`` when the spec was made without them)."""
        return self.settings if self.settings is not None else _settings(self.cfg)


def spec_at_seed(spec: RunSpec, seed: int) -> RunSpec:
    """``spec`` with the run's seed replaced (a fidelity reference trains at its own seed);
    ``spec`` itself when the seed is its own. Data and settings do not depend on the seed."""
    if seed == spec.cfg.seed:
        return spec
    return dataclasses.replace(spec, cfg=dataclasses.replace(spec.cfg, seed=seed))


@functools.lru_cache(maxsize=4)
def _settings(cfg: BenchConfig) -> Settings:
    return resolve_settings(cfg)


def _head(split: Split, n: int) -> Split:
    return split if n <= 0 or n >= len(split) else Split(split.x[:n], split.y[:n])


def prepare_data(cfg: BenchConfig, data: DataBundle, device: torch.device) -> DataBundle:
    """Subset (first n of the fixed, shuffled splits) and move to ``device``."""
    train, val, test = _head(data.train, cfg.n_train), data.val, _head(data.test, cfg.n_test)
    if cfg.n_val > 0:
        val = _head(val, cfg.n_val)
    elif cfg.n_val < 0 and cfg.n_train:
        val = _head(val, max(100, cfg.n_train // 5))
    fingerprint = data.fingerprint
    if (len(train), len(val), len(test)) != (len(data.train), len(data.val), len(data.test)):
        sizes = f"{len(train)}/{len(val)}/{len(test)}"
        fingerprint = hashlib.sha256(f"{data.fingerprint}/{sizes}".encode()).hexdigest()

    def to(split: Split) -> Split:
        return Split(split.x.to(device), split.y.to(device))

    return dataclasses.replace(data, train=to(train), val=to(val), test=to(test),
                               fingerprint=fingerprint)


@functools.lru_cache(maxsize=4)
def bench_data(spec: RunSpec, heldout: int | None = None) -> DataBundle:
    """The run's data on its device (memoised per process); ``heldout`` = class k removed."""
    raw = load_dataset(spec.cfg.dataset, spec.data_root, download=spec.download)
    data = prepare_data(spec.cfg, raw, torch.device(spec.device))
    return data if heldout is None else heldout_split(data, heldout)[0]


@functools.lru_cache(maxsize=4)
def heldout_images(spec: RunSpec, k: int) -> Tensor:
    """The images of held-out class k (the OOD set of BHN Table 3), on the run's device."""
    return heldout_split(bench_data(spec), k)[1]


@functools.lru_cache(maxsize=16)
def ood_images(spec: RunSpec, name: str) -> Tensor:
    """An OOD set as the run loads it, on the run's device (memoised per process), at the
    resolution of the run's test images (:func:`robustbnn.data.resize.resize_ood`: untouched
    when equal, else block means; a ConfigError when impossible, raised while planning).
    :func:`load_ood` checks the images (dtype, shape, none, NaN, range), and here their
    channels against the dataset's: a DataError naming the set, raised while planning too."""
    cfg = spec.cfg
    x = load_ood(name, cfg.ood_count(name), spec.data_root, seed=cfg.seed, download=spec.download,
                 preprocessing=cfg.ood_preprocessing)
    test = bench_data(spec).test.x
    check_channels(x, name, test.shape[1], cfg.dataset)
    x = resize_ood(x, tuple(test.shape[-2:]), name=name)
    return x.to(spec.device)


@functools.lru_cache(maxsize=16)
def ood_digest(spec: RunSpec, name: str) -> str:
    """The sha256 of an OOD set as the run scores it (:func:`ood_images`: after loading,
    subsetting and preprocessing), shape and dtype included; part of the ids of the cells
    that score it (``Cell.content``), so new images mean new cells."""
    x = ood_images(spec, name).detach().cpu().contiguous()
    digest = hashlib.sha256(f"{tuple(x.shape)}/{x.dtype}/".encode())
    digest.update(x.numpy().tobytes())
    return digest.hexdigest()


@functools.lru_cache(maxsize=32)
def shift_images(spec: RunSpec, kind: str, level: int | str, n: int, seed: int) -> Tensor:
    """The first ``n`` test images shifted by ``level`` of ``kind`` with corruption seed
    ``seed`` (memoised per process, so every model of a run is scored on one copy)."""
    from robustbnn.data.shift.sets import shifted  # noqa: PLC0415 - scikit-image on demand

    return shifted(bench_data(spec).test.x[:n], kind, level, seed=seed)


@dataclasses.dataclass(frozen=True)
class Context:
    """One cell's context.

    Attributes:
        cell: The cell being run.
        spec: The run's spec.
        data: The cell's data bundle on the run device (class k removed for held-out cells).
        model: The trained model, contract-checked (None for a training cell).
        inputs: The arrays of the cells this one depends on, by their task name.
    """

    cell: Cell
    spec: RunSpec
    data: DataBundle
    model: Checked | None = None
    inputs: dict[str, dict[str, np.ndarray]] = dataclasses.field(default_factory=dict)

    @property
    def cfg(self) -> BenchConfig:
        """The run's bench config."""
        return self.spec.cfg

    @property
    def device(self) -> torch.device:
        """The run device."""
        return torch.device(self.spec.device)

    @property
    def params(self) -> dict[str, Any]:
        """The cell's settings."""
        return self.cell.params

    def gen(self, *keys: str) -> torch.Generator:
        """A generator on the run device for stream ``keys`` of this cell (from
        ``cell.stream``: its id without content digests, so new content draws the same)."""
        return make_generator(self.device, self.cell.stream, *keys)

    def result(self, task: str, knobs: dict[str, Any], measure: str, metric: str,
               value: float, *, dataset: str | None = None,
               examples: dict[str, Any] | None = None) -> dict[str, Any]:
        """One tidy result row of this cell, as JSON data (dataset: the run's by default).

        ``examples`` are the per-example parts its value was computed from
        (:mod:`robustbnn.results.examples`); the runner stores them in the cell's arrays.

        A model with a choice of sampler (``local_reparam``: BbB, mvn; ``attack_masks``: MC
        dropout, BB-α) adds it to the setting, so every number says how its samples were
        drawn.
        """
        inner = getattr(self.model, "model", None)
        for knob in SAMPLER_KNOBS:
            if (sampler := getattr(inner, knob, None)) is not None:
                knobs = {**knobs, knob: sampler}
        row = Result(self.cell.model, self.cfg.seed, task, dataset or self.data.name,
                     setting(**knobs), measure, metric, float(value))
        return attach(row.to_json(), **examples) if examples else row.to_json()

    def test_head(self, n: int) -> tuple[Tensor, Tensor]:
        """The first ``n`` test points (all when ``n <= 0``), the cell's own copies: the data
        are shared by every cell of the process (:func:`bench_data`), so nothing a cell does
        with them reaches another."""
        x, y = self.data.test.x, self.data.test.y
        return (x.clone(), y.clone()) if n <= 0 else (x[:n].clone(), y[:n].clone())
