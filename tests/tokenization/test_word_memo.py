"""The exact word memo: the same ids as sentencepiece on every text, near-ties included."""

from __future__ import annotations

import copy
import pickle
import threading

import numpy as np
import pytest

pytest.importorskip("numba")

#: Texts exercising every route: plain ASCII, case, unknown characters, non-ASCII (normalized), tabs, runs of
#: spaces, empty and blank texts, a literal ▁, control characters, NFKC-changed characters (capitals too).
TEXTS = [
    "A man plays a guitar.",
    "TWO DOGS run on the BEACH!!",
    "a dog ☃ runs",
    "ca☃t on a mat",
    "the Ω ΣΑΣ end ☃",
    "Two  children\tplay\u00a0soccer outside.",
    "日本 people walk",
    "",
    "   ",
    "a \u2581 b \u2581\u2581c",
    "bell\x07 rings",
    "ﬁne ｆｕｌｌ width café naïve",
    "𝐓𝐇𝐄 𝐃𝐎𝐆 at the ℍ𝕆𝕋𝔼𝕃 🄰",
    "x" * 3000 + " a woman rides a horse",
]


def sentencepiece_ids(tokenizer, texts, max_length=None):
    """The reference: sentencepiece on every text (``memo=False``), as a list of id lists."""
    flat, lengths = tokenizer.encode_flat(texts, max_length=max_length, drop_unknown=True, memo=False)
    return [row.tolist() for row in np.split(flat, np.cumsum(lengths)[:-1])]


def memo_ids(memo, texts, max_length=None):
    flat, lengths = memo.encode_flat(texts, max_length=max_length)
    return [row.tolist() for row in np.split(flat, np.cumsum(lengths)[:-1])]


def handmade_tokenizer(pieces):
    """A unigram sentencepiece model with exactly ``pieces`` (``(piece, score)``), identity normalization."""
    from sentencepiece import sentencepiece_model_pb2

    from psp_st.tokenization import SentencePieceTokenizer

    proto = sentencepiece_model_pb2.ModelProto()
    proto.trainer_spec.model_type = sentencepiece_model_pb2.TrainerSpec.UNIGRAM
    proto.trainer_spec.unk_id = 0
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = True
    proto.normalizer_spec.escape_whitespaces = True
    for piece, score, kind in [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)] + [(p, s, 1) for p, s in pieces]:
        entry = proto.pieces.add()
        entry.piece, entry.score, entry.type = piece, score, kind
    return SentencePieceTokenizer(proto.SerializeToString(), lowercase=False)


@pytest.fixture
def memo(sp_tokenizer):
    from psp_st.tokenization.word_memo import WordMemo

    return WordMemo(sp_tokenizer)


def test_same_ids_as_sentencepiece_on_every_route(memo, sp_tokenizer):
    assert memo_ids(memo, TEXTS) == sentencepiece_ids(sp_tokenizer, TEXTS)


def test_same_ids_on_real_captions_cold_and_warm(memo, sp_tokenizer, caption_sentences):
    texts = caption_sentences[:3000]
    expected = sentencepiece_ids(sp_tokenizer, texts)
    assert memo_ids(memo, texts) == expected  # cold: words added as they come
    assert memo_ids(memo, texts) == expected  # warm: every word from the memo


def test_max_length_keeps_the_first_known_pieces(memo, sp_tokenizer):
    assert memo_ids(memo, TEXTS, max_length=3) == sentencepiece_ids(sp_tokenizer, TEXTS, max_length=3)


def test_near_tie_that_flips_with_the_prefix_is_left_to_sentencepiece():
    from psp_st.tokenization.word_memo import WordMemo

    # ▁a + b beats ▁ab by one float32 step alone; after a long prefix the running score's rounding flips it
    whole = np.float32(-3.0)
    first = np.float32(-1.3)
    second = np.float32(float(np.nextafter(whole, np.float32(0))) - float(first))
    tokenizer = handmade_tokenizer(
        [
            ("\u2581", -3.0),
            ("x", -5.0),
            ("a", -6.0),
            ("\u2581a", float(first)),
            ("b", float(second)),
            ("\u2581ab", -3.0),
        ]
    )
    texts = ["ab", "x" * 10 + " ab"]
    expected = sentencepiece_ids(tokenizer, texts)
    assert memo_ids(WordMemo(tokenizer, prefill=False), texts) == expected
    if expected[0] == expected[1][-len(expected[0]) :]:  # sentencepiece 0.2.0 scores this tie without the flip
        pytest.skip("this sentencepiece does not flip the near tie: the case a plain word -> ids memo gets wrong")


