"""What several commands share: the device, the data root, the output folders, the summary."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

import torch

from robustbnn.errors import ConfigError, DeviceError
from robustbnn.folders import (
    check_out_place,
    check_place,
    check_readable,
    check_writable,
    env_value,
)

__all__ = ["cache_dir", "check_out", "check_outputs", "data_root", "resolve_device"]


def resolve_device(choice: str) -> torch.device:
    """``auto`` -> cuda when available, else cpu; ``cuda`` without CUDA is an error."""
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if choice == "cuda" and not torch.cuda.is_available():
        raise DeviceError(
            f"--device cuda was requested but CUDA is not available to torch {torch.__version__} "
            "on this machine; use --device cpu (or --device auto)"
        )
    return torch.device(choice)


def data_root(args: argparse.Namespace) -> Path:
    """The data root; one given by ``--data-root`` or ``$ROBUSTBNN_DATA`` must be readable.

    Only a ``--data-root`` the user typed is passed on to the run (``BenchOptions``): the
    workers resolve ``$ROBUSTBNN_DATA`` and the default themselves, so an error names the
    flag or variable the user set, never one they did not, and the default root (the user
    cache folder) need not exist: the first download creates it.
    """
    from robustbnn.data import resolve_data_root
    from robustbnn.data.root import ENV_VAR

    if args.data_root:
        check_readable(args.data_root, "--data-root")
    elif env_value(ENV_VAR):
        check_readable(os.environ[ENV_VAR], f"${ENV_VAR}")
    check_mirror()
    return resolve_data_root(args.data_root)


def check_mirror() -> None:
    """``$ROBUSTBNN_MIRROR``, when set, is a URL a download can use (http, https or file).

    Raises:
        DataError: Naming the variable, its value and the fix; PathError when set empty.
    """
    from urllib.parse import urlsplit

    from robustbnn.data.fetch import MIRROR_ENV
    from robustbnn.errors import DataError

    mirror = env_value(MIRROR_ENV)
    if mirror is None:
        return
    url = urlsplit(mirror.strip())
    if not (url.scheme == "file" or url.scheme in ("http", "https") and url.netloc):
        raise DataError(f"${MIRROR_ENV}={mirror!r} is not an http(s):// or file:// URL; set it "
                        "to the base URL of a mirror laid out like a data root (docs/data.md), "
                        "or unset it to download from the published sources")


def cache_dir(args: argparse.Namespace) -> tuple[Path, str]:
    """The model cache and where it came from (``--cache-dir``, ``$ROBUSTBNN_CACHE`` or the
    default); a variable set empty is refused (:func:`robustbnn.folders.env_value`)."""
    from robustbnn.training.cache import resolve_cache_dir

    if getattr(args, "cache_dir", None):  # report has no --cache-dir
        return resolve_cache_dir(args.cache_dir), "--cache-dir"
    origin = "$ROBUSTBNN_CACHE" if env_value("ROBUSTBNN_CACHE") else "the default"
    return resolve_cache_dir(None), origin


def _data_place(args: argparse.Namespace) -> tuple[Path, str]:
    """The data root and where it came from, unchecked (``report`` reads no data, so a data
    root it names need not exist)."""
    from robustbnn.data.root import ENV_VAR, default_data_root

    if getattr(args, "data_root", None):
        return Path(args.data_root).expanduser(), "--data-root"
    if env_value(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser(), f"${ENV_VAR}"
    return default_data_root(), "the default"


def check_out(args: argparse.Namespace, out: Path, flag: str = "--out") -> None:
    """The one check of an output folder, for ``bench``, ``reproduce`` and ``report``: it is
    where a run or reports belong (not the file system's root, the model cache, the data root,
    nor inside a run folder: :func:`robustbnn.folders.check_out_place`) and writable.

    Raises:
        PathError: Naming ``flag``, the folder and the way out.
    """
    others = (("the model cache", *cache_dir(args)), ("the data root", *_data_place(args)))
    check_out_place(out, flag, others=others)
    check_writable(out, flag)


def check_outputs(args: argparse.Namespace, *outs: Path) -> None:
    """The run can start (``--executor ray`` has Ray), its data root is readable and every
    ``out`` passes :func:`check_out`, before anything is written: a refused run leaves no claim
    on its ``--out``. The model cache is checked here only for a place (a file is refused); a
    read-only cache is refused by the run when a model it needs is not in it
    (:func:`robustbnn.run.cache_needs.check_cache`)."""
    if getattr(args, "executor", "local") == "ray" and not _importable("ray"):
        raise ConfigError("--executor ray needs Ray: pip install 'robustbnn[ray]'")
    data_root(args)
    for out in outs:
        check_out(args, out)
    if getattr(args, "cache", False):
        flag = "--cache-dir" if args.cache_dir else "the model cache (--cache-dir)"
        check_place(cache_dir(args)[0], flag)


def _importable(module: str) -> bool:
    """Whether ``import module`` can find it, without importing it."""
    if module in sys.modules:
        return sys.modules[module] is not None  # None: an import that was blocked
    return importlib.util.find_spec(module) is not None
