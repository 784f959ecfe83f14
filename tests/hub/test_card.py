"""Model cards from the template: usage per form, measured numbers, sources with licences, recipe, citations."""

from __future__ import annotations

import json

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
    "citations": {"ParaphraseMarginLoss": "@inproceedings{wieting-gimpel-2018-paranmt,\n}"},
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


def test_trainable_snippet_installs_psp_st_and_loads_with_it(psp_model):
    from psp_st.hub.card import render_model_card

    card = render_model_card(psp_model, INFO, model_id="org/psp-en", form="trainable")
    assert "pip install psp-st" in card
    assert not any("SentenceTransformer(" in block for block in _code_blocks(card) if block.startswith("python"))
    assert 'psp_st.load("org/psp-en", trainable=True)' in card


def test_card_reports_recorded_numbers_with_the_command(static_model):
    from psp_st.hub.card import render_model_card

    card = render_model_card(static_model, INFO)
    assert "| STS Benchmark test | Spearman | 76.54 |" in card
    assert "| SICK-R test | Pearson | 70.10 |" in card
    assert 'run_suite(model, suite="quick")' in card and "`psp-st build psp-en`" in card
    assert "inf tokens" not in card


def test_card_says_where_the_pair_classification_thresholds_come_from(static_model):  # D12-3
    from psp_st.hub.card import render_model_card

    metrics = {
        "msrpc-test / accuracy": 73.2,
        "msrpc-test / accuracy at dev threshold": 72.1,
        "msrpc-test / majority rate": 66.5,
    }
    card = render_model_card(static_model, {**INFO, "evaluation": {"suite": "quick", "metrics": metrics}})
    plain = render_model_card(static_model, INFO)
    assert "best threshold on the evaluated set itself" in card and "MSRPC, which has none: train" in card
    assert "threshold" not in plain


def test_static_card_states_the_exported_max_seq_length(psp_module):
    from sentence_transformers import SentenceTransformer

    from psp_st.hub.card import render_model_card

    psp_module.max_seq_length = 64
    static = SentenceTransformer(modules=[psp_module.to_static_embedding()], device="cpu")
    assert "**Maximum Sequence Length:** 64 pieces" in render_model_card(static, INFO)


def test_card_has_recipe_limitations_and_the_record_citations(static_model):
    from psp_st.hub.card import render_model_card

    card = render_model_card(static_model, INFO)
    assert "### Training Recipe" in card and "training_pairs/*.parquet" in card
    assert card.count("## Bias, Risks and Limitations") == 1 and "**Training data.**" in card
    assert "@inproceedings{wieting-etal-2022-paraphrastic" in card  # P-SP itself
    assert "#### ParaphraseMarginLoss" in card and "@inproceedings{wieting-gimpel-2018-paranmt" in card


def test_card_of_a_soup_names_its_members_and_cites_model_soups(static_model):
    from psp_st.hub.card import render_model_card

    plain = render_model_card(static_model, INFO)
    soup = {**INFO, "training": {**INFO["training"], "soup": {"members": 3, "seeds": [7, 8, 9]}}}
    card = render_model_card(static_model, soup)
    assert "mean of 3 runs from one initial model at seeds 7, 8, 9" in card and "wortsman2022soups" in card
    assert "model soup" not in plain and "wortsman2022soups" not in plain


def test_card_of_a_wise_ft_model_says_how_far_it_is_from_the_initial_one_and_cites_it(static_model):
    from psp_st.hub.card import render_model_card

    plain = render_model_card(static_model, INFO)
    card = render_model_card(static_model, {**INFO, "training": {**INFO["training"], "wise_ft": 0.8}})
    assert "initial model's plus 0.8 times what training changed (WiSE-FT)" in card and "wortsman2022robust" in card
    assert "WiSE-FT" not in plain and "wortsman2022robust" not in plain


def test_card_of_a_norm_power_model_says_the_piece_norms_were_raised_to_it(static_model):
    from psp_st.hub.card import render_model_card

    plain = render_model_card(static_model, INFO)
    card = render_model_card(static_model, {**INFO, "training": {**INFO["training"], "norm_power": 0.9}})
    assert "norm was then raised to the power 0.9" in card and "raised to the power" not in plain


def test_card_comes_from_the_package_template(static_model):
    from psp_st.hub.card import render_model_card, template_path

    assert template_path().is_file()
    headings = [line for line in template_path().read_text().splitlines() if line.startswith("## ")]
    card_headings = [line for line in render_model_card(static_model, INFO).splitlines() if line.startswith("## ")]
    assert card_headings == headings


def test_card_without_record_needs_a_model_id(psp_model):
    from psp_st.hub.card import render_model_card

    with pytest.raises(ValueError, match="model_id"):
        render_model_card(psp_model, {}, form="trainable")
    card = render_model_card(psp_model, {}, model_id="me/x", form="trainable")
    assert "no build record" in card and 'psp_st.load("me/x", trainable=True)' in card


def test_card_without_evaluation_says_so(static_model):
    from psp_st.hub.card import render_model_card

    card = render_model_card(static_model, {**INFO, "evaluation": None})
    assert "No evaluation was recorded" in card


