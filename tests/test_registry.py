from __future__ import annotations

import pytest

from robustbnn.errors import UnknownNameError
from robustbnn.models import MODELS
from robustbnn.registry import Registry
from tests._registrations import registered_names


def test_unknown_name_lists_known_names() -> None:
    reg = Registry[int]("widget")
    reg.register("b", 2)
    reg.register("a", 1)
    with pytest.raises(KeyError) as info:
        reg.get("c")
    assert isinstance(info.value, UnknownNameError)
    assert str(info.value) == "unknown widget 'c'; known: ['a', 'b']"
    assert reg.names() == ["b", "a"]


def test_duplicate_registration_raises() -> None:
    reg = Registry[int]("widget")
    reg.register("a")(1)
    with pytest.raises(ValueError, match="already registered"):
        reg.register("a", 3)


def test_models_registry_holds_what_the_model_files_register() -> None:
    expected = registered_names("robustbnn.models", "MODELS.register")
    assert {"mlp", "mc_dropout"} <= set(expected)
    # plug-ins registered by other tests come after the package's own models
    assert MODELS.names()[: len(expected)] == expected
    for name in expected:
        assert MODELS.get(name).description
    with pytest.raises(UnknownNameError) as info:
        MODELS.get("nope")
    assert str(info.value) == f"unknown model 'nope'; known: {sorted(MODELS.names())}"
