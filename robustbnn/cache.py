"""The checkpoint cache: safetensors weights plus a JSON config, written atomically.

An entry is keyed by the model name, its full config, the data fingerprint and the seed, so
any change to one of them trains a new model and a rerun loads instead of retraining.
"""

from __future__ import annotations

import dataclasses
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
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from robustbnn import __version__
from robustbnn.report.store import umask_mode

log = logging.getLogger(__name__)

CACHE_FORMAT = 1  # bump when a change to training makes old entries invalid


def resolve_cache_dir(cli_value: str | Path | None) -> Path:
    """``--cache-dir``, else ``$ROBUSTBNN_CACHE``, else the user cache directory."""
    if cli_value:
        return Path(cli_value).expanduser()
    if os.environ.get("ROBUSTBNN_CACHE"):
        return Path(os.environ["ROBUSTBNN_CACHE"]).expanduser()
    return Path(platformdirs.user_cache_dir("robustbnn")) / "models"


def cache_key(name: str, config: Any, data_fingerprint: str, seed: int) -> str:
    """A 16-hex-digit key over everything that determines the trained weights."""
    payload = {
        "format": CACHE_FORMAT,
        "model": name,
        "config": dataclasses.asdict(config),
        "data": data_fingerprint,
        "seed": seed,
    }
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def entry_dir(cache_dir: Path, name: str, key: str) -> Path:
    """Where the entry for (name, key) lives."""
    return cache_dir / name / key


def load(cache_dir: Path, name: str, key: str, model: torch.nn.Module) -> dict | None:
    """Load cached weights into ``model``; return the stored metadata, or None on a miss.

    A damaged entry (unreadable file, wrong tensors) is logged and treated as a miss, so the
    model is retrained and the entry rewritten.
    """
    where = entry_dir(cache_dir, name, key)
    weights, meta_path = where / "model.safetensors", where / "config.json"
    if not (weights.is_file() and meta_path.is_file()):
        return None
    try:
        device = next(iter(model.state_dict().values())).device
        state = load_file(weights, device=str(device))
        model.load_state_dict(state, strict=True)
        return json.loads(meta_path.read_text())
    except (SafetensorError, RuntimeError, OSError, ValueError, KeyError) as err:
        log.warning("cache entry %s is damaged (%s); retraining", where, err)
        return None


def save(cache_dir: Path, name: str, key: str, model: torch.nn.Module, meta: dict) -> Path:
    """Write weights and metadata to a temporary folder, then rename it into place."""
    final = entry_dir(cache_dir, name, key)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=final.parent))
    try:
        state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
        save_file(state, tmp / "model.safetensors", metadata={"robustbnn": __version__})
        (tmp / "config.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=str))
        for path in (tmp, *tmp.iterdir()):  # safetensors, too, writes its file 0600
            umask_mode(path)
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final
