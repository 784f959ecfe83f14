"""The wheel: every file psp_st reads at run time (recipes, card template, licenses, py.typed) is package data."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]


def test_every_resource_file_is_package_data():
    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["psp_st"]
    files = [path.relative_to(REPO / "psp_st").as_posix() for path in (REPO / "psp_st").rglob("*") if path.is_file()]
    resources = [name for name in files if "__pycache__" not in name and not name.endswith(".py")]
    assert "resources/hub_configs/psp-en.yaml" in resources
    assert [name for name in resources if not any(fnmatch.fnmatch(name, glob) for glob in globs)] == []


def test_the_distribution_version_is_psp_st_version():
    """P11: the version had two homes (pyproject.toml and psp_st.__version__); the metadata now reads the module's."""
    import importlib.metadata

    import psp_st

    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "psp_st.__version__"}
    assert importlib.metadata.version("psp-st") == psp_st.__version__
