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


def _exit_code(argv: list[str]) -> int:
    """main's code, or argparse's for a refused option value."""
    try:
        return main(argv)
    except SystemExit as exit_info:
        return int(exit_info.code or 0)


@pytest.mark.parametrize(
    "argv",
    [
        ["data", "pairs.tsv", "--output", ""],
        ["eval", "--model", "{model}", "--out", "", "--overwrite"],
        ["eval", "--model", "{model}", "--out", "ev", "--data-dir", ""],
        ["train", "--config", "r.yaml", "--output", ""],
        ["train", "--config", "r.yaml", "--data-dir", ""],
        ["embed", "--model", "{model}", "--input", "pairs.tsv", "--output", ""],
    ],
)
def test_an_empty_path_is_refused_by_every_command(argv, psp_model_dir, tmp_path, monkeypatch, capsys):
    """K2: `--output "$UNSET"` wrote nothing with exit 0 (data), the current folder (eval --out), runs/NAME (train),
    the default data folder (--data-dir), or said '--output . is the input' (embed): build/mine/push refuse it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pairs.tsv").write_text("a dog runs\ta dog is running\n")
    (tmp_path / "r.yaml").write_text("name: tiny\ndata: {sources: [pairs.tsv]}\n")
    before = sorted(tmp_path.iterdir())
    assert _exit_code([arg.format(model=psp_model_dir) for arg in argv] + ["--no-progress"]) == EXIT_ERROR
    assert "empty path" in capsys.readouterr().err
    assert sorted(tmp_path.iterdir()) == before


def _options(parser, name: str = "psp-st"):
    """(command, action) of every option of every command, nested ones (``tokenizer train``) too."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                yield from _options(sub, f"{name} {command}")
        else:
            yield name, action


def test_every_option_with_a_default_states_it_in_its_help():
    """K3: tokenizer train's --vocab-size, --model-type, --seed (and four more options) hid their defaults."""
    import argparse

    from psp_st.cli import build_parser

    flags = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._CountAction, argparse._HelpAction)
    silent = [
        f"{command} {action.option_strings[0]}"
        for command, action in _options(build_parser())
        if not isinstance(action, flags)
        and action.default is not None
        and action.default != []
        and action.default is not argparse.SUPPRESS
        and "default" not in (action.help or "")
    ]
    assert silent == []


