"""The cross-lingual evaluation: FLORES devtest rows, the multi-set bitext evaluator, the xling suite, MTEB."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from psp_st.evaluation.bitext import BitextMiningEvaluator, MultiBitextEvaluator
from psp_st.evaluation.embeddings import cosine_matrix
from psp_st.evaluation.loaders import BITEXT_LANGS, FLORES_CORPUS, flores_languages, load_flores


def write_bitext(folder, lang: str, corpora: list[str]) -> None:
    (folder / "bitext").mkdir(parents=True, exist_ok=True)
    n = len(corpora)
    pd.DataFrame(
        {
            "source": [f"{lang} {i}" for i in range(n)],
            "target": [f"en {i}" for i in range(n)],
            "lang": [lang] * n,
            "corpus": corpora,
        }
    ).to_parquet(folder / "bitext" / f"{lang}-en.parquet")


def test_load_flores_keeps_only_the_flores_rows_in_order(data_dir):
    lang = flores_languages(data_dir)[0]
    frame = pd.read_parquet(data_dir / "bitext" / f"{lang}-en.parquet")
    expected = frame[frame.corpus == FLORES_CORPUS]
    data = load_flores(lang, data_dir)
    assert data["source"] == expected.source.tolist() and data["target"] == expected.target.tolist()


def test_flores_languages_lists_files_with_flores_rows(tmp_path):
    write_bitext(tmp_path, "de", ["wmt", FLORES_CORPUS])
    write_bitext(tmp_path, "cs", ["wmt", "wmt"])
    assert flores_languages(tmp_path) == ["de"]


def test_load_flores_errors_name_the_file(tmp_path):
    write_bitext(tmp_path, "cs", ["wmt"])
    with pytest.raises(ValueError, match=r"cs-en.parquet: no row with corpus == 'flores200-devtest'"):
        load_flores("cs", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"bitext file .*fi-en.parquet does not exist"):
        load_flores("fi", tmp_path)


def test_multi_bitext_reports_each_set_and_unweighted_means(lookup_model):
    # set a: x2's nearest target is y1 (one src->trg error of 2); set b: no error
    model = lookup_model(
        {"x1": [1, 0], "x2": [1, 0.2], "y1": [1, 0], "y2": [0, 1], "u1": [1, 0], "u2": [0, 1], "v1": [1, 0.1]}
    )
    model.vectors["v2"] = model.vectors["u2"]
    sets = {
        "a": {"source": ["x1", "x2"], "target": ["y1", "y2"]},
        "b": {"source": ["u1", "u2"], "target": ["v1", "v2"]},
    }
    metrics = MultiBitextEvaluator(sets, name="flores")(model)
    single = BitextMiningEvaluator(sets["a"], name="a")(model)
    assert metrics["flores_a_src2trg_error"] == pytest.approx(single["a_src2trg_error"]) == pytest.approx(50.0)
    assert metrics["flores_b_src2trg_error"] == pytest.approx(0.0)
    assert metrics["flores_mean_src2trg_error"] == pytest.approx(25.0)
    assert metrics["flores_mean_error"] == pytest.approx(
        (metrics["flores_a_mean_error"] + metrics["flores_b_mean_error"]) / 2
    )


def test_multi_bitext_needs_a_set():
    with pytest.raises(ValueError, match="at least one bitext set"):
        MultiBitextEvaluator({})


def test_xling_suite_lists_its_tasks_and_the_absent_languages(data_dir):
    from psp_st.evaluation.suite import suite_tasks

    tasks, skipped = suite_tasks("xling", data_dir)
    names = {task.name for task in tasks}
    langs = flores_languages(data_dir)
    assert {f"flores-{lang}" for lang in langs} | {"flores-mean", "tatoeba-deu", "tatoeba-fra"} <= names
    assert {"pawsx-zh-dev", "pawsx-zh-test", "stsb-dev", "stsb-test", "sts17-en-en"} <= names
    assert set(skipped) == {f"flores-{lang}" for lang in BITEXT_LANGS if lang not in langs}


def test_xling_suite_runs_and_its_mean_is_the_mean_of_the_languages(psp_model, data_dir):
    from psp_st.evaluation import run_suite

    result = run_suite(psp_model, "xling", data_dir=data_dir)
    langs = flores_languages(data_dir)
    per_language = [result["results"][f"flores-{lang}"]["src2trg_error"] for lang in langs]
    assert result["results"]["flores-mean"]["mean_src2trg_error"] == pytest.approx(sum(per_language) / len(langs))
    row = next(r for r in result["summary"] if r["task"] == "flores-mean" and r["metric"] == "en->x error %")
    assert row["value"] == pytest.approx(result["results"]["flores-mean"]["mean_trg2src_error"])
    json.dumps(result)


def test_cli_eval_runs_the_xling_suite(psp_model, data_dir, tmp_path, capsys):
    from psp_st.cli import main

    psp_model.save(str(tmp_path / "model"))
    out = tmp_path / "report"
    args = ["eval", "--model", str(tmp_path / "model"), "--suite", "xling", "--data-dir", str(data_dir)]
    assert main([*args, "--out", str(out), "--threads", "1", "--no-progress"]) == 0
    assert "flores-mean" in capsys.readouterr().out
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["suite"] == "xling"


def test_mteb_flores_task_agrees_with_our_error_rates(psp_model, data_dir):
    import mteb

    from psp_st.evaluation.mteb_tasks import FLORES_CODES, get_tasks

    lang = flores_languages(data_dir)[0]
    code = FLORES_CODES[lang]
    subsets = [f"{code}-eng_Latn", f"eng_Latn-{code}"]
    task = get_tasks(["FloresBitextMining"], data_dir=data_dir)[0].filter_languages(None, hf_subsets=subsets)
    results = mteb.evaluate(psp_model, [task], cache=None, show_progress_bar=False)
    scores = {entry["hf_subset"]: entry["accuracy"] for entry in results.task_results[0].scores["devtest"]}
    data = load_flores(lang, data_dir)
    ours = BitextMiningEvaluator(data)(psp_model)
    # MTEB gives a tie at the top to the lowest row, psp-st the mean over tie orders (E11-2): they differ at most by
    # the share of queries whose top cosine ties
    for (queries, candidates), subset, key in (
        (("source", "target"), 0, "src2trg"),
        (("target", "source"), 1, "trg2src"),
    ):
        sims = np.round(cosine_matrix(psp_model.encode(data[queries]), psp_model.encode(data[candidates])), 6)
        tied = 100 * np.mean((sims == sims.max(1, keepdims=True)).sum(1) > 1)
        assert abs(100 * (1 - scores[subsets[subset]]) - ours[f"{key}_error"]) <= tied + 1e-6
