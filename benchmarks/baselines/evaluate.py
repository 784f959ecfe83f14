"""Scores of the baselines on the shared data, as one flat ``{metric: value}`` dict per model.

Metric keys (the columns of the baselines table): ``stsb_spearman``, ``sick_spearman`` (Spearman x 100 of the
model's similarity or score against gold), ``pawsx_{en,de,fr}_accuracy``, ``msrpc_accuracy``, ``msrpc_f1``
(x 100), ``turku_accuracy`` / ``turku_weighted_f1`` (complete labels, Turku classifier only) and
``pairs_per_second`` (one thread).

Bi-encoders are scored with ``psp_st.evaluation`` (cosine similarity; classification accuracy/F1 at the best
cosine threshold, as ST's ``BinaryClassificationEvaluator``). Cross-encoders are scored here with scikit-learn:
a pair is a paraphrase when the predicted probability is >= 0.5 (a fixed threshold: the classifier was trained
for it), and STS correlations use the paraphrase probability as the similarity score.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from psp_st.evaluation.classification import TURKU_PARAPHRASE_FROM

from .pair_data import load_pair_frame
from .speed import encode_pairs, measure_pairs_per_second, speed_pairs

#: The STS sets and the pair-classification sets of the table.
STS_SETS = {"stsb": "stsb-test", "sick": "sick-test"}
#: The PAWS-X languages of the baselines table (a subset of ``loaders.PAWSX_LANGS``).
TABLE_PAWSX_LANGS = ("en", "de", "fr")


def _spearman(gold: Sequence[float], predicted: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    return float(100 * spearmanr(gold, predicted).statistic)


def score_cross_encoder(
    model, data_dir: str | os.PathLike | None = None, batch_size: int = 64, limit: int | None = None
) -> dict[str, float]:
    """STS Spearman, PAWS-X en/de/fr accuracy, MSRPC accuracy/F1 and Turku binary scores of a one-logit ``CrossEncoder``.

    ``limit``: score only the first ``limit`` pairs of each set (quick checks; the table uses every pair).
    """
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score

    def probabilities(frame) -> list[float]:
        pairs = list(zip(frame.sentence1, frame.sentence2, strict=True))
        return [float(p) for p in model.predict(pairs, batch_size=batch_size, show_progress_bar=False)]

    def predicted_labels(frame) -> list[int]:
        return [int(p >= 0.5) for p in probabilities(frame)]

    metrics: dict[str, float] = {}
    for key, name in STS_SETS.items():
        frame = load_pair_frame(name, data_dir, limit=limit)
        metrics[f"{key}_spearman"] = _spearman(frame.score, probabilities(frame))
    for lang in TABLE_PAWSX_LANGS:
        frame = load_pair_frame(f"pawsx-{lang}-test", data_dir, limit=limit)
        metrics[f"pawsx_{lang}_accuracy"] = 100 * accuracy_score(frame.label, predicted_labels(frame))
    frame = load_pair_frame("msrpc-test", data_dir, limit=limit)
    predicted = predicted_labels(frame)
    metrics["msrpc_accuracy"] = 100 * accuracy_score(frame.label, predicted)
    metrics["msrpc_f1"] = 100 * f1_score(frame.label, predicted)
    # Turku binary (base label >= 3 = paraphrase, as `--train turku-*` binarises it) on the held-out folds. Only 2%
    # of those pairs are negatives (label 2), so accuracy alone rewards "always paraphrase": balanced accuracy
    # (mean recall of the two classes) is the column the table shows.
    frame = load_pair_frame("turku-eval", data_dir, limit=limit)
    gold = (frame.label >= TURKU_PARAPHRASE_FROM).astype(int)
    predicted = predicted_labels(frame)
    metrics["turku_binary_accuracy"] = 100 * accuracy_score(gold, predicted)
    metrics["turku_binary_balanced_accuracy"] = 100 * balanced_accuracy_score(gold, predicted)
    metrics["turku_binary_f1"] = 100 * f1_score(gold, predicted)
    metrics["turku_binary_majority_rate"] = 100 * max(gold.mean(), 1 - gold.mean())
    pairs = speed_pairs(data_dir, n=limit or 1000)
    metrics["pairs_per_second"] = measure_pairs_per_second(
        lambda p: model.predict(p, batch_size=32, show_progress_bar=False), pairs
    )
    return metrics


def score_bi_encoder(model, data_dir: str | os.PathLike | None = None, batch_size: int = 64) -> dict[str, Any]:
    """Cosine-similarity scores of a ``SentenceTransformer``: ``psp_st.evaluation.run_suite(suite="quick")``.

    The quick suite gives STSb test, SICK-R test, PAWS-X en test and MSRPC test; PAWS-X de/fr test are added
    with the suite's own evaluator (``ThresholdClassificationEvaluator``, as in its ``full`` suite) over the
    same embedding cache. The whole suite result is kept under ``"suite"``.
    """
    from psp_st.evaluation import run_suite
    from psp_st.evaluation.classification import ThresholdClassificationEvaluator
    from psp_st.evaluation.embeddings import EmbeddingCache
    from psp_st.evaluation.loaders import load_local
    from psp_st.io.data_dir import default_data_dir

    data_dir = data_dir if data_dir is not None else default_data_dir()
    suite = run_suite(model, suite="quick", data_dir=data_dir, batch_size=batch_size)
    results = suite["results"]
    metrics: dict[str, Any] = {
        "stsb_spearman": 100 * _pick(results["stsb-test"], "spearman"),
        "sick_spearman": 100 * _pick(results["sick-r-test"], "spearman"),
        "pawsx_en_accuracy": 100 * _pick(results["pawsx-en-test"], "cosine_accuracy"),
        "msrpc_accuracy": 100 * _pick(results["msrpc-test"], "cosine_accuracy"),
        "msrpc_f1": 100 * _pick(results["msrpc-test"], "cosine_f1"),
    }
    cache = EmbeddingCache(model, batch_size=batch_size, show_progress_bar=False)
    for lang in ("de", "fr"):
        evaluator = ThresholdClassificationEvaluator(load_local(f"pawsx-{lang}-test", data_dir), cache=cache)
        metrics[f"pawsx_{lang}_accuracy"] = 100 * _pick(evaluator(model), "cosine_accuracy")
    metrics["pairs_per_second"] = measure_pairs_per_second(encode_pairs(model), speed_pairs(data_dir))
    metrics["suite"] = {key: suite[key] for key in ("suite", "seconds", "results", "skipped")}
    return metrics


def _pick(result: dict[str, float], suffix: str) -> float:
    matches = [value for key, value in result.items() if key.endswith(suffix) and "pearson" not in key]
    if len(matches) != 1:
        raise KeyError(f"expected one metric ending in {suffix!r}, got {sorted(result)}")
    return float(matches[0])


def score_turku_classifier(model, data_dir: str | os.PathLike | None = None, batch_size: int = 64) -> dict[str, Any]:
    """Table-4 scores of a :class:`.TurkuClassifier` on ``turku-eval``, plus its speed."""
    from .turku_metrics import turku_scores

    frame = load_pair_frame("turku-eval", data_dir)
    pairs = list(zip(frame.sentence1, frame.sentence2, strict=True))
    scores = turku_scores(list(frame.label_str), model.predict(pairs, batch_size=batch_size, show_progress_bar=True))
    metrics: dict[str, Any] = {
        "turku_accuracy": 100 * scores["accuracy"],
        "turku_weighted_f1": 100 * scores["weighted_f1"],
        "turku_table4": scores,
    }
    metrics["pairs_per_second"] = measure_pairs_per_second(
        lambda p: model.predict(p, batch_size=32), speed_pairs(data_dir)
    )
    return metrics
