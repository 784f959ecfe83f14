"""WORD and TRIGRAM averaging: the bag-of-tokens encoders of Wieting & Gimpel, "ParaNMT-50M" (section 4).

``g(s) = mean_t x_t`` over the token vectors of the sentence: words for WORD, character trigrams of
``" " + s + " "`` for TRIGRAM, computed as P-SP's (:func:`~psp_st.modules.sparse_mean.bag_mean`). Any tokenizer
but sentencepiece works: :class:`WordAveraging` over Morfessor morphs is the WA model of Sjöblom et al. (2018).
"""

from __future__ import annotations

from typing import ClassVar

import torch

from psp_st.modules.sparse_mean import bag_mean
from psp_st.modules.token_encoder import TokenEncoder


class TokenAveraging(TokenEncoder):
    """Masked mean of token vectors, over any tokenizer (see :class:`~psp_st.modules.token_encoder.TokenEncoder`).

    Sentencepiece pieces are refused: their average is P-SP, whose one home is
    :class:`~psp_st.modules.psp.PSPEmbedding` (its initialisation, sparse training and static export).

    Args:
        tokenizer: WordTokenizer, TrigramTokenizer or MorfessorTokenizer.
        embedding_dim: vector size (ParaNMT uses 300).
        embedding_weights: initial token vectors ``(vocab_size, embedding_dim)``; random ``N(0, 1)`` otherwise.
        max_seq_length: keep at most this many tokens per text (default ``None``: all).
    """

    @classmethod
    def check_tokenizer_kind(cls, kind: str) -> None:
        if kind == "sentencepiece":
            raise ValueError(
                f"{cls.__name__} does not average sentencepiece pieces: that model is P-SP, use "
                "psp_st.modules.psp.PSPEmbedding (e.g. PSPEmbedding.from_texts(texts))"
            )

    def pool(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return bag_mean(input_ids, self.embedding, self.pad_id)


class WordAveraging(TokenAveraging):
    """WORD: the mean of the sentence's word vectors (ParaNMT section 4; "WA" of Sjöblom et al. 2018).

    Words are lower-cased; unknown words are retried without punctuation, then map to ``<unk>``
    (:class:`~psp_st.tokenization.words.WordTokenizer`). ``from_texts(..., tokenizer="morfessor")`` averages
    Morfessor morphs instead.

    Example::

        from sentence_transformers import SentenceTransformer
        from psp_st.modules.averaging import WordAveraging

        module = WordAveraging.from_texts(sentences, embedding_dim=300, min_count=2)
        model = SentenceTransformer(modules=[module])
    """

    default_tokenizer: ClassVar[str] = "words"


class TrigramAveraging(TokenAveraging):
    """TRIGRAM: the mean of the vectors of the character trigrams of ``" " + text + " "`` (ParaNMT section 4).

    Trigrams come from a vocabulary built on the training texts (see
    :class:`~psp_st.tokenization.words.TrigramTokenizer` for why not hashing); unknown ones map to ``<unk>``.

    Example::

        module = TrigramAveraging.from_texts(sentences, embedding_dim=300, min_count=2)
    """

    default_tokenizer: ClassVar[str] = "trigrams"
