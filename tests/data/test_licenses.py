from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from psp_st.data.licenses import UNKNOWN, data_license, restrictions, source_license
from tests.conftest import data_path

TABLE = Path(__file__).resolve().parents[2] / "psp_st" / "resources" / "data_licenses.yaml"


def test_a_training_file_gets_the_licence_of_the_packaged_table():
    genre, licence = yaml.safe_load(TABLE.read_text(encoding="utf-8"))["coco_captions_val2017"]
    assert data_license("training_pairs/coco_captions_val2017.parquet") == (genre, licence)


def test_a_file_missing_from_the_table_says_so():
    assert data_license("training_pairs/my_own_pairs.parquet") == UNKNOWN


#: ``corpus`` value prefix in the bitext files -> the name the table gives that corpus
BITEXT_CORPORA = {"news": "WMT", "multi30k": "Multi30k", "tico19": "TICO-19", "flores200": "FLORES-200"}


@pytest.mark.shared_data
@pytest.mark.parametrize("lang", ["ar", "cs", "de", "es", "fi", "fr", "ru", "sv", "tr", "zh"])
def test_a_bitext_file_is_described_by_the_corpora_it_holds(lang):
    import pandas as pd

    corpora = pd.read_parquet(data_path(f"bitext/{lang}-en.parquet"), columns=["corpus"])["corpus"].unique()
    held = {name for prefix, name in BITEXT_CORPORA.items() if any(str(c).startswith(prefix) for c in corpora)}
    genre, licence = data_license(f"bitext/{lang}-en.parquet")
    assert {name for name in BITEXT_CORPORA.values() if name in genre} == held
    assert {name for name in BITEXT_CORPORA.values() if name in licence} == held


@pytest.mark.shared_data
def test_the_english_sentence_corpus_licence_names_every_corpus_it_holds():
    """english_sentences holds TICO-19 and FLORES-200 sentences besides WMT and Brown: each licence is stated."""
    import pandas as pd

    sources = pd.read_parquet(data_path("corpus/english_sentences.parquet"), columns=["source"])["source"].unique()
    held = {
        "TICO-19" if "tico19" in source else "WMT" if source.startswith("wmt") else source.split(":")[0]
        for source in map(str, sources)
    }
    names = {"WMT": "WMT", "TICO-19": "TICO-19", "flores200-devtest": "FLORES-200", "brown": "Brown"}
    licence = data_license("corpus/english_sentences.parquet")[1]
    assert {names[corpus] for corpus in held} == {name for name in names.values() if name in licence}


def test_an_own_file_gets_the_licence_and_genre_its_recipe_source_states():
    sources = ["training_pairs/*.parquet", {"path": "/home/me/pairs/*.jsonl", "license": "CC BY 4.0", "genre": "chat"}]
    assert source_license("/home/me/pairs/tickets.jsonl", sources) == ("chat", "CC BY 4.0")


def test_a_source_licence_is_matched_by_file_name_when_the_path_was_resolved_elsewhere():
    sources = [{"path": "my_pairs.tsv", "license": "proprietary"}]
    assert source_license("/work/data/my_pairs.tsv", sources) == (UNKNOWN[0], "proprietary")


def test_a_source_licence_reaches_the_files_of_a_folder_source_and_a_file_named_like_a_glob():
    """M9-1: a source given as a folder (or a file named ``[v2]``) matched none of its files: the card said "?"."""
    sources = [{"path": "/home/me/pairs", "license": "CC BY 4.0"}, {"path": "own [v2].tsv", "license": "mine"}]
    assert source_license("/home/me/pairs/tickets.jsonl", sources)[1] == "CC BY 4.0"
    assert source_license("/work/own [v2].tsv", sources)[1] == "mine"
    assert source_license("/home/me/pairs/sub/more.jsonl", sources) == UNKNOWN  # a folder's own files only


def test_the_shared_table_wins_over_a_source_licence_and_an_unmatched_file_stays_unknown():
    sources = [{"path": "training_pairs/*.parquet", "license": "mine"}]
    assert source_license("training_pairs/coco_captions_val2017.parquet", sources) == data_license(
        "training_pairs/coco_captions_val2017.parquet"
    )
    assert source_license("other/pairs.parquet", sources) == UNKNOWN


def test_the_brown_sentences_state_the_non_commercial_terms_of_nltks_index():
    """G1: the card said "Brown: redistribution permitted"; nltk_data's index says "May be used for non-commercial
    purposes" (a third of english_sentences, sampled by every distilled recipe)."""
    assert "Brown: non-commercial use" in data_license("corpus/english_sentences.parquet")[1]


@pytest.mark.parametrize(
    ("licence", "terms"),
    [
        ("Flickr30k/Multi30k: non-commercial research/education", ["non-commercial", "research use"]),
        ("CC BY-NC-SA 4.0", ["non-commercial", "ShareAlike"]),
        ("no license stated (research dataset)", ["research use", "no licence stated"]),
        (UNKNOWN[1], ["no licence stated"]),
        ("CC BY 3.0 / CC BY 4.0", []),
        ("public domain", []),
    ],
)
def test_restrictions_names_the_terms_that_limit_a_models_use(licence, terms):
    assert restrictions(licence) == terms


@pytest.mark.shared_data
def test_the_intent_corpus_states_the_wikipedia_sentences_it_holds():
    """G4: CLINC's all_wiki_sents (Wikipedia text, CC BY-SA) were carded as "CC BY 3.0 / CC BY 4.0" intent queries."""
    import pandas as pd

    sources = pd.read_parquet(data_path("corpus/intent_queries_and_questions.parquet"), columns=["source"])["source"]
    assert (sources == "clinc-oos:all_wiki_sents").any()
    genre, licence = data_license("corpus/intent_queries_and_questions.parquet")
    assert "Wikipedia" in genre and "ShareAlike" in restrictions(licence)
