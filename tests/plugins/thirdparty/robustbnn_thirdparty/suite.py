"""``tp_smoke``: the ``smoke`` suite on this package's model, attack and OOD set (``SUITES``),
with the adversarial-OOD cells (which score the plug-in set too) and without the budget,
detector-aware and shift cells, to keep the test that runs it four times short."""

from __future__ import annotations

import dataclasses

from robustbnn.suites import SUITES

SUITES.register("tp_smoke", dataclasses.replace(
    SUITES.get("smoke"), models=("tp_rank1",), attacks=("fgsm", "tp_bim"),
    ood=("uniform", "tp_stripes"), robustness=("adversarial_ood",), shift=()))
