"""The real MNIST files from ``$ROBUSTBNN_DATA`` (e.g. ``ROBUSTBNN_DATA=../shared/data``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from robustbnn.data import DATASETS, load_dataset

# Class counts from docs/provenance.md.
OFFICIAL_TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
OFFICIAL_TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
FINGERPRINT = "db79a6f9f2bdf5bff0d922aaf9fa0662a6e1b3d71cc6df2a9f733c741ea197b0"


@pytest.mark.slow
def test_real_mnist():
    root = os.environ.get("ROBUSTBNN_DATA")
    if not root:
        pytest.skip("ROBUSTBNN_DATA is not set; point it at a folder holding mnist/")
    if not DATASETS.get("mnist").available(Path(root)):
        pytest.skip(f"the four MNIST IDX files are not under {root}")
    b = load_dataset("mnist")
    assert (len(b.train), len(b.val), len(b.test)) == (50000, 10000, 10000)
    assert b.train.x.shape == (50000, 1, 28, 28) and b.train.x.dtype == torch.float32
    assert 0.0 == b.train.x.min() and b.train.x.max() == 1.0
    train_counts = torch.bincount(torch.cat([b.train.y, b.val.y]), minlength=10)
    assert train_counts.tolist() == OFFICIAL_TRAIN_COUNTS
    assert torch.bincount(b.test.y, minlength=10).tolist() == OFFICIAL_TEST_COUNTS
    assert b.val.y[-3:].tolist() == [5, 6, 8]  # the last labels of the official training set
    assert b.fingerprint == FINGERPRINT
