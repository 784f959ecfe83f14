"""Recurrent encoders: LSTM/BLSTM averaging (ParaNMT) and the gated recurrent averaging network (GRAN), over the real
tokens only (:class:`~psp_st.modules.packing.PackedTokens`, :mod:`psp_st.modules.fused_recurrence`)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import nn

from psp_st.arguments import check_int, check_probability
from psp_st.modules.fused_recurrence import lstm_layer, sjoblom_gru
from psp_st.modules.packing import PackedTokens
from psp_st.modules.token_encoder import TokenEncoder

RECURRENT_MAX_SEQ_LENGTH = 128
RECURRENT_MAX_SEQ_LENGTH_LIMIT = 1024


def lstm_weights(lstm: nn.LSTM, suffix: str = "") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(W_ih, W_hh, b_ih, b_hh)`` of the first layer of ``lstm`` (``suffix="_reverse"``: its backward direction)."""
    names = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
    return tuple(getattr(lstm, name + suffix) for name in names)


def variational_dropout_mask(shape: tuple[int, int], p: float, like: torch.Tensor) -> torch.Tensor:
    """One dropout mask per sequence (``(batch, dim)``), reused at every time step (Gal & Ghahramani 2016)."""
    return torch.bernoulli(torch.full(shape, 1.0 - p, device=like.device, dtype=like.dtype)) / (1.0 - p)


def run_lstm(lstm: nn.LSTM, inputs: torch.Tensor, packed: PackedTokens) -> torch.Tensor:
    """Packed states ``(tokens, directions * hidden)`` of the one-layer ``lstm``; the backward direction's state at
    packed position ``p`` is the mirrored token's (fine for the encoders' mean and max pooling)."""
    sizes = packed.batch_sizes.tolist()
    directions = [lstm_layer(inputs, lstm_weights(lstm, ""), sizes)]
    if lstm.bidirectional:
        directions.append(lstm_layer(inputs[packed.reversal()], lstm_weights(lstm, "_reverse"), sizes))
    return torch.cat(directions, dim=1) if len(directions) > 1 else directions[0]


