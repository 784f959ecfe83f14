"""The layering of docs/architecture.md: every psp_st module imports only from its own layer or the layers below."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import psp_st

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "psp_st"

#: Upward imports allowed on purpose (importing module -> imported module), each lazy, named in the docs.
EXCEPTIONS = {
    # PSPEmbedding.encode runs the inference engine, which is torch-free and so cannot live in modules/.
    ("psp_st.modules.psp", "psp_st.inference.engine"),
    # from_teacher(cache_dir=...) reads the teacher vectors through the distillation cache.
    ("psp_st.modules.teacher_init", "psp_st.distillation.teacher_cache"),
}


def _layers() -> dict[str, int]:
    """Top-level part (``cli``, ``arguments``, ...) -> layer, 0 at the bottom, from the diagram in the docs."""
    diagram = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8").split("```")[1]
    rows = [re.split(r"\s{2,}", line)[0].split() for line in diagram.strip().splitlines()]
    return {name.rstrip("/").removesuffix(".py"): len(rows) - i for i, row in enumerate(rows) for name in row}


def _module_name(file: Path) -> str:
    parts = file.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(file: Path) -> list[tuple[int, str]]:
    """Every psp_st module ``file`` imports (top-level, function-local, ``TYPE_CHECKING``), with its line."""
    return _imports_of(file.read_text(encoding="utf-8"), _module_name(file), file.name == "__init__.py")


def _imports_of(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """The psp_st names ``source`` (the code of ``module``) imports; a lazy top-level name (``from psp_st import
    load``, ``psp_st.load(...)``) counts as the module that defines it."""
    found = []
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (
                ".".join(package[: len(package) - node.level + 1] + [node.module or ""]) if node.level else node.module
            )
            found += [(node.lineno, f"{base}.{alias.name}".strip(".")) for alias in node.names]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "psp_st":
            found.append((node.lineno, f"psp_st.{node.attr}"))
    lazy = {f"psp_st.{name}": f"{target}.{name}" for name, target in psp_st._LAZY.items()}
    return [(line, lazy.get(name, name)) for line, name in found if name.startswith("psp_st.")]


def _part(module: str) -> str:
    return module.split(".")[1]


def _files() -> list[Path]:
    return [
        f for f in sorted(PACKAGE.rglob("*.py")) if f.parent != PACKAGE or f.name not in ("__init__.py", "__main__.py")
    ]


def test_every_package_is_in_the_diagram():
    assert {_part(_module_name(f)) for f in _files()} - set(_layers()) == set()


def test_no_module_imports_a_higher_layer():
    layers, upward, used = _layers(), [], set()
    for file in _files():
        source = _module_name(file)
        for line, target in _imports(file):
            if _part(target) not in layers or layers[_part(target)] <= layers[_part(source)]:
                continue  # names of the top-level package (psp_st.__version__) have no layer
            allowed = {pair for pair in EXCEPTIONS if pair[0] == source and f"{target}.".startswith(f"{pair[1]}.")}
            used |= allowed
            if not allowed:
                upward.append(f"{file.relative_to(REPO)}:{line} imports {target}")
    assert upward == []
    assert used == EXCEPTIONS, "an exception no longer needed: remove it here and in docs/architecture.md"


def test_a_lazy_top_level_name_counts_as_its_module():
    """A6-8: ``from psp_st import load`` (or ``psp_st.load``) in io/ passed: the top-level names had no layer."""
    for source in ("def f():\n    from psp_st import load\n", "import psp_st\n\nmodel = psp_st.load('psp-en')\n"):
        assert "psp_st.inference.load.load" in [name for _, name in _imports_of(source, "psp_st.io.checksums", False)]


def test_losses_and_data_import_no_encoder():
    """A6-9: docs/architecture.md's rule "losses/ and data/ import no encoder" (modules/ is below them, so the layer
    check lets it pass) had no check."""
    encoders = [
        f"{file.relative_to(REPO)}:{line} imports {target}"
        for file in _files()
        if _part(_module_name(file)) in ("losses", "data")
        for line, target in _imports(file)
        if _part(target) == "modules"
    ]
    assert encoders == []
