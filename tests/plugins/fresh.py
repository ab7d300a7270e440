"""Load plug-in modules afresh for one test, and leave no trace of them.

A test that runs ``main([... "--plugin", MODULE ...])`` in-process registers the module's names
in the global registries, and Python keeps the module in ``sys.modules``: a later test in the
same process then sees names it never loaded (``--models`` defaults list them), or, once a
sandbox has undone the registrations, imports nothing and finds the names unknown.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import pytest

from tests.plugins._thirdparty import registries


def _forget(modules: tuple[str, ...]) -> None:
    for name in modules:
        sys.modules.pop(name, None)


@contextlib.contextmanager
def fresh_plugins(*modules: str) -> Iterator[None]:
    """Inside the block, ``modules`` import anew (their ``register`` calls run again); on exit
    every registry holds what it held before and the modules are forgotten again."""
    _forget(modules)
    try:
        with contextlib.ExitStack() as stack:
            for registry in registries():
                stack.enter_context(registry.sandbox())
            yield
    finally:
        _forget(modules)


def forgotten_after_each_test(*modules: str):  # noqa: ANN201 - a pytest fixture
    """An autouse fixture that loads ``modules`` afresh for each test of the file that assigns
    it (``_forgotten = forgotten_after_each_test(PLUGIN)``), for tests whose ``main([...,
    "--plugin", MODULE])`` registers in-process."""

    @pytest.fixture(autouse=True)
    def _forgotten() -> Iterator[None]:
        with fresh_plugins(*modules):
            yield

    return _forgotten
