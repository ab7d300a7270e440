"""OOD sets and datasets checked where they are loaded: dtype, shape, emptiness, NaN and range.

Each broken set is a plug-in of ``tests/plugins/bad_ood_sets.py`` (issue 49): a set in
[0, 255], one in [-0.5, 0.5] under ``unit``, a uint8 set, an empty one, one of shape (N, 784),
one with a NaN pixel, one of three channels. Each is refused by name with the way out, by
:func:`load_ood` and by ``robustbnn bench`` while it plans (``--plan`` included), before any
cell runs. A dataset plug-in in [0, 255], or of shape (N, 784), is refused by
:func:`load_dataset`, naming it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from robustbnn.cli import main
from robustbnn.data import DATASETS, load_dataset
from robustbnn.data.ood_sets import OOD_DATASETS, load_ood
from robustbnn.errors import DataError

PLUGIN = "tests.plugins.bad_ood_sets"
REFERENCE = "tests.plugins.reference_ood_set"
DROP = "or drop it from --ood"

# The one line naming each broken set and the way out.
REFUSED = {
    "ood_255": "OOD set 'ood_255' has pixels in [0, 255], outside [0, 1], the range of 'unit' "
               "preprocessing: divide by 255 in its loader (8-bit values), " + DROP,
    "ood_centred": "OOD set 'ood_centred' has pixels in [-0.5, 0.5], outside [0, 1], the range "
                   "of 'unit' preprocessing: add 0.5 in its loader (a centred scale belongs to "
                   "'bhn_reference' alone, declared with OODSpec(reference_range=(-0.5, 0.5))), "
                   + DROP,
    "ood_uint8": "OOD set 'ood_uint8' returned torch.uint8 images; an OOD set's load returns "
                 "float images, in [0, 1] under 'unit' preprocessing: convert them in its loader "
                 "(x.float() / 255 for 8-bit values), " + DROP,
    "ood_empty": "OOD set 'ood_empty' returned no images (shape (0, 1, 28, 28)); a set needs at "
                 "least one image to be scored: check its files and its loader, " + DROP,
    "ood_flat": "OOD set 'ood_flat' returned images of shape (200, 784); an OOD set's load "
                "returns (N, C, H, W) images: reshape them in its loader (x.view(-1, 1, 28, 28) "
                "for flattened 28x28 images), " + DROP,
    "ood_nan_pixel": "OOD set 'ood_nan_pixel' has 1 non-finite pixel (NaN or inf) in its 200 "
                     "images; the set is broken, not the models: fix its loader or its files, "
                     + DROP,
}


def _forget() -> None:
    for name in (PLUGIN, REFERENCE):
        sys.modules.pop(name, None)


@pytest.fixture
def broken() -> Iterator[None]:
    """The broken sets and dataset registered for the test only (``--plugin`` imports the
    module again in a bench run: it is forgotten before and after)."""
    _forget()
    with OOD_DATASETS.sandbox(), DATASETS.sandbox():
        importlib.import_module(PLUGIN)
        yield
    _forget()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_load_ood_refuses_a_broken_set_by_name(broken: None, name: str) -> None:
    with pytest.raises(DataError) as err:
        load_ood(name, 200)  # the smoke suite's count
    assert str(err.value) == REFUSED[name]


def test_a_set_of_another_float_precision_is_converted_to_float32(broken: None) -> None:
    x = load_ood("ood_float64", 10)
    assert x.dtype == torch.float32
    assert torch.equal(x, load_ood("ood_float64", 10).double().float())


def test_a_centred_set_passes_under_the_reference_it_declares() -> None:
    _forget()
    with OOD_DATASETS.sandbox():
        importlib.import_module(REFERENCE)
        x = load_ood("ood_reference", 10, preprocessing="bhn_reference")
        assert x.min() < 0 and x.max() <= 0.5
        assert load_ood("ood_reference", 10).min() >= 0
    _forget()


@pytest.mark.parametrize("name", ["glyphs", "gaussian", "uniform"])
def test_embedded_sets_pass_under_both_preprocessings(name: str) -> None:
    for preprocessing in ("unit", "bhn_reference"):
        x = load_ood(name, 20, preprocessing=preprocessing)
        assert x.dtype == torch.float32 and x.shape == (20, 1, 28, 28)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bench_refuses_a_broken_set_while_planning(
        broken: None, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--plan`` builds every cell's id from the set's digest: the set is refused there, so
    no cell (a training cell included) ever runs with it."""
    code = main(["bench", "--suite", "smoke", "--quiet", "--no-cache", "--models", "mlp",
                 "--plugin", PLUGIN, "--ood", f"uniform,{name}", "--plan",
                 "--out", str(tmp_path / "out")])
    assert code == 1
    assert capsys.readouterr().err == f"robustbnn: error: {REFUSED[name]}\n"
    assert not (tmp_path / "out").exists()


def test_bench_refuses_a_set_of_other_channels_while_planning(
        broken: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--suite", "smoke", "--quiet", "--no-cache", "--models", "mlp",
                 "--plugin", PLUGIN, "--ood", "ood_rgb", "--plan", "--out", str(tmp_path)])
    assert code == 1
    assert capsys.readouterr().err == (
        "robustbnn: error: OOD set 'ood_rgb' has 3-channel images and the dataset 'mnist5k' "
        "1-channel ones: convert them in its loader (x.mean(1, keepdim=True) for grayscale), "
        "or drop it from --ood\n")


def test_a_dataset_plugin_out_of_range_is_refused_by_name(broken: None) -> None:
    with pytest.raises(DataError) as err:
        load_dataset("data_255")
    assert str(err.value) == (
        "dataset 'data_255' has test pixels in [0, 255], outside [0, 1], the models' pixel "
        "space: divide by 255 in its loader (8-bit values), or train on another --dataset")


def test_a_dataset_plugin_of_another_shape_is_refused_by_name(broken: None) -> None:
    with pytest.raises(DataError) as err:
        load_dataset("data_flat")
    assert str(err.value) == (
        "dataset 'data_flat': Split.x must be float32 of shape (N, 1, H, W), got torch.float32 "
        "(1000, 784): fix its loader, or train on another --dataset")
