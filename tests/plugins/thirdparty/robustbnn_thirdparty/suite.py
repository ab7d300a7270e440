"""``tp_smoke``: the ``smoke`` suite on this package's model, attack and OOD set (``SUITES``)."""

from __future__ import annotations

import dataclasses

from robustbnn.suites import SUITES

SUITES.register("tp_smoke", dataclasses.replace(
    SUITES.get("smoke"), models=("tp_rank1",), attacks=("fgsm", "tp_bim"),
    ood=("uniform", "tp_stripes")))
