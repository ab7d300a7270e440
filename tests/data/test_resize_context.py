"""The run's OOD images come at the dataset's resolution (``run.context.ood_images``)."""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F

from robustbnn.bench_config import BenchConfig
from robustbnn.data.ood_sets import load_ood
from robustbnn.run.context import RunSpec, ood_digest, ood_images


def _spec(dataset: str) -> RunSpec:
    cfg = dataclasses.replace(BenchConfig(), dataset=dataset, n_ood=12, seed=3)
    return RunSpec(cfg, None, False, "cpu", "unused")


def test_pooled_dataset_gets_block_means_of_the_ood_set():
    raw = load_ood("uniform", 12, seed=3)
    x = ood_images(_spec("mnist5k_7x7"), "uniform")
    assert x.shape == (12, 1, 7, 7)
    assert torch.equal(x, F.avg_pool2d(raw, 4))


def test_same_resolution_is_bit_identical():
    spec = _spec("mnist5k")
    raw = load_ood("uniform", 12, seed=3)
    assert torch.equal(ood_images(spec, "uniform"), raw)
    assert ood_digest(spec, "uniform") != ood_digest(_spec("mnist5k_7x7"), "uniform")
