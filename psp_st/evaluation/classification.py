"""Paraphrase classification: a cosine threshold (ST's evaluator) and the Opusparcus MLP protocol."""

from __future__ import annotations

from typing import Any

import numpy as np
from sentence_transformers.sentence_transformer.evaluation import BinaryClassificationEvaluator

from psp_st.evaluation.base import CachedEmbeddingEvaluator, read_pairs, shared_cache
from psp_st.evaluation.embeddings import EmbeddingCache, cosine_pairs
from psp_st.evaluation.loaders import PAIR_COLUMNS, check_columns
from psp_st.evaluation.turku_labels import parse_labels


def binary_labels(values: Any, source: str) -> list[int]:
    """Labels as a list of 0/1 ints holding both classes, or a ``ValueError`` naming the first row that is neither."""
    labels = []
    for row, value in enumerate(values):
        if value not in (0, 1):
            raise ValueError(f"{source}: label at row {row} is {value!r}; paraphrase labels must be 0 or 1")
        labels.append(int(value))
    if len(set(labels)) < 2:
        raise ValueError(
            f"{source}: all {len(labels)} labels are {labels[0]}; accuracy, F1 and AP are "
            "meaningless without both paraphrase (1) and non-paraphrase (0) pairs"
        )
    return labels


#: Turku base labels from this one up are paraphrases (3: in context, 4: in all contexts); 1-2 are not.
TURKU_PARAPHRASE_FROM = 3


def turku_binary(dataset: Any) -> Any:
    """Turku pairs with a 0/1 ``label``: base label (1-4) >= :data:`TURKU_PARAPHRASE_FROM` is a paraphrase."""
    check_columns(dataset, PAIR_COLUMNS, "Turku pairs")
    parsed = parse_labels(dataset["label"], "Turku pairs, column 'label'")
    labels = [int(int(label.base) >= TURKU_PARAPHRASE_FROM) for label in parsed]
    return dataset.remove_columns("label").add_column("label", labels)


class ThresholdClassificationEvaluator(BinaryClassificationEvaluator):
    """ST's ``BinaryClassificationEvaluator`` (best-threshold accuracy/F1, AP, MCC on cosine) over a shared cache.

    ``data`` needs a 0/1 ``label``; ``source`` names it in errors. The thresholds are the best ones on the evaluated
    set itself (ST's and MTEB's convention: optimistic). With ``threshold_data`` (another split, e.g. dev), also
    ``accuracy_at_dev_threshold``: the accuracy at the threshold best on that split, which chose nothing on this one."""

    def __init__(
        self,
        data: Any,
        name: str = "",
        cache: EmbeddingCache | None = None,
        batch_size: int = 64,
        show_progress_bar: bool = False,
        source: str | None = None,
        threshold_data: Any = None,
    ) -> None:
        source = source or f"pair classification data {name!r}"
        sentences1, sentences2, labels = read_pairs(data, "label", source)
        self.threshold_pairs = None
        if threshold_data is not None:
            first, second, dev_labels = read_pairs(threshold_data, "label", f"threshold data of {source}")
            self.threshold_pairs = (first, second, np.asarray(binary_labels(dev_labels, f"threshold data of {source}")))
        super().__init__(
            sentences1,
            sentences2,
            binary_labels(labels, source),
            name=name,
            batch_size=batch_size,
            show_progress_bar=show_progress_bar,
            write_csv=False,
            similarity_fn_names=["cosine"],
        )
        self.cache = cache

    def compute_metrics(self, model: Any) -> dict[str, dict[str, float]]:
        """ST's metrics and the majority rate (a threshold's floor) on cosines rounded to 6 decimals, so pairs whose
        cosines differ only by float noise (reordered words under a bag of pieces, as in PAWS-X) stay tied."""
        from sklearn.metrics import average_precision_score, matthews_corrcoef

        cache = shared_cache(self, model)
        scores = np.round(cosine_pairs(cache.encode(self.sentences1), cache.encode(self.sentences2)).astype(float), 6)
        labels = np.asarray(self.labels)
        accuracy, accuracy_threshold = self.find_best_acc_and_threshold(scores, labels, True)
        f1, precision, recall, f1_threshold = self.find_best_f1_and_threshold(scores, labels, True)
        ap, mcc = average_precision_score(labels, scores), matthews_corrcoef(labels, scores >= f1_threshold)
        metrics = dict(accuracy=accuracy, accuracy_threshold=accuracy_threshold, f1=f1, f1_threshold=f1_threshold)
        metrics["majority"] = max(labels.mean(), 1 - labels.mean())
        if self.threshold_pairs is not None:
            first, second, dev_labels = self.threshold_pairs
            dev_scores = np.round(cosine_pairs(cache.encode(first), cache.encode(second)).astype(float), 6)
            _, dev_threshold = self.find_best_acc_and_threshold(dev_scores, dev_labels, True)
            metrics["dev_accuracy_threshold"] = dev_threshold
            metrics["accuracy_at_dev_threshold"] = float(np.mean((scores >= dev_threshold) == labels))
        return {"cosine": {**metrics, "precision": precision, "recall": recall, "ap": ap, "mcc": mcc}}


