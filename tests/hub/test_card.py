"""Model cards: ST's card, corrected — usage snippets, measured numbers, recipe, limitations, citations."""

from __future__ import annotations

import pytest

INFO = {
    "name": "psp-en",
    "psp_st_version": "0.1.0",
    "format_version": 1,
    "seed": 7,
    "max_steps": None,
    "recipe": {"name": "psp-en", "data": {"sources": ["training_pairs/*.parquet"]}, "loss": {"name": "margin"}},
    "training": {"seconds": 600.0, "threads": 2, "datasets": ["training_pairs/*.parquet"]},
    "evaluation": {"suite": "quick", "metrics": {"stsb-test / Spearman": 76.543, "sick-r-test / Pearson": 70.1}},
    "speed": {"sentences_per_second": 12345.6, "threads": 1, "sentences": 20000, "batch_size": 1024},
}


@pytest.fixture
def static_model(psp_module):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(modules=[psp_module.to_static_embedding()], device="cpu")


def _code_blocks(card: str) -> list[str]:
    return card.split("```")[1::2]


def test_static_snippet_loads_repo_id_without_trust_remote_code(static_model):
    from psp_st.hub.card import render_model_card

    card = render_model_card(static_model, INFO, model_id="org/psp-en")
    snippet = next(block for block in _code_blocks(card) if 'SentenceTransformer("org/psp-en")' in block)
    assert "trust_remote_code" not in snippet
    assert "pip install -U sentence-transformers" in card
    assert "sentence_transformers_model_id" not in card


def test_trainable_snippet_needs_psp_st_and_trust_remote_code(psp_model):
    from psp_st.hub.card import render_model_card

    card = render_model_card(psp_model, INFO, model_id="org/psp-en", form="trainable")
    assert "pip install psp-st" in card
    assert any("trust_remote_code=True" in block for block in _code_blocks(card))
    assert 'psp_st.load("org/psp-en", trainable=True)' in card


def test_card_reports_recorded_numbers_and_speed(static_model):
    from psp_st.hub.card import render_model_card

    card = render_model_card(static_model, INFO)
    assert "| STS Benchmark test | Spearman | 76.54 |" in card
    assert "| SICK-R test | Pearson | 70.10 |" in card
    assert "12,346 sentences/s" in card
    assert "inf tokens" not in card


def test_card_has_recipe_limitations_and_citations(static_model):
    from psp_st.hub.card import CITATIONS, render_model_card

    card = render_model_card(static_model, INFO)
    assert "### Training Recipe" in card and "training_pairs/*.parquet" in card
    assert "## Bias, Risks and Limitations" in card and "**Training data.**" in card
    assert card.count("## Bias, Risks and Limitations") == 1
    for key in ("wieting-etal-2022-paraphrastic", "wieting-gimpel-2018-paranmt", "kanerva-etal-2023-towards"):
        assert f"@inproceedings{{{key}" in card or f"@article{{{key}" in card
    assert len(CITATIONS) >= 5


def test_card_without_evaluation_says_so(static_model):
    from psp_st.hub.card import render_model_card

    card = render_model_card(static_model, {**INFO, "evaluation": None})
    assert "No evaluation was recorded" in card


def test_release_card_uses_short_name_and_real_build_record(release):
    card = (release / "README.md").read_text()
    assert 'SentenceTransformer("psp-en")' in card
    assert "max_steps 4" in card
    trainable_card = (release / "trainable" / "README.md").read_text()
    assert "trust_remote_code" in trainable_card


def test_card_lists_sources_with_licences_pairs_and_stage_times(static_model):
    from psp_st.hub.card import render_model_card

    info = {
        **INFO,
        "training": {
            **INFO["training"],
            "files": {
                "training_pairs/coco_captions_val2017.parquet": 50029,
                "training_pairs_extra/asset_simplification.parquet": 22688,
            },
            "pairs_per_source": {
                "training_pairs/coco_captions_val2017.parquet": 30000,
                "training_pairs_extra/asset_simplification.parquet": 10000,
            },
            "distillation": {
                "teacher": "all-MiniLM-L6-v2",
                "sentences": 1234,
                "files": ["corpus/wikipedia_sentences.parquet"],
            },
        },
        "stage_seconds": {"data": 12.0, "training": 300.0},
    }
    card = render_model_card(static_model, info)
    assert (
        "| `training_pairs/coco_captions_val2017.parquet` | 50,029 | image captions (MS-COCO 2017 val) | "
        "COCO annotations CC BY 4.0 |" in card
    )
    assert "CC BY-NC 4.0" in card  # ASSET
    assert "- `training_pairs_extra/asset_simplification.parquet`: 10,000" in card
    assert "75% of the 40,000 training pairs per epoch are image captions" in card
    assert "1,234 unlabelled sentences" in card and "| `corpus/wikipedia_sentences.parquet` |" in card
    assert "data 12, training 300" in card
