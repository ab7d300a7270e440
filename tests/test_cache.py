"""The checkpoint cache: verified loads, damaged entries as untouched misses, concurrency."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import multiprocessing
import os
import shutil
import stat
from collections.abc import Callable
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
import torch
from filelock import Timeout
from safetensors.torch import save_file
from torch import nn

from robustbnn.errors import CacheMismatchError
from robustbnn.training import cache

NAME, KEY, OTHER_KEY = "toy", "0123456789abcdef", "fedcba9876543210"


class _Net(nn.Module):
    """A tiny classifier; ``out``, ``bias`` and ``extra`` change its state dict."""

    def __init__(self, out: int = 2, *, bias: bool = True, extra: bool = False) -> None:
        super().__init__()
        self.fc = nn.Linear(3, out, bias=bias)
        if extra:
            self.extra = nn.Parameter(torch.ones(4))


def _state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _assert_same(state: dict[str, torch.Tensor], model: nn.Module) -> None:
    now = model.state_dict()
    assert now.keys() == state.keys()
    for k, v in state.items():
        assert torch.equal(now[k], v), k


def _config(entry: Path) -> dict:
    return json.loads((entry / cache.CONFIG).read_text())


def _write_config(entry: Path, config: object) -> None:
    (entry / cache.CONFIG).write_text(json.dumps(config))


def _leftovers(tmp_path: Path) -> list[str]:
    """Temporary and trash folders left beside the entries."""
    return sorted(p.name for p in (tmp_path / NAME).iterdir() if p.name.startswith("."))


def test_round_trip_restores_weights_and_metadata(tmp_path: Path) -> None:
    saved, meta = _Net(), {"seed": 3, "fit": {"loss": 0.25, "epochs": [1, 2]}, "model": NAME}
    entry = cache.save(tmp_path, NAME, KEY, saved, meta)
    assert entry == cache.entry_dir(tmp_path, NAME, KEY)
    assert sorted(p.name for p in entry.iterdir()) == [cache.CONFIG, cache.WEIGHTS]

    record = _config(entry)["cache"]
    assert (record["format"], record["key"], record["model"]) == (cache.CACHE_FORMAT, KEY, NAME)
    assert len(record["sha256"]) == 64
    assert record["tensors"] == {"fc.weight": {"shape": [2, 3], "dtype": "float32"},
                                 "fc.bias": {"shape": [2], "dtype": "float32"}}

    fresh = _Net()
    assert not torch.equal(fresh.fc.weight, saved.fc.weight)
    assert cache.load(tmp_path, NAME, KEY, fresh) == meta
    _assert_same(_state(saved), fresh)
    assert _leftovers(tmp_path) == []


@dataclasses.dataclass(frozen=True)
class _Config:
    width: int = 3


def test_format_2_keys_miss_format_1_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache.CACHE_FORMAT == 2
    key = cache.cache_key(NAME, _Config(), "data", 0)
    assert len(key) == 16 and int(key, 16) >= 0
    monkeypatch.setattr(cache, "CACHE_FORMAT", 1)
    assert cache.cache_key(NAME, _Config(), "data", 0) != key


def test_absent_entry_is_a_silent_miss(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = _Net()
    before = _state(model)
    assert cache.load(tmp_path, NAME, KEY, model) is None
    _assert_same(before, model)
    assert caplog.records == []


def _invalid_json(entry: Path, tmp_path: Path) -> None:
    (entry / cache.CONFIG).write_text('{"cache": ')


def _json_list(entry: Path, tmp_path: Path) -> None:
    _write_config(entry, [1, 2])


def _key_mismatch(entry: Path, tmp_path: Path) -> None:
    shutil.rmtree(entry)
    cache.save(tmp_path, NAME, OTHER_KEY, _Net(), {}).rename(entry)


def _name_mismatch(entry: Path, tmp_path: Path) -> None:
    shutil.rmtree(entry)
    cache.save(tmp_path, "other", KEY, _Net(), {}).rename(entry)


def _swapped_weights(entry: Path, tmp_path: Path) -> None:
    other = cache.save(tmp_path, NAME, OTHER_KEY, _Net(), {})
    (other / cache.WEIGHTS).replace(entry / cache.WEIGHTS)


def _wrong_sha256(entry: Path, tmp_path: Path) -> None:
    config = _config(entry)
    config["cache"]["sha256"] = "0" * 64
    _write_config(entry, config)


def _edited_tensor_table(entry: Path, tmp_path: Path) -> None:
    config = _config(entry)
    config["cache"]["tensors"]["fc.bias"]["shape"] = [3]
    _write_config(entry, config)


def _old_format(entry: Path, tmp_path: Path) -> None:
    config = _config(entry)
    config["cache"]["format"] = 1
    _write_config(entry, config)


def _truncated(entry: Path, tmp_path: Path) -> None:
    weights = entry / cache.WEIGHTS
    weights.write_bytes(weights.read_bytes()[:-5])


def _truncated_with_its_sha256(entry: Path, tmp_path: Path) -> None:
    """A truncated file that config.json vouches for: only loading it can tell."""
    _truncated(entry, tmp_path)
    config = _config(entry)
    config["cache"]["sha256"] = hashlib.sha256((entry / cache.WEIGHTS).read_bytes()).hexdigest()
    _write_config(entry, config)


def _weights_deleted(entry: Path, tmp_path: Path) -> None:
    (entry / cache.WEIGHTS).unlink()


def _foreign_safetensors(entry: Path, tmp_path: Path) -> None:
    """Weights written outside the cache: a sha256 that nothing recorded."""
    save_file({"fc.weight": torch.zeros(2, 3), "fc.bias": torch.zeros(2)}, entry / cache.WEIGHTS)


def _consistent(build: Callable[[], nn.Module]) -> Callable[[Path, Path], None]:
    """An entry that is internally consistent but holds another model's tensors."""

    def damage(entry: Path, tmp_path: Path) -> None:
        shutil.rmtree(entry)
        cache.save(tmp_path, NAME, KEY, build(), {})

    return damage