#: The fewest train pairs sklearn's early stopping splits: a stratified 10% needs ``ceil(0.1 * n) >= 2`` pairs.
MLP_MIN_TRAIN_PAIRS = 11


class ParaphraseMLPEvaluator(CachedEmbeddingEvaluator):
    """The Opusparcus protocol (Sjöblom et al., 2018): an MLP on the concatenated embeddings, trained on ``train``,
    and its accuracy on ``test`` beside the all-paraphrase baseline (both need a 0/1 ``label``). The paper gives
    no optimizer details: sklearn's defaults (standardized features, early stopping on 10%), seeded."""

    def __init__(
        self,
        train: Any,
        test: Any,
        name: str = "",
        hidden_size: int = 200,
        max_iter: int = 200,
        seed: int = 0,
        batch_size: int = 64,
        show_progress_bar: bool = False,
        cache: EmbeddingCache | None = None,
    ) -> None:
        super().__init__(name=name, batch_size=batch_size, show_progress_bar=show_progress_bar, cache=cache)
        self.splits = {}
        for split, data in (("train", train), ("test", test)):
            first, second, labels = read_pairs(data, "label", f"MLP {split} data {name!r}")
            self.splits[split] = (first, second, np.asarray(binary_labels(labels, f"MLP {split} data {name!r}")))
        counts = np.bincount(self.splits["train"][2], minlength=2)
        if counts.sum() < MLP_MIN_TRAIN_PAIRS or counts.min() < 2:
            raise ValueError(
                f"MLP train data {name!r}: {counts.sum()} pairs, {counts.min()} in the smaller class; the MLP's early "
                "stopping holds out a stratified 10% (at least one pair per class), so it needs at least "
                f"{MLP_MIN_TRAIN_PAIRS} pairs and 2 of each class"
            )
        self.hidden_size = hidden_size
        self.max_iter = max_iter
        self.seed = seed
        self.primary_metric = "accuracy"

    def features(self, model: Any, split: str, cache: EmbeddingCache | None = None) -> np.ndarray:
        cache = cache if cache is not None else shared_cache(self, model)
        first, second, _ = self.splits[split]
        return np.concatenate([cache.encode(first), cache.encode(second)], axis=1)

    def compute_metrics(self, model: Any) -> dict[str, float]:
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.metrics import accuracy_score, f1_score
        from sklearn.neural_network import MLPClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from threadpoolctl import threadpool_limits

        cache = shared_cache(self, model)
        cache.add([text for s1, s2, _ in self.splits.values() for text in (*s1, *s2)])
        train_x, test_x = self.features(model, "train", cache), self.features(model, "test", cache)
        train_y, test_y = self.splits["train"][2], self.splits["test"][2]
        classifier = make_pipeline(
            StandardScaler(),
            MLPClassifier(
                hidden_layer_sizes=(self.hidden_size,),
                max_iter=self.max_iter,
                early_stopping=True,
                random_state=self.seed,
            ),
        )
        # one BLAS thread: these matrices are small, and threads only contend with torch's
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore", ConvergenceWarning)
            classifier.fit(train_x, train_y)
        predicted = classifier.predict(test_x)
        return {
            "accuracy": float(accuracy_score(test_y, predicted)),
            "f1": float(f1_score(test_y, predicted, zero_division=0.0)),
            "all_paraphrase_accuracy": float(np.mean(test_y == 1)),
            "train_pairs": float(len(train_y)),
            "test_pairs": float(len(test_y)),
        }

    description = "Paraphrase MLP Classification"

    def get_config_dict(self) -> dict[str, Any]:
        return {"hidden_size": self.hidden_size, "max_iter": self.max_iter, "seed": self.seed}
