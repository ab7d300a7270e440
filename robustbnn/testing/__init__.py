"""The contract kits: check a model (:func:`check_model`) or an attack (:func:`check_attack`)
before it is scored.

* :mod:`~robustbnn.testing.model`: the model contract's clauses run on a model;
* :mod:`~robustbnn.testing.clauses`: each clause of the model contract, one method each;
* :mod:`~robustbnn.testing.attack`: the attack contract.
"""

from __future__ import annotations

from robustbnn.testing.attack import (
    ATTACK_CLAUSES,
    AttackCheckReport,
    AttackClauseResult,
    check_attack,
)
from robustbnn.testing.model import (
    BENCH_CLAUSES,
    CLAUSES,
    CheckReport,
    ClauseResult,
    check_model,
    check_module,
    missing_smoke_warning,
    report_lines,
    smoke_config,
)

__all__ = ["ATTACK_CLAUSES", "BENCH_CLAUSES", "CLAUSES", "AttackCheckReport",
           "AttackClauseResult", "CheckReport", "ClauseResult", "check_attack", "check_model",
           "check_module", "missing_smoke_warning", "report_lines", "smoke_config"]
