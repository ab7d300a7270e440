"""Downloading one dataset file: from its sources (or a mirror), verified, put in place atomically.

Every ``--download`` goes through :func:`fetch`. A file is written to a hidden temporary file
beside its destination, checked against its published digest (md5 or sha256), and only then
renamed into place; on any failure the temporary file is removed, so a failed or corrupted
download leaves nothing behind and a rerun starts clean. The data root's folders are created as
needed, so the default root (the user cache folder) is made on the first download.

Mirrors: ``$ROBUSTBNN_MIRROR`` is a base URL laid out like a data root. When it is set, a file
that belongs at ``<data root>/<folder>/<name>`` is fetched from ``<mirror>/<folder>/<name>``
and from nowhere else (an institution's copy, an air-gapped cluster's file server, or a test's
local server), e.g. ``python -m http.server`` run in a data root serves one.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from robustbnn.data.root import file_digest
from robustbnn.errors import DataError

log = logging.getLogger(__name__)

MIRROR_ENV = "ROBUSTBNN_MIRROR"
TIMEOUT_S = 60  # per connection attempt and per read; a stalled mirror fails, not hangs
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Remote:
    """One downloadable file.

    Attributes:
        folder: Its folder under the data root, ``/``-separated ("mnist", "FashionMNIST/raw").
        name: Its file name.
        urls: Where it is published, tried in order (full URLs).
        digest: Its published md5 (32 hex digits) or sha256 (64).
        what: The dataset, for messages ("MNIST").
    """

    folder: str
    name: str
    urls: tuple[str, ...]
    digest: str
    what: str

    def dest(self, data_root: Path) -> Path:
        """Where the file goes under ``data_root``."""
        return Path(data_root) / self.folder / self.name


def sources(remote: Remote) -> tuple[str, ...]:
    """The URLs to try: the mirror's alone when ``$ROBUSTBNN_MIRROR`` is set, else the
    published ones."""
    mirror = os.environ.get(MIRROR_ENV, "").strip()
    if mirror:
        return (f"{mirror.rstrip('/')}/{remote.folder.strip('/')}/{remote.name}",)
    return remote.urls


def fetch(remote: Remote, data_root: Path) -> Path:
    """Download ``remote`` into ``data_root`` unless it is there already.

    An existing file is returned as is (its reader checks its digest). Each source is tried in
    turn; the first whose bytes match the digest is renamed into place.

    Args:
        remote: The file.
        data_root: The data root; it and the file's folder are created when missing.

    Returns:
        The file's path.

    Raises:
        DataError: One line naming the dataset, every URL tried with why it failed, where the
            file was to go, and the ways out; nothing is left at the destination.
    """
    dest = remote.dest(data_root)
    if dest.is_file():
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DataError(f"cannot create {dest.parent} for the {remote.what} download "
                        f"({err.strerror or err}); pass --data-root with a writable folder"
                        ) from err
    failures: list[_Failed] = []
    for url in sources(remote):
        try:
            _download(url, dest, remote.digest)
        except _Failed as failure:
            failures.append(failure)
            continue
        return dest
    raise _error(remote.what, remote.name, failures, dest)


def _error(what: str, names: str, failures: Sequence[_Failed], dest: Path) -> DownloadError:
    """The one-line error for ``failures`` (every URL tried, with why)."""
    tried = "; ".join(f"{f.url}: {f}" for f in failures)
    via = f" (${MIRROR_ENV} is set)" if os.environ.get(MIRROR_ENV, "").strip() else ""
    error = DownloadError(
        f"could not download {what} {names}{via}: {tried}; nothing was written to "
        f"{dest.parent}; check the network or the mirror, or copy the file to {dest} (or "
        f"point --data-root at a folder that has it)",
        not_served=all(f.not_served for f in failures))
    error.failures = tuple(failures)
    return error


class DownloadError(DataError):
    """A file no source delivered intact; ``not_served`` when every source said it has no
    such file (HTTP 404), as opposed to failing (network, other status, digest)."""

    def __init__(self, message: str, *, not_served: bool = False) -> None:
        super().__init__(message)
        self.not_served = not_served
        self.failures: tuple[_Failed, ...] = ()  # each source's failure, set by the raiser


class _Failed(Exception):
    """One source failed (network, HTTP status, digest); the message says how."""

    def __init__(self, message: str, *, url: str = "", not_served: bool = False) -> None:
        super().__init__(message)
        self.url, self.not_served = url, not_served


def _download(url: str, dest: Path, digest: str) -> None:
    """Fetch ``url`` into a temporary file beside ``dest``, verify it, rename it into place."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            _copy(url, out)
        algorithm = "md5" if len(digest) == 32 else "sha256"
        actual = file_digest(tmp, algorithm)
        if actual != digest.lower():
            raise _Failed(f"failed its {algorithm} check (expected {digest.lower()}, got "
                          f"{actual}): the source serves a different or damaged file", url=url)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _copy(url: str, out: object) -> None:
    """Stream ``url``'s body into the open file ``out``."""
    request = urllib.request.Request(url, headers={"User-Agent": "robustbnn"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310
            size = response.headers.get("Content-Length")
            log.info("downloading %s%s", url, f" ({_size(int(size))})" if size else "")
            shutil.copyfileobj(response, out, _CHUNK)
    except urllib.error.HTTPError as err:
        raise _Failed(f"HTTP {err.code} {err.reason}", url=url,
                      not_served=err.code == HTTPStatus.NOT_FOUND) from err
    except urllib.error.URLError as err:
        raise _Failed(" ".join(str(err.reason).split()), url=url) from err
    except (OSError, ValueError) as err:  # timeouts, resets, a malformed URL
        raise _Failed(" ".join(f"{type(err).__name__}: {err}".split()), url=url) from err


def _size(n: int) -> str:
    """``9.9 MB``, ``28.9 kB``, ``512 B``."""
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} kB" if n >= 1e3 else f"{n} B"


def fetch_all(remotes: Sequence[Remote], data_root: Path) -> list[Path]:
    """:func:`fetch` each of ``remotes`` in order; the files' paths."""
    return [fetch(r, data_root) for r in remotes]


def fetch_first(forms: Sequence[Sequence[Remote]], data_root: Path) -> list[Path]:
    """Fetch the first of several forms of a dataset that its sources serve.

    ``forms`` are in the order its reader prefers them (Omniglot's full background zip, then
    the two background-small zips). A form is skipped only when its sources have no such file
    (HTTP 404), as a mirror holding only the smaller form answers; any other failure is an
    error. A form other than the first is logged as a warning, naming what was fetched.

    Raises:
        DownloadError: The last form's error when none is served, or the first other failure.
    """
    if not forms:
        raise ValueError("fetch_first needs at least one form")
    unserved: list[_Failed] = []
    for k, form in enumerate(forms):
        try:
            paths = fetch_all(form, data_root)
        except DownloadError as err:
            if not err.not_served:
                raise
            unserved.extend(err.failures)
            continue
        if k:
            log.warning("%s: %s is not served there; fetched %s instead", form[0].what,
                        ", ".join(r.name for r in forms[0]), ", ".join(r.name for r in form))
        return paths
    names = " or ".join(", ".join(r.name for r in form) for form in forms)
    raise _error(forms[0][0].what, names, unserved, forms[0][0].dest(data_root))