def test_train_prints_its_step_logs_to_stderr_and_only_the_result_to_stdout(tmp_path, capsys):
    """K4: the Trainer's {'loss': ...} lines went to stdout: `psp-st train ... > result.txt` got them all."""
    words = [
        "man",
        "woman",
        "dog",
        "cat",
        "plays",
        "runs",
        "eats",
        "sits",
        "red",
        "blue",
        "big",
        "small",
        "park",
        "house",
        "guitar",
        "piano",
    ]
    lines = [
        f"{words[i % 16]} {words[(i * 7) % 16]} {words[(i * 5) % 16]}\t{words[(i * 3) % 16]} {words[i % 11]}"
        for i in range(64)
    ]
    (tmp_path / "pairs.tsv").write_text("\n".join(lines) + "\n")
    recipe = (
        "name: tiny\ndata: {sources: [pairs.tsv]}\ntokenizer: {vocab_size: 60}\nmodel: {embedding_dim: 8}\n"
        "megabatch: {size: 2, anneal: 2}\ntrainer: {per_device_train_batch_size: 16, logging_steps: 1, "
        "save_strategy: 'no'}\nevaluation: {}\n"
    )
    (tmp_path / "r.yaml").write_text(recipe)
    args = ["train", "--config", str(tmp_path / "r.yaml"), "--output", str(tmp_path / "run"), "--max-steps", "2"]
    assert main([*args, "--threads", "1", "--data-dir", str(tmp_path), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [line for line in out.splitlines() if line.startswith("trained ")] and out
    assert "'loss'" in err


@pytest.mark.parametrize(
    ("argv", "level"),
    [
        (["embed", "--model", "m", "--input", "i", "--output", "o", "-v"], 1),
        (["-v", "embed", "--model", "m", "--input", "i", "--output", "o"], 1),
        (["embed", "--model", "m", "--input", "i", "--output", "o"], 0),
        (["tokenizer", "train", "--input", "i", "--output", "o", "-vv"], 2),
    ],
)
def test_verbose_is_taken_after_the_command_too(argv, level):
    """K5: `psp-st embed ... -v` was "psp-st: error: unrecognized arguments: -v" (exit 2)."""
    from psp_st.cli import build_parser

    assert build_parser().parse_args(argv).verbose == level


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["eval", "--model", "m", "--output", "ev"], "out", "ev"),
        (["neighbours", "--model", "m", "--query", "q", "--candidates", "c", "--k", "3"], "top_k", 3),
        (["mine", "--input", "i", "--output", "o.parquet", "-k", "3"], "k", 3),
    ],
)
def test_the_other_commands_spelling_of_an_option_is_taken(argv, dest, value):
    """K6: every other command writes to --output (eval: --out); neighbours took -k/--top-k, mine --k/--top-k."""
    from psp_st.cli import build_parser

    assert getattr(build_parser().parse_args(argv), dest) == value


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["mine", "--input", "in.txt", "--output", "o.parquet", "--k", "0"], "--k"),
        (["mine", "--input", "in.txt", "--output", "o.parquet", "--nprobe", "0"], "--nprobe"),
        (["mine", "--input", "in.txt", "--output", "o.parquet", "--pca", "0"], "--pca"),
        (["mine", "--input", "in.txt", "--output", "o.parquet", "--threads", "0"], "--threads"),
        (["tokenizer", "train", "--input", "in.txt", "--output", "t.model", "--threads", "0"], "--threads"),
        (["tokenizer", "train", "--input", "in.txt", "--output", "t.model", "--vocab-size", "0"], "--vocab-size"),
        (["train", "--config", "none.yaml", "--threads", "0"], "--threads"),
    ],
)
def test_a_bad_number_names_its_option(argv, flag, tmp_path, monkeypatch, capsys):
    """K7: "k must be >= 1", "threads must be >= 1", "num_threads must be >= 1": the Python names, where embed,
    eval, neighbours and score say "--threads must be >= 1" or "chunk_size (--chunk-size) must be ..."."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("a dog runs\na cat sleeps\n")
    assert main([*argv, "--no-progress"]) == EXIT_ERROR
    assert f"({flag}) must be" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--filters", "{lenght: {min: 3}}"], ["--num-proc", "0"]])
def test_data_refuses_a_bad_filter_or_num_proc_before_reading_the_data(option, tmp_path, capsys):
    """K9: both failed only after every row was loaded and validated (minutes on a large corpus)."""
    (tmp_path / "pairs.tsv").write_text("a dog runs\ta dog is running\n")
    assert main(["data", str(tmp_path / "pairs.tsv"), *option, "--no-progress"]) == EXIT_ERROR
    out, err = capsys.readouterr()
    assert out == ""  # no "data validation (... rows checked)" line: nothing was read
    assert ("'lenght'" if option[0] == "--filters" else "(--num-proc) must be >= 1") in err


@pytest.mark.parametrize(
    ("command", "flag", "default"),
    [
        ("embed", "--chunk-size", "EMBED_CHUNK_ROWS"),
        ("mine", "--shard-rows", "EMBED_CHUNK_ROWS"),
        ("score", "--chunk-size", "SCORE_CHUNK_ROWS"),
    ],
)
def test_the_chunk_the_help_states_is_the_one_used(command, flag, default):
    """A6-5, A6-6: the help writes the chunk defaults as literals (importing ``inference.files`` when the parser is
    built would load numpy and sentencepiece for every command); they must be ``inference.files``'s."""
    from psp_st.cli import build_parser
    from psp_st.inference import files

    options = _options(build_parser())
    [help_text] = [
        action.help for name, action in options if name == f"psp-st {command}" and flag in action.option_strings
    ]
    assert str(getattr(files, default)) in help_text


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "--model", "{model}", "--pairs", "pairs.tsv", "--output", "-"],
        ["embed", "--model", "{model}", "--input", "pairs.tsv", "--output", "-"],
        ["data", "pairs.tsv", "--output", "-"],
    ],
)
def test_a_dash_output_is_refused_not_written_as_a_file_named_dash(argv, psp_model_dir, tmp_path, monkeypatch, capsys):
    """E14-8: `--output -` (stdout by Unix habit) wrote a file called '-' and printed 'wrote -: ...' to stdout."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pairs.tsv").write_text("a dog runs\ta dog is running\n")
    assert _exit_code([arg.format(model=psp_model_dir) for arg in argv] + ["--no-progress"]) == EXIT_ERROR
    captured = capsys.readouterr()
    assert "not to stdout" in captured.err and captured.out == ""
    assert not (tmp_path / "-").exists()
