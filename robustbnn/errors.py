"""Errors a user can act on. The CLI prints them as one line (no traceback unless --debug).

Each class carries the exit code the CLI returns for it: 2 for a bad input value (a flag, a
setting, a name, a path), as argparse does for its usage errors, and 1 for a failure while the
work runs (diverged training, a broken model, missing data, a regression beyond tolerance).
"""

from __future__ import annotations

from typing import Any


def _rebuild(cls: type[BaseException], args: tuple, state: dict[str, Any]) -> BaseException:
    """An exception of ``cls`` with ``args`` and attributes ``state``, without its ``__init__``."""
    err = cls.__new__(cls, *args)
    err.args = args
    err.__dict__.update(state)
    return err


class UserError(Exception):
    """An error caused by input the user controls; its message names the fix.

    Every subclass survives pickling, whatever its ``__init__`` takes: a worker process sends
    its errors back pickled, and one that cannot be rebuilt there kills the whole pool.
    """

    exit_code = 1

    def __reduce__(self) -> tuple:
        """Rebuild from the message and attributes, not by calling ``__init__`` again."""
        return _rebuild, (type(self), self.args, dict(self.__dict__))


class BadValueError(UserError):
    """A bad input value, refused before any work starts (exit code 2, as argparse's)."""

    exit_code = 2


class UnknownNameError(BadValueError, KeyError):
    """An unknown registry name; the message lists the known names."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.kind, self.name, self.known = kind, name, known
        super().__init__(f"unknown {kind} {name!r}; known: {sorted(known)}")

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class DataError(UserError):
    """Missing, truncated or corrupt data, or a checksum mismatch."""


class DeviceError(BadValueError):
    """A requested device that this machine does not have."""


class ConfigError(BadValueError):
    """A bad configuration value or override."""


class PluginError(BadValueError):
    """A plug-in module or entry point that cannot be imported."""


class PathError(BadValueError):
    """An output folder that cannot be written, or a data folder that cannot be read."""


class TrainingDivergedError(UserError):
    """The training loss became NaN or infinite; nothing was cached."""


class ModelContractError(UserError, ValueError):
    """A model's ``sample_logits`` broke the contract (shape, dtype, NaN/inf)."""


class NumericalFaultError(ModelContractError):
    """NaN or inf logits during evaluation; the cell records a flag row instead of numbers.

    Attributes:
        model: The model's registry name.
        count: How many logits were NaN or inf.
    """

    def __init__(self, message: str, *, model: str, count: int) -> None:
        super().__init__(message)
        self.model, self.count = model, count


class ContractRefusal(ModelContractError):
    """The bench's model contract refused a model: it gets no numbers.

    Attributes:
        model: The model's registry name.
        clauses: The broken clauses, in the order they ran.
        seen: What each broken clause saw, for the leaderboard's reason column.
    """

    def __init__(self, message: str, *, model: str, clauses: list[str], seen: str = "") -> None:
        super().__init__(message)
        self.model, self.clauses, self.seen = model, list(clauses), seen


class AttackBudgetError(UserError):
    """An attack returned inputs outside its declared eps-ball or outside the [0, 1] box."""


class AttackContractError(UserError, ValueError):
    """An attack broke a clause of the attack kit (``robustbnn check --attack``)."""


class CacheMismatchError(UserError):
    """A valid cache entry whose tensors do not fit the model built from today's code."""
