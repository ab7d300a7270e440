"""Range checks of model configs (``ranges`` tables) and of the bench config (``check``)."""

from __future__ import annotations

import dataclasses

import pytest

from robustbnn.config import OneOf, Range, TrainConfig, check_config, field_ranges, override
from robustbnn.errors import ConfigError
from robustbnn.models import MODELS
from robustbnn.settings import model_config
from robustbnn.suites import SUITES


@pytest.mark.parametrize("name", MODELS.names())
@pytest.mark.parametrize("shrink", ["", "smoke"])
def test_every_default_and_shrink_budget_is_in_range(name: str, shrink: str) -> None:
    cfg = model_config(name, (), shrink)
    assert check_config(cfg, owner=name) is cfg


@pytest.mark.parametrize("suite", SUITES.names())
def test_every_suite_and_its_model_configs_are_in_range(suite: str) -> None:
    cfg = SUITES.get(suite)
    assert cfg.check() == cfg
    for name in cfg.models or MODELS.names():
        model_config(name, cfg.overrides, cfg.shrink)


@pytest.mark.parametrize(("item", "words"), [
    ("mlp.epochs=0", ["mlp.epochs=0", "in [1, 10000]"]),
    ("mc_dropout.val_samples=0", ["mc_dropout.val_samples=0", ">= 1"]),
    ("mlp.batch_size=0", ["mlp.batch_size=0", ">= 1"]),
    ("mlp.lr=-1", ["mlp.lr=-1", "> 0"]),
    ("mlp.hidden=(0,)", ["mlp.hidden=(0,)", ">= 1 (each item)"]),
    ("mc_dropout.p=1.5", ["mc_dropout.p=1.5", "in [0, 1)"]),
    ("mlp.optimizer=adamw", ["mlp.optimizer='adamw'", "one of ['adam', 'sgd']"]),
])
def test_out_of_range_values_name_model_field_value_and_range(item: str,
                                                              words: list[str]) -> None:
    model = item.split(".")[0]
    with pytest.raises(ConfigError) as err:
        model_config(model, (item,))
    assert all(w in str(err.value) for w in words), str(err.value)
    assert f"--set {model}." in str(err.value)  # the fix


def test_star_overrides_are_range_checked_per_model() -> None:
    with pytest.raises(ConfigError, match=r"mc_dropout\.p=1\.5"):
        model_config("mc_dropout", ("*.p=1.5",))


def test_wrong_type_names_the_current_value() -> None:
    with pytest.raises(ConfigError, match=r"mlp\.epochs: expected int, got 'ten'.*50"):
        override(TrainConfig(), "epochs", "ten", owner="mlp")


def test_ranges_merge_along_the_class_hierarchy() -> None:
    ranges = field_ranges(MODELS.get("mc_dropout").config)
    assert ranges["epochs"] == Range(1, 10_000)  # from TrainConfig
    assert ranges["p"] == Range(0, 1, high_open=True)  # its own
    assert isinstance(ranges["activation"], OneOf)  # from MLPConfig


def test_a_plugin_config_inherits_the_training_ranges() -> None:
    @dataclasses.dataclass(frozen=True)
    class PluginConfig(TrainConfig):
        width: int = 3

    with pytest.raises(ConfigError, match="toy.batch_size=0"):
        check_config(PluginConfig(batch_size=0), owner="toy")


def test_range_text() -> None:
    assert str(Range(0, 2**32 - 1)) == "in [0, 4294967295]"
    assert str(Range(0, low_open=True)) == "> 0"
    assert str(Range(0, 1, low_open=True, high_open=True)) == "in (0, 1)"
    assert Range(1).allows((1, 2)) and not Range(1).allows((1, 0))


@pytest.mark.parametrize(("changes", "words"), [
    ({"seed": -1}, ["--seed -1", "[0, 4294967295]"]),
    ({"seed": 2**32}, ["--seed 4294967296"]),
    ({"eps": (0.1, -0.1)}, ["eps=0.1,-0.1", ">= 0"]),
    ({"eps": ("a",)}, ["eps: expected float, got 'a'"]),
    ({"s_eval": 0}, ["s_eval=0", ">= 1"]),
    ({"s_attack": (0, 32)}, ["s_attack=0,32", ">= 1"]),
    ({"n_ood": -5}, ["n_ood=-5", ">= 0"]),
    ({"memory_mb": 0}, ["--memory-mb 0"]),
    ({"detector_fpr": 1.0}, ["detector_fpr=1.0", "in (0, 1)"]),
    ({"models": ("mlp", "mlp")}, ["--models names ['mlp'] more than once"]),
    ({"ood": ("uniform", "uniform")}, ["--ood names ['uniform'] more than once"]),
    ({"seed": True}, ["--seed: expected int, got True"]),
    ({"ood_counts": (("uniform", -1),)}, ["uniform=-1"]),
])
def test_bench_config_check(changes: dict, words: list[str]) -> None:
    cfg = dataclasses.replace(SUITES.get("smoke"), **changes)
    with pytest.raises(ConfigError) as err:
        cfg.check()
    assert all(w in str(err.value) for w in words), str(err.value)
