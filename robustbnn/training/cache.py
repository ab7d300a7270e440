"""The checkpoint cache: safetensors weights plus a JSON config, verified before any use.

An entry ``cache_dir/<model name>/<key>/`` holds ``model.safetensors`` and ``config.json``; the
key hashes the model name, its config, the data fingerprint and the seed. ``config.json`` records
the key, the name, the weights' sha256 and every tensor's shape and dtype, and :func:`load`
checks them all before it copies a single weight: a damaged entry is logged, discarded and
reported as a miss, with the model untouched; an entry of another configuration, name or
architecture is refused and kept, naming ``--no-cache``. Writers rename a finished temporary
folder into place and never delete a valid entry another process may be reading
(:mod:`robustbnn.training.cache_folders`: consistent reads, discards, the sweep of killed
writers' leftovers). To keep two processes from training the same model at once, hold
:func:`lock` around load, train and save::

    with cache.lock(cache_dir, name, key):
        meta = cache.load(cache_dir, name, key, model)
        if meta is None:
            train(model)
            cache.save(cache_dir, name, key, model, {"seed": seed})
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import platformdirs
import torch
from filelock import FileLock
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from robustbnn import __version__
from robustbnn._atomic import umask_mode
from robustbnn.config import config_identity
from robustbnn.errors import CacheMismatchError, PathError
from robustbnn.folders import write_problem
from robustbnn.training.cache_folders import (
    ATTEMPTS,
    discard,
    read_consistently,
    temp_prefix,
)

log = logging.getLogger(__name__)

CACHE_FORMAT = 2  # bump when a change to training or to the entry layout invalidates old entries

WEIGHTS, CONFIG = "model.safetensors", "config.json"

_Layout = dict[str, dict[str, Any]]  # tensor name -> {"shape": [...], "dtype": "float32"}


class _Damaged(Exception):
    """An entry that fails verification; the message is the reason."""


class _Mismatch(_Damaged):
    """An intact entry whose tensor names, shapes or dtypes differ from the model's."""


class _Foreign(_Damaged):
    """An entry that records another key (config hash) or model name than its folder's."""


def resolve_cache_dir(cli_value: str | Path | None) -> Path:
    """``--cache-dir``, else ``$ROBUSTBNN_CACHE``, else the user cache directory."""
    if cli_value:
        return Path(cli_value).expanduser()
    if os.environ.get("ROBUSTBNN_CACHE"):
        return Path(os.environ["ROBUSTBNN_CACHE"]).expanduser()
    return Path(platformdirs.user_cache_dir("robustbnn")) / "models"


def cache_key(name: str, config: Any, data_fingerprint: str, seed: int,
              code: dict[str, str] | None = None) -> str:
    """A 16-hex-digit key over everything that determines the trained weights.

    ``code`` identifies the model's code (:func:`robustbnn.models.base.code_identity`:
    ``ModelSpec.version``, and a plug-in's package version and source hash).
    """
    payload = {"format": CACHE_FORMAT, "model": name, "config": config_identity(config),
               "data": data_fingerprint, "seed": seed}
    if code:  # absent for built-in models at version "1": their keys predate versions
        payload["code"] = code
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def entry_dir(cache_dir: Path, name: str, key: str) -> Path:
    """Where the entry for (name, key) lives."""
    return cache_dir / name / key


def holds(cache_dir: Path, name: str, key: str) -> bool:
    """Whether the entry (name, key) is there (its files exist; :func:`load` verifies them)."""
    where = entry_dir(cache_dir, name, key)
    return (where / CONFIG).is_file() and (where / WEIGHTS).is_file()


def read_only(cache_dir: Path) -> str | None:
    """Why nothing can be written in the cache (it, or the folder that would hold it, refuses a
    new file: permissions, a read-only mount, an immutable folder), or None when it can."""
    existing = Path(cache_dir)
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    return write_problem(existing) if existing.is_dir() else None


