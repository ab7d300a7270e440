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

CPU = torch.device("cpu")
log = logging.getLogger(__name__)


def _test_accuracy(name: str, dataset: str, seed: int = 0, **changes) -> float:
    data = load_dataset(dataset, resolve_data_root(None) if dataset != "mnist5k" else None)
    cfg = dataclasses.replace(model_config(name, SUITES.get("default").overrides), **changes)
    model, _ = fit_or_load(name, cfg, data, TrainSetup(seed, CPU, None))
    probs = sample_probs(model.eval(), data.test.x, 100,
                         generator=make_generator(CPU, seed, name, "eval", "clean"))
    return (probs.mean(0).argmax(-1) == data.test.y).float().mean().item()


# The default suite trains both on 784-800-800-10 nets (QUICK_BUDGET): minutes on a CPU.
@pytest.mark.slow
@pytest.mark.parametrize(("name", "target"), [("mlp", 0.93), ("mc_dropout", 0.94)])
def test_mnist5k_accuracy(name: str, target: float) -> None:
    acc = _test_accuracy(name, "mnist5k")
    log.info("mnist5k test accuracy of %s: %.4f", name, acc)  # pytest --log-cli-level=INFO
    # counts out of 1,000, read from float32 (940 correct is 0.93999999 in float32)
    assert round(acc, 4) >= target, f"mnist5k test accuracy of {name}: {acc:.4f} < {target}"


# Issue #3 targets with the default suite's quick budget; the foundation pair is checked above.
# The default suite's models: the samplers (sgld, sghmc, hmc) are out of it (docs/fidelity.md).
ZOO_TARGETS = {name: 0.92 for name in MODELS.names()
               if MODELS.get(name).in_default and name not in ("mlp", "mc_dropout")}
ZOO_TARGETS.update(dict.fromkeys(
    ["dropout", "bbalpha_0", "bbalpha_05", "bbalpha_1", "bhn_iaf", "bhn_realnvp"], 0.94))
# bhn_full at the quick budget (784-100-10, 60 epochs): 0.925 / 0.926 / 0.921 over seeds 0-2.
# bhn_realnvp with 1,200 units (QUICK_BUDGET): .949 / .950 / .950 over seeds 0-2, 2 threads.


# The targets are about a method at a budget, not one training run: the mean over three seeds.
# One seed sat within its own noise of the line. On one machine bbalpha_1 seed 0 scored 0.939
# with the test's evaluation stream and 0.946 / 0.942 with two other S = 100 streams (seeds 1,
# 2: 0.946, 0.948), and bhn_full seed 0 scored 0.915-0.918 (seeds 1, 2: 0.923, 0.923), where
# another machine's floating point had given 0.94+ and 0.925.
# The targets are checked over seeds 0-2 with ROBUSTBNN_FIDELITY_SEEDS=0,1,2 (45 trainings:
# about an hour and a half of CPU on a 2-core EPYC, more than CI's whole budget). CI trains
# seed 0 only and holds it to a regression floor 0.01 under the target: the largest shortfall
# of one seed from its model's target measured so far is 0.005 (bhn_full, 0.915 against 0.92;
# bbalpha_1 0.939 against 0.94), and seed 0 of the committed default leaderboard
# (reports/default, one run) is at or above every target (bhn_full 0.926, dropout 0.945).
SEEDS = tuple(int(s) for s in os.environ.get("ROBUSTBNN_FIDELITY_SEEDS", "0").split(","))
ONE_SEED_MARGIN = 0.01


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ZOO_TARGETS))
def test_zoo_mnist5k_accuracy(name: str) -> None:
    accs = [_test_accuracy(name, "mnist5k", seed) for seed in SEEDS]
    mean = sum(accs) / len(accs)
    summary = f"mnist5k test accuracy of {name}, seeds {SEEDS}: {accs}, mean {mean:.4f}"
    log.info(summary)  # shown with pytest --log-cli-level=INFO
    # The target is about the mean of three seeds; fewer seeds meet the regression floor.
    line = ZOO_TARGETS[name] - (0.0 if len(set(SEEDS)) >= 3 else ONE_SEED_MARGIN)
    # counts out of 1,000, read from float32
    assert round(mean, 4) >= round(line, 4), f"{summary} < {line:.3f}"


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
    assert round(acc, 4) >= 0.980, f"full MNIST test accuracy of {name}: {acc:.4f} < 0.980"
