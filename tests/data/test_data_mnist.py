"""The MNIST loader on tiny fixture folders (the real files are in test_data_real_mnist.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torchvision.datasets

from robustbnn.data import DATASETS, load_dataset, sha256_file, write_idx
from robustbnn.data.mnist import default_checksums, load_mnist
from robustbnn.data.recipes import load_recipe
from robustbnn.errors import DataError

# Copied from docs/provenance.md, independently of datasets/mnist.json.
OFFICIAL_SHA256 = {
    "train-images-idx3-ubyte.gz":
        "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    "train-labels-idx1-ubyte.gz":
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    "t10k-images-idx3-ubyte.gz":
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "t10k-labels-idx1-ubyte.gz":
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
}


def test_recipe_has_official_checksums():
    sums = default_checksums()
    assert {k: sums[k] for k in OFFICIAL_SHA256} == OFFICIAL_SHA256
    assert len(sums) == 8  # plus the uncompressed files
    md5s = {f["name"]: f["md5"] for f in load_recipe("mnist")["files"].values()}
    assert md5s == dict(torchvision.datasets.MNIST.resources)  # what torchvision downloads


def test_load_tiny(tmp_path, tiny_mnist):
    sums = tiny_mnist.write(tmp_path / "mnist")
    b = load_mnist(tmp_path, checksums=sums, val_size=4)
    a = tiny_mnist.arrays
    assert (len(b.train), len(b.val), len(b.test)) == (8, 4, 5)
    assert b.name == "mnist" and b.num_classes == 10
    assert b.train.x.shape == (8, 1, 28, 28) and b.train.x.dtype == torch.float32
    # validation is the LAST val_size training images, test is the t10k file
    assert torch.equal(b.val.x[:, 0], torch.from_numpy(a["train_images"][8:]).float() / 255)
    assert b.val.y.tolist() == a["train_labels"][8:].tolist()
    assert b.test.y.tolist() == [3, 1, 4, 1, 5]
    assert str(tmp_path / "mnist" / "t10k-images-idx3-ubyte.gz") in b.source
    assert load_mnist(tmp_path, checksums=sums, val_size=4).fingerprint == b.fingerprint


@pytest.mark.parametrize("sub", [".", "MNIST/raw"])
def test_other_layouts(tmp_path, tiny_mnist, sub):
    sums = tiny_mnist.write(tmp_path / sub)
    assert DATASETS.get("mnist").available(tmp_path)
    assert len(load_mnist(tmp_path, checksums=sums, val_size=4).test) == 5


def test_uncompressed_files(tmp_path, tiny_mnist):
    sums = tiny_mnist.write(tmp_path / "mnist", gz=False)
    b = load_mnist(tmp_path, checksums=sums, val_size=4)
    assert b.source.endswith("t10k-labels-idx1-ubyte")


def test_default_checksums_reject_fixture(tmp_path, tiny_mnist):
    tiny_mnist.write(tmp_path / "mnist")
    with pytest.raises(DataError, match="checksum mismatch for .*train-images-idx3-ubyte.gz: "
                                        "expected sha256 440fcabf"):
        load_dataset("mnist", tmp_path)


def test_missing_files(tmp_path, tiny_mnist):
    tiny_mnist.write(tmp_path / "mnist")
    (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").unlink()
    (tmp_path / "mnist" / "train-images-idx3-ubyte.gz").unlink()
    assert not DATASETS.get("mnist").available(tmp_path)
    with pytest.raises(DataError) as info:
        load_dataset("mnist", tmp_path)
    message = str(info.value)
    assert f"missing in {tmp_path / 'mnist'}: train-images-idx3-ubyte.gz, " \
           "t10k-labels-idx1-ubyte.gz" in message
    assert "--data-root" in message and "ROBUSTBNN_DATA" in message and "--download" in message
    assert "train-labels" not in message


def test_empty_root_points_at_mnist_folder(tmp_path):
    with pytest.raises(DataError, match=f"missing in {tmp_path / 'mnist'}: train-images"):
        load_mnist(tmp_path)


def test_download_fetches_into_the_mnist_folder(tmp_path, tiny_mnist, mirror):
    sums = tiny_mnist.write(mirror.root / "mnist")
    root = tmp_path / "root"
    b = load_mnist(root, download=True, checksums=sums, val_size=4)
    assert sorted(mirror.requests) == sorted(f"/mnist/{name}" for name in sums)
    assert len(b.val) == 4 and str(root / "mnist" / "t10k-labels-idx1-ubyte.gz") in b.source
    assert sorted(p.name for p in (root / "mnist").iterdir()) == sorted(sums)


def test_download_sources_are_the_recipes_mirrors():
    from robustbnn.data.mnist import remotes
    from robustbnn.data.recipes import load_recipe

    recipe = load_recipe("mnist")
    (first, *_) = remotes(recipe)
    assert first.folder == "mnist" and first.digest == recipe["files"]["train_images"]["sha256"]
    assert first.urls == tuple(m + "train-images-idx3-ubyte.gz"
                               for m in recipe["download"]["mirrors"])
    names = [r.name for r in remotes(recipe)]
    assert [m for m, _ in torchvision.datasets.MNIST.resources] == names


def test_download_failure_is_a_data_error(tmp_path, mirror):
    with pytest.raises(DataError) as info:
        load_dataset("mnist", tmp_path, download=True)
    message = str(info.value)
    assert message.startswith("could not download MNIST train-images-idx3-ubyte.gz "
                              f"($ROBUSTBNN_MIRROR is set): {mirror.url}/mnist/train-images")
    assert "HTTP 404" in message and "--data-root" in message and "\n" not in message
    assert not any((tmp_path / "mnist").iterdir())


def test_no_download_when_files_present(tmp_path, tiny_mnist, mirror):
    sums = tiny_mnist.write(tmp_path / "mnist")
    assert len(load_mnist(tmp_path, download=True, checksums=sums, val_size=4).train) == 8
    assert mirror.requests == []


def test_label_count_mismatch(tmp_path, tiny_mnist):
    tiny_mnist.arrays["test_labels"] = tiny_mnist.arrays["test_labels"][:4]
    sums = tiny_mnist.write(tmp_path / "mnist")
    with pytest.raises(DataError, match="t10k-labels-idx1-ubyte.gz: expected 5 uint8 labels"):
        load_mnist(tmp_path, checksums=sums, val_size=4)


def test_wrong_image_shape(tmp_path, tiny_mnist):
    tiny_mnist.arrays["test_images"] = np.zeros((5, 32, 32), dtype=np.uint8)
    sums = tiny_mnist.write(tmp_path / "mnist")
    with pytest.raises(DataError, match=r"shape \(N, 28, 28\), got uint8 \(5, 32, 32\)"):
        load_mnist(tmp_path, checksums=sums, val_size=4)


def test_val_size_too_large(tmp_path, tiny_mnist):
    sums = tiny_mnist.write(tmp_path / "mnist")
    with pytest.raises(DataError, match="12 training images cannot give 12 for validation"):
        load_mnist(tmp_path, checksums=sums, val_size=12)


def test_corrupt_file_with_matching_checksum(tmp_path, tiny_mnist):
    sums = tiny_mnist.write(tmp_path / "mnist")
    bad = tmp_path / "mnist" / "train-labels-idx1-ubyte.gz"
    write_idx(bad, np.zeros(3, dtype=np.uint8))
    bad.write_bytes(bad.read_bytes()[:-4])
    sums[bad.name] = sha256_file(bad)
    with pytest.raises(DataError, match="train-labels-idx1-ubyte.gz: gzip stream ends early"):
        load_mnist(tmp_path, checksums=sums, val_size=4)
