"""Optional dependencies: each is named with the extra that installs it, in the library and on the command line."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest

from psp_st.data import load_pairs, load_table
from psp_st.evaluation import run_suite
from psp_st.io.extras import EXTRAS, command_extra, install_hint, missing_extra, require
from psp_st.training.recipe import train_from_config

REPO = Path(__file__).resolve().parents[2]
#: The base install (pyproject dependencies and what they bring) by top-level module name.
CORE = {"torch", "sentence_transformers", "sentencepiece", "google", "tokenizers", "safetensors", "numpy", "tqdm"}
CORE |= {"yaml", "transformers", "threadpoolctl", "regex", "psp_st"}


def _imported_modules() -> set[str]:
    names = set()
    for file in (REPO / "psp_st").rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return names - set(sys.stdlib_module_names) - CORE


def test_every_optional_import_has_an_extra():
    assert _imported_modules() - set(EXTRAS) == set()


def _imports_on_import(module: str) -> set[str]:
    """What importing ``module`` imports itself: its module-level imports (not under TYPE_CHECKING or in a function)."""
    path = REPO / Path(*module.split("."))
    tree = ast.parse((path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).read_text(encoding="utf-8"))
    names: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.unparse(statement.test):
            continue
        for node in ast.walk(statement) if isinstance(statement, (ast.If, ast.Try)) else [statement]:
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(path.parent.name for path in (REPO / "psp_st").glob("*/__init__.py")))
def test_every_subpackage_imports_in_a_base_install(package):
    # e.g. a model card takes its citations from psp_st.training: `psp-st push` must not need psp-st[train]
    seen: set[str] = set()
    todo, optional = [f"psp_st.{package}"], set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in _imports_on_import(module):
            parts = name.split(".")
            if parts[0] == "psp_st":  # the module and the packages above it, which Python imports first
                todo += [".".join(parts[:i]) for i in range(2, len(parts) + 1)]
            elif parts[0] in EXTRAS:
                optional.add(f"{module} imports {name}")
    assert optional == set()


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_the_named_extras_are_those_that_install_the_package(module):
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    distribution, named = EXTRAS[module]
    holding = {
        extra
        for extra, requirements in extras.items()
        if extra != "dev" and distribution.lower() in {re.split(r"[<>=!~;\[ ]", req)[0].lower() for req in requirements}
    }
    assert set(named) == holding and len(named) == len(holding)  # every extra that installs it, each once


def test_require_names_the_extra_when_the_package_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "faiss", None)  # as if faiss were not installed
    with pytest.raises(ImportError, match=r'--index: .*pip install "psp-st\[mining\]"'):
        require("faiss", "--index")


def test_cli_error_names_the_extra(monkeypatch, capsys, tmp_path):
    from psp_st.cli import main

    monkeypatch.setitem(sys.modules, "datasets", None)  # a base install: `psp-st data` needs datasets
    source = tmp_path / "pairs.tsv"
    source.write_text("a\tb\n")
    assert main(["data", str(source)]) == 2
    assert install_hint("datasets") in capsys.readouterr().err


def test_an_error_other_than_an_import_error_names_no_extra():
    assert missing_extra(AttributeError("x", name=5)) is None
    assert "psp-st[mining]" in missing_extra(ModuleNotFoundError("x", name="faiss"))


def test_the_hint_names_the_running_commands_extra():
    token = command_extra.set("eval")  # `psp-st eval` missing pyarrow: [eval], not pyarrow's usual [train]
    try:
        assert install_hint("pyarrow") == 'pip install "psp-st[eval]"'
        assert install_hint("ray") == 'pip install "psp-st[ray]"'  # not in [eval]: the package's own extra
    finally:
        command_extra.reset(token)
    assert install_hint("pyarrow") == 'pip install "psp-st[train]"'


def test_cli_error_names_the_commands_extra(monkeypatch, capsys, tmp_path):
    import psp_st.cli.eval
    from psp_st.cli import main

    def missing_pyarrow(args):
        raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")  # `psp-st eval` reads Parquet

    monkeypatch.setattr(psp_st.cli.eval, "run", missing_pyarrow)
    assert main(["eval", "--model", "m", "--out", str(tmp_path / "o")]) == 2
    assert 'pip install "psp-st[eval]"' in capsys.readouterr().err  # pyarrow's usual extra is [train]


def test_mine_with_a_language_filter_needs_only_the_mining_extra(monkeypatch, capsys, tmp_path, psp_model_dir):
    from psp_st.cli import main
    from psp_st.data.language import language_identifier

    language_identifier.cache_clear()  # as in a fresh process
    monkeypatch.setitem(sys.modules, "py3langid", None)
    monkeypatch.setitem(sys.modules, "py3langid.langid", None)
    (tmp_path / "s.txt").write_text("a dog runs in the park\na dog is running in a park\nthe cat sleeps\n")
    args = ["--input", str(tmp_path / "s.txt"), "--output", str(tmp_path / "m.parquet"), "--lang", "en"]
    assert main(["mine", "--model", str(psp_model_dir), *args]) == 2
    assert 'pip install "psp-st[mining]"' in capsys.readouterr().err  # py3langid comes with psp-st[mining]


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: load_pairs("pairs.tsv"),
            r'psp_st\.data\.load_pairs needs datasets, not installed: pip install "psp-st\[train\]"',
        ),
        (
            lambda: load_table("sts.parquet", ["sentence1"]),  # Y8-4: docs/evaluation.md's own-data reader
            r'psp_st\.data\.load_table needs datasets, not installed: pip install "psp-st\[train\]"',
        ),
        (lambda: run_suite(None), r'run_suite needs datasets, not installed: pip install "psp-st\[eval\]"'),
        (lambda: train_from_config("psp-en"), r"train_from_config needs datasets, not installed: .*psp-st\[train\]"),
    ],
)
def test_library_entry_points_name_the_extra_before_any_work(call, message, monkeypatch):
    """P8: the library raised Python's bare "No module named 'datasets'" (one module, no extra), midway."""
    from psp_st.io import extras

    monkeypatch.setattr(extras, "_installed", lambda module: module != "datasets")
    with pytest.raises(ImportError, match=message):
        call()


def test_a_library_hint_names_the_running_commands_extra_when_it_installs_the_module(monkeypatch):
    from psp_st.io import extras

    monkeypatch.setattr(extras, "_installed", lambda module: module != "pyarrow")
    token = extras.command_extra.set("eval")
    try:
        with pytest.raises(ImportError, match=r'load_pairs needs pyarrow, not installed: pip install "psp-st\[eval\]"'):
            load_pairs("pairs.tsv")
    finally:
        extras.command_extra.reset(token)
