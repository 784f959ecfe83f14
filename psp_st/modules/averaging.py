"""WORD and TRIGRAM averaging: the bag-of-tokens encoders of Wieting & Gimpel, "ParaNMT-50M" (section 4).
:class:`WordAveraging` over Morfessor morphs is the WA model of Sjöblom et al. (2018)."""

from __future__ import annotations

from typing import ClassVar

import torch

from psp_st.modules.sparse_mean import bag_mean
from psp_st.modules.token_encoder import TokenEncoder


class TokenAveraging(TokenEncoder):
    """Masked mean of token vectors, over any tokenizer but sentencepiece (whose average is P-SP:
    :class:`~psp_st.modules.psp.PSPEmbedding`). Arguments: :class:`~psp_st.modules.token_encoder.TokenEncoder`'s."""

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
    """WORD: the mean of the sentence's word vectors (:class:`~psp_st.tokenization.words.WordTokenizer`);
    ``from_texts(..., tokenizer="morfessor")`` averages Morfessor morphs instead."""


class TrigramAveraging(TokenAveraging):
    """TRIGRAM: the mean of the vectors of the character trigrams of ``" " + text + " "``
    (:class:`~psp_st.tokenization.words.TrigramTokenizer`)."""

    default_tokenizer: ClassVar[str] = "trigrams"
