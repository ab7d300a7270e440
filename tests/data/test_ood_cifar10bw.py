"""The CIFARbw OOD loader on tiny PNG sprites and test-batch pickles (no network)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torchvision.datasets

from robustbnn.data._ood import md5_file
from robustbnn.data.cifar10bw import (
    ARCHIVE,
    CIFAR10BW,
    CIFAR10BW_DIGESTS,
    remotes,
    resize_bilinear_tf1,
)
from robustbnn.errors import DataError
from tests.data._ood_fixtures import (
    assert_missing,
    plant,
    png_bytes,
    write_cifar_sprite,
    write_test_batch,
)

WEIGHTS = np.array([0.2989, 0.587, 0.114])


def tf1_bilinear(img: np.ndarray, out: int = 28) -> np.ndarray:
    """Oracle, written from TF1's resize_bilinear kernel (half_pixel_centers=False)."""
    n = img.shape[0]
    res = np.empty((out, out))
    for i in range(out):
        for j in range(out):
            y, x = i * n / out, j * n / out
            y0, x0 = int(np.floor(y)), int(np.floor(x))
            y1, x1 = min(y0 + 1, n - 1), min(x0 + 1, n - 1)
            dy, dx = y - y0, x - x0
            top = img[y0, x0] + (img[y0, x1] - img[y0, x0]) * dx
            bottom = img[y1, x0] + (img[y1, x1] - img[y1, x0]) * dx
            res[i, j] = top + (bottom - top) * dy
    return res


def cifarbw_oracle(images: np.ndarray) -> np.ndarray:
    return np.stack([tf1_bilinear((img / 255.0) @ WEIGHTS) for img in images])


@pytest.fixture
def rgb():
    return np.random.default_rng(0).integers(0, 256, size=(5, 32, 32, 3), dtype=np.uint8)


@pytest.fixture
def sprites(tmp_path, rgb):
    """Sprite 0 holds images 0-2, sprite 1 images 3-4 (distinct row counts)."""
    folder = tmp_path / "cifar10"
    return {
        "cifar10_batch_0.png": write_cifar_sprite(folder / "cifar10_batch_0.png", rgb[:3]),
        "cifar10_batch_1.png": write_cifar_sprite(folder / "cifar10_batch_1.png", rgb[3:]),
    }


def test_test_batch_md5_matches_torchvision():
    assert [["test_batch", CIFAR10BW_DIGESTS["test_batch"]]] == \
        [list(e) for e in torchvision.datasets.CIFAR10.test_list]


def test_sprites(tmp_path, rgb, sprites):
    assert CIFAR10BW.available(tmp_path)
    x = CIFAR10BW.load(tmp_path, checksums=sprites)
    assert x.shape == (5, 1, 28, 28) and x.dtype == torch.float32
    assert 0.0 <= x.min() and x.max() <= 1.0
    assert torch.allclose(x[:, 0].double(), torch.from_numpy(cifarbw_oracle(rgb)), atol=1e-5)
    assert torch.equal(CIFAR10BW.load(tmp_path, 4, checksums=sprites), x[:4])
    assert torch.equal(CIFAR10BW.load(tmp_path, preprocessing="bhn_reference",
                                      checksums=sprites), x)


def test_sprite_layout_row_is_image_column_is_pixel(tmp_path):
    img = np.zeros((2, 32, 32, 3), dtype=np.uint8)
    img[0, :, :, 1] = np.arange(32, dtype=np.uint8)[None, :] * 8  # green ramp along x
    img[1, :, :, 0] = 255  # all red
    sums = {"cifar10_batch_0.png": write_cifar_sprite(tmp_path / "cifar10" /
                                                      "cifar10_batch_0.png", img)}
    x = CIFAR10BW.load(tmp_path, checksums=sums)[:, 0].double()
    ramp = 0.587 * 8 * torch.arange(28, dtype=torch.float64) * 32 / 28 / 255
    assert torch.allclose(x[0], ramp.expand(28, 28), atol=1e-5)
    assert torch.allclose(x[1], torch.full((28, 28), 0.2989, dtype=torch.float64), atol=1e-6)


def test_test_batch_preferred(tmp_path, rgb, sprites):
    path = tmp_path / "cifar-10-batches-py" / "test_batch"
    write_test_batch(path, rgb[::-1])
    sums = {**sprites, "test_batch": md5_file(path)}  # exercises the md5 branch
    x = CIFAR10BW.load(tmp_path, checksums=sums)
    assert torch.allclose(x[:, 0].double(), torch.from_numpy(cifarbw_oracle(rgb[::-1])),
                          atol=1e-5)


def test_test_batch_in_cifar10_folder(tmp_path, rgb):
    path = tmp_path / "cifar10" / "cifar-10-batches-py" / "test_batch"
    write_test_batch(path, rgb[:2])
    assert len(CIFAR10BW.load(tmp_path, checksums={"test_batch": md5_file(path)})) == 2


def test_sprites_stop_at_first_gap(tmp_path, rgb):
    folder = tmp_path / "cifar10"
    sums = {"cifar10_batch_0.png": write_cifar_sprite(folder / "cifar10_batch_0.png", rgb[:2]),
            "cifar10_batch_2.png": write_cifar_sprite(folder / "cifar10_batch_2.png", rgb[2:])}
    assert len(CIFAR10BW.load(tmp_path, checksums=sums)) == 2


