"""LSTM/BLSTM averaging and GRAN follow their papers' equations; scrambling; recurrent length limits."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from psp_st.modules.recurrent import GRAN, LSTMAveraging
from psp_st.modules.scramble import scramble_ids


def ids_of(module, text: str) -> torch.Tensor:
    return module.preprocess([text])["input_ids"]


def test_gran_gru_follows_the_written_equations(word_tokenizer):
    torch.manual_seed(1)
    module = GRAN(word_tokenizer, embedding_dim=5, hidden_size=4, gate="gru").eval()
    ids = ids_of(module, "a dog runs on the beach")
    x = module.embedding.weight[ids[0]].detach()
    w_r, w_z, w_h = module.gru_input.weight.detach().split(4)
    u_r, u_z = module.gru_recurrent_rz.weight.detach().split(4)
    u_h, b_h = module.gru_recurrent_h.weight.detach(), module.gru_bias.detach()
    h = torch.zeros(4)
    gated = []
    for x_t in x:
        r = torch.sigmoid(w_r @ x_t + u_r @ h)
        z = torch.sigmoid(w_z @ x_t + u_z @ h)
        h = (1 - z) * h + z * F.leaky_relu(w_h @ x_t + u_h @ (r * h) + b_h)
        g = torch.sigmoid(module.gate_input(x_t) + module.gate_hidden(h)).detach()
        gated.append(x_t * g)
    expected = torch.stack(gated).mean(0)
    torch.testing.assert_close(
        module(module.preprocess(["a dog runs on the beach"]))["sentence_embedding"][0].detach(),
        expected,
        rtol=1e-5,
        atol=1e-6,
    )


def test_gran_gru_init_follows_the_paper(word_tokenizer):
    module = GRAN(word_tokenizer, embedding_dim=16, gate="gru")
    table = module.embedding.weight[: module.vocab_size]
    assert table.abs().max() <= 0.01 and table.std() > 0.004  # uniform in [-0.01, 0.01]
    bound = (6 / (16 + 48)) ** 0.5  # Xavier uniform of the (48 x 16) input matrix
    assert module.gru_input.weight.abs().max() <= bound


def test_gran_lstm_gates_lstm_states(word_tokenizer):
    torch.manual_seed(2)
    module = GRAN(word_tokenizer, embedding_dim=6, gate="lstm").eval()
    ids = ids_of(module, "two dogs play")
    x = module.embedding(ids)
    h, _ = module.lstm(x)
    expected = (x * torch.sigmoid(module.gate_input(x) + module.gate_hidden(h))).mean(1)
    torch.testing.assert_close(module(module.preprocess(["two dogs play"]))["sentence_embedding"], expected)


def test_blstm_sum_adds_the_two_direction_averages(word_tokenizer):
    torch.manual_seed(3)
    summed = LSTMAveraging(word_tokenizer, embedding_dim=6, bidirectional=True, combine="sum").eval()
    ids = ids_of(summed, "a man rides a bike")
    states, _ = summed.lstm(summed.embedding(ids))
    forward, backward = states.mean(1).split(6, dim=-1)
    torch.testing.assert_close(
        summed(summed.preprocess(["a man rides a bike"]))["sentence_embedding"], forward + backward
    )
    concat = LSTMAveraging(word_tokenizer, embedding_dim=6, bidirectional=True, combine="concat")
    concat.load_state_dict(summed.state_dict())
    out = concat.eval()(concat.preprocess(["a man rides a bike"]))["sentence_embedding"]
    torch.testing.assert_close(out, states.mean(1))
    assert concat.get_sentence_embedding_dimension() == 12


def test_lstm_max_pooling(word_tokenizer):
    module = LSTMAveraging(word_tokenizer, embedding_dim=6, pooling="max").eval()
    ids = ids_of(module, "a cat sleeps")
    states, _ = module.lstm(module.embedding(ids))
    torch.testing.assert_close(module(module.preprocess(["a cat sleeps"]))["sentence_embedding"], states.max(1).values)


def test_scramble_permutes_tokens_and_keeps_padding():
    ids = torch.tensor([[1, 2, 3, 4, 9, 9], [5, 6, 9, 9, 9, 9]])
    mask = ids != 9
    out = scramble_ids(ids, mask, probability=0.999)
    assert torch.equal(out[:, 4:], ids[:, 4:]) and torch.equal(out[1, 2:], ids[1, 2:])
    assert sorted(out[0, :4].tolist()) == [1, 2, 3, 4]
    assert torch.equal(scramble_ids(ids, mask, probability=0.0), ids)


def test_scramble_only_while_training(word_tokenizer):
    torch.manual_seed(0)
    module = LSTMAveraging(word_tokenizer, embedding_dim=6, scramble=0.99)
    features = module.preprocess(["a man is riding a horse on the beach"] * 8)
    module.train()
    trained = module(dict(features))["sentence_embedding"]
    distinct = {tuple(row.round(decimals=5).tolist()) for row in trained.detach()}
    assert len(distinct) > 1  # different token orders give different LSTM averages
    module.eval()
    evaluated = module(dict(features))["sentence_embedding"]
    torch.testing.assert_close(evaluated, evaluated[:1].expand_as(evaluated))


def test_variational_dropout_changes_training_output_only(word_tokenizer):
    torch.manual_seed(0)
    module = GRAN(word_tokenizer, embedding_dim=6, gate="gru", dropout=0.5)
    features = module.preprocess(["a dog runs"] * 4)
    train_out = module.train()(dict(features))["sentence_embedding"]
    eval_out = module.eval()(dict(features))["sentence_embedding"]
    assert not torch.allclose(train_out, eval_out)
    torch.testing.assert_close(eval_out, eval_out[:1].expand_as(eval_out))


def test_recurrent_max_seq_length_default_and_limit(word_tokenizer):
    assert GRAN(word_tokenizer, embedding_dim=4).max_seq_length == 128
    for bad in (None, 0, 5000):
        with pytest.raises(ValueError, match="max_seq_length"):
            LSTMAveraging(word_tokenizer, embedding_dim=4, max_seq_length=bad)


@pytest.mark.parametrize("bad", [None, 0, 5000, 2.5, True])
def test_setting_max_seq_length_is_checked_like_the_constructor(word_tokenizer, bad):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(modules=[LSTMAveraging(word_tokenizer, embedding_dim=4)], device="cpu")
    with pytest.raises(ValueError, match="max_seq_length"):  # ST's documented setter: model.max_seq_length = N
        model.max_seq_length = bad
    model.max_seq_length = 7
    assert model[0].max_seq_length == 7


@pytest.mark.parametrize(
    ("option", "value"), [("gate", "rnn"), ("activation", "relu"), ("dropout", 1.0), ("scramble", -0.1)]
)
def test_invalid_gran_options(word_tokenizer, option, value):
    with pytest.raises(ValueError, match=option):
        GRAN(word_tokenizer, embedding_dim=4, **{option: value})


@pytest.mark.parametrize(("option", "value"), [("pooling", "min"), ("combine", "avg")])
def test_invalid_lstm_options(word_tokenizer, option, value):
    with pytest.raises(ValueError, match=option):
        LSTMAveraging(word_tokenizer, embedding_dim=4, **{option: value})


def test_from_texts_accepts_every_tokenizer_kind(zoo_texts):
    pytest.importorskip("morfessor")
    for kind in ("words", "trigrams", "sentencepiece", "morfessor"):
        options = {"tokenizer_options": {"max_words": 100}} if kind == "morfessor" else {}
        module = GRAN.from_texts(zoo_texts[:300], embedding_dim=4, tokenizer=kind, max_size=300, gate="gru", **options)
        assert module.tokenizer_kind == kind
        assert module(module.preprocess(["a dog"]))["sentence_embedding"].shape == (1, 4)


def test_from_texts_is_seeded_and_leaves_global_rng_alone(zoo_texts):
    state = torch.random.get_rng_state()
    a = LSTMAveraging.from_texts(zoo_texts[:200], embedding_dim=4, seed=5)
    b = LSTMAveraging.from_texts(zoo_texts[:200], embedding_dim=4, seed=5)
    assert torch.equal(torch.random.get_rng_state(), state)
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(p, q), name


@pytest.mark.parametrize("cls", [LSTMAveraging, GRAN])
@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("embedding_dim", 0, ValueError),
        ("embedding_dim", 2.5, TypeError),
        ("hidden_size", 0, ValueError),
        ("hidden_size", -1, ValueError),
    ],
)
def test_sizes_must_be_positive_ints_naming_the_argument(word_tokenizer, cls, option, value, error):
    with pytest.raises(error, match=option):
        cls(word_tokenizer, **{"embedding_dim": 4, option: value})


@pytest.mark.parametrize(("option", "value"), [("gtae", "gru"), ("max_seq_length", None), ("dropout", 1.5)])
def test_from_texts_refuses_a_bad_module_option_before_the_tokenizer_trains(zoo_texts, monkeypatch, option, value):
    import psp_st.modules.token_encoder as token_encoder

    def never(*args, **kwargs):  # Z8-4: a Morfessor or sentencepiece training ran first, then the option failed
        raise AssertionError("the tokenizer trained before the options were checked")

    monkeypatch.setattr(token_encoder, "train_tokenizer_of_kind", never)
    with pytest.raises((TypeError, ValueError), match=option):
        GRAN.from_texts(zoo_texts[:50], embedding_dim=4, tokenizer="morfessor", **{option: value})