def test_memo_is_emptied_at_max_words_and_stays_exact(sp_tokenizer, caption_sentences):
    from psp_st.tokenization.word_memo import WordMemo

    memo = WordMemo(sp_tokenizer, max_words=50, prefill=False)
    texts = caption_sentences[:500]
    assert memo_ids(memo, texts) == sentencepiece_ids(sp_tokenizer, texts)
    assert len(memo) <= 50


def test_threads_sharing_one_memo_get_the_same_ids(memo, sp_tokenizer, caption_sentences):
    chunks = [caption_sentences[i * 700 : (i + 1) * 700] for i in range(6)]
    results: dict[int, list[list[int]]] = {}

    def work(index: int) -> None:
        results[index] = memo_ids(memo, chunks[index])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(chunks))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[i] for i in range(len(chunks))] == [sentencepiece_ids(sp_tokenizer, c) for c in chunks]


def test_encode_flat_uses_the_memo_and_the_tokenizer_still_pickles(sp_tokenizer, monkeypatch):
    from psp_st.tokenization import sentencepiece

    monkeypatch.setattr(sentencepiece, "MEMO_AFTER_TEXTS", 1)
    sp_tokenizer.encode_flat(["a dog runs"], drop_unknown=True)
    assert "_word_memo" in sp_tokenizer.__dict__ and sp_tokenizer.word_memo() is not None
    for clone in (pickle.loads(pickle.dumps(sp_tokenizer)), copy.deepcopy(sp_tokenizer)):
        assert (
            clone.encode_flat(TEXTS, drop_unknown=True)[0].tolist()
            == sp_tokenizer.encode_flat(TEXTS, drop_unknown=True, memo=False)[0].tolist()
        )


def test_small_jobs_skip_the_memo_until_enough_texts(sp_tokenizer, monkeypatch):
    from psp_st.tokenization import sentencepiece

    monkeypatch.setattr(sentencepiece, "MEMO_AFTER_TEXTS", len(TEXTS) + 1)
    tokenizer = copy.deepcopy(sp_tokenizer)  # no memo, no count
    first = tokenizer.encode_flat(TEXTS, drop_unknown=True)
    assert "_word_memo" not in tokenizer.__dict__  # a small job: sentencepiece, no memo built
    second = tokenizer.encode_flat(TEXTS[:1], drop_unknown=True)
    assert tokenizer.__dict__["_word_memo"] is not None  # the count passed the threshold: built, same ids
    assert first[0].tolist() == sp_tokenizer.encode_flat(TEXTS, drop_unknown=True, memo=False)[0].tolist()
    assert second[0].tolist() == first[0][: first[1][0]].tolist()


def test_model_with_user_defined_pieces_gets_no_memo():
    from sentencepiece import sentencepiece_model_pb2

    from psp_st.tokenization import SentencePieceTokenizer
    from psp_st.tokenization.word_memo import unsupported_reason

    tokenizer = handmade_tokenizer([("\u2581", -3.0), ("a", -2.0)])
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(tokenizer.model_proto)
    proto.pieces[-1].type = 4  # USER_DEFINED
    user_defined = SentencePieceTokenizer(proto.SerializeToString(), lowercase=False)
    assert unsupported_reason(user_defined) == "user-defined pieces"
    assert user_defined.word_memo() is None


@pytest.mark.parametrize("enabled", [True, False])
def test_adding_words_leaves_the_collector_as_it_was(sp_tokenizer, enabled):
    import gc

    from psp_st.tokenization.word_memo import WordMemo

    memo = WordMemo(sp_tokenizer, prefill=False)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        memo.encode_flat(["zebras graze quietly", "a new word: quux"])
        assert gc.isenabled() is enabled and len(memo) > 0
    finally:
        gc.enable() if was else gc.disable()


def test_growing_from_a_tiny_memo_rehashes_every_word(sp_tokenizer, caption_sentences):
    """Table, records and pools all grow many times (keys recomputed from the stored words): still exact."""
    from psp_st.tokenization.word_memo import WordMemo

    memo = WordMemo(sp_tokenizer, prefill=False)
    memo._clear(words=2, pool_bytes=4, ids=4)
    texts = caption_sentences[:2000]
    expected = sentencepiece_ids(sp_tokenizer, texts)
    assert [ids for i in range(0, 2000, 50) for ids in memo_ids(memo, texts[i : i + 50])] == expected  # cold
    words = len(memo)
    assert words > 100 and len(memo._table) >= 2 * words
    assert memo_ids(memo, texts) == expected
    assert len(memo) == words  # the warm pass found every word (a lost key would be added again)