DAMAGE = {
    "invalid_json": (_invalid_json, "config.json is not valid JSON"),
    "json_list": (_json_list, "config.json holds a JSON list, not an object"),
    "swapped_weights": (_swapped_weights, "model.safetensors has sha256"),
    "wrong_sha256": (_wrong_sha256, f"config.json records '{'0' * 64}'"),
    "edited_tensor_table": (_edited_tensor_table, "tensor table in config.json does not match"),
    "old_format": (_old_format, "records format 1, not 2"),
    "truncated": (_truncated, "model.safetensors has sha256"),
    "truncated_with_its_sha256": (_truncated_with_its_sha256, "model.safetensors does not load"),
    "weights_deleted": (_weights_deleted, "model.safetensors cannot be read"),
    "foreign_safetensors": (_foreign_safetensors, "model.safetensors has sha256"),
}

# Intact entries of another configuration (moved or copied into this key's folder) or written
# by another version of the model's code: refused and kept, never half-loaded, never silently
# retrained over; the message names the way out.
MISMATCH = {
    "key_mismatch": (_key_mismatch, f"belongs to another configuration (config.json records key "
                                    f"'{OTHER_KEY}', not '{KEY}')"),
    "name_mismatch": (_name_mismatch, f"belongs to another configuration (config.json records "
                                      f"model 'other', not '{NAME}')"),
    "missing_tensor": (_consistent(lambda: _Net(bias=False)), "missing tensor(s) fc.bias"),
    "extra_tensor": (_consistent(lambda: _Net(extra=True)), "unexpected tensor(s) extra"),
    "wrong_shape": (_consistent(lambda: _Net(out=4)),
                    "tensor fc.weight has shape (4, 3), the model expects (2, 3)"),
    "wrong_dtype": (_consistent(lambda: _Net().double()),
                    "tensor fc.weight has dtype float64, the model expects float32"),
}


@pytest.mark.parametrize("kind", MISMATCH)
def test_mismatched_entry_is_refused_naming_no_cache(kind: str, tmp_path: Path) -> None:
    damage, reason = MISMATCH[kind]
    entry = cache.save(tmp_path, NAME, KEY, _Net(), {"seed": 0})
    damage(entry, tmp_path)
    model = _Net()
    before = _state(model)
    with pytest.raises(CacheMismatchError, match="--no-cache") as err:
        cache.load(tmp_path, NAME, KEY, model)
    assert reason in str(err.value) and str(entry) in str(err.value)
    _assert_same(before, model)
    assert entry.exists()  # nothing is lost: the user decides


