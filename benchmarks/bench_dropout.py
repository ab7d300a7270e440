"""Cost of dropout masks on CPU: random bytes against ``torch.rand`` (docs/protocols.md §8.6).

Run with ``pytest benchmarks/bench_dropout.py``. Each group's first test is the
``torch.rand`` baseline; the others record their speed relative to it, measured in the same
run, as ``extra_info["speedup_vs_torch_rand"]`` (``benchmarks/_ratios.py``). Nothing here
asserts a time.
"""

from __future__ import annotations

import pytest
import torch

from benchmarks._ratios import measure
from robustbnn.models._dropout import dropout, keep_mask

SHAPE = (100, 1000, 400)  # S × B × H: 100 MC samples of 1,000 images, a 400-unit layer
P = 0.5
_SEEN: set[str] = set()


def _rand_mask(g: torch.Generator) -> torch.Tensor:
    return torch.rand(SHAPE, generator=g) >= P


def _randint_mask(g: torch.Generator) -> torch.Tensor:
    return torch.randint(0, 256, SHAPE, dtype=torch.uint8, generator=g) >= int(256 * P)


def _keep_mask(g: torch.Generator) -> torch.Tensor:
    return keep_mask(SHAPE, P, generator=g)


def _run(benchmark: pytest.FixtureRequest, group: str, fn: object, *args: object) -> None:
    """The group's first test is its torch.rand baseline (``_ratios.measure``)."""
    first = group not in _SEEN
    _SEEN.add(group)
    measure(benchmark, group, "torch_rand" if first else fn.__name__.strip("_"), fn, *args,
            baseline=first)


@pytest.mark.benchmark(group="mask")
def test_mask_torch_rand_baseline(benchmark: pytest.FixtureRequest) -> None:
    _run(benchmark, "mask", _rand_mask, torch.Generator().manual_seed(0))


@pytest.mark.benchmark(group="mask")
def test_mask_randint_uint8(benchmark: pytest.FixtureRequest) -> None:
    _run(benchmark, "mask", _randint_mask, torch.Generator().manual_seed(0))


@pytest.mark.benchmark(group="mask")
def test_mask_keep_mask_64bit_bytes(benchmark: pytest.FixtureRequest) -> None:
    _run(benchmark, "mask", _keep_mask, torch.Generator().manual_seed(0))


@pytest.fixture(scope="module")
def hidden() -> torch.Tensor:
    return torch.rand(SHAPE, generator=torch.Generator().manual_seed(1))


def _rand_dropout(h: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    return h * (torch.rand(h.shape, generator=g) >= P) / (1 - P)  # the old _dropout.py


@pytest.mark.benchmark(group="dropout")
def test_dropout_torch_rand_baseline(benchmark: pytest.FixtureRequest,
                                     hidden: torch.Tensor) -> None:
    _run(benchmark, "dropout", _rand_dropout, hidden, torch.Generator().manual_seed(0))


@pytest.mark.benchmark(group="dropout")
def test_dropout_random_bytes(benchmark: pytest.FixtureRequest, hidden: torch.Tensor) -> None:
    _run(benchmark, "dropout", dropout, hidden, P, torch.Generator().manual_seed(0))


@pytest.fixture(scope="module")
def mc_dropout_net() -> tuple[torch.nn.Module, torch.Tensor]:
    from robustbnn.models import MODELS

    spec = MODELS.get("mc_dropout")
    model = spec.build(spec.config(), (1, 28, 28), 10, torch.Generator().manual_seed(0))
    return model, torch.rand(1000, 1, 28, 28, generator=torch.Generator().manual_seed(1))


def _score(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.sample_logits(x, 100, generator=torch.Generator().manual_seed(0))


@pytest.mark.benchmark(group="mc_dropout_scoring")
def test_mc_dropout_scoring_torch_rand_baseline(
    benchmark: pytest.FixtureRequest, mc_dropout_net: tuple[torch.nn.Module, torch.Tensor],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """784-400-400-10, S = 100, B = 1,000, with the masks of the old ``_dropout.py``."""
    import robustbnn.models._dropout as module

    def rand_weights(shape: tuple[int, ...], p: float, *,
                     generator: torch.Generator | None = None,
                     device: torch.device | None = None,
                     dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return (torch.rand(shape, generator=generator, device=device) >= p).to(dtype)

    monkeypatch.setattr(module, "keep_weights", rand_weights)
    _run(benchmark, "mc_dropout_scoring", _score, *mc_dropout_net)


@pytest.mark.benchmark(group="mc_dropout_scoring")
def test_mc_dropout_scoring_random_bytes(
    benchmark: pytest.FixtureRequest, mc_dropout_net: tuple[torch.nn.Module, torch.Tensor]
) -> None:
    """784-400-400-10, S = 100, B = 1,000, with the byte masks."""
    _run(benchmark, "mc_dropout_scoring", _score, *mc_dropout_net)