def test_release_card_uses_short_name_and_real_build_record(release):
    card = (release / "README.md").read_text()
    assert 'SentenceTransformer("psp-en")' in card
    assert "max_steps 4" in card
    trainable_card = (release / "trainable" / "README.md").read_text()
    assert 'psp_st.load("psp-en", trainable=True)' in trainable_card


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
    assert "image captions (MS-COCO 2017 val) 75%" in card  # 30,000 of the 40,000 pairs per epoch
    assert "1,234 unlabelled sentences" in card and "| `corpus/wikipedia_sentences.parquet` |" in card
    assert "data 12, training 300" in card


def test_card_unknown_pieces_note_says_what_the_two_forms_do(release):
    import numpy as np

    from psp_st.inference.load import load

    card = (release / "README.md").read_text()
    assert "dropped in both forms" in card and "gets zeros in the static form" in card
    static, trainable = load(str(release)), load(str(release), trainable=True)
    for text in ("a dog runs 中文א", "a dog runs"):  # an unknown piece is dropped in both forms
        np.testing.assert_allclose(static.encode([text]), trainable.encode([text]), atol=1e-5)
    assert not static.encode(["中文א"]).any() and trainable.encode(["中文א"]).any()  # no known piece


def test_recipe_block_survives_backticks_in_a_recipe_string(release_copy):
    """G5: a recipe value with a ``` line must not close the card's yaml block early."""
    from psp_st.hub.card import write_model_cards

    record = json.loads((release_copy / "psp_build.json").read_text())
    record["recipe"]["description"] = "one\n```\n## Usage\n````\n"
    (release_copy / "psp_build.json").write_text(json.dumps(record))
    write_model_cards(release_copy, model_id="me/x")
    card = (release_copy / "README.md").read_text()
    block = card.split("`````yaml\n", 1)[1].split("\n`````\n", 1)[0]
    assert "seed:" in block and "## Usage" in block


def test_card_of_a_fine_tuned_model_says_its_starting_models_data_apply(static_model):
    """U12: a model fine-tuned from psp-en listed only the new pairs, not that psp-en's training data carries over."""
    from psp_st.hub.card import render_model_card

    recipe = {**INFO["recipe"], "model": {"init_from": "psp-en"}}
    card = render_model_card(static_model, {**INFO, "recipe": recipe, "training": {**INFO["training"], "pairs": 400}})
    assert "Fine-tuned from `psp-en` (the recipe's `model.init_from`): that model's own training data" in card


def test_card_genre_shares_follow_the_pairs_trained_not_the_file_rows():
    from psp_st.hub.card import card_fields

    files = {"training_pairs/coco_captions_val2017.parquet": 100, "training_pairs/parasci.parquet": 300,
             "bitext/de-en.parquet": 1000}  # fmt: skip
    per_source = {"training_pairs/*.parquet": 40, "bitext/de-en.parquet": 60}  # the glob capped at 40 pairs
    genres = card_fields({"training": {"files": files, "pairs_per_source": per_source}})["genres"]
    shares = {row["genre"].split(" (")[0]: round(row["share"], 3) for row in genres}
    assert list(shares.values()) == [0.6, 0.3, 0.1]  # rows alone would give 0.714 / 0.214 / 0.071


def test_card_genre_shares_count_the_pairs_of_a_folder_source():
    """M9-1: a recipe source given as a folder matched none of its files: the card gave its genres no share."""
    from psp_st.hub.card import card_fields

    files = {"training_pairs/coco_captions_val2017.parquet": 100, "bitext/de-en.parquet": 1000}
    per_source = {"training_pairs": 90, "bitext/de-en.parquet": 10}
    genres = card_fields({"training": {"files": files, "pairs_per_source": per_source}})["genres"]
    assert [round(row["share"], 3) for row in genres] == [0.9, 0.1]


def test_card_note_on_a_small_language_compares_only_with_languages_that_exist():
    """XL5: a de-en model of 2,000 pairs was told to expect weaker de results "than in the languages with more bitext"."""
    from psp_st.hub.card import language_rows

    def notes(counts):
        return language_rows({"training": {"pairs_per_language": counts}})[1]

    alone = notes({"de": {"pairs": 2000, "distinct": 2000}})
    assert alone == ["de: only 2,000 distinct training pairs (seen 1.0 times per epoch): expect weaker results in de "
                     "than in a model trained on more bitext."]  # fmt: skip
    multi = notes({"de": {"pairs": 9000, "distinct": 9000}, "ar": {"pairs": 4000, "distinct": 2000}})
    assert multi == ["ar: only 2,000 distinct training pairs (seen 2.0 times per epoch): expect weaker results in ar "
                     "than in the languages with more bitext."]  # fmt: skip


def test_card_gives_the_distillation_teachers_licence(static_model):
    """The teacher is a training source too: the card states its licence beside its name."""
    from psp_st.hub.card import render_model_card

    distillation = {"teacher": "all-MiniLM-L6-v2", "sentences": 10, "files": ["corpus/bible_verses.parquet"]}
    info = {**INFO, "training": {**INFO["training"], "distillation": distillation}}
    card = render_model_card(static_model, info)
    assert "Sentence distillation from `all-MiniLM-L6-v2` (licence: Apache-2.0) on 10" in card


