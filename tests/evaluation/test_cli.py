from __future__ import annotations

import json

import pytest

from psp_st.cli import main


@pytest.fixture
def saved_psp_model(psp_model, tmp_path):
    path = tmp_path / "model"
    psp_model.save(str(path))
    return path


def test_eval_quick_writes_json_markdown_and_prints_a_table(saved_psp_model, data_dir, tmp_path, capsys):
    out = tmp_path / "report"
    code = main(
        [
            "eval",
            "--model",
            str(saved_psp_model),
            "--suite",
            "quick",
            "--data-dir",
            str(data_dir),
            "--out",
            str(out),
            "--threads",
            "1",
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "stsb-test" in printed and "Spearman" in printed
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert result["suite"] == "quick" and "stsb-test" in result["results"]
    assert "# Evaluation of" in (out / "report.md").read_text(encoding="utf-8")


def test_eval_with_a_missing_data_dir_fails_clearly(saved_psp_model, tmp_path, capsys):
    code = main(
        [
            "eval",
            "--model",
            str(saved_psp_model),
            "--data-dir",
            str(tmp_path / "absent"),
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
        ]
    )
    assert code == 2
    assert "evaluation data folder" in capsys.readouterr().err


def test_neighbours_prints_a_table(saved_psp_model, tmp_path, capsys):
    candidates = tmp_path / "candidates.txt"
    candidates.write_text("a dog runs on the grass\na man plays the guitar\na dog is running\n", encoding="utf-8")
    code = main(
        [
            "neighbours",
            "--model",
            str(saved_psp_model),
            "--query",
            "a dog is running",
            "--candidates",
            str(candidates),
            "-k",
            "2",
            "--gold",
            "a dog runs on the grass",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "Nearest neighbours of **a dog is running**" in printed
    assert printed.count("\n| ") == 3  # header + 2 rows, the query itself excluded


def _eval(model, data_dir, out, *extra):
    return main(
        ["eval", "--model", str(model), "--data-dir", str(data_dir), "--out", str(out), "--no-progress", *extra]
    )


def test_eval_refuses_a_non_empty_out_without_overwrite(saved_psp_model, data_dir, tmp_path, capsys):
    out = tmp_path / "report"
    out.mkdir()
    (out / "results.json").write_text("{}")
    assert _eval(saved_psp_model, data_dir, out) == 2
    assert "--out" in (err := capsys.readouterr().err) and "--overwrite" in err
    assert (out / "results.json").read_text() == "{}"


def test_eval_overwrite_replaces_the_earlier_run_and_keeps_other_files(saved_psp_model, data_dir, tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    for name in ("results.json", "report.md", "agreement_old-task.png", "notes.txt"):
        (out / name).write_text("earlier")
    assert _eval(saved_psp_model, data_dir, out, "--overwrite") == 0
    assert not (out / "agreement_old-task.png").exists()  # no plot of another run is left beside the new report
    assert (out / "notes.txt").read_text() == "earlier"
    assert json.loads((out / "results.json").read_text())["suite"] == "quick"


def test_eval_refuses_a_file_as_out(saved_psp_model, data_dir, tmp_path, capsys):
    out = tmp_path / "report"
    out.write_text("a file")
    assert _eval(saved_psp_model, data_dir, out) == 2
    assert f"--out {out} exists and is not a folder" in capsys.readouterr().err