@pytest.mark.parametrize("kind", DAMAGE)
def test_damaged_entry_is_a_miss_and_leaves_the_model_untouched(
        kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    damage, reason = DAMAGE[kind]
    entry = cache.save(tmp_path, NAME, KEY, _Net(), {"seed": 0})
    damage(entry, tmp_path)

    model = _Net()
    before = _state(model)
    with caplog.at_level(logging.WARNING, logger="robustbnn.training.cache"):
        assert cache.load(tmp_path, NAME, KEY, model) is None
    _assert_same(before, model)
    assert not entry.exists()
    assert _leftovers(tmp_path) == []
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert str(entry) in record.getMessage() and reason in record.getMessage()

    assert cache.save(tmp_path, NAME, KEY, model, {"seed": 1}) == entry
    again = _Net()
    assert cache.load(tmp_path, NAME, KEY, again) == {"seed": 1}
    _assert_same(before, again)


def test_save_over_a_valid_entry_keeps_it(tmp_path: Path) -> None:
    first, second = _Net(), _Net()
    cache.save(tmp_path, NAME, KEY, first, {"by": "first"})
    cache.save(tmp_path, NAME, KEY, second, {"by": "second"})
    model = _Net()
    assert cache.load(tmp_path, NAME, KEY, model) == {"by": "first"}
    _assert_same(_state(first), model)
    assert _leftovers(tmp_path) == []


def test_save_replaces_a_damaged_entry(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    entry = cache.save(tmp_path, NAME, KEY, _Net(), {"by": "first"})
    _json_list(entry, tmp_path)
    second = _Net()
    with caplog.at_level(logging.WARNING, logger="robustbnn.training.cache"):
        assert cache.save(tmp_path, NAME, KEY, second, {"by": "second"}) == entry
    assert "replacing it" in caplog.text and "holds a JSON list" in caplog.text
    model = _Net()
    assert cache.load(tmp_path, NAME, KEY, model) == {"by": "second"}
    _assert_same(_state(second), model)
    assert _leftovers(tmp_path) == []


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _save_and_load(cache_dir: Path, rounds: int, start: Barrier, out: Queue) -> None:
    """Save then load ``rounds`` times; report every miss and warning (exceptions propagate)."""
    collect = _Collect()
    logging.getLogger("robustbnn.training.cache").addHandler(collect)
    problems = []
    start.wait()  # overlap the two processes' rounds, not their start-up
    for i in range(rounds):
        cache.save(cache_dir, NAME, KEY, _Net(), {"round": i})
        meta = cache.load(cache_dir, NAME, KEY, _Net())
        if meta is None or set(meta) != {"round"}:
            problems.append(f"round {i}: load returned {meta!r}")
    out.put(problems + collect.messages)


@pytest.mark.bench
def test_concurrent_writers_never_fail(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(2), ctx.Queue()
    workers = [ctx.Process(target=_save_and_load, args=(tmp_path, 50, start, out))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    assert [worker.exitcode for worker in workers] == [0, 0]
    assert [out.get(timeout=10), out.get(timeout=10)] == [[], []]
    assert cache.load(tmp_path, NAME, KEY, _Net()) is not None
    assert _leftovers(tmp_path) == []


def _try_lock(cache_dir: Path) -> bool:
    """Whether this process gets the entry's lock within 0.1 s."""
    held = cache.lock(cache_dir, NAME, KEY)
    try:
        held.acquire(timeout=0.1)
    except Timeout:
        return False
    held.release()
    return True


@pytest.mark.bench
def test_lock_serialises_processes(tmp_path: Path) -> None:
    held = cache.lock(tmp_path, NAME, KEY)
    assert held.lock_file == str(tmp_path / NAME / f"{KEY}.lock")
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        with held:
            assert pool.apply(_try_lock, (tmp_path,)) is False
        assert pool.apply(_try_lock, (tmp_path,)) is True


@pytest.fixture
def umask_002():
    old = os.umask(0o002)
    yield
    os.umask(old)


def test_entries_and_locks_get_the_umask_mode(tmp_path: Path, umask_002: None) -> None:
    entry = cache.save(tmp_path, NAME, KEY, _Net(), {})
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (entry, *entry.iterdir())}
    assert modes == {KEY: 0o775, cache.CONFIG: 0o664, cache.WEIGHTS: 0o664}
    with cache.lock(tmp_path, NAME, KEY) as held:
        assert stat.S_IMODE(os.stat(held.lock_file).st_mode) == 0o664  # the group can lock too
