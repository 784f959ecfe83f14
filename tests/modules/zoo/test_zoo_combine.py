"""CombinedEncoder: sum/concat of any encoders, one joint right-padded id layout that survives trainer surgery."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer

from psp_st.modules.combine import CombinedEncoder

TEXTS = ["a dog runs", "two men are playing guitars on a stage", "", "a cat"]


def test_concat_is_the_concatenation_of_the_parts(make_encoder):
    combined = make_encoder("word_trigram_concat").eval()
    word, trigram = combined.encoders
    out = combined(combined.preprocess(TEXTS))["sentence_embedding"]
    expected = torch.cat(
        [word(word.preprocess(TEXTS))["sentence_embedding"], trigram(trigram.preprocess(TEXTS))["sentence_embedding"]],
        dim=-1,
    )
    torch.testing.assert_close(out, expected)
    assert combined.get_sentence_embedding_dimension() == 16


def test_sum_is_the_sum_of_the_parts(make_encoder):
    combined = make_encoder("word_gran_sum").eval()
    parts = [encoder(encoder.preprocess(TEXTS))["sentence_embedding"] for encoder in combined.encoders]
    torch.testing.assert_close(combined(combined.preprocess(TEXTS))["sentence_embedding"], parts[0] + parts[1])


def test_layout_survives_row_selection_and_padding_trim(make_encoder):
    combined = make_encoder("word_trigram_concat").eval()
    features = combined.preprocess(TEXTS)
    ids, mask = features["input_ids"], features["attention_mask"]
    assert ((mask == 0) | (mask.cumsum(1) == torch.arange(1, ids.shape[1] + 1))).all()  # right padding
    rows = torch.tensor([3, 0])
    width = int(mask[rows].sum(1).max())
    trimmed = {"input_ids": ids[rows, :width], "attention_mask": mask[rows, :width]}
    expected = combined(combined.preprocess([TEXTS[3], TEXTS[0]]))["sentence_embedding"]
    torch.testing.assert_close(combined(trimmed)["sentence_embedding"], expected)


def test_shuffling_a_row_keeps_every_token_with_its_encoder(make_encoder):
    combined = make_encoder("word_trigram_concat").eval()
    features = combined.preprocess(TEXTS)
    ids = features["input_ids"]
    generator = torch.Generator().manual_seed(0)
    shuffled = ids.clone()
    for row in range(ids.shape[0]):
        n = int(features["attention_mask"][row].sum())
        shuffled[row, :n] = ids[row, :n][torch.randperm(n, generator=generator)]
    out = combined({"input_ids": shuffled, "attention_mask": features["attention_mask"]})["sentence_embedding"]
    # averaging parts ignore order: shuffling changes nothing
    torch.testing.assert_close(out, combined(features)["sentence_embedding"])


def test_setting_max_seq_length_caps_every_part(make_encoder):
    """``model.max_seq_length = N`` (ST's setter) reaches every encoder; a value one refuses changes none."""
    model = SentenceTransformer(modules=[make_encoder("word_gran_sum")], device="cpu")
    model.max_seq_length = 2
    assert [encoder.max_seq_length for encoder in model[0].parts] == [2, 2] and model.max_seq_length == 2
    with pytest.raises(ValueError, match="GRAN: max_seq_length must be at most 1024"):
        model.max_seq_length = None
    assert [encoder.max_seq_length for encoder in model[0].parts] == [2, 2]


def test_sum_needs_equal_sizes(make_encoder, word_tokenizer):
    from psp_st.modules.averaging import WordAveraging

    with pytest.raises(ValueError, match="equal output size"):
        CombinedEncoder(
            [WordAveraging(word_tokenizer, embedding_dim=4), WordAveraging(word_tokenizer, embedding_dim=6)], mode="sum"
        )


def test_rejects_bad_mode_and_non_encoders(make_encoder):
    with pytest.raises(ValueError, match="mode"):
        CombinedEncoder([make_encoder("word")], mode="mean")
    with pytest.raises(TypeError, match=r"encoders\[0\]"):
        CombinedEncoder([torch.nn.Linear(2, 2)])
    with pytest.raises(ValueError, match="at least one"):
        CombinedEncoder([])


def test_accepts_psp_embedding(psp_module, make_encoder, tmp_path):
    combined = CombinedEncoder([psp_module, make_encoder("trigram")], mode="concat")
    model = SentenceTransformer(modules=[combined], device="cpu")
    model.save(str(tmp_path))
    reloaded = SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")
    np.testing.assert_array_equal(reloaded.encode(TEXTS), model.encode(TEXTS))
    assert reloaded.get_embedding_dimension() == 32 + 8


def test_from_teacher_is_refused_before_the_teacher_runs(word_tokenizer, stub_teacher):  # Z8-2
    teacher = stub_teacher()
    with pytest.raises(TypeError, match=r"WordAveraging\.from_teacher.*CombinedEncoder\(\[\.\.\.\]\)"):
        CombinedEncoder.from_teacher(teacher, word_tokenizer, embedding_dim=4)
    assert teacher.calls == []


def test_a_misspelt_option_is_refused(make_encoder):  # Z8-3: it was swallowed, the mode left at "concat"
    with pytest.raises(TypeError, match="mdoe"):
        CombinedEncoder([make_encoder("word"), make_encoder("trigram")], mdoe="sum")