def test_card_of_a_float16_release_warns_that_the_static_form_sums_in_float16(static_model):
    from psp_st.hub.card import render_model_card

    assert "float16 weights" not in render_model_card(static_model, INFO)
    card = render_model_card(static_model, {**INFO, "weights_dtype": "float16"})
    assert "**float16 weights.** The static form computes in float16" in card and "model.float()" in card


def test_card_states_the_licence_and_genre_a_recipe_gives_its_own_data(static_model):
    """U17: an own data file's row read "?" and pointed at psp-st's table; the card's licence was always apache-2.0."""
    from psp_st.hub.card import render_model_card

    assert "license: apache-2.0" in render_model_card(static_model, INFO)
    source = {"path": "/data/me/*.jsonl", "license": "CC BY 4.0", "genre": "support chats"}
    recipe = {**INFO["recipe"], "data": {"sources": [source]}, "release": {"license": "cc-by-4.0"}}
    training = {**INFO["training"], "files": {"/data/me/tickets.jsonl": None}}
    card = render_model_card(static_model, {**INFO, "recipe": recipe, "training": training})
    assert "| `/data/me/tickets.jsonl` | - | support chats | CC BY 4.0 |" in card
    assert "license: cc-by-4.0" in card and "**License:** cc-by-4.0" in card


def test_card_of_a_train_run_lists_its_data_as_a_build_card_does(train_output, tmp_path):
    """U17: a `psp-st train` run's final/ card (and its push) said "no build record" and listed no training data."""
    from psp_st.hub.push import push

    push(train_output, "me/my-psp", dry_run=tmp_path / "upload")
    for card in (train_output / "README.md", tmp_path / "upload" / "README.md"):
        text = card.read_text(encoding="utf-8")
        assert "coco_captions_val2017.parquet` |" in text and "| COCO annotations CC BY 4.0 |" in text
        assert "no build record" not in text and "psp-st train --config" in text and "name: tiny-train" in text


def test_card_names_the_teacher_its_piece_vectors_come_from_without_a_distillation_term(static_model):
    """G2: `model.init: teacher` with distillation weight 0 trains no distillation term: the card named no teacher."""
    from psp_st.hub.card import render_model_card

    recipe = {**INFO["recipe"], "model": {"type": "psp", "init": "teacher"}}
    card = render_model_card(static_model, {**INFO, "recipe": recipe}).split("### Training Recipe")[0]
    assert "Piece vectors initialised from the teacher `all-MiniLM-L6-v2` (licence: Apache-2.0;" in card


def test_card_lists_the_sources_whose_terms_restrict_use_under_its_licence(static_model):
    """G3: psp-en's card said `license: apache-2.0` over non-commercial / research-only / unlicensed training data,
    their terms only in a table row each; the License section now lists them (and the ShareAlike ones)."""
    from psp_st.hub.card import render_model_card

    files = {
        "training_pairs/flickr8k_captions.parquet": 10,
        "training_pairs/coco_captions_val2017.parquet": 10,
        "training_pairs/wikiauto_gem_valid_simplification.parquet": 10,
    }
    card = render_model_card(static_model, {**INFO, "training": {**INFO["training"], "files": files}})
    section = card.split("## License\n")[1].split("\n## ")[0]
    assert "some training sources restrict use" in card
    assert "- `training_pairs/flickr8k_captions.parquet`: Flickr8k: research use" in section
    assert "`training_pairs/wikiauto_gem_valid_simplification.parquet` (CC BY-SA 3.0)" in section
    assert "coco_captions" not in section and "this licence does not lift" in section


def test_the_packaged_recipes_cards_say_license_other_with_its_name_and_link(static_model):
    """G3: the packaged recipes train on non-commercial and research-only data: their cards no longer claim
    apache-2.0 but `other`, with the license_name and license_link Hugging Face's card spec asks for."""
    from huggingface_hub import ModelCard

    from psp_st.hub.card import render_model_card
    from psp_st.training.recipe import load_config

    for name in ("psp-en", "psp-multi", "psp-de-en", "psp-paper"):
        recipe = {**INFO["recipe"], "release": load_config(name)["release"]}
        data = ModelCard(render_model_card(static_model, {**INFO, "recipe": recipe})).data
        assert (data.license, data.license_name, data.license_link) == (
            "other",
            "psp-st-training-data-terms",
            "README.md",
        ), name


def test_card_of_a_command_naming_a_folder_that_is_not_utf8_is_written(release_copy):  # P6-1
    from psp_st.hub.card import write_model_cards

    record = json.loads((release_copy / "psp_build.json").read_text())
    record["command"] = "psp-st build psp-en --output out\udce9"
    (release_copy / "psp_build.json").write_text(json.dumps(record))
    write_model_cards(release_copy, model_id="me/x")
    assert "--output out\\udce9" in (release_copy / "README.md").read_text(encoding="utf-8")
