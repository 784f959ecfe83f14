"""The commands README.md and docs/*.md tell a user to run parse with the real parser; the README names CI's checks."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def documented_commands() -> list[tuple[str, str]]:
    """``(file, command)`` for every ``psp-st`` line of a bash block (continuations joined, ``[--option]`` unwrapped)."""
    commands = []
    for doc in DOCS:
        for block in re.findall(r"```bash\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S):
            for line in block.replace("\\\n", " ").splitlines():
                for part in line.split("#")[0].split(";"):
                    if part.strip().startswith("psp-st "):
                        commands.append((doc.name, re.sub(r"\[([^\[\]]*)\]", r"\1", part.strip())))
    return commands


@pytest.mark.parametrize(("doc", "command"), documented_commands())
def test_documented_command_parses(doc, command):
    from psp_st.cli import build_parser

    try:
        build_parser().parse_args(shlex.split(command)[1:])
    except SystemExit as exit_:  # --help exits 0; a wrong option exits 2
        assert exit_.code == 0, f"{doc}: {command}"


def test_readme_names_the_checks_ci_runs():
    readme = (REPO / "README.md").read_text(encoding="utf-8").replace("\n", " ")
    for check in re.findall(r"^(ruff check .*|mypy)$", (REPO / ".ci" / "run").read_text(), flags=re.M):
        assert f"`{check}`" in readme, check


def test_readme_stays_under_200_lines():
    """The project's limit on README.md (longer notes go to docs/ and benchmarks/results/)."""
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 199


def documented_recipes() -> list[tuple[str, str]]:
    """``(file, text)`` of every YAML block of README.md and docs/*.md that is a recipe (has a ``data:`` section)."""
    blocks = [
        (doc.name, block) for doc in DOCS for block in re.findall(r"```yaml\n(.*?)```", doc.read_text(), flags=re.S)
    ]
    return [(name, block) for name, block in blocks if re.search(r"^data:", block, flags=re.M)]


@pytest.mark.parametrize(("doc", "text"), documented_recipes(), ids=lambda value: value.split("\n")[0][:30])
def test_documented_recipe_passes_the_schema(doc, text):
    """A recipe a user copies from the docs is one the schema accepts, every key known and every value checked."""
    import yaml

    from psp_st.training.schema import parse_recipe

    parse_recipe(yaml.safe_load(text))


def recipe_key_table() -> set[str]:
    """The keys docs/training.md's "Recipe keys" table names (``.anneal`` after ``megabatch.size``: ``megabatch.anneal``)."""
    text = (REPO / "docs" / "training.md").read_text(encoding="utf-8").split("**Recipe keys**")[1]
    keys = set()
    for row in re.findall(r"^\| (`.*?) \|", text, flags=re.M):
        section = ""
        for name in re.findall(r"`([\w.*]+)`", row):
            if name.startswith("."):
                name = section + name
            section = name.split(".")[0] if "." in name else ""
            keys.add(name)
    return keys


def test_docs_recipe_key_table_names_every_key_the_schema_reads():
    from dataclasses import fields, is_dataclass

    from psp_st.training import schema
    from psp_st.training.arguments import PSPTrainingArguments

    expected = set()
    for item in fields(schema.Recipe):  # annotations are strings: the section classes by name
        section = getattr(schema, str(item.type), None)
        if is_dataclass(section):
            expected |= {f"{item.name}.{inner.name}" for inner in fields(section)}
        elif item.name not in ("loss", "megabatch", "trainer"):  # free-form sections: their keys below
            expected.add(item.name)
    own = {item.name for item in fields(PSPTrainingArguments)} - {
        item.name for item in fields(PSPTrainingArguments.__base__)
    }
    expected |= {"megabatch." + ("size" if name == "megabatch_size" else name) for name in own}
    expected |= {"loss.name", "trainer.*"}
    documented = recipe_key_table()
    assert "data.sources" in documented and "megabatch.anneal" in documented  # the table was read
    assert sorted(expected - documented) == []
