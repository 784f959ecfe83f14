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


#: The lowest versions that passed the tests together, with the [dev] extras, on Python 3.11 and torch 2.13 (deps
#: audit, D1-D10: each older release failed them or was refused by pip). A declared floor below one of these lets pip
#: keep a release that breaks psp-st; raise the table only with such a run.
VERIFIED_FLOORS = {
    "sentence-transformers": "6.2",  # ties in the threshold search; a resumed auxiliary projection
    "transformers": "5.3",  # imported directly: Trainer._clip_grad_norm/_get_grad_norm, trainer_pt_utils.safe_globals
    "protobuf": "4.21.3",  # 4.21.1-4.21.2: ray does not start
    "tokenizers": "0.22.1",  # below: no resolution with transformers 5 and huggingface_hub 1
    "safetensors": "0.4.3",
    "datasets": "3.1",  # IterableDataset.num_shards
    "accelerate": "1.3",  # Accelerator.unwrap_model(keep_torch_compile=...), called by transformers' Trainer
    "py3langid": "0.4",  # LanguageIdentifier.from_model_file
    "mteb": "2.4.1",  # 2.0.1 does not import; up to 2.3.11 mteb.evaluate fails on our models
    "model2vec": "0.10",  # StaticModel(max_length=...)
    "huggingface_hub": "1.3",
    # built against numpy 1 with no numpy<2 cap: pip installs them beside numpy 2 (py3langid>=0.4 needs it), then
    # importing them fails
    "pandas": "2.2.2",
    "pyarrow": "16",
    "scikit-learn": "1.4.2",
    "matplotlib": "3.8.4",
    "faiss-cpu": "1.9",
}


def test_declared_lower_bounds_are_not_below_the_verified_ones():
    from packaging.requirements import Requirement
    from packaging.version import Version

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + [req for reqs in project["optional-dependencies"].values() for req in reqs]
    floors: dict[str, list[Version]] = {}
    for text in declared:
        requirement = Requirement(text)
        bounds = [Version(spec.version) for spec in requirement.specifier if spec.operator in (">=", "==")]
        floors.setdefault(requirement.name.lower().replace("_", "-"), []).extend(bounds or [Version("0")])
    too_low = {
        name: [str(bound) for bound in floors.get(name.replace("_", "-"), []) if bound < Version(verified)]
        for name, verified in VERIFIED_FLOORS.items()
    }
    assert {name: bounds for name, bounds in too_low.items() if bounds} == {}
    assert [name for name in VERIFIED_FLOORS if name.replace("_", "-") not in floors] == []  # each one is declared


def test_no_import_goes_through_a_sentence_transformers_compatibility_alias():
    """N6-1: ST 6 still answers its pre-5.4 module paths (``sentence_transformers.losses``, ``.models``, ...) with a
    DeprecationWarning, and says they will be removed; an import through one breaks on the ST that drops them."""
    import ast
    import importlib

    deprecated_import = pytest.importorskip("sentence_transformers.util.deprecated_import")
    aliases = set(deprecated_import.DEPRECATED_MODULE_PATHS)

    def through_alias(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names if alias.name in aliases]
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("sentence_transformers"):
            return []
        if node.module in aliases:
            return [node.module]
        module = importlib.import_module(node.module)  # a name the module has itself is no alias (its classes)
        names = [f"{node.module}.{alias.name}" for alias in node.names if not hasattr(module, alias.name)]
        return [name for name in names if name in aliases]

    found = [
        f"{path.relative_to(REPO)}:{node.lineno} {name}"
        for folder in ("psp_st", "tests", "benchmarks", "examples")
        for path in sorted((REPO / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        for name in through_alias(node)
    ]
    assert found == []
