"""Task ``contract``: the model contract's cheap clauses, before any cell of the model runs.

One ``contract`` cell per model of a run builds the model at the run's config with the
model's ``"smoke"`` size on top (:func:`contract_config`: the run's ``--set`` flags, at a
size that checks in about a second), trains it briefly on 32 random examples of the run's
input shape and classes (as ``robustbnn check`` does, so post-hoc methods such as Laplace and
SWAG can sample) and runs :data:`robustbnn.testing.BENCH_CLAUSES` on it. A model that breaks a
clause gets no numbers: the cell raises a :class:`~robustbnn.errors.ContractRefusal` (a
``UserError``, so it is not retried) naming the model, each broken clause and what was seen,
and every other cell of the model, which waits for it through ``Cell.after``, is skipped.

When the brief fit itself fails (training diverges at the run's learning rate, a method that
needs more than 32 examples), the sampling clauses cannot be judged on a trained model, and the
fit on random data is not the run's: the contract then passes without a verdict (its info says
why) and the model's training cell, on the run's data, fails or succeeds on its own terms, with
its own message.

The cell's id holds the model's name, config, code (``ModelSpec.version`` and, for a plug-in,
its source file's hash), the run's input shape and classes and :data:`CONTRACT_VERSION`; it is
in no other cell's ``deps``, so it changes no other id and no random stream. A passed contract
is stored and reused like any cell; a refused one is not stored, so a rerun checks again.
"""

from __future__ import annotations

from typing import Any

from robustbnn.config import config_identity, replace_checked
from robustbnn.errors import ContractRefusal
from robustbnn.models import MODELS
from robustbnn.models.base import code_identity
from robustbnn.run.cells import Cell, CellKind, CellOutcome
from robustbnn.run.context import Context, RunSpec, bench_data
from robustbnn.testing import BENCH_CLAUSES, CheckOptions, check_model
from robustbnn.testing.model import check_command

__all__ = ["CONTRACT_VERSION", "REFUSED", "contract_cell", "contract_config", "refusal_message",
           "run"]

CONTRACT_VERSION = 2  # bump when the clauses the bench runs, or what they check, change
# 2: clause input_unchanged (issue 49).
REFUSED = "refused by the model contract"


def contract_config(spec: RunSpec, name: str) -> Any:
    """The config the contract checks: the run's (suite, shrink, ``--set``), then the fields
    of the model's ``shrink["smoke"]`` over it, so a full-size run checks its model in seconds
    with the same switches (a model that declares no smoke size is checked at the run's)."""
    cfg = spec.resolved().model(name)
    for field, value in MODELS.get(name).shrink.get("smoke", {}).items():
        cfg = replace_checked(cfg, field, value, owner=f"{name} (its 'smoke' shrink)")
    return cfg


def contract_cell(spec: RunSpec, name: str) -> Cell:
    """The contract cell of model ``name`` in the run of ``spec`` (loads the run's data)."""
    data = bench_data(spec)
    model = MODELS.get(name)
    params = {"config": config_identity(contract_config(spec, name)),
              "version": model.version, "code": code_identity(model),
              "input_shape": list(data.train.x.shape[1:]), "num_classes": data.num_classes,
              "clauses": list(BENCH_CLAUSES), "contract": CONTRACT_VERSION}
    return Cell(CellKind.CONTRACT, name, params, label=f"contract {name}")


def run(ctx: Context) -> CellOutcome:
    """Check the cell's model; its outcome is each clause's status.

    Raises:
        ContractRefusal: When a clause fails (:func:`refusal_message`).
    """
    params, name = ctx.params, ctx.cell.model
    options = CheckOptions(device=ctx.device, input_shape=tuple(params["input_shape"]),
                           num_classes=params["num_classes"])
    report = check_model(name, config=contract_config(ctx.spec, name), options=options,
                         clauses=tuple(params["clauses"]))
    fit = report.result("fit")
    if fit.status == "failed":  # no trained model to judge; the training cell decides
        return CellOutcome(info={"clauses": {}, "unchecked": f"the brief fit on random data "
                                 f"failed ({fit.detail}); the training cell decides"})
    if report.failed:
        failed = [(r.clause, r.detail) for r in report.failed]
        command = check_command(name, plugins=ctx.spec.plugins, overrides=ctx.spec.cfg.overrides)
        raise ContractRefusal(refusal_message(name, failed, command), model=name,
                              clauses=[clause for clause, _ in failed],
                              seen="; ".join(f"{clause}: {detail}" for clause, detail in failed))
    return CellOutcome(info={"clauses": {r.clause: r.status for r in report.results}})


def refusal_message(name: str, failed: list[tuple[str, str]], command: str = "") -> str:
    """``model 'NAME' refused by the model contract: clause 'C' failed: what; ...`` and the
    way out, on one line: ``command`` (default ``robustbnn check NAME``), the run's
    ``--plugin`` and ``--set`` flags in it (:func:`robustbnn.testing.model.check_command`)."""
    seen = "; ".join(f"clause {clause!r} failed: {detail}" for clause, detail in failed)
    return (f"model {name!r} {REFUSED}: {seen}. It gets no numbers; fix it "
            f"(`{command or f'robustbnn check {name}'}` runs every clause) and rerun")
