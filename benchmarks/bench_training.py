"""A Bayesian hypernetwork's training epoch against an MLP epoch with the same primary net.

Run with ``pytest benchmarks/bench_training.py``. One epoch of :func:`~robustbnn.training.fit.fit`
on the mnist5k training split (3,600 images, batch 128, fused Adam, no validation), for the BHN
paper's 784-800-800-10 net and the default suite's 784-1200-10. The ``mlp`` epoch is the
baseline; ``bhn_iaf`` (8 IAF steps of 200 units over the weight-norm scales, with its
gradient clipping) records ``speedup_vs_mlp_epoch``, below 1 since a BHN does more work; the
issue's target is a BHN epoch ≤ 1.5 × the MLP's, i.e. a ratio ≥ 0.67.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from benchmarks._ratios import measure
from robustbnn.data.registry import load_dataset
from robustbnn.data.types import Split
from robustbnn.models import MODELS
from robustbnn.training.fit import fit

NETS = {"800-800": (800, 800), "1200": (1200,)}


@pytest.fixture(scope="module")
def train_only(device: torch.device):  # noqa: ANN201
    data = load_dataset("mnist5k")
    empty = Split(data.val.x[:0], data.val.y[:0])
    data = dataclasses.replace(data, val=empty, test=empty)
    return dataclasses.replace(data, train=Split(data.train.x.to(device),
                                                 data.train.y.to(device)))


def epoch_fn(name: str, hidden: tuple[int, ...], device: torch.device, data: object):  # noqa: ANN201
    spec = MODELS.get(name)
    cfg = dataclasses.replace(spec.config(), hidden=hidden, epochs=1, selection="last")
    model = spec.build(cfg, (1, 28, 28), 10, torch.Generator().manual_seed(0)).to(device)
    gen = torch.Generator(device).manual_seed(1)

    def epoch() -> None:
        fit(model, cfg, data, name=name, generator=gen, progress=False)

    return epoch


@pytest.mark.parametrize("net", sorted(NETS))
def test_mlp_epoch(benchmark: object, net: str, device: torch.device,
                   train_only: object) -> None:
    measure(benchmark, f"train_epoch[{net}]", "mlp_epoch",
            epoch_fn("mlp", NETS[net], device, train_only), baseline=True, device=device)


@pytest.mark.parametrize("net", sorted(NETS))
def test_bhn_iaf_epoch(benchmark: object, net: str, device: torch.device,
                       train_only: object) -> None:
    measure(benchmark, f"train_epoch[{net}]", "bhn_iaf_epoch",
            epoch_fn("bhn_iaf", NETS[net], device, train_only), device=device)
