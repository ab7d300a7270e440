"""A finished cell's two files: the JSON that marks it done and the ``.npz`` of its arrays.

:func:`encode` gives their content: the JSON records the sha256 of its own content and of the
``.npz`` (``digest``). :func:`verify` reads them back: a file that is missing, truncated,
unreadable or edited raises :class:`CellMissing` naming it; a JSON that is absent or of an
older :data:`~robustbnn.run.cells.OUTPUT_FORMAT` raises :class:`Outdated` (recomputed without a
warning). Cells stored before digests existed are checked for what they hold (they parse, their
arrays load). :class:`~robustbnn.run.store.CellStore` keeps these files, one pair per cell.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from robustbnn.errors import UserError
from robustbnn.run.cells import OUTPUT_FORMAT, Cell, CellOutcome

__all__ = ["CellMissing", "Outdated", "encode", "payload_digest", "verify"]


class CellMissing(UserError):
    """A finished cell's file that is gone or damaged (deleted or edited during the run).

    Attributes:
        cell_id: The cell whose files are missing.
    """

    def __init__(self, message: str, cell_id: str) -> None:
        super().__init__(message)
        self.cell_id = cell_id


def payload_digest(payload: dict[str, Any]) -> str:
    """The sha256 of a stored cell's content: every field but ``digest``, as key-sorted JSON."""
    content = {k: v for k, v in payload.items() if k != "digest"}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def encode(cell: Cell, outcome: CellOutcome) -> tuple[bytes | None, str]:
    """A finished cell's two files: its arrays as ``.npz`` bytes (None when it has none), and
    the JSON that marks it done, with the sha256 of its content and of its arrays."""
    npz = digest = None
    if outcome.arrays:
        buf = io.BytesIO()
        np.savez_compressed(buf, **outcome.arrays)
        npz = buf.getvalue()
        digest = hashlib.sha256(npz).hexdigest()
    payload = {"format": OUTPUT_FORMAT, "cell": cell.describe(), "rows": outcome.rows,
               "info": outcome.info, "seconds": outcome.seconds,
               "arrays": sorted(outcome.arrays)}
    payload = json.loads(json.dumps(payload))  # the digest is of what a reader will parse
    payload["digest"] = {"payload": payload_digest(payload), "npz": digest}
    return npz, json.dumps(payload, indent=1) + "\n"


def verify(path: Path, npz: Path, cell_id: str, *, arrays: bool = False
           ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The cell's stored JSON (and, with ``arrays``, its arrays), checked against the
    digests it records.

    Args:
        path: The cell's JSON file.
        npz: The cell's arrays file.
        cell_id: The cell the files must belong to.
        arrays: Load the arrays too (else a digest-verified ``.npz`` is not opened).

    Returns:
        The parsed JSON, and the arrays (empty unless ``arrays``, or when it has none).

    Raises:
        Outdated: No JSON, or one of an older output format (recomputed silently).
        CellMissing: A damaged, edited or half-deleted cell, naming the file.
    """

    payload = _payload(path, cell_id)
    names, digest = payload["arrays"], payload.get("digest")
    if not names:
        return payload, {}
    try:
        blob = npz.read_bytes()
    except FileNotFoundError:
        raise CellMissing(f"{npz} is missing (its cell {path.name} lists arrays "
                          f"{', '.join(names)})", cell_id) from None
    except OSError as err:
        raise _damaged(npz, f"unreadable: {err.strerror or err}", cell_id) from None
    if digest is not None and digest.get("npz") != hashlib.sha256(blob).hexdigest():
        raise _damaged(npz, f"its sha256 is not the one {path.name} records: edited or "
                            "truncated", cell_id)
    if digest is not None and not arrays:  # verified by digest; no need to load it
        return payload, {}
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as data:
            loaded = {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as err:
        raise _damaged(npz, f"does not load: {err}", cell_id) from None
    if sorted(loaded) != sorted(names):
        raise _damaged(npz, f"holds arrays {sorted(loaded)}, {path.name} lists {names}",
                       cell_id)
    return payload, loaded


def _payload(path: Path, cell_id: str) -> dict[str, Any]:
    """The cell's parsed JSON, of the current format, matching its digest and well formed.

    Raises:
        Outdated: No JSON, or one of an older output format.
        CellMissing: An unreadable, malformed or edited JSON, naming the file.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise Outdated from None
    except OSError as err:
        raise _damaged(path, f"unreadable: {err.strerror or err}", cell_id) from None
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        raise _damaged(path, f"not JSON: {err}", cell_id) from None
    if not isinstance(payload, dict):
        raise _damaged(path, f"a JSON {type(payload).__name__}, not an object", cell_id)
    if payload.get("format", 1) != OUTPUT_FORMAT:
        raise Outdated
    digest = payload.get("digest")
    if digest is not None:
        if not isinstance(digest, dict) or digest.get("payload") != payload_digest(payload):
            raise _damaged(path, "its content does not match the sha256 it records: edited "
                                 "or truncated", cell_id)
    problem = _shape_problem(payload, cell_id)
    if problem:
        raise _damaged(path, problem, cell_id)
    return payload


def _damaged(where: Path, why: str, cell_id: str) -> CellMissing:
    """The error of a damaged file of ``cell_id``."""
    return CellMissing(f"{where} is damaged ({why})", cell_id)


class Outdated(Exception):
    """A cell without JSON, or of an older output format: not done, nothing to warn about."""


def _shape_problem(payload: dict[str, Any], cell_id: str) -> str | None:
    """What is wrong with the fields of a parsed cell JSON, or None."""
    cell = payload.get("cell")
    if not isinstance(cell, dict) or cell.get("id") != cell_id:
        return "it belongs to another cell"
    rows, names = payload.get("rows"), payload.get("arrays")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        return "'rows' is not a list of objects"
    if not isinstance(payload.get("info"), dict):
        return "'info' is not an object"
    seconds = payload.get("seconds")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return "'seconds' is not a number"
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return "'arrays' is not a list of names"
    return None
