"""The contract kits: check a model (:func:`check_model`) or an attack (:func:`check_attack`)
before it is scored.

* :mod:`~robustbnn.testing.model`: the model contract's clauses run on a model;
* :mod:`~robustbnn.testing.report`: what a check found, per clause;
* :mod:`~robustbnn.testing.sampler_clauses`: the clauses every sampler keeps, and the check's
  options (device and sizes);
* :mod:`~robustbnn.testing.clauses`: the clauses of the model as a whole;
* :mod:`~robustbnn.testing.bitwise`, :mod:`~robustbnn.testing.global_rngs`: what the clauses
  compare (bytes of samples and state, the global RNGs);
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
    check_model,
    check_module,
    missing_smoke_warning,
    smoke_config,
)
from robustbnn.testing.report import CheckReport, ClauseResult, report_lines
from robustbnn.testing.sampler_clauses import CheckOptions

__all__ = ["ATTACK_CLAUSES", "BENCH_CLAUSES", "CLAUSES", "AttackCheckReport",
           "AttackClauseResult", "CheckOptions", "CheckReport", "ClauseResult", "check_attack",
           "check_model", "check_module", "missing_smoke_warning", "report_lines",
           "smoke_config"]
