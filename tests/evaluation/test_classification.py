from __future__ import annotations

import pytest

from psp_st.data import load_opusparcus
from psp_st.evaluation.classification import ParaphraseMLPEvaluator, ThresholdClassificationEvaluator, turku_binary
from psp_st.evaluation.loaders import opusparcus_binary, opusparcus_path


def test_threshold_accuracy_on_a_separable_toy_set(lookup_model):
    model = lookup_model({"a": [1, 0], "b": [1, 0.1], "c": [0, 1], "d": [1, -1]})
    data = {"sentence1": ["a", "a", "c"], "sentence2": ["b", "c", "d"], "label": [1, 0, 0]}
    metrics = ThresholdClassificationEvaluator(data, name="toy")(model)
    assert metrics["toy_cosine_accuracy"] == pytest.approx(1.0)
    assert metrics["toy_cosine_ap"] == pytest.approx(1.0)


def test_labels_other_than_zero_and_one_name_the_row():
    data = {"sentence1": ["a", "b"], "sentence2": ["b", "c"], "label": [1, 3]}
    with pytest.raises(ValueError, match="label at row 1 is 3"):
        ThresholdClassificationEvaluator(data, name="toy")


def test_a_single_class_set_is_refused():
    data = {"sentence1": ["a", "b"], "sentence2": ["b", "c"], "label": [1, 1]}
    with pytest.raises(ValueError, match="toy-set: all 2 labels are 1; accuracy, F1 and AP are meaningless"):
        ThresholdClassificationEvaluator(data, source="toy-set")


def test_suite_label_errors_name_the_set():
    from psp_st.evaluation.embeddings import EmbeddingCache
    from psp_st.evaluation.suite import _threshold

    data = {"sentence1": ["a", "b"], "sentence2": ["b", "c"], "label": [2, 0]}
    task = _threshold("msrpc-test", "Paraphrase classification", lambda: data)
    with pytest.raises(ValueError, match="^pair classification set msrpc-test: label at row 0 is 2"):
        task.build(EmbeddingCache(None))


def test_turku_binary_makes_labels_3_and_4_positive():
    from datasets import Dataset

    data = Dataset.from_dict({"sentence1": ["a"] * 4, "sentence2": ["b"] * 4, "label": [1, 2, 3, 4]})
    assert turku_binary(data)["label"] == [0, 0, 1, 1]


def test_opusparcus_fixture_in_the_release_layout(opusparcus_dir):
    dev = load_opusparcus(opusparcus_path(opusparcus_dir, "en", "dev"))
    assert dev[0]["sentence2"] == "you don't understand ." and dev[0]["score"] == 4.0
    binary = opusparcus_binary(dev)
    assert 2.5 not in binary["score"] and len(binary) == len(dev) - 2  # the two 2.5 pairs are undecided
    assert binary["label"] == [int(score >= 3.0) for score in binary["score"]]


def test_mlp_protocol_on_the_opusparcus_fixture(opusparcus_dir, psp_model):
    dev = opusparcus_binary(load_opusparcus(opusparcus_path(opusparcus_dir, "en", "dev")))
    test = opusparcus_binary(load_opusparcus(opusparcus_path(opusparcus_dir, "en", "test")))
    metrics = ParaphraseMLPEvaluator(dev, test, name="opusparcus-en")(psp_model)
    # test fixture: 11 decided pairs (one 2.5 dropped), 6 of them paraphrases (score >= 3)
    assert metrics["opusparcus-en_test_pairs"] == 11
    assert metrics["opusparcus-en_all_paraphrase_accuracy"] == pytest.approx(6 / 11)
    assert 0.0 <= metrics["opusparcus-en_accuracy"] <= 1.0


def _separable_mlp_sets():
    """Vectors, train and test sets of a problem an MLP separates: paraphrases share the first coordinate's sign."""
    vectors = {f"p{i}": [1.0, i / 10] for i in range(10)} | {f"n{i}": [-1.0, i / 10] for i in range(10)}
    train = {
        "sentence1": [f"p{i}" for i in range(8)] + [f"n{i}" for i in range(8)],
        "sentence2": [f"p{i + 1}" for i in range(8)] + [f"n{i + 1}" for i in range(8)],
        "label": [1] * 8 + [0] * 8,
    }
    test = {"sentence1": ["p8", "n8"], "sentence2": ["p9", "n9"], "label": [1, 0]}
    return vectors, train, test


def test_mlp_learns_a_separable_problem(lookup_model):
    vectors, train, test = _separable_mlp_sets()
    metrics = ParaphraseMLPEvaluator(train, test, max_iter=500)(lookup_model(vectors))
    assert metrics["accuracy"] == 1.0 and metrics["all_paraphrase_accuracy"] == 0.5


