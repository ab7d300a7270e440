"""The third-party plug-in package of the tests (``tests/plugins/thirdparty/``), installed the
way pip would leave it: the package ``robustbnn_thirdparty/`` beside its
``robustbnn_thirdparty-0.1.0.dist-info/`` (``METADATA``, ``entry_points.txt``), so
``importlib.metadata.entry_points(group=...)`` finds it once the folder is on ``sys.path``.

The ``thirdparty`` fixture (``tests/conftest.py``) puts the folder on ``sys.path`` for
in-process tests and on ``PYTHONPATH`` for subprocesses, and forgets the registrations after.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDER = Path(__file__).resolve().parent / "thirdparty"
PACKAGE = "robustbnn_thirdparty"
DIST = "robustbnn-thirdparty"


@dataclasses.dataclass(frozen=True)
class ThirdParty:
    """Where the package is, and the name of its plug-in of each kind.

    Attributes:
        folder: The folder holding the package and its dist-info (the "site-packages").
        model: Its ``robustbnn.models`` entry point's model.
        attack: Its ``robustbnn.attacks`` attack.
        ood_set: Its ``robustbnn.ood_sets`` OOD set.
        measure: Its ``robustbnn.measures`` uncertainty measure.
        suite: Its ``robustbnn.suites`` suite: ``smoke`` on the four above.
    """

    folder: Path = FOLDER
    model: str = "tp_rank1"
    attack: str = "tp_bim"
    ood_set: str = "tp_stripes"
    measure: str = "tp_margin"
    suite: str = "tp_smoke"

    def env(self, **extra: str) -> dict[str, str]:
        """This process's environment with the package and the checkout on ``PYTHONPATH``,
        ``$ROBUSTBNN_JOBS`` unset (``--jobs auto`` as a user gets it), plus ``extra``."""
        env = {k: v for k, v in os.environ.items() if k != "ROBUSTBNN_JOBS"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.folder), str(ROOT),
                                                        os.environ.get("PYTHONPATH")) if p)
        return {**env, "PYTHONUNBUFFERED": "1", **extra}


def _forget_modules() -> None:
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def registries() -> list:
    """Every registry a plug-in can add to (one per entry-point group)."""
    from robustbnn.attacks import ATTACKS
    from robustbnn.data.ood_sets import OOD_DATASETS
    from robustbnn.models import MODELS
    from robustbnn.ood.uncertainty import UNCERTAINTIES
    from robustbnn.suites import SUITES

    return [MODELS, ATTACKS, OOD_DATASETS, UNCERTAINTIES, SUITES]


def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThirdParty]:
    """The body of the ``thirdparty`` fixture: install, yield, uninstall."""
    _forget_modules()
    monkeypatch.syspath_prepend(str(FOLDER))  # also invalidates the import caches
    tp = ThirdParty()
    monkeypatch.setenv("PYTHONPATH", tp.env()["PYTHONPATH"])
    try:
        with contextlib.ExitStack() as stack:
            for registry in registries():
                stack.enter_context(registry.sandbox())
            yield tp
    finally:
        _forget_modules()


def worker_names(paths: tuple[str, ...]) -> dict[str, list[str]]:
    """In a worker: set it up as a cell would, then list every registry's names."""
    from robustbnn.run.executors import setup_worker

    setup_worker(None, (), paths)
    return {registry.kind: registry.names() for registry in registries()}
