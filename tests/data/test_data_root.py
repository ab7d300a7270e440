from __future__ import annotations

import hashlib
from pathlib import Path

import platformdirs
import pytest

from robustbnn.data import resolve_data_root, sha256_file, verify_sha256
from robustbnn.errors import DataError, UserError


def test_cli_value_wins_over_env(tmp_path, monkeypatch):
    (tmp_path / "cli").mkdir()
    (tmp_path / "env").mkdir()
    monkeypatch.setenv("ROBUSTBNN_DATA", str(tmp_path / "env"))
    assert resolve_data_root(tmp_path / "cli") == tmp_path / "cli"
    assert resolve_data_root(str(tmp_path / "cli")) == tmp_path / "cli"


def test_env_when_no_cli_value(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBUSTBNN_DATA", str(tmp_path))
    assert resolve_data_root(None) == tmp_path


def test_default_is_user_cache(monkeypatch):
    monkeypatch.delenv("ROBUSTBNN_DATA", raising=False)
    assert resolve_data_root(None) == Path(platformdirs.user_cache_dir("robustbnn")) / "data"


def test_empty_env_counts_as_unset(monkeypatch):
    monkeypatch.setenv("ROBUSTBNN_DATA", "")
    assert resolve_data_root(None).name == "data"


def test_missing_cli_root(tmp_path, monkeypatch):
    monkeypatch.delenv("ROBUSTBNN_DATA", raising=False)
    missing = tmp_path / "nope"
    with pytest.raises(DataError) as info:
        resolve_data_root(missing)
    message = str(info.value)
    assert str(missing) in message and "from --data-root" in message
    assert "does not exist" in message
    assert isinstance(info.value, UserError)


def test_missing_env_root(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBUSTBNN_DATA", str(tmp_path / "nope"))
    with pytest.raises(DataError, match=r"from \$ROBUSTBNN_DATA\) does not exist"):
        resolve_data_root(None)


def test_root_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(DataError, match="is not a folder"):
        resolve_data_root(tmp_path / "f")


def test_sha256_file(tmp_path):
    data = bytes(range(256)) * 5000  # spans several read chunks
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f", chunk_size=1000) == hashlib.sha256(data).hexdigest()


def test_verify_sha256(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    good = hashlib.sha256(b"abc").hexdigest()
    verify_sha256(tmp_path / "f", good.upper())
    with pytest.raises(DataError) as info:
        verify_sha256(tmp_path / "f", "0" * 64)
    message = str(info.value)
    assert f"expected sha256 {'0' * 64}, got {good}" in message
    assert str(tmp_path / "f") in message and "re-download" in message
