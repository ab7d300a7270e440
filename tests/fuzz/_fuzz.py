"""Shared pieces of the fuzz tests: byte strategies, mutations and the one outcome check.

Every reader of outside bytes must either return valid data or raise robustbnn's own error
type (a :class:`robustbnn.errors.UserError`) whose message names the file; any other exception
fails the property. Examples are written to one file per test in a temporary folder of the
module (Hypothesis re-runs the body in one test call, so function-scoped ``tmp_path`` would be
shared anyway).
"""

from __future__ import annotations

import contextlib
import gzip
from collections.abc import Iterator

from hypothesis import strategies as st

from robustbnn.errors import UserError

# Raw bytes: empty, tiny and a few kB, the sizes where headers and truncations live.
random_bytes = st.binary(min_size=0, max_size=4096)


def gzipped(strategy: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    """Valid gzip around the given payload, so the parser behind the gzip layer is reached."""
    return strategy.map(lambda b: gzip.compress(b, mtime=0))


@st.composite
def mutated(draw: st.DrawFn, seed: bytes, *, max_ops: int = 4) -> bytes:
    """``seed`` with 1..max_ops edits: byte flips, overwrites, insertions, deletions, truncation.

    Mutating a valid file reaches deep into a format (past magic numbers and checksums of
    inner layers), where uniformly random bytes almost never get.
    """
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(st.sampled_from(["flip", "overwrite", "insert", "delete", "truncate"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=8))
            data[at:at + len(chunk)] = chunk
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif op == "truncate":
            del data[at:]
    return bytes(data)


@contextlib.contextmanager
def reader_outcome(*names: str) -> Iterator[None]:
    """Allow only success or a ``UserError`` whose message contains one of ``names``."""
    try:
        yield
    except UserError as err:
        message = str(err)
        assert any(name in message for name in names), (
            f"{type(err).__name__} does not name the file ({names}): {message}")
