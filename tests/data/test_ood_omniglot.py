"""The Omniglot OOD loader on tiny zips in the original folder layout (no network)."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
import torch
import torchvision.datasets

from robustbnn.data import sha256_file
from robustbnn.data.omniglot import (
    BACKGROUND_ALPHABETS,
    OMNIGLOT,
    OMNIGLOT_DIGESTS,
    SAFE_ALPHABETS,
    remotes,
)
from robustbnn.errors import DataError
from tests.data._ood_fixtures import assert_missing, plant, write_omniglot_zip

# docs/provenance.md's reading of indices [0,2,5,6,8,12,13,14,15,16,17,18,19,21,26].
EXPECTED_SAFE = [
    "Alphabet_of_the_Magi", "Arcadian", "Balinese", "Bengali", "Braille", "Futurama", "Grantha",
    "Greek", "Gujarati", "Hebrew", "Inuktitut_(Canadian_Aboriginal_Syllabics)",
    "Japanese_(hiragana)", "Japanese_(katakana)", "Latin", "Sanskrit",
]


def area_resize(img: np.ndarray, size: int = 28) -> np.ndarray:
    """Oracle: output pixel (i, j) averages input rows floor(i·H/s)..ceil((i+1)·H/s)."""
    n = img.shape[0]
    edges = [(int(np.floor(i * n / size)), int(np.ceil((i + 1) * n / size)))
             for i in range(size)]
    return np.array([[img[r0:r1, c0:c1].mean() for c0, c1 in edges] for r0, r1 in edges])


@pytest.fixture
def small_zips(tmp_path):
    """Two background-small zips; Greek is in both (other pixels), Korean is not safe."""
    folder = tmp_path / "omniglot"
    one = write_omniglot_zip(folder / "images_background_small1.zip", "images_background_small1",
                             {"Balinese": 3, "Greek": 2, "Korean": 2}, seed=1)
    two = write_omniglot_zip(folder / "images_background_small2.zip", "images_background_small2",
                             {"Greek": 2, "Sanskrit": 1}, seed=2)
    sums = {p.name: sha256_file(p) for p in folder.iterdir()}
    return one, two, sums


def test_safe_alphabets():
    assert list(BACKGROUND_ALPHABETS) == sorted(BACKGROUND_ALPHABETS)
    assert len(set(BACKGROUND_ALPHABETS)) == 30
    assert list(SAFE_ALPHABETS) == EXPECTED_SAFE


def test_load_small_zips(tmp_path, small_zips):
    one, two, sums = small_zips
    assert OMNIGLOT.available(tmp_path)
    x = OMNIGLOT.load(tmp_path, checksums=sums)
    # Balinese 3 drawers x 2 characters, Greek 2 x 2 once, Sanskrit 1 x 2; no Korean.
    assert x.shape == (12, 1, 28, 28) and x.dtype == torch.float32
    assert 0.0 <= x.min() and x.max() <= 1.0
    keys = sorted(k for k in {**one, **two} if not k.startswith("Korean"))
    # Greek keys come from the first zip; sorted by path; strokes (False) become 1.
    images = [one[k] if k in one else two[k] for k in keys]
    expected = np.stack([area_resize(1.0 - img.astype(np.float64)) for img in images])
    assert torch.allclose(x[:, 0].double(), torch.from_numpy(expected), atol=1e-6)
    assert x.mean() < 0.2  # mostly black background


def test_first_n_and_preprocessing(tmp_path, small_zips):
    sums = small_zips[2]
    full = OMNIGLOT.load(tmp_path, checksums=sums)
    assert torch.equal(OMNIGLOT.load(tmp_path, 5, checksums=sums), full[:5])
    assert torch.equal(OMNIGLOT.load(tmp_path, preprocessing="bhn_reference", checksums=sums),
                       full)


def test_full_zip_in_torchvision_folder(tmp_path):
    path = tmp_path / "omniglot-py" / "images_background.zip"
    write_omniglot_zip(path, "images_background", {"Arcadian": 2, "Cyrillic": 3, "Latin": 1},
                       seed=0, chars=3)
    x = OMNIGLOT.load(tmp_path, checksums={path.name: sha256_file(path)})
    assert x.shape == (9, 1, 28, 28)


def test_default_checksums_reject_fixture(tmp_path, small_zips):
    with pytest.raises(DataError) as info:
        OMNIGLOT.load(tmp_path)
    message = str(info.value)
    assert f"checksum mismatch for {tmp_path / 'omniglot' / 'images_background_small1.zip'}: " \
           "expected sha256 f38eb80f" in message
    assert f"got {small_zips[2]['images_background_small1.zip']}" in message


def test_full_zip_checked_with_torchvision_md5(tmp_path):
    path = tmp_path / "omniglot" / "images_background.zip"
    write_omniglot_zip(path, "images_background", {"Latin": 1}, seed=0)
    with pytest.raises(DataError, match="expected md5 68d2efa1b9178cc56df9314c21c6e718"):
        OMNIGLOT.load(tmp_path)


def test_not_a_zip(tmp_path):
    sums = plant(tmp_path / "omniglot" / "images_background_small1.zip",
                 b"<html>404 Not Found</html>")
    with pytest.raises(DataError, match="images_background_small1.zip: corrupt zip"):
        OMNIGLOT.load(tmp_path, checksums=sums)


def test_corrupt_png_in_zip(tmp_path):
    path = tmp_path / "omniglot" / "images_background_small2.zip"
    write_omniglot_zip(path, "images_background_small2", {"Greek": 1}, seed=0)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("images_background_small2/Greek/character09/0001_01.png", b"not a png")
    with pytest.raises(DataError, match="corrupt zip .*Greek/character09/0001_01.png"):
        OMNIGLOT.load(tmp_path, checksums={path.name: sha256_file(path)})


def test_bad_crc_in_zip(tmp_path):
    path = tmp_path / "omniglot" / "images_background_small2.zip"
    write_omniglot_zip(path, "images_background_small2", {"Greek": 1}, seed=0, chars=1)
    data = bytearray(path.read_bytes())
    start = data.index(b"IHDR")  # inside the first PNG, stored uncompressed by writestr
    data[start + 20:start + 24] = b"\xff\x00\xff\x00"
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="images_background_small2.zip: corrupt zip"):
        OMNIGLOT.load(tmp_path, checksums={path.name: sha256_file(path)})


def test_no_safe_alphabet(tmp_path):
    path = tmp_path / "omniglot" / "images_background_small1.zip"
    write_omniglot_zip(path, "images_background_small1", {"Korean": 1}, seed=0)
    with pytest.raises(DataError, match="no image of the safe alphabets"):
        OMNIGLOT.load(tmp_path, checksums={path.name: sha256_file(path)})


def test_missing_files(tmp_path):
    assert_missing(OMNIGLOT, tmp_path, f"is in {tmp_path / 'omniglot'}",
                   "images_background_small1.zip", "images_background.zip")


def test_download_fetches_the_full_zip(tmp_path, mirror):
    path = mirror.root / "omniglot" / "images_background.zip"
    write_omniglot_zip(path, "images_background", {"Hebrew": 2, "N_Ko": 2}, seed=5)
    sums = {path.name: sha256_file(path)}
    x = OMNIGLOT.load(tmp_path, download=True, checksums=sums)
    assert mirror.requests == ["/omniglot/images_background.zip"]
    assert x.shape == (4, 1, 28, 28)  # Hebrew only


def test_download_falls_back_to_the_small_zips(tmp_path, mirror, caplog):
    sums = {}
    for k, alphabet in ((1, "Balinese"), (2, "Latin")):
        path = mirror.root / "omniglot" / f"images_background_small{k}.zip"
        write_omniglot_zip(path, f"images_background_small{k}", {alphabet: 2}, seed=k)
        sums[path.name] = sha256_file(path)
    sums["images_background.zip"] = "0" * 32
    x = OMNIGLOT.load(tmp_path, download=True, checksums=sums)
    assert mirror.requests == ["/omniglot/images_background.zip",
                               "/omniglot/images_background_small1.zip",
                               "/omniglot/images_background_small2.zip"]
    assert x.shape == (8, 1, 28, 28)
    assert "images_background.zip is not served there; fetched images_background_small1.zip" \
        in caplog.text


def test_download_sources_are_lakes_repository():
    full, small = remotes(OMNIGLOT_DIGESTS)
    assert [r.urls for r in full] == [
        (f"{torchvision.datasets.Omniglot.download_url_prefix}/images_background.zip",)]
    assert full[0].digest == torchvision.datasets.Omniglot.zips_md5["images_background"]
    assert [r.name for r in small] == ["images_background_small1.zip",
                                       "images_background_small2.zip"]


def test_download_failure_is_a_data_error(tmp_path, mirror):
    with pytest.raises(DataError) as info:
        OMNIGLOT.load(tmp_path, download=True)
    message = str(info.value)
    assert message.startswith("could not download Omniglot images_background.zip or "
                              "images_background_small1.zip, images_background_small2.zip "
                              f"($ROBUSTBNN_MIRROR is set): {mirror.url}/omniglot/"
                              "images_background.zip: HTTP 404 File not found; ")
    assert f"{mirror.url}/omniglot/images_background_small1.zip: HTTP 404" in message
    assert list((tmp_path / "omniglot").iterdir()) == []
