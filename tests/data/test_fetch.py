"""The one download path (``robustbnn.data.fetch``), against a local server: what lands where,
checksums, atomic placement, mirrors, a smaller form when the first is not served."""

from __future__ import annotations

import hashlib
import os

import pytest

from robustbnn.data.fetch import (
    MIRROR_ENV,
    DownloadError,
    Remote,
    fetch,
    fetch_first,
    sources,
)
from robustbnn.errors import DataError


def _remote(name: str, data: bytes, *, algorithm: str = "sha256", folder: str = "sub/dir",
            urls: tuple[str, ...] = ("https://example.org/x/",)) -> Remote:
    digest = hashlib.new(algorithm, data).hexdigest()
    return Remote(folder=folder, name=name, urls=tuple(u + name for u in urls), digest=digest,
                  what="Toy")


def _put(mirror, remote: Remote, data: bytes) -> None:
    path = mirror.root / remote.folder / remote.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_mirror_replaces_the_published_sources(monkeypatch):
    remote = _remote("a.gz", b"x", urls=("https://one.org/", "http://two.org/"))
    monkeypatch.delenv(MIRROR_ENV)
    assert sources(remote) == ("https://one.org/a.gz", "http://two.org/a.gz")
    monkeypatch.setenv(MIRROR_ENV, "http://mirror.local/data/")
    assert sources(remote) == ("http://mirror.local/data/sub/dir/a.gz",)


@pytest.mark.parametrize("algorithm", ["md5", "sha256"])
def test_fetches_verifies_and_places(tmp_path, mirror, algorithm):
    data = os.urandom(3000)
    remote = _remote("a.gz", data, algorithm=algorithm)
    _put(mirror, remote, data)
    root = tmp_path / "fresh" / "root"  # the data root itself does not exist yet
    path = fetch(remote, root)
    assert path == root / "sub" / "dir" / "a.gz" and path.read_bytes() == data
    assert mirror.requests == ["/sub/dir/a.gz"]
    assert _files(root) == ["sub/dir/a.gz"]  # no temporary file left beside it


def test_an_existing_file_is_not_fetched_again(tmp_path, mirror):
    remote = _remote("a.gz", b"served")
    (tmp_path / "sub" / "dir").mkdir(parents=True)
    (tmp_path / "sub" / "dir" / "a.gz").write_bytes(b"mine")
    assert fetch(remote, tmp_path).read_bytes() == b"mine" and mirror.requests == []


def test_a_damaged_file_is_refused_and_nothing_is_left(tmp_path, mirror):
    remote = _remote("a.gz", b"the real bytes")
    _put(mirror, remote, b"the real bytez")
    with pytest.raises(DownloadError) as info:
        fetch(remote, tmp_path / "root")
    message = str(info.value)
    assert f"could not download Toy a.gz (${MIRROR_ENV} is set): {mirror.url}/sub/dir/a.gz: " \
           f"failed its sha256 check (expected {remote.digest}, got " in message
    assert "\n" not in message and not info.value.not_served
    assert _files(tmp_path / "root") == []


def test_not_served_is_told_apart_from_a_failure(tmp_path, mirror, monkeypatch):
    with pytest.raises(DownloadError, match="HTTP 404") as info:
        fetch(_remote("a.gz", b"x"), tmp_path)
    assert info.value.not_served
    monkeypatch.setenv(MIRROR_ENV, "http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(DownloadError, match="Connection refused") as info:
        fetch(_remote("a.gz", b"x"), tmp_path / "root")
    assert not info.value.not_served and _files(tmp_path / "root") == []


def test_the_next_published_source_is_tried(tmp_path, mirror, monkeypatch):
    data = b"payload"
    remote = _remote("a.gz", data, urls=(f"{mirror.url}/missing/", f"{mirror.url}/there/"))
    (mirror.root / "there").mkdir()
    (mirror.root / "there" / "a.gz").write_bytes(data)
    monkeypatch.delenv(MIRROR_ENV)
    assert fetch(remote, tmp_path).read_bytes() == data
    assert mirror.requests == ["/missing/a.gz", "/there/a.gz"]


def test_first_served_form_wins(tmp_path, mirror, caplog):
    full = _remote("full.zip", b"full")
    small = [_remote("small1.zip", b"s1"), _remote("small2.zip", b"s2")]
    _put(mirror, small[0], b"s1")
    _put(mirror, small[1], b"s2")
    paths = fetch_first([[full], small], tmp_path)
    assert [p.name for p in paths] == ["small1.zip", "small2.zip"]
    assert "Toy: full.zip is not served there; fetched small1.zip, small2.zip instead" \
        in caplog.text
    _put(mirror, full, b"full")
    assert [p.name for p in fetch_first([[full], small], tmp_path / "again")] == ["full.zip"]


def test_a_failing_form_is_not_skipped(tmp_path, mirror):
    """Only "not served" moves on to the next form: a damaged first form is an error."""
    full = _remote("full.zip", b"full")
    small = _remote("small.zip", b"small")
    _put(mirror, full, b"fulL")
    _put(mirror, small, b"small")
    with pytest.raises(DownloadError, match="failed its sha256 check"):
        fetch_first([[full], [small]], tmp_path / "root")
    assert _files(tmp_path / "root") == []


def test_an_unwritable_root_is_named(tmp_path, mirror):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(DataError, match=f"cannot create {blocker / 'sub' / 'dir'} for the Toy "
                                        "download .*; pass --data-root with a writable folder"):
        fetch(_remote("a.gz", b"x"), blocker)


def test_the_data_page_lists_every_download_and_its_folder():
    """docs/data.md's table names every set with files and the folder --download fills."""
    import re
    from pathlib import Path

    from robustbnn.data import DATASETS, OOD_DATASETS, cifar10bw, mnist, notmnist, omniglot
    from robustbnn.data.fashion_mnist import FASHION_MNIST
    from robustbnn.data.kmnist import KMNIST
    from robustbnn.data.recipes import load_recipe

    page = (Path(__file__).parents[2] / "docs" / "data.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (`[^|]+`) \| [^|]+ \| `([^`]+)/` \|", page, flags=re.M)
    table = {name.strip("` "): folder for names, folder in rows for name in names.split(",")}
    with_files = {n for reg in (DATASETS, OOD_DATASETS) for n in reg.names()
                  if not reg.get(n).embedded}
    assert set(table) == with_files
    code = {"mnist": mnist.remotes(load_recipe("mnist"))[0].folder,
            "mnist60k": mnist.remotes(load_recipe("mnist60k"))[0].folder,
            "notmnist": notmnist.remote("0" * 64).folder,
            "omniglot": omniglot.remotes({})[0][0].folder,
            "cifar10bw": cifar10bw.remotes({})[0][0].folder,
            "fashion_mnist": FASHION_MNIST.folder, "kmnist": KMNIST.folder}
    assert table == code


@pytest.mark.parametrize("value", ["", "  ", "mirror.local/data", "ftp://host/x", "http:///x"])
def test_a_mirror_that_is_no_url_is_refused_in_one_line(value, monkeypatch, capsys):
    from robustbnn.cli import main

    monkeypatch.setenv(MIRROR_ENV, value)
    assert main(["datasets"]) == 2 if not value.strip() else main(["datasets"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"${MIRROR_ENV}" in err[0], err
    assert ("unset it" in err[0])