class _RecurrentEncoder(TokenEncoder):
    default_max_seq_length: ClassVar[int | None] = RECURRENT_MAX_SEQ_LENGTH
    max_seq_length_limit: ClassVar[int | None] = RECURRENT_MAX_SEQ_LENGTH_LIMIT

    def pool(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        packed = PackedTokens.from_mask(mask)
        if packed.rows.numel() == 0:
            return self.embedding.weight.new_zeros(input_ids.shape[0], self.get_sentence_embedding_dimension())
        return self.pool_packed(self.embedding(packed.gather(input_ids)), packed, len(input_ids))

    def pool_packed(self, tokens: torch.Tensor, packed: PackedTokens, rows: int) -> torch.Tensor:
        """Sentence vectors ``(rows, dim)`` from the packed token vectors ``(tokens, dim)``."""
        raise NotImplementedError


class LSTMAveraging(_RecurrentEncoder):
    """LSTM / BLSTM averaging: mean (or max) of the LSTM hidden states (Wieting & Gimpel, "ParaNMT-50M", section 4).

    Args:
        hidden_size: LSTM state size per direction (default: ``embedding_dim``).
        pooling: ``"mean"`` (the paper) or ``"max"`` over time.
        combine: for a BLSTM, ``"sum"`` adds the two directions' pooled states (the paper's BLSTM) and
            ``"concat"`` concatenates them (output ``2 * hidden_size``).
        kwargs: ``TokenEncoder``'s (``max_seq_length``: default 128, at most 1024).
    """

    config_keys: list[str] = TokenEncoder.config_keys + ["hidden_size", "bidirectional", "pooling", "combine"]

    def __init__(
        self,
        tokenizer: Any,
        embedding_dim: int = 300,
        hidden_size: int | None = None,
        bidirectional: bool = False,
        pooling: str = "mean",
        combine: str = "sum",
        **kwargs: Any,
    ) -> None:
        if pooling not in ("mean", "max"):
            raise ValueError(f"pooling must be 'mean' or 'max', got {pooling!r}")
        if combine not in ("sum", "concat"):
            raise ValueError(f"combine must be 'sum' or 'concat', got {combine!r}")
        if not isinstance(bidirectional, bool):
            raise TypeError(f"bidirectional must be true or false, got {bidirectional!r}")
        super().__init__(tokenizer, embedding_dim=embedding_dim, **kwargs)
        self.hidden_size = embedding_dim if hidden_size is None else check_int("hidden_size", hidden_size)
        self.bidirectional = bidirectional
        self.pooling = pooling
        self.combine = combine
        self.lstm = nn.LSTM(embedding_dim, self.hidden_size, batch_first=True, bidirectional=bidirectional)

    def get_sentence_embedding_dimension(self) -> int:
        return 2 * self.hidden_size if self.bidirectional and self.combine == "concat" else self.hidden_size

    def pool_packed(self, tokens: torch.Tensor, packed: PackedTokens, rows: int) -> torch.Tensor:
        states = run_lstm(self.lstm, tokens, packed)
        pooled = packed.mean(states) if self.pooling == "mean" else packed.max(states)
        if self.bidirectional and self.combine == "sum":
            forward, backward = pooled.split(self.hidden_size, dim=-1)
            return forward + backward
        return pooled


class GRAN(_RecurrentEncoder):
    """Gated recurrent averaging network: ``a_t = x_t * sigmoid(W_x x_t + W_h h_t + b)``, ``g(s) = mean_t a_t``.

    ``gate="lstm"``: ``h_t`` from an LSTM (Wieting et al. 2017, section 4.1). ``gate="gru"``: from the GRU of
    Sjöblom et al. 2018 (section 3.1) as written there (:func:`~psp_st.modules.fused_recurrence.sjoblom_gru`),
    with Xavier-initialized GRU weights and token vectors uniform in [-0.01, 0.01].

    Args:
        hidden_size: recurrent state size (default: ``embedding_dim``).
        dropout: variational dropout while training: one mask per sequence on the recurrent inputs (and, for the
            GRU, on ``h_{t-1}`` in the recurrent products).
        activation: ``"leaky_relu"`` (the paper's ``f``) or ``"tanh"``; GRU only.
        kwargs: as for :class:`LSTMAveraging`.
    """

    config_keys: list[str] = TokenEncoder.config_keys + ["hidden_size", "gate", "dropout", "activation"]

    def __init__(
        self,
        tokenizer: Any,
        embedding_dim: int = 300,
        hidden_size: int | None = None,
        gate: str = "lstm",
        dropout: float = 0.0,
        activation: str = "leaky_relu",
        **kwargs: Any,
    ) -> None:
        if gate not in ("lstm", "gru"):
            raise ValueError(f"gate must be 'lstm' or 'gru', got {gate!r}")
        if activation not in ("leaky_relu", "tanh"):
            raise ValueError(f"activation must be 'leaky_relu' or 'tanh', got {activation!r}")
        dropout = check_probability("dropout", dropout)
        self.gate = gate  # read by init_embeddings during super().__init__
        super().__init__(tokenizer, embedding_dim=embedding_dim, **kwargs)
        self.hidden_size = embedding_dim if hidden_size is None else check_int("hidden_size", hidden_size)
        self.dropout = dropout
        self.activation = activation
        hidden = self.hidden_size
        if gate == "lstm":
            self.lstm = nn.LSTM(embedding_dim, hidden, batch_first=True)
        else:
            self.gru_input = nn.Linear(embedding_dim, 3 * hidden, bias=False)  # [W_r; W_z; W_h]
            self.gru_recurrent_rz = nn.Linear(hidden, 2 * hidden, bias=False)  # [U_r; U_z]
            self.gru_recurrent_h = nn.Linear(hidden, hidden, bias=False)  # U_h
            self.gru_bias = nn.Parameter(torch.zeros(hidden))  # b_h
            for layer in (self.gru_input, self.gru_recurrent_rz, self.gru_recurrent_h):
                nn.init.xavier_uniform_(layer.weight)
        self.gate_input = nn.Linear(embedding_dim, embedding_dim)  # W_x, b
        self.gate_hidden = nn.Linear(hidden, embedding_dim, bias=False)  # W_h

    def init_embeddings(self, weight: torch.Tensor) -> None:
        if self.gate == "gru":
            nn.init.uniform_(weight, -0.01, 0.01)
        else:
            super().init_embeddings(weight)

    def pool_packed(self, tokens: torch.Tensor, packed: PackedTokens, rows: int) -> torch.Tensor:
        inputs = tokens
        dropping = self.training and self.dropout > 0
        if dropping:
            inputs = tokens * variational_dropout_mask((rows, self.embedding_dim), self.dropout, tokens)[packed.rows]
        if self.gate == "lstm":
            states = run_lstm(self.lstm, inputs, packed)
        else:
            keep = None
            if dropping:
                keep = variational_dropout_mask((rows, self.hidden_size), self.dropout, inputs)[packed.order]
            weights = (self.gru_recurrent_rz.weight, self.gru_recurrent_h.weight, self.gru_bias)
            states = sjoblom_gru(self.gru_input(inputs), *weights, packed.batch_sizes.tolist(), keep, self.activation)
        gated = tokens * torch.sigmoid(self.gate_input(tokens) + self.gate_hidden(states))
        return packed.mean(gated)
