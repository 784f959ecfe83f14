"""The layering of docs/architecture.md: every psp_st module imports only from its own layer or the layers below."""

from __future__ import annotations

import ast
import re
from pathlib import Path

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
    found = []
    package = _module_name(file).split(".") if file.name == "__init__.py" else _module_name(file).split(".")[:-1]
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (
                ".".join(package[: len(package) - node.level + 1] + [node.module or ""]) if node.level else node.module
            )
            found += [(node.lineno, f"{base}.{alias.name}".strip(".")) for alias in node.names]
    return [(line, name) for line, name in found if name.startswith("psp_st.")]


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
