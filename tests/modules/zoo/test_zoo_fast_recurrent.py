"""The fast recurrent paths (packed tokens, the fused GRU with its own backward) equal the papers' equations.

Each reference below runs one sentence at a time, token by token, under plain autograd: no packing, no batch,
no hand-written gradient. Outputs and every parameter gradient must agree to 1e-5 on random batches of ragged
lengths.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from psp_st.modules.fused_recurrence import lstm_layer, sjoblom_gru
from psp_st.modules.packing import PackedTokens
from psp_st.modules.recurrent import GRAN, LSTMAveraging

TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def ragged_batch(vocab_size: int, pad_id: int, lengths: list[int], seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    ids = torch.full((len(lengths), max(lengths)), pad_id)
    for row, length in enumerate(lengths):
        ids[row, :length] = torch.randint(0, vocab_size, (length,), generator=generator)
    return ids


def reference_gran_gru(module: GRAN, ids: torch.Tensor) -> torch.Tensor:
    """Sjöblom et al. (2018) section 3.1, one sentence and one token at a time."""
    hidden = module.hidden_size
    w_r, w_z, w_h = module.gru_input.weight.split(hidden)
    u_r, u_z = module.gru_recurrent_rz.weight.split(hidden)
    u_h, b_h = module.gru_recurrent_h.weight, module.gru_bias
    act = F.leaky_relu if module.activation == "leaky_relu" else torch.tanh
    sentences = []
    for row in ids:
        h = torch.zeros(hidden)
        gated = []
        for token in row[row != module.pad_id]:
            x = module.embedding.weight[token]
            r = torch.sigmoid(w_r @ x + u_r @ h)
            z = torch.sigmoid(w_z @ x + u_z @ h)
            h = (1 - z) * h + z * act(w_h @ x + u_h @ (r * h) + b_h)
            gated.append(x * torch.sigmoid(module.gate_input(x) + module.gate_hidden(h)))
        sentences.append(torch.stack(gated).mean(0))
    return torch.stack(sentences)


def reference_lstm_states(lstm: torch.nn.LSTM, inputs: torch.Tensor) -> torch.Tensor:
    """One unpadded sentence ``(length, dim)`` through ``lstm`` on its own."""
    return lstm(inputs.unsqueeze(0))[0][0]


def reference_gran_lstm(module: GRAN, ids: torch.Tensor) -> torch.Tensor:
    """Wieting et al. (2017) section 4.1: LSTM states gate each word vector, then the mean."""
    out = []
    for row in ids:
        x = module.embedding(row[row != module.pad_id])
        h = reference_lstm_states(module.lstm, x)
        out.append((x * torch.sigmoid(module.gate_input(x) + module.gate_hidden(h))).mean(0))
    return torch.stack(out)


def reference_lstm_average(module: LSTMAveraging, ids: torch.Tensor) -> torch.Tensor:
    """ParaNMT LSTM/BLSTM: mean (or max) of the hidden states; the BLSTM sums its two directions' pools."""
    out = []
    for row in ids:
        states = reference_lstm_states(module.lstm, module.embedding(row[row != module.pad_id]))
        states = states.mean(0) if module.pooling == "mean" else states.amax(0)
        if module.bidirectional and module.combine == "sum":
            states = states[: module.hidden_size] + states[module.hidden_size :]
        out.append(states)
    return torch.stack(out)


def assert_same_function(module: torch.nn.Module, reference, ids: torch.Tensor) -> None:
    """Same sentence vectors and same gradients of a random linear loss for every parameter."""
    mask = ids != module.pad_id
    weights = torch.randn(ids.shape[0], module.get_sentence_embedding_dimension())
    fast = module.pool(ids, mask)
    (fast * weights).sum().backward()
    fast_grads = {name: p.grad.to_dense().clone() for name, p in module.named_parameters()}
    module.zero_grad(set_to_none=True)
    slow = reference(module, ids)
    (slow * weights).sum().backward()
    torch.testing.assert_close(fast, slow, **TOLERANCE)
    for name, p in module.named_parameters():
        torch.testing.assert_close(fast_grads[name], p.grad.to_dense(), **TOLERANCE, msg=name)


LENGTHS = [7, 1, 12, 3, 12, 5, 2, 9]


