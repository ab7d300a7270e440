"""What a model check found: each clause's outcome, per model, and its lines for people."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Literal

from robustbnn.errors import ModelContractError

__all__ = ["CheckReport", "ClauseResult", "report_lines"]


@dataclasses.dataclass(frozen=True)
class ClauseResult:
    """The outcome of one clause.

    Attributes:
        clause: Its name, one of :data:`~robustbnn.testing.model.CLAUSES`.
        status: ``"ok"``, ``"failed"`` or ``"skipped"`` (does not apply, or the model did not
            build).
        detail: What was seen when it failed, or why it was skipped.
        error: The :class:`ModelContractError` of a failed clause, else None.
    """

    clause: str
    status: Literal["ok", "failed", "skipped"]
    detail: str = ""
    error: ModelContractError | None = None


@dataclasses.dataclass(frozen=True)
class CheckReport:
    """Every clause's outcome for one model.

    Attributes:
        model: The model's name.
        device: The run device the checks ran on.
        results: One :class:`ClauseResult` per clause, in
            :data:`~robustbnn.testing.model.CLAUSES` order.
    """

    model: str
    device: str
    results: tuple[ClauseResult, ...]

    @property
    def ok(self) -> bool:
        """Whether no clause failed."""
        return not self.failed

    @property
    def failed(self) -> list[ClauseResult]:
        """The failed clauses."""
        return [r for r in self.results if r.status == "failed"]

    def result(self, clause: str) -> ClauseResult:
        """The outcome of ``clause``."""
        return next(r for r in self.results if r.clause == clause)

    def lines(self) -> list[str]:
        """One line per clause: ``clause ok``, ``clause FAILED: what`` or ``clause skipped``."""
        text = {"ok": "ok", "failed": "FAILED: ", "skipped": "skipped: "}
        return [f"{r.clause:<17} {text[r.status]}{r.detail}".rstrip() for r in self.results]

    def raise_if_failed(self) -> CheckReport:
        """Return the report when every clause passed.

        Raises:
            ModelContractError: Naming the model and every failed clause with what was seen.
        """
        if self.failed:
            raise ModelContractError("; ".join(str(r.error) for r in self.failed))
        return self


def report_lines(reports: list[CheckReport], width: int = 0) -> Iterator[str]:
    """Lines ``model  clause  ok|FAILED: what|skipped: why``, one per clause of each report.

    The model names are padded to ``width``, or to the longest of them when that is longer.
    """
    width = max([width, *(len(r.model) for r in reports)])
    for report in reports:
        for line in report.lines():
            yield f"{report.model:<{width}}  {line}"

