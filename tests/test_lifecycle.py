"""The model lifecycle: epoch and post-fit hooks, cache keys that notice code, shrink budgets,
and the global-RNG recipe."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from torch import nn

from robustbnn.config import TrainConfig
from robustbnn.contract.rng import seeded_global
from robustbnn.data import DataBundle, Split
from robustbnn.models import MODELS
from robustbnn.models.base import BayesianModule, ModelSpec, code_identity
from robustbnn.settings import model_config
from robustbnn.training import cache
from robustbnn.training.fit_or_load import TrainSetup, fit_or_load, model_cache_key

C = 3


def _data(n: int = 60) -> DataBundle:
    g = torch.Generator().manual_seed(0)
    x = torch.rand(n, 1, 2, 2, generator=g)
    y = x.flatten(1)[:, :C].argmax(1)
    return DataBundle("toy", Split(x, y), Split(x[:20], y[:20]), Split(x[:20], y[:20]), C,
                      "toyfp", "test")


@dataclasses.dataclass(frozen=True)
class _Cfg(TrainConfig):
    epochs: int = 4
    batch_size: int = 20


class _Hooked(BayesianModule):
    """Records what the harness calls; after_fit's result lives in a buffer."""

    calls: list[tuple] = []

    def __init__(self, cfg, input_shape, num_classes, generator) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.fc = nn.Linear(4, num_classes)
        self.register_buffer("fitted", torch.zeros(()))

    def sample_logits(self, x, n_samples, *, generator=None):
        out = self.fc(x.flatten(1)) + self.fitted
        return out.expand(n_samples, *out.shape)

    def on_epoch_end(self, epoch, *, generator=None) -> None:
        self.calls.append(("epoch", epoch, torch.is_grad_enabled()))

    def after_fit(self, train, val, *, generator=None) -> None:
        weight = self.fc.weight.detach().clone()
        self.calls.append(("after_fit", len(train), len(val), torch.is_grad_enabled(), weight))
        self.fitted.fill_(1.0)


HOOKED = ModelSpec(_Hooked, _Cfg, "hooks", "test", stochastic=False)


@pytest.fixture
def hooked() -> Iterator[str]:
    _Hooked.calls.clear()
    with MODELS.temporary("_test_hooked", HOOKED):
        yield "_test_hooked"


def test_hooks_run_in_order_after_the_best_epoch_restore_and_not_on_a_cache_hit(
        hooked: str, tmp_path: Path) -> None:
    data = _data()
    model, record = fit_or_load(hooked, _Cfg(), data,
                                TrainSetup(0, torch.device("cpu"), tmp_path))
    epochs = [c for c in _Hooked.calls if c[0] == "epoch"]
    assert [c[1] for c in epochs] == [1, 2, 3, 4] and not any(c[2] for c in epochs)
    [after] = [c for c in _Hooked.calls if c[0] == "after_fit"]
    assert _Hooked.calls[-1] is after  # once, last
    assert after[1:4] == (60, 20, True)  # train and val splits, under enable_grad
    torch.testing.assert_close(after[4], model.fc.weight)  # the restored weights it saw
    assert model.fitted.item() == 1.0

    _Hooked.calls.clear()
    again, record2 = fit_or_load(hooked, _Cfg(), data,
                                 TrainSetup(0, torch.device("cpu"), tmp_path))
    assert record2.cached and _Hooked.calls == []  # no hook on a hit: the cache holds it
    assert again.fitted.item() == 1.0


def test_version_is_in_the_cache_key(hooked: str) -> None:
    data = _data()
    key = model_cache_key(hooked, _Cfg(), data, 0)
    assert key == model_cache_key(hooked, _Cfg(), data, 0)
    with MODELS.temporary(hooked, dataclasses.replace(HOOKED, version="2"), replace=True):
        assert model_cache_key(hooked, _Cfg(), data, 0) != key
    assert code_identity(MODELS.get("mlp")) == {}  # keys from before versions stay valid


@pytest.mark.bench
def test_editing_a_plugin_changes_its_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    source = textwrap.dedent('''
        from robustbnn.models import MODELS, ModelSpec
        from tests.test_lifecycle import _Cfg, _Hooked
        def build(cfg, shape, c, g):
            return _Hooked(cfg, shape, c, g)
        MODELS.register("_test_edited", ModelSpec(build, _Cfg, "x", "y", stochastic=False))
    ''')
    module = tmp_path / "_edited_plugin.py"
    monkeypatch.syspath_prepend(str(tmp_path))
    keys = []
    for edit in ("", "# an edit\n"):
        module.write_text(source + edit)
        sys.modules.pop("_edited_plugin", None)
        with MODELS.sandbox():
            importlib.import_module("_edited_plugin")
            ident = code_identity(MODELS.get("_test_edited"))
            assert set(ident) == {"source"}
            keys.append(model_cache_key("_test_edited", _Cfg(), _data(), 0))
    assert keys[0] != keys[1]


def test_a_cache_entry_from_other_code_is_refused_naming_no_cache(
        hooked: str, tmp_path: Path) -> None:
    from robustbnn.errors import CacheMismatchError

    data = _data()
    model, record = fit_or_load(hooked, _Cfg(), data,
                                TrainSetup(0, torch.device("cpu"), tmp_path))
    wider = nn.Linear(4, 5)  # the same key, but the code now builds another layout
    with pytest.raises(CacheMismatchError, match="--no-cache"):
        cache.load(tmp_path, hooked, record.cache_key, nn.ModuleDict({"fc": wider}))


def test_suites_shrink_each_model_by_its_declaration(hooked: str,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    def shrunk(shrink: dict) -> contextlib.AbstractContextManager:
        return MODELS.temporary(hooked, dataclasses.replace(HOOKED, shrink=shrink), replace=True)

    with shrunk({"smoke": {"epochs": 1}}):
        assert model_config(hooked, (), "smoke").epochs == 1
        assert model_config(hooked, (f"{hooked}.epochs=2",), "smoke").epochs == 2  # --set wins
    with pytest.raises(Exception, match="no setting 'hidden'"), \
            shrunk({"smoke": {"hidden": (3,)}}):
        model_config(hooked, (), "smoke")
    with shrunk({}), caplog.at_level(logging.WARNING):
        assert model_config(hooked, (), "smoke").epochs == 4
    assert "declares no 'smoke' budget" in caplog.text
    for name in MODELS.names():  # every built-in model declares its smoke budget
        if MODELS.get(name).config.__module__.startswith("robustbnn."):  # not other tests'
            assert "smoke" in MODELS.get(name).shrink, name


def test_seeded_global_is_a_pure_function_of_the_generator() -> None:
    torch.manual_seed(123)
    before = torch.get_rng_state()
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    with seeded_global(g1):
        a = torch.randn(4)
    with seeded_global(g2):
        b = torch.randn(4)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert torch.equal(torch.get_rng_state(), before)  # the caller's stream is untouched
    with seeded_global(g1):  # the generator advanced: the next call differs
        c = torch.randn(4)
    assert not torch.equal(a, c)
    with seeded_global(torch.Generator().manual_seed(6)):
        assert not torch.equal(torch.randn(4), a)
    with seeded_global(None):  # no generator: the global RNG as it is
        torch.randn(1)
    assert not torch.equal(torch.get_rng_state(), before)