def test_default_checksums_reject_fixtures(tmp_path, rgb, sprites):
    with pytest.raises(DataError, match="cifar10_batch_0.png: expected sha256 0614720d"):
        CIFAR10BW.load(tmp_path)
    write_test_batch(tmp_path / "cifar-10-batches-py" / "test_batch", rgb)
    with pytest.raises(DataError, match="test_batch: expected md5 40351d58"):
        CIFAR10BW.load(tmp_path)


def test_corrupt_sprite(tmp_path):
    sums = plant(tmp_path / "cifar10" / "cifar10_batch_0.png", b"\x89PNG\r\n\x1a\n truncated")
    with pytest.raises(DataError, match="cifar10_batch_0.png: unreadable PNG"):
        CIFAR10BW.load(tmp_path, checksums=sums)


def test_sprite_of_wrong_width(tmp_path):
    sums = plant(tmp_path / "cifar10" / "cifar10_batch_0.png",
                 png_bytes(np.zeros((3, 1000, 3), dtype=np.uint8)))
    with pytest.raises(DataError, match="sprite is 1000 pixels wide, expected 1024"):
        CIFAR10BW.load(tmp_path, checksums=sums)


def test_corrupt_test_batch(tmp_path):
    sums = plant(tmp_path / "cifar-10-batches-py" / "test_batch", b"\x80\x04garbage")
    with pytest.raises(DataError, match="test_batch: not a CIFAR-10 batch"):
        CIFAR10BW.load(tmp_path, checksums=sums)


def test_missing_files(tmp_path):
    assert_missing(CIFAR10BW, tmp_path, str(tmp_path / "cifar-10-batches-py" / "test_batch"),
                   str(tmp_path / "cifar10" / "cifar10_batch_0.png"))


def _archive(path, rgb):
    """A CIFAR-10 python archive holding a test batch of ``rgb``; its md5 and the batch's."""
    import tarfile

    batch = path.parent / "build" / "cifar-10-batches-py" / "test_batch"
    write_test_batch(batch, rgb)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        tar.add(batch, arcname="cifar-10-batches-py/test_batch")
    return {ARCHIVE: md5_file(path), "test_batch": md5_file(batch)}


def test_download_takes_the_test_batch_out_of_the_archive(tmp_path, rgb, mirror):
    sums = _archive(mirror.root / "cifar10" / ARCHIVE, rgb)
    root = tmp_path / "root"
    root.mkdir()
    x = CIFAR10BW.load(root, download=True, checksums=sums)
    assert mirror.requests == [f"/cifar10/{ARCHIVE}"]
    assert torch.allclose(x[:, 0], torch.from_numpy(cifarbw_oracle(rgb)).float(), atol=1e-5)
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) \
        == ["cifar10/cifar-10-batches-py/test_batch", f"cifar10/{ARCHIVE}"]


def test_download_falls_back_to_the_sprites(tmp_path, rgb, mirror):
    sums = {f"cifar10_batch_{k}.png": write_cifar_sprite(
        mirror.root / "cifar10" / f"cifar10_batch_{k}.png", rgb[k:k + 1]) for k in range(4)}
    x = CIFAR10BW.load(tmp_path, download=True, checksums=sums)
    assert x.shape == (4, 1, 28, 28) and len(mirror.requests) == 5


def test_a_damaged_test_batch_is_not_written(tmp_path, rgb, mirror):
    sums = _archive(mirror.root / "cifar10" / ARCHIVE, rgb)
    sums["test_batch"] = "0" * 32
    with pytest.raises(DataError, match="checksum mismatch for .*test_batch: expected md5 0000"):
        CIFAR10BW.load(tmp_path, download=True, checksums=sums)
    assert not (tmp_path / "cifar10" / "cifar-10-batches-py").exists()


def test_download_sources_are_torchvisions_and_convnetjs():
    archive, sprites = remotes({})
    assert archive[0].urls == (torchvision.datasets.CIFAR10.url,)
    assert archive[0].digest == torchvision.datasets.CIFAR10.tgz_md5
    assert [r.digest for r in sprites] == [CIFAR10BW_DIGESTS[f"cifar10_batch_{k}.png"]
                                           for k in range(4)]


def test_download_failure_is_a_data_error(tmp_path, mirror):
    with pytest.raises(DataError, match=r"^could not download CIFAR-10 cifar-10-python.tar.gz or "
                                        r"cifar10_batch_0.png, .*HTTP 404"):
        CIFAR10BW.load(tmp_path, download=True)


def test_resize_bilinear_tf1_matches_oracle_and_clamps():
    img = torch.rand(2, 3, 32, 32, dtype=torch.float64)
    out = resize_bilinear_tf1(img, (28, 28))
    assert out.shape == (2, 3, 28, 28)
    assert np.allclose(out[1, 2].numpy(), tf1_bilinear(img[1, 2].numpy()))
    assert torch.equal(resize_bilinear_tf1(img, (32, 32)), img)
    up = resize_bilinear_tf1(torch.arange(4.0).expand(1, 1, 4, 4), (8, 8))[0, 0, 0]
    assert up.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.0]  # last column clamped
