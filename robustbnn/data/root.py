"""Where data files live (the data root) and how their integrity is checked."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs

from robustbnn.errors import DataError

ENV_VAR = "ROBUSTBNN_DATA"


def default_data_root() -> Path:
    """The per-user cache folder used when neither ``--data-root`` nor the env var is set."""
    return Path(platformdirs.user_cache_dir("robustbnn")) / "data"


def resolve_data_root(cli_value: str | Path | None = None) -> Path:
    """Pick the data root: the CLI value, else ``$ROBUSTBNN_DATA``, else the user cache.

    The default folder need not exist yet (a download creates it), but a root the user gave
    explicitly must: a typo should fail here, not as "file missing" later.

    Args:
        cli_value: The ``--data-root`` value, or None when the flag was not given.

    Returns:
        The data root, with ``~`` expanded.

    Raises:
        DataError: If an explicitly given root does not exist or is not a folder.
    """
    if cli_value is not None and str(cli_value) != "":
        root, origin = Path(cli_value).expanduser(), "--data-root"
    elif os.environ.get(ENV_VAR):
        root, origin = Path(os.environ[ENV_VAR]).expanduser(), f"${ENV_VAR}"
    else:
        return default_data_root()
    if not root.is_dir():
        problem = "is not a folder" if root.exists() else "does not exist"
        raise DataError(f"data root {root} (from {origin}) {problem}; create it, or set "
                        f"--data-root/{ENV_VAR} to the folder that holds the datasets")
    return root


def unreadable(path: str | Path, err: OSError) -> DataError:
    """The ``DataError`` for a data file that exists but cannot be read (permissions, I/O)."""
    return DataError(f"cannot read {path} ({err.strerror or err}); check the path and its "
                     f"permissions, or point --data-root/{ENV_VAR} at a readable copy")


def sha256_file(path: str | Path, *, chunk_size: int = 1 << 20) -> str:
    """sha256 hex digest of a file, read in chunks.

    Raises:
        DataError: If the file cannot be read (missing, a folder, no permission), naming it.
    """
    return file_digest(path, "sha256", chunk_size=chunk_size)


def file_digest(path: str | Path, algorithm: str, *, chunk_size: int = 1 << 20) -> str:
    """Hex digest of a file under ``algorithm`` (``"sha256"``, ``"md5"``), read in chunks.

    Raises:
        DataError: If the file cannot be read (missing, a folder, no permission), naming it.
    """
    h = hashlib.new(algorithm, usedforsecurity=False)
    try:
        with open(path, "rb") as f:
            while chunk := f.read(chunk_size):
                h.update(chunk)
    except OSError as err:
        raise unreadable(path, err) from err
    return h.hexdigest()


def verify_sha256(path: str | Path, expected: str) -> None:
    """Check a file against its expected sha256.

    Args:
        path: The file.
        expected: Expected hex digest (case-insensitive).

    Raises:
        DataError: On a mismatch, showing both digests and the fix.
    """
    actual = sha256_file(path)
    if actual != expected.lower():
        raise DataError(
            f"checksum mismatch for {path}: expected sha256 {expected.lower()}, got {actual}; "
            f"the file is corrupt or a different version: delete it and re-download "
            f"(--download), or point --data-root/{ENV_VAR} at a good copy"
        )
