"""notMNIST's download: the IDX images over https at a pinned commit, verified by sha256 before
they are put in place; the original archive, for which no digest is published, is never
downloaded, and a local copy of it is checked by its sha256, else its size and content."""

from __future__ import annotations

import pytest
import torch

from robustbnn.data import sha256_file
from robustbnn.data.idx import write_idx
from robustbnn.data.notmnist import (
    ARCHIVE,
    ARCHIVE_IMAGES,
    IMAGES,
    IMAGES_URL,
    NOTMNIST,
    NOTMNIST_SHA256,
    NotMNISTSet,
    remote,
)
from robustbnn.errors import DataError
from tests.data._ood_fixtures import write_notmnist_tar


def test_download_url_is_https_at_a_pinned_commit() -> None:
    assert IMAGES_URL.startswith("https://raw.githubusercontent.com/davidflanagan/")
    commit = IMAGES_URL.split("/")[-2]
    assert len(commit) == 40 and int(commit, 16) >= 0 and IMAGES_URL.endswith("/" + IMAGES)
    assert IMAGES in NOTMNIST_SHA256  # what is downloaded has a digest to be checked against


@pytest.fixture
def served(mirror):
    """Fixture IDX images on the local mirror, where --download finds them; their path."""
    import numpy as np

    source = mirror.root / "notmnist" / IMAGES
    source.parent.mkdir(parents=True)
    write_idx(source, np.random.default_rng(3).integers(0, 256, (5, 28, 28), dtype=np.uint8))
    return source


def test_download_verified_by_sha256(tmp_path, served, mirror):
    root = tmp_path / "root"
    x = NOTMNIST.load(root, download=True, checksums={IMAGES: sha256_file(served)})
    assert mirror.requests == [f"/notmnist/{IMAGES}"] and x.shape == (5, 1, 28, 28)
    assert sorted(p.name for p in (root / "notmnist").iterdir()) == [IMAGES]
    assert sha256_file(root / "notmnist" / IMAGES) == sha256_file(served)


def test_download_with_wrong_sha256_is_refused_and_deleted(tmp_path, served):
    root = tmp_path / "root"
    with pytest.raises(DataError, match=r"^could not download notMNIST \S+ \(\$ROBUSTBNN_MIRROR "
                                        r"is set\): \S+: failed its sha256 check \(expected "
                                        r"0{64}, got .*\): the source serves a different"):
        NOTMNIST.load(root, download=True, checksums={IMAGES: "0" * 64})
    assert list((root / "notmnist").iterdir()) == []  # nothing unverified is left in place


def test_download_source_is_the_pinned_commit():
    assert remote(NOTMNIST_SHA256[IMAGES]).urls == (IMAGES_URL,)


def test_same_size_archive_with_other_content_is_refused(tmp_path):
    """An archive of other content is refused by its sha256, whatever its size."""
    path = tmp_path / "notmnist" / ARCHIVE
    write_notmnist_tar(path, {"A": 2}, seed=0)
    good = sha256_file(path)
    write_notmnist_tar(path, {"A": 2}, seed=1)  # same layout, other pixels
    with pytest.raises(DataError, match="checksum mismatch"):
        NotMNISTSet(archive_bytes=path.stat().st_size).load(tmp_path, checksums={ARCHIVE: good})
    assert torch.is_tensor(NOTMNIST.load(tmp_path, checksums={ARCHIVE: sha256_file(path)}))


def test_archive_without_a_digest_must_decode_to_every_image(tmp_path):
    """No sha256 of notMNIST_small.tar.gz is published: a right-sized archive is still
    refused unless it decodes to all 18,724 images (a same-size archive of undecodable or
    missing PNGs would otherwise score OOD on a fraction of the set)."""
    path = tmp_path / "notmnist" / ARCHIVE
    write_notmnist_tar(path, {"A": 2, "B": 1}, seed=0)
    with pytest.raises(DataError, match=f"decoded 3 images, not the {ARCHIVE_IMAGES:,} of "
                                        "notMNIST_small.tar.gz"):
        NotMNISTSet(archive_bytes=path.stat().st_size).load(tmp_path)
    assert len(NotMNISTSet(archive_bytes=path.stat().st_size, archive_images=3).load(tmp_path)
               ) == 3
