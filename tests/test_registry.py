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


def test_temporary_registers_for_the_block_only_even_on_error() -> None:
    reg = Registry[int]("widget")
    reg.register("a", 1)
    with reg.temporary("t", 2) as obj:
        assert obj == 2 and reg.get("t") == 2 and reg.names() == ["a", "t"]
    assert reg.names() == ["a"]
    with pytest.raises(RuntimeError, match="boom"), reg.temporary("t", 3):
        raise RuntimeError("boom")
    assert reg.names() == ["a"]


def test_temporary_refuses_a_taken_name_and_keeps_the_entry() -> None:
    reg = Registry[int]("widget")
    reg.register("a", 1)
    with pytest.raises(ValueError) as info, reg.temporary("a", 2):
        pass
    assert str(info.value) == "widget 'a' is already registered"
    assert reg.get("a") == 1


def test_sandbox_undoes_registrations_even_on_error() -> None:
    reg = Registry[int]("widget")
    reg.register("a", 1)
    with pytest.raises(RuntimeError, match="boom"), reg.sandbox():
        reg.register("b", 2)
        raise RuntimeError("boom")
    assert reg.names() == ["a"] and reg.get("a") == 1


def test_temporary_replace_stands_in_and_restores_the_entry_in_place() -> None:
    reg = Registry[int]("widget")
    reg.register("a", 1)
    reg.register("b", 2)
    with pytest.raises(RuntimeError, match="boom"), reg.temporary("a", 10, replace=True):
        assert reg.get("a") == 10 and reg.names() == ["a", "b"]
        raise RuntimeError("boom")
    assert reg.get("a") == 1 and reg.names() == ["a", "b"]
    with reg.temporary("c", 3, replace=True):  # nothing to replace: a plain registration
        assert reg.get("c") == 3
    assert reg.names() == ["a", "b"]
