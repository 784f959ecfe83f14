"""Fixtures for the encoder-zoo tests: tiny tokenizers trained on real captions and a factory of every encoder."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

#: every encoder configuration the zoo tests run over (id -> short description)
ENCODER_KINDS = [
    "word",
    "trigram",
    "word_morfessor",
    "lstm",
    "blstm_sum",
    "blstm_concat_max",
    "gran_lstm",
    "gran_gru",
    "gran_gru_sentencepiece",
    "lstm_morfessor",
    "word_trigram_concat",
    "word_gran_sum",
]


@pytest.fixture(scope="session")
def zoo_texts(caption_sentences) -> list[str]:
    return caption_sentences[:3000]


@pytest.fixture(scope="session")
def word_tokenizer(zoo_texts):
    from psp_st.tokenization.words import WordTokenizer

    return WordTokenizer.train(zoo_texts, min_count=2)


@pytest.fixture(scope="session")
def trigram_tokenizer(zoo_texts):
    from psp_st.tokenization.words import TrigramTokenizer

    return TrigramTokenizer.train(zoo_texts, min_count=2)


@pytest.fixture(scope="session")
def morfessor_tokenizer(zoo_texts):
    """Morfessor Baseline trained on the 300 most frequent caption words (about a second)."""
    pytest.importorskip("morfessor")
    from psp_st.tokenization.morfessor import MorfessorTokenizer

    return MorfessorTokenizer.train(zoo_texts[:1000], max_words=300, max_epochs=3)


@pytest.fixture
def make_encoder(word_tokenizer, trigram_tokenizer, sp_tokenizer, request) -> Callable[[str], torch.nn.Module]:
    """``make_encoder(kind)`` -> a fresh, seeded encoder of dimension 8 (16 for concatenations)."""
    from psp_st.modules.averaging import TrigramAveraging, WordAveraging
    from psp_st.modules.combine import CombinedEncoder
    from psp_st.modules.recurrent import GRAN, LSTMAveraging

    def make(kind: str) -> torch.nn.Module:
        torch.manual_seed(0)
        dim = 8
        if kind == "word":
            return WordAveraging(word_tokenizer, embedding_dim=dim)
        if kind == "trigram":
            return TrigramAveraging(trigram_tokenizer, embedding_dim=dim)
        if kind == "word_morfessor":
            return WordAveraging(request.getfixturevalue("morfessor_tokenizer"), embedding_dim=dim)
        if kind == "lstm":
            return LSTMAveraging(word_tokenizer, embedding_dim=dim)
        if kind == "blstm_sum":
            return LSTMAveraging(word_tokenizer, embedding_dim=dim, bidirectional=True, combine="sum")
        if kind == "blstm_concat_max":
            return LSTMAveraging(
                word_tokenizer, embedding_dim=dim, hidden_size=6, bidirectional=True, combine="concat", pooling="max"
            )
        if kind == "gran_lstm":
            return GRAN(word_tokenizer, embedding_dim=dim, gate="lstm")
        if kind == "gran_gru":
            return GRAN(word_tokenizer, embedding_dim=dim, gate="gru", hidden_size=6)
        if kind == "gran_gru_sentencepiece":
            return GRAN(sp_tokenizer, embedding_dim=dim, gate="gru")
        if kind == "lstm_morfessor":
            return LSTMAveraging(request.getfixturevalue("morfessor_tokenizer"), embedding_dim=dim)
        if kind == "word_trigram_concat":
            return CombinedEncoder(
                [
                    WordAveraging(word_tokenizer, embedding_dim=dim),
                    TrigramAveraging(trigram_tokenizer, embedding_dim=dim),
                ],
                mode="concat",
            )
        if kind == "word_gran_sum":
            return CombinedEncoder(
                [WordAveraging(word_tokenizer, embedding_dim=dim), GRAN(sp_tokenizer, embedding_dim=dim, gate="gru")],
                mode="sum",
            )
        raise ValueError(kind)

    return make


@pytest.fixture(params=ENCODER_KINDS)
def encoder_kind(request) -> str:
    return request.param
