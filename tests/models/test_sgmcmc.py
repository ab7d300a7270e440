"""SGLD and SGHMC over the MLP (robustbnn.models.sgmcmc): collection, sampling, the cache and
the contract. Registered as ``sgld`` and ``sghmc`` (not in the default suite); tests build
from the specs."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch.nn.utils import vector_to_parameters

from robustbnn.data.types import DataBundle, Split
from robustbnn.errors import ConfigError
from robustbnn.models import MODELS
from robustbnn.models.sgmcmc import (
    SGHMC_SPEC,
    SGLD_SPEC,
    SGMCMCModel,
    collect_epochs,
)
from robustbnn.testing import CheckOptions, check_model, smoke_config
from robustbnn.training import cache
from robustbnn.training.fit import fit
from tests._helpers import seeded

S, B, C = 3, 5, 7
SHAPE = (1, 6, 7)
SPECS = {"sgld": SGLD_SPEC, "sghmc": SGHMC_SPEC}


def _data() -> DataBundle:
    """Noisy class prototypes (as tests/models/test_swag.py), 512 to train on: with fewer the
    posterior of a 42-11-13-7 net is so wide that SGLD's samples barely beat chance."""
    gen = seeded(0)
    y = torch.randint(0, C, (640,), generator=gen)
    centres = torch.rand(C, *SHAPE, generator=gen)
    x = (centres[y] + 0.3 * torch.randn(640, *SHAPE, generator=gen)).clamp(0, 1)
    train, val = Split(x[:512], y[:512]), Split(x[512:], y[512:])
    return DataBundle("toy", train, val, val, C, "f", "toy")


def _cfg(name: str, **changes: object) -> object:
    base = dict(hidden=(11, 13), epochs=8, burn_in=2, thin=1, num_samples=4, batch_size=64,
                val_samples=4)
    return dataclasses.replace(SPECS[name].config(), **{**base, **changes})


def _trained(name: str, **changes: object) -> tuple[SGMCMCModel, list[torch.Tensor], float]:
    """A 42-11-13-7 model trained by the harness's loop, the weights it collected (recorded
    at every collection) and its last validation accuracy."""
    cfg = _cfg(name, **changes)
    model = SPECS[name].build(cfg, SHAPE, C, seeded(0))
    snapshots, hook = [], model.on_epoch_end

    def record(epoch: int, *, generator: torch.Generator | None = None) -> None:
        before = int(model.n_collected)
        hook(epoch, generator=generator)
        if int(model.n_collected) > before:
            snapshots.append(model.weights().clone())

    model.on_epoch_end = record
    report = fit(model, cfg, _data(), name=name, generator=seeded(1), progress=False)
    del model.on_epoch_end
    return model, snapshots, report.val_accuracy[-1]


@pytest.fixture(scope="module")
def sghmc() -> tuple[SGMCMCModel, list[torch.Tensor], float]:
    return _trained("sghmc", lr=0.1)


def test_collection_epochs() -> None:
    assert collect_epochs(_cfg("sgld", epochs=10, burn_in=3, thin=2)) == (5, 7, 9)
    # Zhang et al.'s run: 200 epochs in 4 cycles, the last 3 epochs of each collected
    cyc = dataclasses.replace(SGLD_SPEC.config(), schedule="cyclical", epochs=200)
    assert collect_epochs(cyc) == (48, 49, 50, 98, 99, 100, 148, 149, 150, 198, 199, 200)


