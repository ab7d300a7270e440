"""Cost of one training step with the fused Adam kernel against the foreach (default) one.

Run with ``pytest benchmarks/bench_optimizer.py``. The first test of each group is the foreach
baseline; the fused test records its speed relative to it, measured in the same run, as
``extra_info["speedup_vs_foreach"]`` (``_ratios.measure``). Nothing here asserts a time.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from benchmarks._ratios import measure
from robustbnn.models import MODELS

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


@pytest.mark.parametrize("name", sorted(HIDDEN))
@pytest.mark.parametrize("fused", [False, True], ids=["foreach_baseline", "fused"])
def test_adam_step(benchmark: pytest.FixtureRequest, name: str, fused: bool) -> None:
    measure(benchmark, f"adam_step[{name}]", "fused" if fused else "foreach",
            _step_fn(name, fused), baseline=not fused, rounds=30, warmup_rounds=3)
