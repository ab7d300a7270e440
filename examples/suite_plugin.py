"""A suite plug-in: a named, printable config (``smoke_inverted``) built from another suite.

A suite is a frozen :class:`~robustbnn.bench_config.BenchConfig` registered in ``SUITES``;
derive it with :func:`dataclasses.replace` so every field you do not name keeps the base suite's
value, and ``robustbnn bench --suite NAME --print-config`` shows all of it. A suite may name
plug-in models, attacks, OOD sets and measures: this one scores the smoke suite's two models
against the ``inverted_digits`` set of ``examples/ood_set_plugin.py``, which it imports so that
the one ``--plugin`` brings both::

    robustbnn bench --plugin examples.suite_plugin --suite smoke_inverted --out runs/smoke_inverted
"""

from __future__ import annotations

import dataclasses

import examples.ood_set_plugin  # noqa: F401 - registers inverted_digits
from robustbnn.suites import SUITES

SUITES.register("smoke_inverted", dataclasses.replace(
    SUITES.get("smoke"), ood=("uniform", "inverted_digits"), robustness=(), shift=()))
