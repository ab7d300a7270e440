"""Clause ``global_rng`` catches a model that reseeds a global RNG on every call (issue 28,
defect 13): one call alone leaves the RNG where the call before left it."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import torch
from torch import Tensor

from robustbnn.config import TrainConfig
from robustbnn.models import BayesianModule, ModelSpec
from robustbnn.testing import BENCH_CLAUSES, CheckOptions, check_module


@dataclasses.dataclass(frozen=True)
class _Config(TrainConfig):
    """A linear classifier with Gaussian weight noise."""


class _Noisy(BayesianModule):
    """Logits x W_s with W_s = W + 0.1 ε_s, ε_s drawn from the generator."""

    def __init__(self, cfg: _Config, input_shape: tuple[int, ...], num_classes: int,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        self.num_classes = num_classes
        d = torch.Size(input_shape).numel()
        self.w = torch.nn.Parameter(0.1 * torch.randn(d, num_classes, generator=generator))

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        eps = torch.randn((n_samples, *self.w.shape), generator=generator)  # (S, D, C)
        return torch.einsum("bd,sdc->sbc", x.flatten(1), self.w + 0.1 * eps)  # (S, B, C)


class _Reseeds(_Noisy):
    """Keeps every other clause, but calls ``torch.manual_seed(1234)`` in sample_logits."""

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        torch.manual_seed(1234)
        return super().sample_logits(x, n_samples, generator=generator)


class _ReseedsNumpy(_Noisy):
    """Reseeds NumPy's global RNG."""

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        np.random.seed(7)
        return super().sample_logits(x, n_samples, generator=generator)


def _check(cls: type) -> dict[str, str]:
    spec = ModelSpec(cls, _Config, "test", "tests")
    model = cls(_Config(), (1, 4, 4), 3, torch.Generator().manual_seed(0))
    report = check_module(model, spec, name="m", config=_Config(),
                          options=CheckOptions(input_shape=(1, 4, 4)), clauses=BENCH_CLAUSES)
    return {r.clause: r.detail for r in report.results if r.status == "failed"}


def test_a_model_reseeding_torch_on_every_call_fails_global_rng_alone() -> None:
    assert _check(_Reseeds) == {"global_rng": (
        "a call in eval() mode changed torch's global CPU RNG to the same state from two "
        "different ones (it reseeds it, e.g. torch.manual_seed in sample_logits): draw from "
        "the generator argument (library code that cannot: wrap it in "
        "robustbnn.contract.rng.seeded_global)")}


def test_a_model_reseeding_numpy_fails_global_rng() -> None:
    assert list(_check(_ReseedsNumpy)) == ["global_rng"]
    assert "NumPy's global RNG to the same state" in _check(_ReseedsNumpy)["global_rng"]


def test_a_good_model_passes_and_the_caller_keeps_its_global_rngs() -> None:
    torch.manual_seed(5), random.seed(5), np.random.seed(5)
    states = torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy()
    assert _check(_Noisy) == {}
    assert torch.equal(torch.get_rng_state(), states[0]) and random.getstate() == states[1]
    assert np.array_equal(np.random.get_state()[1], states[2])

