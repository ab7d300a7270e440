"""BHN Table 2 (anomaly detection on MNIST) with the ``bhn_table2`` suite, on real files.

Slow: trains the 784-256-256-256-10 tanh-GELU MLP and MC-dropout nets on full MNIST (20
epochs each) and scores them on every OOD set of the data root with 100 MC samples. Runs
when ``$ROBUSTBNN_DATA`` holds MNIST and the four OOD sets (CI sets it to ../shared/data).

Measured with ``robustbnn bench --suite bhn_table2 --seed S`` (unit preprocessing), AUROC by
max prob ×100, seeds 0 / 1 / 2 (published Table 2 in brackets):

* mc_dropout: uniform 98.37 / 99.43 / 99.59 (98.90), notMNIST 95.04 / 96.74 / 97.32 (97.78),
  Omniglot 94.98 / 94.86 / 94.30 (95.87), CIFAR-bw 97.28 / 98.92 / 98.88 (98.70);
* mlp: notMNIST 85.02 / 89.57 / 87.15 (81.12).

The MC-dropout rows hold within 2.8 points of the paper on every seed, so 3.5 points is the
tolerance; the plain MLP's rows move 3-7 points with the checkpoint (PROTOCOLS.md §8.3), so
only the paper's ordering is asserted for it: MC dropout beats the MLP on notMNIST.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.bench import BenchOptions, run_bench
from robustbnn.data.mnist import mnist_available
from robustbnn.data.ood_sets import OOD_DATASETS
from robustbnn.suites import SUITES

# BHN Table 2, "MC dropout" ROC column [SEED], ×100.
PUBLISHED_MC_DROPOUT = {"uniform": 98.90, "notmnist": 97.78, "omniglot": 95.87,
                        "cifar10bw": 98.70}
TOLERANCE = 3.5


@pytest.mark.slow
def test_table2_mc_dropout_rows_and_notmnist_ordering(tmp_path: Path) -> None:
    root = os.environ.get("ROBUSTBNN_DATA")
    if not root or not mnist_available(Path(root)):
        pytest.skip("full MNIST not found: set ROBUSTBNN_DATA to a folder holding mnist/")
    cfg = SUITES.get("bhn_table2")
    missing = [o for o in cfg.ood if not OOD_DATASETS.get(o).available(Path(root))]
    if missing:
        pytest.skip(f"OOD sets {missing} not under {root}")
    run_bench(cfg, BenchOptions(out_dir=tmp_path, suite="bhn_table2", data_root=Path(root),
                                save_scores=False))
    results = pd.read_csv(tmp_path / "results.csv", keep_default_na=False)
    sel = results[(results["task"] == "ood") & (results["measure"] == "max_prob")
                  & (results["metric"] == "auroc")]
    auroc = sel.set_index(["model", "dataset"])["value"] * 100
    print(auroc.round(2).to_string())  # shown with pytest -s
    for dataset, published in PUBLISHED_MC_DROPOUT.items():
        assert abs(auroc["mc_dropout", dataset] - published) <= TOLERANCE, dataset
    assert auroc["mc_dropout", "notmnist"] > auroc["mlp", "notmnist"] + 3