@pytest.mark.parametrize("activation", ["leaky_relu", "tanh"])
def test_gran_gru_fast_path_equals_the_papers_equations(word_tokenizer, activation):
    torch.manual_seed(0)
    module = GRAN(word_tokenizer, embedding_dim=10, hidden_size=7, gate="gru", activation=activation)
    torch.nn.init.normal_(module.embedding.weight[: module.vocab_size])  # larger inputs than the 0.01 init
    torch.nn.init.normal_(module.gru_bias)
    ids = ragged_batch(module.vocab_size, module.pad_id, LENGTHS)
    assert_same_function(module.train(), reference_gran_gru, ids)


def test_gran_lstm_fast_path_equals_the_papers_equations(word_tokenizer):
    torch.manual_seed(1)
    module = GRAN(word_tokenizer, embedding_dim=9, hidden_size=5, gate="lstm").train()
    assert_same_function(module, reference_gran_lstm, ragged_batch(module.vocab_size, module.pad_id, LENGTHS, 1))


@pytest.mark.parametrize(("bidirectional", "pooling"), [(False, "mean"), (True, "mean"), (True, "max")])
def test_lstm_average_fast_path_equals_the_papers_equations(word_tokenizer, bidirectional, pooling):
    torch.manual_seed(2)
    module = LSTMAveraging(
        word_tokenizer, embedding_dim=6, hidden_size=5, bidirectional=bidirectional, pooling=pooling
    ).train()
    assert_same_function(module, reference_lstm_average, ragged_batch(module.vocab_size, module.pad_id, LENGTHS, 2))


@pytest.mark.parametrize("activation", ["leaky_relu", "tanh"])
def test_sjoblom_gru_gradients_with_dropout_mask_match_finite_differences(activation):
    torch.manual_seed(3)
    hidden, sizes = 3, [4, 4, 2, 1]
    projected = torch.randn(sum(sizes), 3 * hidden, dtype=torch.float64, requires_grad=True)
    u_rz = torch.randn(2 * hidden, hidden, dtype=torch.float64, requires_grad=True)
    u_h = torch.randn(hidden, hidden, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(hidden, dtype=torch.float64, requires_grad=True)
    keep = torch.bernoulli(torch.full((4, hidden), 0.6, dtype=torch.float64)) / 0.6

    def run(p, a, b, c):
        return sjoblom_gru(p, a, b, c, sizes, keep, activation)

    assert torch.autograd.gradcheck(run, (projected, u_rz, u_h, bias))


def test_lstm_layer_gradients_match_finite_differences():
    torch.manual_seed(6)
    dim, hidden, sizes = 2, 3, [3, 3, 1]
    inputs = torch.randn(sum(sizes), dim, dtype=torch.float64, requires_grad=True)
    weights = [
        torch.randn(shape, dtype=torch.float64, requires_grad=True)
        for shape in ((4 * hidden, dim), (4 * hidden, hidden), (4 * hidden,), (4 * hidden,))
    ]
    assert torch.autograd.gradcheck(lambda x, *w: lstm_layer(x, w, sizes), (inputs, *weights))


def test_sjoblom_gru_without_gradients_gives_the_same_states():
    torch.manual_seed(4)
    args = (torch.randn(6, 6), torch.randn(4, 2), torch.randn(2, 2), torch.randn(2))
    with torch.no_grad():
        plain = sjoblom_gru(*args, [3, 2, 1])
    traced = sjoblom_gru(*(a.requires_grad_() for a in args), [3, 2, 1])
    torch.testing.assert_close(plain, traced.detach(), rtol=0, atol=0)


def test_packed_tokens_mean_max_and_reversal_match_padded_tensors():
    torch.manual_seed(5)
    lengths = torch.tensor([3, 6, 1, 6, 0])
    mask = torch.arange(6).unsqueeze(0) < lengths.unsqueeze(1)
    values = torch.randn(5, 6, 4)
    packed = PackedTokens.from_mask(mask)
    data = packed.gather(values)
    assert packed.batch_sizes.tolist() == [4, 3, 3, 2, 2, 2]
    expected_mean = (values * mask[..., None]).sum(1) / lengths.clamp(min=1)[:, None]
    torch.testing.assert_close(packed.mean(data), expected_mean)
    for row, length in enumerate(lengths.tolist()):
        expected_max = values[row, :length].amax(0) if length else torch.zeros(4)
        torch.testing.assert_close(packed.max(data)[row], expected_max)
        reversed_row = data[packed.reversal()][packed.rows == row]
        torch.testing.assert_close(reversed_row, values[row, :length].flip(0))
