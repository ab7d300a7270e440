"""The reference task: its protocol as data, its tensors from robustbnn's own loaders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from robustbnn.data import DATASETS, load_dataset
from robustbnn.errors import ConfigError
from robustbnn.posterior.reference_task import (
    ReferenceTask,
    prepare_reference_data,
    unflatten,
)


def test_default_task_is_the_documented_protocol() -> None:
    task = ReferenceTask()
    assert (task.dataset, task.n_train, task.pool, task.hidden) == ("mnist5k", 2000, 4, 50)
    assert (task.prior_var, task.temperature, task.activation) == (0.2, 1.0, "tanh")
    assert task.in_features == 49 and task.num_params == 50 * 49 + 50 + 10 * 50 + 10 == 3010
    real = {n: tuple(p.shape) for n, p in task.build_net().named_parameters()}
    assert task.param_shapes() == real  # flat order = the net's parameter order


def test_features_average_pool_blocks() -> None:
    task = ReferenceTask(pool=14)
    x = torch.zeros(2, 1, 28, 28)
    x[1, 0, :14, 14:] = 1.0  # top-right block of the second image
    assert torch.equal(task.features(x), torch.tensor([[0.0, 0, 0, 0], [0, 1, 0, 0]]))


def test_unflatten_splits_in_order_with_leading_axes() -> None:
    task = ReferenceTask(pool=14, hidden=3)  # P = 5 * 3 + 4 * 10 = 55
    theta = torch.arange(2 * 5 * 55.0).reshape(2, 5, 55)
    parts = unflatten(task, theta)
    assert parts["0.weight"].shape == (2, 5, 3, 4) and parts["2.bias"].shape == (2, 5, 10)
    assert torch.equal(torch.cat([p.flatten(2) for p in parts.values()], -1), theta)
    with pytest.raises(ValueError, match="length P=55"):
        unflatten(task, torch.zeros(54))


@pytest.mark.parametrize(("field", "value", "match"), [
    ("n_train", 0, "n_train must be >= 1"), ("pool", 5, "pool must divide 28"),
    ("prior_var", 0.0, "prior_var and temperature must be > 0"),
    ("activation", "gelu", "unknown ReferenceTask.activation 'gelu'"),
])
def test_bad_task_values_are_config_errors(field: str, value: object, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        ReferenceTask(**{field: value})


def test_embedded_mnist5k_needs_no_data_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROBUSTBNN_DATA", raising=False)
    task = ReferenceTask(n_train=300, n_test=70)
    data = prepare_reference_data(task)
    bundle = load_dataset("mnist5k")
    assert data.x_train.shape == (300, 1, 28, 28) and data.y_train.shape == (300,)
    assert data.x_test.shape == (70, 1, 28, 28) and data.y_test.dtype == torch.int64
    assert torch.equal(data.x_train, bundle.train.x[:300])  # the first N, in split order
    assert torch.equal(data.y_test, bundle.test.y[:70])
    assert data.fingerprint == prepare_reference_data(task).fingerprint
    assert data.fingerprint != prepare_reference_data(ReferenceTask(n_train=301,
                                                                    n_test=70)).fingerprint
    assert bundle.fingerprint in data.source


def test_more_images_than_the_dataset_has_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="n_train=4000 but mnist5k has only 3600"):
        prepare_reference_data(ReferenceTask(n_train=4000))


@pytest.mark.slow
def test_full_mnist_from_the_data_root() -> None:
    root = os.environ.get("ROBUSTBNN_DATA")
    if not root or not DATASETS.get("mnist").available(Path(root)):
        pytest.skip("full MNIST not found: set ROBUSTBNN_DATA to a folder holding mnist/")
    data = prepare_reference_data(ReferenceTask(dataset="mnist"))
    assert data.x_train.shape == (2000, 1, 28, 28) and data.x_test.shape == (1000, 1, 28, 28)
    assert torch.equal(data.y_train, load_dataset("mnist").train.y[:2000])
