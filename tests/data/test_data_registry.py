from __future__ import annotations

import dataclasses

import pytest

from robustbnn.data import DATASETS, DataBundle, load_dataset
from robustbnn.data.recipes import load_recipe, recipe_names
from robustbnn.errors import UnknownNameError
from tests._registrations import registered_names


def test_names():
    # registration order, read from the dataset files
    assert DATASETS.names() == registered_names("robustbnn.data", "DATASETS.register")
    assert {"mnist", "mnist5k"} <= set(DATASETS.names())
    for name in DATASETS.names():
        spec = DATASETS.get(name)
        assert spec.name == name and spec.description
        assert name in recipe_names() and load_recipe(name)["name"] == name


def test_unknown_dataset_lists_known_names():
    with pytest.raises(UnknownNameError) as info:
        load_dataset("cifar100")
    assert str(info.value) == f"unknown dataset 'cifar100'; known: {sorted(DATASETS.names())}"
    assert isinstance(info.value, KeyError)


def test_unknown_recipe():
    with pytest.raises(UnknownNameError, match="unknown recipe '../pyproject'; known: .*'mnist'"):
        load_recipe("../pyproject")


def test_recipe_is_a_fresh_copy():
    load_recipe("mnist")["files"].clear()
    assert len(load_recipe("mnist")["files"]) == 4


def test_spec_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DATASETS.get("mnist").embedded = True  # type: ignore[misc]


def test_load_returns_bundle():
    assert isinstance(load_dataset("mnist5k"), DataBundle)
