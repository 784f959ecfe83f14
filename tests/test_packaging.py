"""The wheel: every file psp_st reads at run time (recipes, card template, licenses, py.typed) is package data; the
sdist: the package, no tests."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

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


def test_the_sdist_holds_the_package_and_no_test(tmp_path):
    """P9: setuptools' defaults put tests/test*.py alone in the sdist (no conftest, fixtures or docs: they cannot run)."""
    import shutil
    import subprocess
    import sys
    import tarfile

    pytest.importorskip("setuptools")
    source = tmp_path / "source"
    source.mkdir()
    for path in REPO.iterdir():  # the top-level files (pyproject.toml, README.md, MANIFEST.in, ...), the package, tests
        if path.is_file() and not path.name.startswith("."):
            shutil.copy(path, source / path.name)
    for folder in ("psp_st", "tests"):
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    build = "from setuptools import build_meta; build_meta.build_sdist('dist')"
    subprocess.run([sys.executable, "-c", build], cwd=source, check=True, capture_output=True, timeout=300)
    with tarfile.open(next((source / "dist").glob("psp_st-*.tar.gz"))) as sdist:
        names = [name.split("/", 1)[-1] for name in sdist.getnames()]
    assert "psp_st/__init__.py" in names and "psp_st/resources/model_card.md" in names
    assert [name for name in names if name.startswith("tests")] == []


def test_requires_python_is_what_ruff_mypy_and_the_tests_target():
    """P10: requires-python said 3.10, which nothing ran (CI runs 3.11; the tests import tomllib, new in 3.11)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    floor = project["project"]["requires-python"].removeprefix(">=")
    assert floor == "3.11" and project["tool"]["mypy"]["python_version"] == floor
    assert project["tool"]["ruff"]["target-version"] == "py" + floor.replace(".", "")
