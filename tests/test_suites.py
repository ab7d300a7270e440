"""Suites name only sets a data root can hold; the paper suite runs offline on the seed data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from robustbnn.data import DATASETS
from robustbnn.data.heldout import parse_heldout
from robustbnn.data.ood_sets import OOD_DATASETS
from robustbnn.suites import SUITES


def test_the_paper_suite_names_only_the_papers_sets() -> None:
    sets = [o for o in SUITES.get("paper").ood if parse_heldout(o) is None]
    assert "fashion_mnist" not in sets and "kmnist" not in sets
    assert {"notmnist", "omniglot", "cifar10bw", "uniform", "gaussian"} <= set(sets)


@pytest.mark.parametrize("suite", SUITES.names())
def test_every_suite_set_is_available_offline_under_the_data_root(suite: str) -> None:
    root = os.environ.get("ROBUSTBNN_DATA")
    if not root:
        pytest.skip("set ROBUSTBNN_DATA (CI: ../shared/data) to check the suites offline")
    cfg = SUITES.get(suite)
    missing = [o for o in cfg.ood if parse_heldout(o) is None
               and not OOD_DATASETS.get(o).available(Path(root))]
    assert not missing, f"suite {suite} needs {missing}, not under {root}"
    assert DATASETS.get(cfg.dataset).available(Path(root))
