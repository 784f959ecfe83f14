"""The command line as one product: the same rule for the same thing in every command (inputs, paths, help)."""

from __future__ import annotations

import os

import pytest

from psp_st.cli import EXIT_ERROR, main


@pytest.fixture
def pipe_path():
    """``/dev/fd/N`` of a pipe's read end, as ``<(command)`` or ``cat file | ... /dev/stdin`` hands one over."""
    read, write = os.pipe()
    os.write(write, b"a dog runs\ta dog is running\n")
    os.close(write)  # the writer is done: a reader that reads the pipe gets to its end
    yield f"/dev/fd/{read}"
    os.close(read)


@pytest.mark.parametrize(
    "argv",
    [
        ["embed", "--input", "{pipe}", "--output", "{tmp}/out.npy", "--model", "{model}"],
        ["score", "--pairs", "{pipe}", "--output", "{tmp}/out.tsv", "--model", "{model}"],
        ["tokenizer", "train", "--input", "{pipe}", "--output", "{tmp}/t.model", "--vocab-size", "20"],
        ["data", "{pipe}", "--format", "tsv"],
    ],
)
def test_a_pipe_as_input_is_named_as_such(argv, pipe_path, psp_model_dir, tmp_path, capsys):
    """K1: a pipe was "input file not found" (it exists), or for embed/score an error of the output with the
    hint "free some space", or for data "no data file matches ... pass --data-dir"."""
    values = {"pipe": pipe_path, "tmp": str(tmp_path), "model": str(psp_model_dir)}
    assert main([arg.format(**values) for arg in argv] + ["--no-progress"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"{pipe_path} is a pipe or a device, not a file" in err and "save the text to a file" in err
    assert "space" not in err and "--data-dir" not in err
