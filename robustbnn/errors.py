"""Errors a user can act on. The CLI prints them as one line (no traceback unless --debug)."""

from __future__ import annotations


class UserError(Exception):
    """An error caused by input the user controls; its message names the fix."""


class UnknownNameError(UserError, KeyError):
    """An unknown registry name; the message lists the known names."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.kind, self.name, self.known = kind, name, known
        super().__init__(f"unknown {kind} {name!r}; known: {sorted(known)}")

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class DataError(UserError):
    """Missing, truncated or corrupt data, or a checksum mismatch."""


class DeviceError(UserError):
    """A requested device that this machine does not have."""


class ConfigError(UserError):
    """A bad configuration value or override."""


class TrainingDivergedError(UserError):
    """The training loss became NaN or infinite; nothing was cached."""


class ModelContractError(UserError, ValueError):
    """A model's ``sample_logits`` broke the contract (shape, dtype, NaN/inf)."""


class CacheMismatchError(UserError):
    """A valid cache entry whose tensors do not fit the model built from today's code."""