@pytest.mark.parametrize(("changes", "match"), [
    ({"burn_in": 8}, "nothing is collected; lower burn_in or raise epochs"),
    ({"schedule": "cyclical", "cycles": 3}, "do not split into cycles=3 equal cycles"),
    ({"schedule": "cyclical", "cycles": 2, "exploration": 0.5, "samples_per_cycle": 3},
     "reach into its exploration stage"),
    ({"selection": "best_val"}, "selection must be 'last'"),
    ({"weight_decay": 1e-4}, "weight_decay must be 0"),
])
def test_bad_settings_are_one_clear_error(changes: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        SGLD_SPEC.build(_cfg("sgld", **changes), SHAPE, C, seeded(0))


def test_the_ring_keeps_the_last_k_collected_weights(sghmc) -> None:
    model, snapshots, _ = sghmc
    assert int(model.n_collected) == len(snapshots) == 6  # epochs 3..8
    k = model.samples.shape[0]
    for n in range(len(snapshots) - k + 1, len(snapshots) + 1):  # the n-th collected, 1-based
        assert torch.equal(model.samples[(n - 1) % k], snapshots[n - 1])


def test_the_model_trains_on_a_tiny_problem(sghmc) -> None:
    assert sghmc[2] > 0.8  # validation accuracy; 7 classes: chance is 1/7


def test_sgld_trains_and_cyclical_collects_at_cycle_ends() -> None:
    model, snapshots, acc = _trained("sgld", lr=1.0, schedule="cyclical", cycles=2,
                                     exploration=0.5, samples_per_cycle=2)
    assert sorted(model.collect_at) == [3, 4, 7, 8]  # cycles of 4 epochs, noise from the 3rd
    assert int(model.n_collected) == len(snapshots) == 4
    assert acc > 0.4  # 7 classes: chance is 1/7


def test_samples_are_stored_weights_drawn_by_the_generator(sghmc) -> None:
    model, _, _ = sghmc
    model.eval()
    x = torch.rand(B, *SHAPE, generator=seeded(2))
    out = model.sample_logits(x, S, generator=seeded(5))
    assert out.shape == (S, B, C)
    idx = model.sample_indices(S, generator=seeded(5))  # the same draw
    assert len(set(idx.tolist())) == S  # S ≤ K: without replacement
    net = model.net
    for s, i in enumerate(idx.tolist()):
        saved = [p.detach().clone() for p in net.parameters()]
        vector_to_parameters(model.samples[i], net.parameters())
        torch.testing.assert_close(out[s], net.sample_logits(x, 1)[0])
        vector_to_parameters(torch.cat([p.reshape(-1) for p in saved]), net.parameters())
    assert torch.equal(out, model.sample_logits(x, S, generator=seeded(5)))
    assert not torch.equal(out, model.sample_logits(x, S, generator=seeded(6)))


def test_more_samples_than_stored_draw_with_replacement(sghmc) -> None:
    model, _, _ = sghmc
    idx = model.sample_indices(11, generator=seeded(0))
    assert idx.shape == (11,) and idx.max() < model.samples.shape[0]
    assert len(set(idx.tolist())) < 11
    assert model.sample_logits(torch.rand(2, *SHAPE), 11, generator=seeded(0)).shape == (11, 2, C)


def test_before_collection_samples_are_the_current_weights() -> None:
    model = SGHMC_SPEC.build(_cfg("sghmc"), SHAPE, C, seeded(0))
    out = model.sample_logits(torch.rand(B, *SHAPE), S, generator=seeded(0))
    assert out.shape == (S, B, C) and torch.equal(out[0], out[2])


def test_cache_round_trip_keeps_the_samples(sghmc, tmp_path) -> None:
    model, _, _ = sghmc
    cache.save(tmp_path, "sghmc", "k", model, {})  # safetensors, as the model cache writes
    fresh = SGHMC_SPEC.build(_cfg("sghmc"), SHAPE, C, seeded(9))
    assert cache.load(tmp_path, "sghmc", "k", fresh) is not None
    assert int(fresh.n_collected) == int(model.n_collected)
    x = torch.rand(B, *SHAPE)
    torch.testing.assert_close(fresh.sample_logits(x, S, generator=seeded(8)),
                               model.sample_logits(x, S, generator=seeded(8)), rtol=0, atol=0)


@pytest.mark.bench
@pytest.mark.parametrize("name", list(SPECS))
def test_every_contract_clause_holds(name: str) -> None:
    assert MODELS.get(name) is SPECS[name]  # registered as its spec
    cfg = dataclasses.replace(smoke_config(name), hidden=(11, 13))
    options = CheckOptions(input_shape=SHAPE, num_classes=C, batch=B, n_samples=S)
    report = check_model(name, config=cfg, options=options)
    report.raise_if_failed()
    skipped = {r.clause: r.detail for r in report.results if r.status == "skipped"}
    assert skipped.keys() <= {"attack_logits"}, skipped
