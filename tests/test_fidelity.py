"""Accuracy of the foundation models on real MNIST, trained exactly as the bench trains them."""

from __future__ import annotations

import dataclasses
import logging
import os

import pytest
import torch

from robustbnn.contract.predict import sample_probs
from robustbnn.contract.streams import make_generator
from robustbnn.data import load_dataset
from robustbnn.data.mnist import mnist_available
from robustbnn.data.root import resolve_data_root
from robustbnn.models import MODELS
from robustbnn.settings import model_config
from robustbnn.suites import SUITES
from robustbnn.training.fit_or_load import TrainSetup, fit_or_load
from tests.measured_spread import describe, full_mnist_floor, one_run_floor, three_seed_line

CPU = torch.device("cpu")
log = logging.getLogger(__name__)


def _test_accuracy(name: str, dataset: str, seed: int = 0, **changes) -> float:
    data = load_dataset(dataset, resolve_data_root(None) if dataset != "mnist5k" else None)
    cfg = dataclasses.replace(model_config(name, SUITES.get("default").overrides), **changes)
    model, _ = fit_or_load(name, cfg, data, TrainSetup(seed, CPU, None))
    probs = sample_probs(model.eval(), data.test.x, 100,
                         generator=make_generator(CPU, seed, name, "eval", "clean"))
    return (probs.mean(0).argmax(-1) == data.test.y).float().mean().item()


# Every floor below comes from tests/measured_spread.py: the lowest accuracy one run of the model
# was measured to score, over seeds 0-2 on the two CPU kinds of the committed reports (a 2-core
# Intel Xeon and a 2-core AMD EPYC) and this test's own runs, less 3 sigma (sigma = 0.0042, one
# run's spread pooled over the default models). The old lines (0.93, 0.94 for one run) sat
# within that spread: CI's EPYC scored mc_dropout 0.9390 against 0.94 (issue 47).

# The default suite trains both on 784-800-800-10 nets (QUICK_BUDGET): minutes on a CPU.
@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlp", "mc_dropout"])
def test_mnist5k_accuracy(name: str) -> None:
    acc = _test_accuracy(name, "mnist5k")
    log.info("mnist5k test accuracy of %s: %.4f", name, acc)  # pytest --log-cli-level=INFO
    # counts out of 1,000, read from float32 (940 correct is 0.93999999 in float32)
    assert round(acc, 4) >= one_run_floor(name), (
        f"mnist5k test accuracy of {name}: {acc:.4f}; {describe(name)}")


# Issue #3 targets with the default suite's quick budget: claims about a method at a budget,
# checked on the mean over three seeds (ROBUSTBNN_FIDELITY_SEEDS=0,1,2: 45 trainings, about an
# hour and a half on 2 CPU cores, more than CI's budget), which must not lie clearly below the
# target (3 sigma of a 3-seed mean, tests/measured_spread.three_seed_line). CI trains seed 0 only
# and holds it to the model's one-run floor, as above. The samplers (sgld, sghmc, hmc) are out
# of the default suite (docs/fidelity.md).
ZOO_TARGETS = {name: 0.92 for name in MODELS.names()
               if MODELS.get(name).in_default and name not in ("mlp", "mc_dropout")}
ZOO_TARGETS.update(dict.fromkeys(
    ["dropout", "bbalpha_0", "bbalpha_05", "bbalpha_1", "bhn_iaf", "bhn_realnvp"], 0.94))
SEEDS = tuple(int(s) for s in os.environ.get("ROBUSTBNN_FIDELITY_SEEDS", "0").split(","))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ZOO_TARGETS))
def test_zoo_mnist5k_accuracy(name: str) -> None:
    accs = [_test_accuracy(name, "mnist5k", seed) for seed in SEEDS]
    mean = sum(accs) / len(accs)
    summary = f"mnist5k test accuracy of {name}, seeds {SEEDS}: {accs}, mean {mean:.4f}"
    log.info(summary)  # shown with pytest --log-cli-level=INFO
    if len(set(SEEDS)) >= 3:
        line = three_seed_line(ZOO_TARGETS[name])
        why = f"target {ZOO_TARGETS[name]} less 3 sigma of a 3-seed mean"
    else:  # each seed on its own is one run
        line = one_run_floor(name)
        why = describe(name)
        mean = min(accs)
    # counts out of 1,000, read from float32
    assert round(mean, 4) >= line, f"{summary} < {line:.3f}: {why}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlp", "mc_dropout"])
def test_full_mnist_accuracy(name: str) -> None:
    if not os.environ.get("ROBUSTBNN_DATA") or not mnist_available(resolve_data_root(None)):
        pytest.skip("full MNIST not found: set ROBUSTBNN_DATA to a folder holding mnist/")
    # 1.1 M training examples per model: about 27 mnist5k trainings each. On the 2-core EPYC
    # of 2026-11-26 CI's tests and checks came to about 84 min with these two, against a 90
    # minute limit, so CI leaves them out; ROBUSTBNN_FULL_MNIST_TESTS=1 runs them.
    if os.environ.get("ROBUSTBNN_FULL_MNIST_TESTS") != "1":
        pytest.skip("full-MNIST training is left out of CI's budget: set "
                    "ROBUSTBNN_FULL_MNIST_TESTS=1 to run it")
    # 20 epochs with the BHN code's optional 10x lr decay [CODE, docs/protocols.md §1.3]. Without
    # the decay the MLP scored 0.9814 and 0.9784 in two runs (float noise of the fused Adam kernel
    # alone), on the 0.98 line; with it, mlp 0.9837 / 0.9843 (seeds 0 / 1), mc_dropout 0.9848.
    acc = _test_accuracy(name, "mnist", epochs=20, lr_decay=10.0)
    log.info("full MNIST test accuracy of %s: %.4f", name, acc)  # pytest --log-cli-level=INFO
    floor = full_mnist_floor()  # 0.9799: tests/measured_spread.py
    assert round(acc, 4) >= floor, f"full MNIST test accuracy of {name}: {acc:.4f} < {floor}"
