"""The memory budget of Monte Carlo prediction: rows per call, chunking, widths."""

from __future__ import annotations

import pytest
import torch

from robustbnn.contract.predict import MIN_SAMPLES_PER_CALL, chunk_rows, row_width, sample_probs
from robustbnn.models.base import BayesianModule
from tests._toys import build


class Recorder(BayesianModule):
    """A stochastic toy that records the (S, B) of every sample_logits call."""

    def __init__(self, width: int = 50) -> None:
        super().__init__()
        self.num_classes = 3
        self.weight = torch.nn.Parameter(torch.randn(width, 3))
        self.calls: list[tuple[int, int]] = []

    def sample_logits(self, x, n_samples, *, generator=None):  # noqa: ANN001, ANN201
        self.calls.append((n_samples, x.shape[0]))
        base = x.flatten(1)[:, :3]
        noise = torch.randn(n_samples, *base.shape, generator=generator)
        return base + noise


def test_chunk_rows_follow_the_budget_and_the_width() -> None:
    model = Recorder(width=50)
    assert row_width(model) == 50
    # 1 MiB / (4 bytes x 6 live widths x 50) = 873 rows; with gradients 16 live widths
    assert chunk_rows(model, 1) == 2**20 // (4 * 6 * 50)
    assert chunk_rows(model, 1, grad=True) == 2**20 // (4 * 16 * 50)
    assert chunk_rows(model, 1024) == 1024 * 2**20 // (4 * 6 * 50)  # linear in the budget
    assert chunk_rows(model, 1e-6) == 1  # never zero rows
    with pytest.raises(ValueError, match="memory budget must be > 0 MiB, got 0"):
        chunk_rows(model, 0)


def test_a_declared_activation_width_wins_over_parameter_shapes() -> None:
    model = build("bhn_full", hidden=(5,))
    assert row_width(model) == 6 * 7  # the input: its hypernet's parameters are far wider
    assert model.activation_width == 42


def test_samples_are_split_before_examples_and_every_call_fits() -> None:
    model = Recorder(width=50)
    rows = chunk_rows(model, 1)  # 873
    x = torch.rand(100, 1, 2, 2)
    probs = sample_probs(model, x, 200, generator=torch.Generator().manual_seed(0),
                         memory_mb=1)
    assert probs.shape == (200, 100, 3)
    assert all(s * b <= rows for s, b in model.calls)
    assert {s for s, _ in model.calls} == {MIN_SAMPLES_PER_CALL, 200 % MIN_SAMPLES_PER_CALL}
    # 4 chunks of 27, 27, 27 and 19 examples, each with all 200 samples in 7 calls
    assert sorted({b for _, b in model.calls}) == [19, rows // MIN_SAMPLES_PER_CALL]
    assert sum(s * b for s, b in model.calls) == 200 * 100
    model.calls.clear()
    sample_probs(model, x, 200, generator=torch.Generator().manual_seed(0), memory_mb=1000)
    assert model.calls == [(200, 100)]  # within budget: one call


def test_budgets_agree_in_distribution_not_bit_for_bit() -> None:
    model = build("mc_dropout")
    x = torch.rand(40, 1, 6, 7, generator=torch.Generator().manual_seed(1))
    small = sample_probs(model, x, 400, generator=torch.Generator().manual_seed(2),
                         memory_mb=0.05)
    large = sample_probs(model, x, 400, generator=torch.Generator().manual_seed(2))
    assert small.shape == large.shape == (400, 40, 7)
    assert not torch.equal(small, large)
    torch.testing.assert_close(small.mean(0), large.mean(0), atol=0.03, rtol=0)
