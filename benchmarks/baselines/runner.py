"""One baseline run: train (SBERT bi-encoder, CrossEncoder or Turku classifier), score, write the run record.

What ``python benchmarks/baselines_table.py sbert|cross-encoder|turku`` does, as library functions: each takes the options every
baseline shares (:class:`RunOptions`) plus its own training sets, prints the metrics and returns the record that
``--results`` gets (and ``benchmarks/baselines_table.py`` reads).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

#: Default unlabelled training sets of the SBERT baseline (names understood by ``load_pair_frame``).
DEFAULT_PAIRS = (
    "training_pairs/parasci.parquet",
    "training_pairs/wikiauto_gem_valid_simplification.parquet",
    "training_pairs/coco_captions_val2017.parquet",
)
#: Default labelled (0/1) training sets of the SBERT and CrossEncoder baselines.
DEFAULT_LABELLED = ("msrpc-train", "pawsx-en-dev", "pawsx-de-dev", "pawsx-fr-dev")


@dataclass
class RunOptions:
    """The options every baseline run shares (the common flags of each baseline run)."""

    model: str = "all-MiniLM-L6-v2"
    output: Path | None = None
    results: Path | None = None
    name: str | None = None
    data_dir: Path | None = None
    epochs: float = 1.0
    max_steps: int = -1
    batch_size: int = 32
    lr: float = 2e-5
    max_length: int = 128
    seed: int = 0
    threads: int = 1
    limit: int | None = None
    no_train: bool = False
    no_eval: bool = False
    #: the command line recorded with the run (None: not run from the CLI)
    command: str | None = None

    @classmethod
    def pick(cls, values: Mapping[str, Any], command: str | None = None) -> RunOptions:
        """The options found in ``values`` (e.g. ``vars(args)`` of the CLI; other keys are ignored) and ``command``."""
        names = {field.name for field in fields(cls)} - {"command"}  # the CLI's "command" is the subcommand
        return cls(**{name: values[name] for name in names if name in values}, command=command)


def setup_threads(threads: int) -> None:
    """Offline Hub, no tokenizer thread pool, ``threads`` torch threads (the machine is shared)."""
    import torch

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    torch.set_num_threads(threads)


def labelled_dataset(name: str, data_dir: str | os.PathLike | None, limit: int | None = None) -> Any:
    """A 0/1 ``label`` set as a ``datasets.Dataset``; Turku sets are binarised (base label >= 3)."""
    from datasets import Dataset

    from psp_st.evaluation.classification import TURKU_PARAPHRASE_FROM

    from .pair_data import load_pair_frame

    frame = load_pair_frame(name, data_dir, limit=limit)
    if "label" not in frame.columns:
        raise ValueError(f"{name}: no 'label' column, cannot train a classifier on it")
    if name.startswith("turku"):
        frame = frame.assign(label=(frame["label"] >= TURKU_PARAPHRASE_FROM).astype(int))
    return Dataset.from_pandas(frame[["sentence1", "sentence2", "label"]].reset_index(drop=True))


def _labelled_sets(names: Sequence[str] | None, options: RunOptions) -> dict[str, Any]:
    return {
        name: labelled_dataset(name, options.data_dir, options.limit)
        for name in (DEFAULT_LABELLED if names is None else names)
    }


def _loop_options(options: RunOptions) -> dict[str, Any]:
    """The training-loop options the SBERT and CrossEncoder trainers share."""
    return {
        "output_dir": options.output,
        "batch_size": options.batch_size,
        "learning_rate": options.lr,
        "epochs": options.epochs,
        "max_steps": options.max_steps,
        "seed": options.seed,
    }


def _note_training(train: dict[str, Any], sets: Mapping[str, Any]) -> None:
    """Add the rows of each training set to the training facts ``train`` and print the step count and time."""
    train["sets"] = {name: len(rows) for name, rows in sets.items()}
    print(f"trained {train['steps']:.0f} steps in {train['seconds']:.0f} s")


def build_record_training(model: str) -> dict[str, Any] | None:
    """Training facts of a model folder written by ``psp-st build`` (its ``psp_build.json``), else ``None``."""
    from psp_st.io.model_names import BUILD_INFO_FILE

    record = Path(model) / BUILD_INFO_FILE
    if not record.is_file():
        return None
    training = json.loads(record.read_text(encoding="utf-8")).get("training") or {}
    return {"seconds": training.get("seconds"), "threads": training.get("threads"), "source": str(record)}


def record_run(
    options: RunOptions,
    kind: str,
    train: dict[str, Any] | None,
    metrics: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Print the metrics, write the run record to ``options.results`` (when set) and return it."""
    from psp_st.io.atomic import atomic_write_json

    touched = "untouched " if options.no_train else "fine-tuned "
    record = {
        "name": options.name or f"{kind} ({touched}{options.model})",
        "kind": kind,
        "backbone": options.model,
        "command": options.command,
        "threads": options.threads,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],  # the machine is shared: context for speed
        "train": train,
        "metrics": metrics,
        **(extra or {}),
    }
    for key, value in metrics.items():
        if isinstance(value, float):
            print(f"{key}: {value:.2f}")
    if options.results:
        atomic_write_json(options.results, record)
        print(f"wrote {options.results}")
    return record


