from __future__ import annotations

import pytest

from robustbnn.errors import UnknownNameError
from robustbnn.models import MODELS
from robustbnn.registry import Registry


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


def test_models_registry_has_the_foundation_models() -> None:
    assert {"mlp", "mc_dropout"} <= set(MODELS.names())
    with pytest.raises(UnknownNameError, match="unknown model 'nope'; known: .*'mc_dropout'"):
        MODELS.get("nope")