def test_mlp_refuses_train_data_too_small_for_early_stopping():
    """Ten train pairs leave no stratified 10% hold-out: a clear error, not sklearn's from inside ``fit``."""
    train = {"sentence1": [f"s{i}" for i in range(10)], "sentence2": [f"t{i}" for i in range(10)], "label": [0, 1] * 5}
    with pytest.raises(
        ValueError, match="MLP train data 'toy': 10 pairs, 5 in the smaller class; .* at least 11 pairs"
    ):
        ParaphraseMLPEvaluator(train, train, name="toy")


def test_mlp_without_a_shared_cache_embeds_each_text_once(lookup_model):
    vectors, train, test = _separable_mlp_sets()
    model = lookup_model(vectors)
    ParaphraseMLPEvaluator(train, test, max_iter=50)(model)
    assert sorted(text for call in model.calls for text in call) == sorted(vectors)


def test_turku_binary_refuses_a_label_outside_the_scheme():  # C4
    from datasets import Dataset

    data = Dataset.from_dict({"sentence1": ["a"] * 3, "sentence2": ["b"] * 3, "label": [4, 3, 9]})
    with pytest.raises(ValueError, match=r"column 'label', row 2: label 9 is not in the Turku scheme"):
        turku_binary(data)


def test_cosines_equal_up_to_float_noise_are_tied(lookup_model):  # Z2
    # (a, a): cosine 1.0; (b, b2): 1 - 1.25e-7 in float32, the noise of a reordered sum; no threshold splits them
    model = lookup_model({"a": [1, 0], "b": [0, 1], "b2": [5e-4, 1], "c": [1, 0.0], "d": [0, -1]})
    data = {"sentence1": ["a", "b", "c"], "sentence2": ["a", "b2", "d"], "label": [1, 0, 0]}
    metrics = ThresholdClassificationEvaluator(data, name="toy")(model)
    assert metrics["toy_cosine_accuracy"] == pytest.approx(2 / 3)
    assert metrics["toy_cosine_ap"] == pytest.approx(0.5)


def test_threshold_metrics_report_the_majority_rate(lookup_model):  # Z3
    model = lookup_model({"a": [1, 0], "b": [1, 0.1], "c": [0, 1]})
    data = {"sentence1": ["a", "a", "a", "c"], "sentence2": ["b", "b", "c", "b"], "label": [1, 1, 1, 0]}
    assert ThresholdClassificationEvaluator(data, name="toy")(model)["toy_cosine_majority"] == pytest.approx(0.75)


def test_majority_rate_of_a_set_of_mostly_non_paraphrases(lookup_model):
    """M6-23: the majority is the larger class, also when that is label 0."""
    model = lookup_model({"a": [1, 0], "b": [1, 0.1], "c": [0, 1]})
    data = {"sentence1": ["a", "a", "a", "c"], "sentence2": ["b", "c", "c", "b"], "label": [1, 0, 0, 0]}
    assert ThresholdClassificationEvaluator(data, name="toy")(model)["toy_cosine_majority"] == pytest.approx(0.75)


def test_mcc_at_an_f1_threshold_that_calls_every_pair_a_paraphrase(lookup_model):
    """M6-24: at the lowest score as F1 threshold every pair is predicted a paraphrase: MCC 0 (``>=``, not ``>``)."""
    unit = {f"x{c}": [c / 10, (1 - (c / 10) ** 2) ** 0.5] for c in (1, 5, 8, 9)}  # cosine c / 10 with q
    model = lookup_model({"q": [1, 0], **unit})
    data = {"sentence1": ["q"] * 4, "sentence2": ["x1", "x9", "x8", "x5"], "label": [1, 1, 1, 0]}
    metrics = ThresholdClassificationEvaluator(data, name="toy")(model)
    assert metrics["toy_cosine_f1"] == pytest.approx(6 / 7)  # every pair positive: precision 3/4, recall 1
    assert metrics["toy_cosine_mcc"] == 0.0


def test_accuracy_at_dev_threshold_applies_the_threshold_chosen_on_dev(lookup_model):  # E11-1
    """Dev (cosines 0.9 paraphrase, 0.5 not) puts the threshold at 0.7: on the evaluated set (0.8 and 0.6 paraphrases,
    0.1 not) it gets 2/3, while the threshold best on the evaluated set itself gets 1."""
    unit = {f"x{c}": [c / 10, (1 - (c / 10) ** 2) ** 0.5] for c in (1, 5, 6, 8, 9)}  # cosine c / 10 with q
    model = lookup_model({"q": [1, 0], **unit})
    dev = {"sentence1": ["q", "q"], "sentence2": ["x9", "x5"], "label": [1, 0]}
    test = {"sentence1": ["q"] * 3, "sentence2": ["x8", "x6", "x1"], "label": [1, 1, 0]}
    metrics = ThresholdClassificationEvaluator(test, name="toy", threshold_data=dev)(model)
    assert metrics["toy_cosine_accuracy"] == pytest.approx(1.0)
    assert metrics["toy_cosine_dev_accuracy_threshold"] == pytest.approx(0.7)
    assert metrics["toy_cosine_accuracy_at_dev_threshold"] == pytest.approx(2 / 3)