def run_sbert(
    options: RunOptions,
    pairs: Sequence[str] | None = None,
    pairs_per_set: int = 5000,
    labelled: Sequence[str] | None = None,
) -> dict[str, Any]:
    """SBERT bi-encoder: MultipleNegativesRankingLoss on ``pairs`` (a sample of ``pairs_per_set`` rows of each)
    plus ContrastiveLoss on the ``labelled`` 0/1 sets (defaults: :data:`DEFAULT_PAIRS`, :data:`DEFAULT_LABELLED`)."""
    setup_threads(options.threads)
    from datasets import Dataset

    from .bi_encoder import build_bi_encoder, train_bi_encoder
    from .evaluate import score_bi_encoder
    from .pair_data import load_pair_frame

    model = build_bi_encoder(options.model, max_seq_length=options.max_length)
    train = None
    if not options.no_train:
        pair_sets = {}
        for name in DEFAULT_PAIRS if pairs is None else pairs:
            frame = load_pair_frame(name, options.data_dir, limit=options.limit)
            frame = frame.sample(n=min(pairs_per_set, len(frame)), random_state=options.seed)
            pair_sets[Path(name).stem] = Dataset.from_pandas(frame[["sentence1", "sentence2"]].reset_index(drop=True))
        labelled_sets = _labelled_sets(labelled, options)
        train = train_bi_encoder(model, pair_sets, labelled_sets, **_loop_options(options))
        _note_training(train, {**pair_sets, **labelled_sets})
    if train is None:
        train = build_record_training(options.model)
    metrics = {} if options.no_eval else score_bi_encoder(model, options.data_dir)
    return record_run(options, "sbert", train, metrics)


def run_cross_encoder(options: RunOptions, train_sets: Sequence[str] | None = None) -> dict[str, Any]:
    """CrossEncoder binary paraphrase classifier on the 0/1 ``train_sets`` (default :data:`DEFAULT_LABELLED`)."""
    setup_threads(options.threads)
    from .cross_encoder import build_cross_encoder, train_cross_encoder
    from .evaluate import score_cross_encoder

    if options.no_train:
        raise ValueError("a CrossEncoder's classification head starts random: --no-train makes no sense here")
    model = build_cross_encoder(options.model, max_length=options.max_length)
    labelled = _labelled_sets(train_sets, options)
    train = train_cross_encoder(model, labelled, **_loop_options(options))
    _note_training(train, labelled)
    metrics = {} if options.no_eval else score_cross_encoder(model, options.data_dir)
    return record_run(options, "cross-encoder", train, metrics)


def run_turku(options: RunOptions, train_set: str = "turku-train", eval_set: str = "turku-eval") -> dict[str, Any]:
    """Turku multi-output classifier (base label + flags), trained on ``train_set`` (needs ``label_str``) and
    scored on release-1 dev folds 85-89 (``eval_set`` is fixed to ``turku-eval``)."""
    setup_threads(options.threads)
    from .evaluate import score_turku_classifier
    from .pair_data import load_pair_frame
    from .turku_classifier import TurkuClassifier
    from .turku_metrics import format_turku_table

    if options.no_train:
        raise ValueError("the Turku classifier's heads start random: --no-train makes no sense here")
    if eval_set != "turku-eval":
        raise ValueError("--eval-set is fixed to turku-eval (release-1 dev folds 85-89)")
    model = TurkuClassifier.from_backbone(options.model, max_length=options.max_length, seed=options.seed)
    frame = load_pair_frame(train_set, options.data_dir, limit=options.limit)
    if "label_str" not in frame.columns:
        raise ValueError(f"{train_set}: no 'label_str' column with full Turku labels")
    train = model.fit(
        list(frame.sentence1),
        list(frame.sentence2),
        list(frame.label_str),
        epochs=options.epochs,
        batch_size=options.batch_size,
        learning_rate=options.lr,
        max_steps=None if options.max_steps < 0 else options.max_steps,
        seed=options.seed,
        label_source=f"{train_set} column label_str",
    )
    _note_training(train, {train_set: frame})
    if options.output:
        model.save(options.output)
    metrics: dict[str, Any] = {}
    if not options.no_eval:
        metrics = score_turku_classifier(model, options.data_dir)
        print(format_turku_table(metrics["turku_table4"]))
    return record_run(options, "turku", train, metrics, {"eval_set": "turku-eval (release-1 dev folds 85-89)"})
