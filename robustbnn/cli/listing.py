"""``robustbnn models`` and ``robustbnn datasets``: what is registered, and what is here."""

from __future__ import annotations

import argparse
import sys

from robustbnn.cli.common import data_root

__all__ = ["cmd_datasets", "cmd_models"]


def cmd_models(args: argparse.Namespace) -> int:
    """``robustbnn models``: name, description and reference of each registered model."""
    from robustbnn.models import MODELS

    for name in MODELS.names():
        spec = MODELS.get(name)
        sys.stdout.write(f"{name}\t{spec.description}\t{spec.reference}\n")
    return 0


def cmd_datasets(args: argparse.Namespace) -> int:
    """``robustbnn datasets``: every training and OOD set, and whether it is here."""
    from robustbnn.data import DATASETS, OOD_DATASETS

    root = data_root(args)
    note = "" if root.is_dir() else " (not created yet: the first --download creates it)"
    sys.stdout.write(f"# data root: {root}{note}; missing sets: --download fetches them "
                     "(docs/data.md)\n# training sets (--dataset)\n")
    for name in DATASETS.names():
        spec = DATASETS.get(name)
        status = "available" if spec.available(root) else "missing"
        sys.stdout.write(f"{name}\t{status}\t{spec.description}\n")
    sys.stdout.write("# OOD sets (--ood)\n")
    for name in OOD_DATASETS.names():
        spec = OOD_DATASETS.get(name)
        status = "available" if spec.available(root) else "missing"
        sys.stdout.write(f"{name}\t{status}\t{spec.description}\n")
    sys.stdout.write("# OOD sets named by a pattern (--ood)\n"
                     "heldout:K\t-\tthe training set's class K, held out of training (one "
                     "model per class)\n"
                     "folder:PATH\t-\tevery image under PATH, grayscale, 28x28, in [0, 1]\n")
    return 0
