"""Cost of one training step with the fused Adam kernel against the foreach (default) one.

Run with ``pytest benchmarks/bench_optimizer.py``. The first test of each group is the foreach
baseline; the fused test records its median time relative to it, measured in the same run, as
``extra_info["ratio_vs_foreach"]`` and in the log (measured on 2 CPU cores: 0.74 for the
800-800 MLP, 0.65 for the 800-unit BHN). Nothing here asserts a time.
"""

from __future__ import annotations

import dataclasses
import logging

import pytest
import torch

from robustbnn.models import MODELS

log = logging.getLogger(__name__)
_BASELINE: dict[str, float] = {}
HIDDEN = {"mlp": (800, 800), "bhn_iaf": (800,)}  # the default suite's widths


def _step_fn(name: str, fused: bool):  # noqa: ANN202
    spec = MODELS.get(name)
    cfg = dataclasses.replace(spec.config(), hidden=HIDDEN[name])
    model = spec.build(cfg, (1, 28, 28), 10, torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=fused)
    gen = torch.Generator().manual_seed(1)
    x, y = torch.rand(128, 1, 28, 28, generator=gen), torch.randint(0, 10, (128,), generator=gen)

    def step() -> None:
        loss = model.loss(x, y, n_train=3600, generator=gen)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def _run(benchmark: pytest.FixtureRequest, group: str, name: str, fused: bool) -> None:
    benchmark.pedantic(_step_fn(name, fused), rounds=30, iterations=1, warmup_rounds=3)
    median = benchmark.stats.stats.median
    _BASELINE.setdefault(group, median)
    ratio = median / _BASELINE[group]
    benchmark.extra_info["ratio_vs_foreach"] = ratio
    log.warning("%s fused=%s: median %.4f s, %.2fx the foreach baseline", group, fused, median,
                ratio)


@pytest.mark.parametrize("name", sorted(HIDDEN))
@pytest.mark.parametrize("fused", [False, True], ids=["foreach_baseline", "fused"])
def test_adam_step(benchmark: pytest.FixtureRequest, name: str, fused: bool) -> None:
    benchmark.group = f"adam step {name}"
    _run(benchmark, name, name, fused)
