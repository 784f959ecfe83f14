"""Every model card's usage snippet runs as written against the folder it describes (the folder path in place
of the repo id): a release root, its trainable/ form, a `psp-st train` output, and each of them after `push`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def usage_snippets(card: str) -> list[str]:
    """The Python code blocks of the card's ``## Usage`` section."""
    usage = card.split("\n## Usage\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", usage, flags=re.S)


def run_snippets(snippets: list[tuple[str, str]], cwd: Path) -> None:
    """Run each ``(name, code)`` in a fresh interpreter, all those that do not import psp_st in one where psp_st
    cannot be imported (the card promises they need no psp-st), the others in a second one."""
    for needs_psp_st in (False, True):
        group = [(name, code) for name, code in snippets if ("psp_st" in code) == needs_psp_st]
        if not group:
            continue
        program = "" if needs_psp_st else "import sys; sys.modules['psp_st'] = None\n"
        for name, code in group:
            program += f"print({name!r}, flush=True)\nexec(compile({code!r}, {name!r}, 'exec'), {{}})\n"
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        result = subprocess.run(
            [sys.executable, "-c", program], cwd=cwd, capture_output=True, text=True, timeout=600, env=env
        )
        failed = result.stdout.strip().splitlines()[-1:] if result.returncode else []
        assert result.returncode == 0, f"snippet {failed} failed:\n{result.stderr[-3000:]}"


def card_snippets(folder: Path, model_id: str) -> list[tuple[str, str]]:
    """The usage snippets of ``folder``'s card, loading ``folder`` where the card says ``model_id``."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    snippets = usage_snippets(card)
    assert snippets, f"{folder}: the card has no Python usage snippet"
    assert all(model_id in code for code in snippets), f"{folder}: a snippet does not load {model_id!r}"
    return [(f"{folder} #{i}", code.replace(f'"{model_id}"', repr(str(folder)))) for i, code in enumerate(snippets)]


def test_release_cards_snippets_run(release, tmp_path):
    root, trainable = card_snippets(release, "psp-en"), card_snippets(release / "trainable", "psp-en")
    assert len(root) == 2 and len(trainable) == 1  # plain Sentence-Transformers and psp_st.load; psp_st.load
    run_snippets(root + trainable, tmp_path)


def test_train_output_snippet_runs(train_output, tmp_path):
    assert "pip install psp-st" in (train_output / "README.md").read_text(encoding="utf-8")
    run_snippets(card_snippets(train_output, str(train_output)), tmp_path)


def test_pushed_cards_snippets_run(release, train_output, tmp_path):
    from psp_st.hub.push import push

    snippets = []
    for folder in (release, train_output):
        out = tmp_path / f"upload-{folder.name}"
        push(folder, "me/my-psp", dry_run=out)
        snippets += card_snippets(out, "me/my-psp")
        if (out / "trainable").is_dir():
            snippets += card_snippets(out / "trainable", "me/my-psp")
    run_snippets(snippets, tmp_path)


def test_cards_of_a_build_with_output_load_that_folder_as_written(release_as_run):
    snippets = [
        usage_snippets((folder / "README.md").read_text(encoding="utf-8"))
        for folder in (release_as_run, release_as_run / "trainable")
    ]
    assert all('"out/rel"' in code for code in snippets[0] + snippets[1])
    run_snippets(
        [(f"out/rel #{i}", code) for i, code in enumerate(snippets[0] + snippets[1])], release_as_run.parent.parent
    )


def test_pushed_export_cards_snippets_run(release, tmp_path):
    """G4: an export's card (ST's, model2vec's) loads the repo id after push, never the local folder's name."""
    pytest.importorskip("model2vec")
    import psp_st
    from psp_st.hub.push import push

    module = psp_st.load(release, trainable=True)[0]
    module.export_static(tmp_path / "my-static")
    module.export_model2vec(tmp_path / "my-m2v")
    snippets = []
    for name in ("my-static", "my-m2v"):
        out = tmp_path / f"upload-{name}"
        push(tmp_path / name, "me/my-psp", dry_run=out)
        card = (out / "README.md").read_text(encoding="utf-8")
        assert f'"{name}"' not in card and "sentence_transformers_model_id" not in card
        loading = [code for code in usage_snippets(card) if "me/my-psp" in code]  # not model2vec's distill example
        assert loading, f"{name}: no usage snippet loads the repo id"
        snippets += [(f"{name} #{i}", code.replace('"me/my-psp"', repr(str(out)))) for i, code in enumerate(loading)]
    run_snippets(snippets, tmp_path)