def read_only_error(cache_dir: Path, problem: str, models: list[str]) -> PathError:
    """The one line that refuses a read-only cache a run must save ``models`` in."""
    return PathError(f"the model cache {cache_dir} is read-only ({problem}) and does not hold "
                     f"the trained {', '.join(models)} of this run, which must be trained and "
                     "saved there; make it writable, point --cache-dir at a writable folder, "
                     "or pass --no-cache")


def lock(cache_dir: Path, name: str, key: str) -> FileLock:
    """An inter-process lock for one entry, on ``cache_dir/<name>/<key>.lock``.

    Hold it around load, train and save: a second process waits, then loads what the first
    saved. The empty lock file stays behind, since deleting it would race with a waiting process.

    Args:
        cache_dir: The cache root, as from :func:`resolve_cache_dir`.
        name: The model name.
        key: The entry key, as from :func:`cache_key`.

    Returns:
        A ``filelock.FileLock``, not yet acquired: a context manager, or ``acquire(timeout=...)``.
    """
    path = cache_dir / name / f"{key}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    mask = os.umask(0)
    os.umask(mask)
    return FileLock(path, mode=0o666 & ~mask)  # group members must be able to open it to lock


def load(cache_dir: Path, name: str, key: str, model: torch.nn.Module) -> dict | None:
    """Load a cached entry into ``model`` after verifying all of it.

    Nothing is copied until ``config.json`` is a JSON object recording this ``key`` and
    ``name``, the weights have the recorded sha256 and load, and their names, shapes and dtypes
    are exactly those of ``model.state_dict()``. A damaged entry (unreadable, unverifiable, or
    of an older ``CACHE_FORMAT``) is logged and discarded; an entry that records another key
    (config hash) or model name, or whose tensors do not fit the model, is refused and kept
    (never half-loaded, never silently retrained over).

    Args:
        cache_dir: The cache root.
        name: The model name.
        key: The entry key.
        model: The model to fill; on a miss it is left untouched.

    Returns:
        The metadata given to :func:`save`, or None when the entry is absent or damaged.

    Raises:
        CacheMismatchError: The entry records another key or model name, or its tensor
            names, shapes or dtypes are not the model's (the model's code changed); the
            message names ``--no-cache``.
    """
    where = entry_dir(cache_dir, name, key)
    expected = _layout(model.state_dict())
    snapshot = read_consistently(where, (CONFIG, WEIGHTS))
    if snapshot is None:
        return None
    ident, (raw_config, raw_weights) = snapshot
    try:
        meta, state = _verify(raw_config, raw_weights, name, key, expected)
    except _Mismatch as err:
        raise CacheMismatchError(
            f"cache entry {where} of model {name!r} does not fit the model built now ({err}): "
            "its code changed without a new ModelSpec.version; rerun with --no-cache, bump "
            "the version, or delete the entry") from None
    except _Foreign as err:
        raise CacheMismatchError(
            f"cache entry {where} belongs to another configuration ({err}): it was moved or "
            "copied into this folder; rerun with --no-cache, or delete the entry") from None
    except _Damaged as err:
        log.warning("cache entry %s is damaged (%s); discarding it", where, err)
        discard(where, ident)
        return None
    model.load_state_dict(state, strict=True)
    return meta


