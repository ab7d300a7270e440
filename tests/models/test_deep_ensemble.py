"""Deep ensembles: stratified member draws, the exact ensemble average, per-member training."""

from __future__ import annotations

import collections
import logging
from pathlib import Path

import pytest
import torch

from robustbnn.models import MODELS
from robustbnn.models.deep_ensemble import DeepEnsemble
from robustbnn.settings import model_config
from robustbnn.training.fit_or_load import TrainSetup, fit_or_load
from tests._toys import build

M, B, C = 4, 6, 7


def _ensemble(**changes) -> DeepEnsemble:
    return build("deep_ensemble", num_classes=C, members=M, **changes)


def test_predictive_at_s_equal_m_is_the_exact_ensemble_average() -> None:
    model = _ensemble()
    x = torch.rand(B, 1, 6, 7)
    members = torch.stack([m.sample_logits(x, 1)[0] for m in model.members]).softmax(-1)
    for s in (M, 3 * M):
        probs = model.sample_logits(x, s, generator=torch.Generator().manual_seed(s))
        torch.testing.assert_close(probs.softmax(-1).mean(0), members.mean(0), rtol=0,
                                   atol=1e-7)


def test_draws_are_stratified_and_in_random_order() -> None:
    model = _ensemble()
    x = torch.rand(B, 1, 6, 7)
    members = torch.stack([m.sample_logits(x, 1)[0] for m in model.members])  # (M, B, C)

    def picks(s: int, seed: int) -> list[int]:
        out = model.sample_logits(x, s, generator=torch.Generator().manual_seed(seed))
        return [int((members == o).all(-1).all(-1).nonzero()) for o in out]

    for s in (1, M - 1, M + 1, 2 * M + 3):
        drawn = collections.Counter(picks(s, 0))
        counts = [drawn[i] for i in range(M)]
        assert sum(counts) == s
        assert sorted(counts) == [s // M] * (M - s % M) + [s // M + 1] * (s % M)
    assert picks(2 * M, 0) != picks(2 * M, 1)  # same members, another order
    # Every member is drawn as the first sample under some seed: the remainder is uniform.
    assert {picks(1, seed)[0] for seed in range(40)} == set(range(M))


def test_members_are_independently_initialised() -> None:
    model = _ensemble()
    first = [m.layers[0].weight for m in model.members]
    assert all(not torch.equal(first[0], w) for w in first[1:])


def _bundle(n: int = 96):
    from robustbnn.data import DataBundle, Split

    g = torch.Generator().manual_seed(0)
    x = torch.rand(n, 1, 6, 7, generator=g)
    y = (x.flatten(1)[:, :C].argmax(1)).long()
    split = Split(x, y)
    return DataBundle("toy", split, Split(x[:32], y[:32]), Split(x[:32], y[:32]), C, "toyfp",
                      "test")


def test_bench_trains_each_member_on_its_own_stream_and_caches_each(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    data = _bundle()
    cfg = model_config("deep_ensemble", ("deep_ensemble.hidden=(8,)", "deep_ensemble.epochs=2",
                                         "deep_ensemble.members=3"))
    model, record = fit_or_load("deep_ensemble", cfg, data,
                                TrainSetup(0, torch.device("cpu"), tmp_path))
    assert not record.cached and len(record.fit["members"]) == 3
    entries = sorted(p.name for p in (tmp_path / "deep_ensemble").iterdir() if p.is_dir())
    assert entries == sorted([record.cache_key] + [f"{record.cache_key}-member{i}"
                                                   for i in range(3)])
    # A run that stopped after its members trained resumes from them: drop the whole-model
    # entry and the members load instead of training again, to the same weights.
    import shutil
    shutil.rmtree(tmp_path / "deep_ensemble" / record.cache_key)
    with caplog.at_level(logging.INFO, logger="robustbnn.training.fit_or_load"):
        again, record2 = fit_or_load("deep_ensemble", cfg, data,
                                     TrainSetup(0, torch.device("cpu"), tmp_path))
    assert not record2.cached
    assert sum("member" in r.getMessage() and "from the cache" in r.getMessage()
               for r in caplog.records) == 3
    for a, b in zip(model.state_dict().values(), again.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # Trained from different streams, the members stay different.
    w = [m.layers[0].weight for m in model.members]
    assert not torch.equal(w[0], w[1])


def test_registered_with_its_smoke_budget() -> None:
    spec = MODELS.get("deep_ensemble")
    assert spec.stochastic and spec.fit is not None
    cfg = model_config("deep_ensemble", (), "smoke")
    assert (cfg.hidden, cfg.epochs, cfg.members) == ((32,), 10, 3)
    assert model_config("deep_ensemble", ()).members == 5
