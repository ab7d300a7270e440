"""Fuzz the readers of robustbnn's own files: cache entries, results.jsonl, tolerances.json.

A cache entry is verified before use: damaged bytes are a miss (None, the model untouched),
an intact entry of another architecture is a CacheMismatchError naming the entry; nothing is
half-loaded. The report readers return data or raise a UserError naming the file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from torch import nn

from robustbnn.errors import CacheMismatchError
from robustbnn.report.regression import load_tolerances
from robustbnn.results.schema import Result
from robustbnn.results.store import RESULTS, read_results
from robustbnn.training import cache
from tests.fuzz._fuzz import mutated, random_bytes, reader_outcome

NAME, KEY = "toy", "0123456789abcdef"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("own_files")


def _net() -> nn.Module:
    """The 3 -> 2 linear net the seed entry holds, with fixed weights."""
    net = nn.Linear(3, 2)
    with torch.no_grad():
        net.weight.copy_(torch.arange(6.0).reshape(2, 3))
        net.bias.copy_(torch.tensor([1.0, 2.0]))
    return net


def _record(weights: bytes, tensors: object = None) -> dict:
    """A config.json that vouches for ``weights`` (the layout of the 3 -> 2 net by default)."""
    layout = {"weight": {"shape": [2, 3], "dtype": "float32"},
              "bias": {"shape": [2], "dtype": "float32"}}
    return {"cache": {"format": cache.CACHE_FORMAT, "key": KEY, "model": NAME,
                      "sha256": hashlib.sha256(weights).hexdigest(),
                      "tensors": layout if tensors is None else tensors},
            "meta": {"seed": 0}}


WEIGHTS = save_tensors({k: v.contiguous() for k, v in _net().state_dict().items()})
CONFIG = json.dumps(_record(WEIGHTS)).encode()


def _check_entry(root: Path, config: bytes, weights: bytes) -> None:
    entry = cache.entry_dir(root, NAME, KEY)
    shutil.rmtree(entry, ignore_errors=True)
    entry.mkdir(parents=True)
    (entry / cache.CONFIG).write_bytes(config)
    (entry / cache.WEIGHTS).write_bytes(weights)
    model = nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.fill_(7.0)
        model.bias.fill_(7.0)
    with reader_outcome(str(entry)):
        meta = cache.load(root, NAME, KEY, model)
        if meta is None:  # a miss: nothing copied
            assert bool((model.weight == 7).all()) and bool((model.bias == 7).all())
        else:  # everything verified: exactly the stored tensors
            assert isinstance(meta, dict)
            stored = load_tensors(weights)
            assert torch.equal(model.weight, stored["weight"])
            assert torch.equal(model.bias, stored["bias"])


@pytest.mark.bench
@given(config=random_bytes, weights=random_bytes)
def test_cache_random_bytes(folder: Path, config: bytes, weights: bytes) -> None:
    _check_entry(folder / "cache_random", config, weights)


@pytest.mark.bench
@given(config=json_values.map(lambda v: json.dumps(v).encode()), weights=random_bytes)
def test_cache_random_json(folder: Path, config: bytes, weights: bytes) -> None:
    _check_entry(folder / "cache_json", config, weights)


@pytest.mark.bench
@given(weights=st.one_of(random_bytes, mutated(WEIGHTS)), tensors=st.none() | json_values)
def test_cache_weights_that_config_vouches_for(folder: Path, weights: bytes,
                                               tensors: object) -> None:
    """The recorded sha256 matches, so the safetensors parser itself meets the bytes."""
    _check_entry(folder / "cache_vouched", json.dumps(_record(weights, tensors)).encode(),
                 weights)


@pytest.mark.bench
@given(config=mutated(CONFIG))
def test_cache_mutated_config(folder: Path, config: bytes) -> None:
    _check_entry(folder / "cache_mutated", config, WEIGHTS)


def test_cache_seed_entry_loads(folder: Path) -> None:
    _check_entry(folder / "cache_seed", CONFIG, WEIGHTS)
    model = nn.Linear(3, 2)
    assert cache.load(folder / "cache_seed", NAME, KEY, model) == {"seed": 0}
    with pytest.raises(CacheMismatchError, match="--no-cache"):
        cache.load(folder / "cache_seed", NAME, KEY, nn.Linear(3, 4))


ROW = Result("mlp", 0, "clean", "mnist", {"eps": 0.1}, "none", "accuracy", 0.9).to_json()
RESULTS_SEED = (json.dumps(ROW) + "\n" + json.dumps({**ROW, "seed": 1}) + "\n").encode()


def _check_results(run: Path, data: bytes, *, name: str = RESULTS) -> None:
    run.mkdir(parents=True, exist_ok=True)
    for old in run.iterdir():
        old.unlink()
    (run / name).write_bytes(data)
    with reader_outcome(str(run)):
        frame = read_results(run)
        assert isinstance(frame, pd.DataFrame) and len(frame) > 0


@given(data=random_bytes)
def test_results_random_bytes(folder: Path, data: bytes) -> None:
    _check_results(folder / "run_random", data)


@given(data=random_bytes)
def test_results_csv_alone(folder: Path, data: bytes) -> None:
    _check_results(folder / "run_csv", data, name="results.csv")


@pytest.mark.bench
@given(rows=st.lists(st.one_of(json_values, st.fixed_dictionaries(
    {k: json_values for k in ROW}, optional={"extra": json_values})), min_size=1, max_size=3))
def test_results_random_rows(folder: Path, rows: list) -> None:
    _check_results(folder / "run_rows", "".join(json.dumps(r) + "\n" for r in rows).encode())


@pytest.mark.bench
@given(data=mutated(RESULTS_SEED))
def test_results_mutated(folder: Path, data: bytes) -> None:
    _check_results(folder / "run_mutated", data)


TOLERANCES = json.dumps({"method": "x", "columns": {"acc": 0.01, "params": 0}}).encode()


def _check_tolerances(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    with reader_outcome(str(path)):
        tolerances = load_tolerances(path)
        assert all(isinstance(v, float) and v >= 0 for v in tolerances.values())


@pytest.mark.bench
@given(data=st.one_of(random_bytes, json_values.map(lambda v: json.dumps(v).encode()),
                      st.dictionaries(st.text(max_size=4), json_values).map(
                          lambda c: json.dumps({"columns": c}).encode())))
def test_tolerances_random(folder: Path, data: bytes) -> None:
    _check_tolerances(folder / "tolerances.json", data)


@pytest.mark.bench
@given(data=mutated(TOLERANCES))
def test_tolerances_mutated(folder: Path, data: bytes) -> None:
    _check_tolerances(folder / "tolerances.json", data)


def test_seeds_are_valid(folder: Path) -> None:
    _check_results(folder / "run_seed", RESULTS_SEED)
    assert len(read_results(folder / "run_seed")) == 2
    (folder / "t.json").write_bytes(TOLERANCES)
    assert load_tolerances(folder / "t.json") == {"acc": 0.01, "params": 0.0}
