"""One module per experiment; importing this package registers them all."""

from __future__ import annotations

from robustbnn.reproduce.experiments import (  # noqa: F401 - each registers itself
    bbb_noise,
    bbb_table1,
    bhn_fgsm,
    bhn_table1,
    bhn_table2,
    bhn_table3,
    ligal,
    vhn_fig3,
)
