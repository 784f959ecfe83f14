"""Cross-lingual distillation sources (``teacher_column``): the student reads the foreign side, the label is the
teacher vector of its English side; the pair exclusion and filters apply; a bad entry fails at recipe parse."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

FOREIGN = ["ein kleiner Hund", "die rote Katze", "ein Vogel singt", "das Haus am See"]
ENGLISH = ["a small dog", "the red cat", "a bird sings", "the house by the lake"]


@pytest.fixture
def bitext(tmp_path):
    path = tmp_path / "de-en.parquet"
    corpus = ["news", "news", "flores200-devtest", "news"]
    pd.DataFrame({"source": FOREIGN, "target": ENGLISH, "corpus": corpus}).to_parquet(path)
    return path


def entry(path, **options):
    return {"path": str(path), "columns": ["source"], "teacher_column": "target", **options}


def test_teacher_column_labels_are_the_teacher_vectors_of_the_english_side(
    bitext, psp_model, stub_teacher, tmp_path, monkeypatch
):
    import psp_st.modules.teacher_init as teacher_module
    from psp_st.training.recipe import build_distillation

    teacher = stub_teacher(dim=6)
    monkeypatch.setattr(teacher_module, "load_teacher", lambda name, device="cpu": teacher)
    config = {
        "name": "t",
        "data": {"sources": ["x.parquet"]},
        "distillation": {
            "teacher": "stub",
            "cache_dir": str(tmp_path / "c"),
            "weight": 1.0,
            "sources": [entry(bitext)],
        },
    }
    objective = build_distillation(config, psp_model, seed=0, data_dir=tmp_path)
    assert objective.texts == FOREIGN
    np.testing.assert_allclose(objective.labels.numpy(), np.stack([teacher.vector(text) for text in ENGLISH]))
    assert sorted(text for call in teacher.calls for text in call) == sorted(ENGLISH)  # only English is encoded


def test_teacher_column_applies_the_pair_exclusion_and_filters(bitext):
    from psp_st.distillation import distillation_sentences

    long = entry(bitext, exclude={"corpus": "flores200-devtest"}, filters={"length": {"max": 3}})
    [(_, sentences, teachers)] = distillation_sentences([long])
    kept = [i for i in (0, 1, 3) if max(len(FOREIGN[i].split()), len(ENGLISH[i].split())) <= 3]
    assert sentences == [FOREIGN[i] for i in kept] and teachers == [ENGLISH[i] for i in kept]


def test_teacher_column_pairs_reuse_the_training_pairs_filter_results(bitext, tmp_path, monkeypatch):
    import psp_st.data.filters as filters_module
    from psp_st.data import load_training_pairs
    from psp_st.distillation import distillation_sentences

    calls = []
    mean_length = filters_module.mean_length
    monkeypatch.setattr(filters_module, "mean_length", lambda a, b: calls.append(a) or mean_length(a, b))
    filters = {"length": {"max": 3}}
    cache = tmp_path / "datasets"
    pairs = {"path": str(bitext), "columns": {"sentence1": "source", "sentence2": "target"}, "filters": filters}
    load_training_pairs([pairs], cache_dir=cache)  # the data stage of a build, with the recipe's cache
    assert len(calls) == len(FOREIGN)
    [(_, sentences, teachers)] = distillation_sentences([entry(bitext, filters=filters)], cache_dir=cache)
    assert len(calls) == len(FOREIGN)  # the length filter ran once: its result came from the cache
    assert sentences == FOREIGN[:3] and teachers == ENGLISH[:3]  # "das Haus am See" is 4 words


def test_teacher_column_in_columns_adds_the_english_side_of_each_sampled_pair(bitext):
    from psp_st.distillation import distillation_sentences

    [(_, sentences, teachers)] = distillation_sentences([entry(bitext, columns=["source", "target"], max_sentences=2)])
    foreign = sentences[:2]
    english = [ENGLISH[FOREIGN.index(text)] for text in foreign]
    assert len(set(foreign) & set(FOREIGN)) == 2 and sentences[2:] == english  # max_sentences counts pairs
    assert teachers == english + english


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ({"path": "b.parquet", "teacher_colum": "target"}, r"teacher_colum is not a known key"),
        ({"path": "b.parquet", "columns": ["target"], "teacher_column": "target"}, r"teacher_column must be"),
        ({"path": "b.parquet", "teacher_column": 3}, r"teacher_column must be"),
        ({"path": "b.parquet", "filters": {"length": {"max": 3}}}, r"filters needs teacher_column"),
        ({"path": "b.parquet", "teacher_column": "t", "filters": {"lenght": 3}}, r"lenght is not a known key"),
    ],
)
def test_a_bad_distillation_source_fails_when_the_recipe_is_parsed(source, message):
    from psp_st.training.schema import parse_recipe

    config = {"name": "t", "data": {"sources": ["x.parquet"]}, "distillation": {"weight": 1.0, "sources": [source]}}
    with pytest.raises(ValueError, match=rf"distillation\.sources\[0\].*{message}"):
        parse_recipe(config)


def test_one_source_outside_a_list_is_one_source(bitext):
    """AP16: a path string was read as one source per character ("no data file matches 'c'")."""
    from psp_st.distillation import distillation_sentences

    assert distillation_sentences(entry(bitext)) == distillation_sentences([entry(bitext)])
    with pytest.raises(
        ValueError, match=r"de-en.parquet: missing column\(s\) \['sentence'\]"
    ):  # one source, read whole
        distillation_sentences(str(bitext))


def test_a_source_entry_of_the_wrong_type_is_named():
    """AP16: 'int' object is not iterable."""
    from psp_st.distillation import parse_source

    with pytest.raises(TypeError, match="must be a path or a mapping with a 'path' key, got int 3"):
        parse_source(3)
