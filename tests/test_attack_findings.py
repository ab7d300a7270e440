"""The papers' qualitative attack findings, reproduced on mnist5k with the default suite.

Slow: each test trains its models. The thresholds leave a wide margin around what the
default bench measured (numbers in the comments; seed 0, 2 CPU cores).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest
import torch

from robustbnn.bench import BenchOptions, check_bench, run_bench
from robustbnn.bench_config import BenchConfig
from robustbnn.contract.checked import Checked
from robustbnn.data import load_dataset
from robustbnn.results.store import read_results
from robustbnn.run.cells import Cell
from robustbnn.run.context import Context, RunSpec, prepare_data
from robustbnn.run.tasks import TASKS
from robustbnn.settings import model_config
from robustbnn.suites import SUITES
from robustbnn.training.fit_or_load import TrainSetup, fit_or_load

CPU = torch.device("cpu")
log = logging.getLogger(__name__)  # the measured numbers: pytest --log-cli-level=INFO




@pytest.mark.slow
def test_mc_gradients_and_bald_adversary_detection(tmp_path: Path) -> None:
    # Only the FGSM cells are read: no robustness or shift cells (each cell has its own id and
    # random streams, so the FGSM numbers are those of the full default suite).
    cfg = dataclasses.replace(SUITES.get("default"), models=("mc_dropout", "bbb_gaussian"),
                              targeted_steps=0, ood=(), eps=(0.005, 0.02, 0.1), robustness=(),
                              shift=())
    run_bench(check_bench(cfg), BenchOptions(out_dir=tmp_path, cache_dir=tmp_path / "cache"))
    results = read_results(tmp_path)
    fgsm = results[results["task"] == "fgsm"].copy()
    fgsm["eps"] = fgsm["setting"].map(lambda s: s["eps"])
    fgsm["S"] = fgsm["setting"].map(lambda s: s["S_attack"])
    for model in cfg.models:
        acc = fgsm[(fgsm["model"] == model) & (fgsm["metric"] == "accuracy")
                   & (fgsm["eps"] == 0.1)].set_index("S")["value"]
        found = f"{model}: FGSM accuracy at eps 0.1, S=1 {acc[1]:.3f}, S=32 {acc[32]:.3f}"
        log.info(found)
        # BHN App. A.3: 32 samples make a stronger attack (measured .356 vs .266; .454 vs .438).
        # Measured spread of acc[32] - acc[1] (the default board's FGSM columns, seeds 0-2 on
        # the Xeon, reports/default, and on the EPYC, 749e488): mc_dropout -0.064 to -0.105,
        # bbb_gaussian -0.006 to -0.149 (seed 0: -0.011 Xeon, -0.013 EPYC). The closest of
        # the 12 runs sits 0.016 under the line.
        assert acc[32] <= acc[1] + 0.01, found
        bald = fgsm[(fgsm["model"] == model) & (fgsm["measure"] == "bald")
                    & (fgsm["metric"] == "adversary_detection") & (fgsm["S"] == 1)]
        curve = bald.set_index("eps")["value"].sort_index()
        found = f"{model}: BALD adversary-detection AUROC {curve.round(3).to_dict()}"
        log.info(found)
        # BHN Fig. 5: above chance and rising over small eps (measured .53 → .62 → .81).
        assert (curve > 0.5).all() and curve.is_monotonic_increasing, found
        assert curve[0.1] > 0.7, found
    sanity = results[(results["task"] == "fgsm_sanity") & (results["metric"] == "passed")]
    assert sanity["value"].eq(1.0).all(), sanity[sanity["value"] < 1].to_string()


def _targeted_success(name: str, data, steps: int, override: str = 'arch="cnn"') -> list[float]:
    cfg = model_config(name, (*SUITES.get("default").overrides, f"{name}.{override}"))
    model, _ = fit_or_load(name, cfg, data, TrainSetup(0, CPU, None))
    bench = dataclasses.replace(BenchConfig(), s_eval=100)
    params = {"steps": steps, "step_size": 0.01, "S_attack": 10 if name != "mlp" else 1,
              "objective": "predictive", "target": 0, "every": 10, "n": 300, "S_eval": 100,
              "memory_mb": bench.memory_mb}  # as the plan gives every evaluation cell
    spec = RunSpec(bench, None, False, "cpu", "")
    model.eval()
    ctx = Context(Cell("targeted", name, params), spec, data, Checked(model, name))
    return [r["value"] for r in TASKS.get("targeted")(ctx).rows
            if r["metric"] == "target_success"]


@pytest.mark.slow
def test_targeted_attack_fools_the_deterministic_cnn_sooner_than_mc_dropout() -> None:
    data = prepare_data(SUITES.get("default"), load_dataset("mnist5k"), CPU)
    mlp = _targeted_success("mlp", data, steps=30)
    mc = _targeted_success("mc_dropout", data, steps=30)
    found = f"target success every 10 steps, mlp CNN {mlp}, mc_dropout CNN {mc}"
    log.info(found)
    # Li & Gal Fig. 7 with their CNN (measured at step 30: mlp .973, mc_dropout .390).
    assert mc[0] < 0.02 and mlp[0] < 0.02, found
    assert mlp[-1] > 0.9 and mc[-1] < mlp[-1] - 0.3, found


@pytest.mark.slow
def test_alpha_one_dropout_is_fooled_later_than_the_deterministic_mlp_of_li_and_gal() -> None:
    # Li & Gal's adversarial net, 3 x 1000 units (docs/protocols.md §3.3); "dropout networks,
    # especially the one trained with alpha = 1.0, are significantly more robust". This test
    # measured at steps 10/20/30 (seed 0, 2 threads): mlp .174/.894/.996, bbalpha_1
    # .095/.458/.886 on one machine; on another (its floating point trains other weights) the
    # mlp .811 at step 20 and bbalpha_1 .663 with this test's stream, .614/.636 (attack
    # samples with shared masks) and .640/.633 (a mask per example) with four others: the same
    # finding, a smaller gap. (mc_dropout, which drops no input pixels, was fooled as fast as
    # the mlp;
    # so was the default 2 x 800 pair.) After 100 steps (L-inf up to 1) every model predicts
    # the target: as the paper says, the image has then become a zero. This is Li & Gal's
    # S_attack = 10; with 100 samples most of the gap closes (docs/attacks.md).
    data = prepare_data(SUITES.get("default"), load_dataset("mnist5k"), CPU)
    net = "hidden=(1000,1000,1000)"
    mlp = _targeted_success("mlp", data, steps=30, override=net)
    alpha1 = _targeted_success("bbalpha_1", data, steps=30, override=net)
    found = f"target success every 10 steps, 3x1000: mlp {mlp}, bbalpha_1 {alpha1}"
    log.info(found)
    assert mlp[-1] > 0.9, found
    assert alpha1[2] < mlp[2] - 0.1, found  # [0] is step 0, [2] step 20
