"""What several commands share: the device, the data root, the output folders, the summary."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

import torch

from robustbnn.errors import ConfigError, DeviceError
from robustbnn.folders import check_out_place, check_readable, check_writable, env_value

__all__ = ["cache_dir", "check_outputs", "data_root", "resolve_device"]


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

    if args.cache_dir:
        return resolve_cache_dir(args.cache_dir), "--cache-dir"
    origin = "$ROBUSTBNN_CACHE" if env_value("ROBUSTBNN_CACHE") else "the default"
    return resolve_cache_dir(None), origin


def check_outputs(args: argparse.Namespace, *outs: Path) -> None:
    """The run can start (``--executor ray`` has Ray) and every folder the command writes
    (``outs`` and the model cache) is writable, and no ``out`` is where no run belongs (the
    file system's root, the model cache, the data root, another run's ``cells/``), before
    anything is written: a refused run leaves no claim on its ``--out``."""
    from robustbnn.data.root import ENV_VAR

    if getattr(args, "executor", "local") == "ray" and not _importable("ray"):
        raise ConfigError("--executor ray needs Ray: pip install 'robustbnn[ray]'")
    cache, cache_origin = cache_dir(args)
    data = data_root(args)
    data_origin = ("--data-root" if args.data_root else f"${ENV_VAR}" if env_value(ENV_VAR)
                   else "the default")
    others = (("the model cache", cache, cache_origin), ("the data root", data, data_origin))
    for out in outs:
        check_out_place(out, "--out", others=others)
        check_writable(out, "--out")
    if getattr(args, "cache", False):
        flag = "--cache-dir" if args.cache_dir else "the model cache (--cache-dir)"
        check_writable(cache, flag)


def _importable(module: str) -> bool:
    """Whether ``import module`` can find it, without importing it."""
    if module in sys.modules:
        return sys.modules[module] is not None  # None: an import that was blocked
    return importlib.util.find_spec(module) is not None
