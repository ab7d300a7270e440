"""The project says how it may be used and cited: LICENSE is the license pyproject.toml names,
and CITATION.cff is valid YAML whose version, license and authors are the package's."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

import robustbnn

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _citation() -> dict[str, object]:
    data = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert isinstance(data, dict), "CITATION.cff is not a YAML mapping"
    return data


def test_citation_has_the_fields_cff_1_2_requires() -> None:
    cff = _citation()
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors"):
        assert cff.get(key), f"CITATION.cff has no {key}"


def test_citation_version_and_license_are_the_package_s() -> None:
    cff = _citation()
    assert str(cff["version"]) == robustbnn.__version__ == PROJECT["version"]
    assert cff["license"] == PROJECT["license"] == "MIT"


def test_citation_authors_are_pyproject_s() -> None:
    names = [a.get("name") or f"{a['given-names']} {a['family-names']}"
             for a in _citation()["authors"]]
    assert names == [a["name"] for a in PROJECT["authors"]]


def test_license_is_mit_for_pyproject_s_authors() -> None:
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    holders = ", ".join(a["name"] for a in PROJECT["authors"])
    assert f"Copyright (c) 2026 {holders}\n" in text