def save(cache_dir: Path, name: str, key: str, model: torch.nn.Module, meta: dict) -> Path:
    """Write ``model``'s weights and ``meta`` as the entry for (name, key).

    Written to a unique temporary folder, then renamed into place. A valid entry that another
    process put there first is kept (and ours dropped); a damaged one is replaced.

    Args:
        cache_dir: The cache root.
        name: The model name.
        key: The entry key.
        model: The trained model.
        meta: JSON-serialisable metadata that :func:`load` returns.

    Returns:
        The entry's folder.

    Raises:
        OSError: When the entry cannot be written (other than losing a race).
    """
    final = entry_dir(cache_dir, name, key)
    final.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    blob = save_tensors(state, metadata={"robustbnn": __version__})
    record = {"format": CACHE_FORMAT, "key": key, "model": name, "robustbnn": __version__,
              "sha256": hashlib.sha256(blob).hexdigest(), "tensors": _layout(state)}
    config = json.dumps({"cache": record, "meta": meta}, indent=2, sort_keys=True, default=str)
    tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(key), dir=final.parent))
    try:
        (tmp / WEIGHTS).write_bytes(blob)
        (tmp / CONFIG).write_text(config, encoding="utf-8")
        for path in (tmp, *tmp.iterdir()):  # mkdtemp makes 0700 folders
            umask_mode(path)
        for _ in range(ATTEMPTS):
            try:
                os.replace(tmp, final)  # fails while ``final`` is a non-empty folder
                return final
            except OSError as err:
                if err.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                    raise
            snapshot = read_consistently(final, (CONFIG, WEIGHTS))
            if snapshot is None:  # discarded meanwhile: try again
                continue
            try:
                _verify(*snapshot[1], name, key, _layout(state))
                return final  # another writer finished first; keep theirs
            except _Damaged as err:
                log.warning("cache entry %s is damaged (%s); replacing it", final, err)
                discard(final, snapshot[0])
        raise OSError(errno.EBUSY, f"cache entry kept changing while it was written: {final}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _layout(state: dict[str, torch.Tensor]) -> _Layout:
    """Each tensor's shape and dtype name, as config.json records them."""
    return {k: {"shape": list(v.shape), "dtype": str(v.dtype).removeprefix("torch.")}
            for k, v in state.items()}


def _verify(raw_config: bytes | OSError, raw_weights: bytes | OSError, name: str, key: str,
            expected: _Layout) -> tuple[dict, dict[str, torch.Tensor]]:
    """The metadata and tensors of an entry, or ``_Damaged`` naming the first failed check."""
    for filename, raw in ((CONFIG, raw_config), (WEIGHTS, raw_weights)):
        if isinstance(raw, OSError):
            raise _Damaged(f"{filename} cannot be read ({raw.strerror or raw})")
    try:
        config = json.loads(raw_config)
    except (ValueError, RecursionError) as err:  # RecursionError: absurdly deep nesting
        raise _Damaged(f"{CONFIG} is not valid JSON ({err})") from None
    if not isinstance(config, dict):
        raise _Damaged(f"{CONFIG} holds a JSON {type(config).__name__}, not an object")
    record, meta = config.get("cache"), config.get("meta")
    if not (isinstance(record, dict) and isinstance(meta, dict)):
        raise _Damaged(f"{CONFIG} lacks its 'cache' and 'meta' objects")
    if record.get("format") != CACHE_FORMAT:  # an older cache layout: nothing to keep
        raise _Damaged(f"{CONFIG} records format {record.get('format')!r}, not {CACHE_FORMAT!r}")
    for field, want in (("key", key), ("model", name)):
        if record.get(field) != want:  # another configuration's entry, moved or copied here
            raise _Foreign(f"{CONFIG} records {field} {record.get(field)!r}, not {want!r}")
    digest = hashlib.sha256(raw_weights).hexdigest()
    if digest != record.get("sha256"):
        raise _Damaged(f"{WEIGHTS} has sha256 {digest}, {CONFIG} records "
                       f"{record.get('sha256')!r}")
    try:
        state = load_tensors(raw_weights)
    except (SafetensorError, ValueError, RuntimeError) as err:
        raise _Damaged(f"{WEIGHTS} does not load ({err})") from None
    found = _layout(state)
    if record.get("tensors") != found:
        raise _Damaged(f"the tensor table in {CONFIG} does not match {WEIGHTS}")
    missing, extra = sorted(expected.keys() - found), sorted(found.keys() - expected)
    if missing:
        raise _Mismatch(f"missing tensor(s) {', '.join(missing)}, which the model has")
    if extra:
        raise _Mismatch(f"unexpected tensor(s) {', '.join(extra)}, which the model lacks")
    for k, want in expected.items():
        if found[k]["shape"] != want["shape"]:
            raise _Mismatch(f"tensor {k} has shape {tuple(found[k]['shape'])}, the model expects "
                           f"{tuple(want['shape'])}")
        if found[k]["dtype"] != want["dtype"]:
            raise _Mismatch(f"tensor {k} has dtype {found[k]['dtype']}, the model expects "
                           f"{want['dtype']}")
    return meta, state
