"""A ``hub_configs/*.yaml`` recipe -> dataset, tokenizer, model, loss, trainer; train, checkpoint, resume, save.

Recipe keys (all optional except ``data.sources``; see ``hub_configs/psp-en.yaml``)::

    name: psp-en
    seed: 42
    data:      {sources: [training_pairs/*.parquet, {path: ..., max_pairs: 20000, weight: 0.5, filters: {...}}],
                shared_sentence_groups: true, max_pairs: null, filters: null, cache_dir: null}
    tokenizer: {vocab_size: 50000, lowercase: true, input_sentence_size: 2000000}
    model:     {type: psp, embedding_dim: 1024, dropout: 0.0, word_dropout: 0.0, init_std: 1.0, init_from: null,
                init: random}                                     # or init: teacher (distillation.teacher)
    distillation: {teacher: all-MiniLM-L6-v2, cache_dir: runs/teacher_cache, weight: 0.0, metric: cosine,
                   batch_size: 128, lr: null, sources: [{path: corpus/..., max_sentences: 5000}]}
    loss:      {name: margin, margin: 0.4, symmetric: true, in_batch_weight: 0.0}  # or mnrl (scale), contrastive
    megabatch: {size: 100, anneal: 150, text_guard: true, sparse_embeddings: true}
    trainer:   {...SentenceTransformerTrainingArguments...}
    evaluation: {sts_dev: sts/stsbenchmark/dev.parquet}
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from psp_st.training.pairs import load_training_pairs, resolve_data_path

logger = logging.getLogger(__name__)

DEFAULT_TRAINER_ARGS: dict[str, Any] = {
    "num_train_epochs": 1,
    "per_device_train_batch_size": 128,
    "learning_rate": 1e-3,
    "lr_scheduler_type": "constant",
    "warmup_steps": 0,
    "max_grad_norm": 1.0,
    "eval_strategy": "steps",
    "eval_steps": 1000,
    "save_strategy": "steps",
    "save_steps": 1000,
    "save_total_limit": 2,
    "logging_steps": 100,
    "report_to": "none",
    "dataloader_drop_last": False,
    "use_cpu": True,
}


def load_config(config: dict | str | os.PathLike) -> dict[str, Any]:
    """A recipe dict, or the YAML file holding one (checked for the required keys)."""
    if not isinstance(config, dict):
        import yaml

        path = Path(config)
        if not path.exists():
            raise FileNotFoundError(f"recipe {path} does not exist")
        with open(path, encoding="utf-8") as handle:
            config = yaml.safe_load(handle)
        if not isinstance(config, dict):
            raise ValueError(f"recipe {path}: expected a YAML mapping at the top level")
        config.setdefault("name", path.stem)
    config = dict(config)
    unknown = set(config) - {
        "name",
        "seed",
        "data",
        "tokenizer",
        "model",
        "loss",
        "megabatch",
        "trainer",
        "evaluation",
        "description",
        "release",
        "distillation",
    }
    if unknown:
        raise ValueError(f"recipe: unknown top-level key(s) {sorted(unknown)}")
    data = config.get("data")
    if not isinstance(data, dict) or not data.get("sources"):
        raise ValueError("recipe: data.sources (a list of parquet files/globs) is required")
    if isinstance(data["sources"], str):  # one source written without brackets: a one-element list
        config["data"] = data = {**data, "sources": [data["sources"]]}

    def valid_source(source: Any) -> bool:  # a path/glob, or {path: ..., max_pairs/weight/filters: ...}
        return (isinstance(source, str) and bool(source)) or (
            isinstance(source, dict) and isinstance(source.get("path"), str) and bool(source["path"])
        )

    if not isinstance(data["sources"], list) or not all(valid_source(s) for s in data["sources"]):
        raise ValueError(
            f"recipe: data.sources must be a list of file paths/globs or {{path: ..., max_pairs: ...}} "
            f"entries, got {data['sources']!r}"
        )
    check_recipe_numbers(config)
    return config


#: Recipe numbers that must be positive (``(section, key)``: integer or not).
_POSITIVE: dict[tuple[str, str], bool] = {
    ("trainer", "learning_rate"): False,
    ("trainer", "num_train_epochs"): False,
    ("trainer", "per_device_train_batch_size"): True,
    ("trainer", "gradient_accumulation_steps"): True,
    ("trainer", "save_steps"): False,
    ("trainer", "eval_steps"): False,
    ("trainer", "logging_steps"): False,
    ("tokenizer", "vocab_size"): True,
    ("model", "embedding_dim"): True,
    ("megabatch", "size"): True,
    ("data", "max_pairs"): True,
}
#: Recipe numbers that must lie in ``[low, high]``.
_RANGES: dict[tuple[str, str], tuple[float, float]] = {
    ("model", "dropout"): (0.0, 1.0),
    ("model", "word_dropout"): (0.0, 1.0),
    ("trainer", "weight_decay"): (0.0, float("inf")),
    ("trainer", "max_grad_norm"): (0.0, float("inf")),
    ("trainer", "warmup_ratio"): (0.0, 1.0),
    ("megabatch", "anneal"): (0.0, float("inf")),
    ("tokenizer", "character_coverage"): (0.9, 1.0),
}


def check_recipe_numbers(config: dict[str, Any]) -> None:
    """Reject NaN/inf anywhere in the recipe and out-of-range values of the known numeric keys, naming the key."""
    import math

    def walk(value: Any, key: str) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"recipe: {key} is {value}; it must be a finite number")
        if isinstance(value, dict):
            for name, inner in value.items():
                walk(inner, f"{key}.{name}" if key else str(name))
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                walk(inner, f"{key}[{index}]")

    walk(config, "")
    if "seed" in config and (isinstance(config["seed"], bool) or not isinstance(config["seed"], int)):
        raise ValueError(f"recipe: seed must be an integer, got {config['seed']!r}")
    # bounds None: the value must be > 0
    checks: list[tuple[tuple[str, str], tuple[float, float] | None, bool]] = [
        (key, None, integer) for key, integer in _POSITIVE.items()
    ] + [(key, bounds, False) for key, bounds in _RANGES.items()]
    for (section, name), bounds, integer in checks:
        block = config.get(section)
        if not isinstance(block, dict) or block.get(name) is None:
            continue
        value = block[name]
        kind = "an integer" if integer else "a number"
        if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
            hint = " (YAML reads 1e-3 as text: write 1.0e-3)" if isinstance(value, str) else ""
            raise ValueError(f"recipe: {section}.{name} must be {kind}, got {value!r}{hint}")
        if bounds is None and value <= 0:
            raise ValueError(f"recipe: {section}.{name} must be > 0, got {value!r}")
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            raise ValueError(f"recipe: {section}.{name} must be in [{bounds[0]}, {bounds[1]}], got {value!r}")


#: File beside a cached pair dataset with the pairs kept per ``data.sources`` entry.
PAIR_COUNTS_FILE = "pair_counts.json"


def load_recipe_pairs(data_cfg: dict[str, Any], seed: int, counts: dict[str, int] | None = None):
    """The recipe's training pairs; with ``data.cache_dir`` they are saved once as Arrow and memory-mapped after.

    ``counts`` (if given) receives the pairs per source entry (the same every epoch: weights and caps are
    applied once, when the pairs are loaded).
    """
    import hashlib

    from datasets import load_from_disk

    data_cfg = dict(data_cfg)
    cache_dir = data_cfg.pop("cache_dir", None)
    cache = None
    if cache_dir:
        key = hashlib.sha1(json.dumps([data_cfg, seed], sort_keys=True).encode()).hexdigest()[:16]
        cache = Path(cache_dir) / f"pairs-{key}"
        if cache.is_dir() and (cache / PAIR_COUNTS_FILE).is_file():
            logger.info("training pairs: memory-mapping the cached %s", cache)
            if counts is not None:
                counts.update(json.loads((cache / PAIR_COUNTS_FILE).read_text()))
            return load_from_disk(str(cache))
    found: dict[str, int] = {}
    dataset = load_training_pairs(data_cfg.pop("sources"), seed=seed, counts=found, **data_cfg)
    if counts is not None:
        counts.update(found)
    if cache is not None:
        dataset.save_to_disk(str(cache))
        (cache / PAIR_COUNTS_FILE).write_text(json.dumps(found, indent=2))
        dataset = load_from_disk(str(cache))
    return dataset


#: ``distillation`` keys and their defaults (see :func:`distillation_config`).
DISTILLATION_DEFAULTS: dict[str, Any] = {
    "teacher": "all-MiniLM-L6-v2",
    "cache_dir": "runs/teacher_cache",
    "sources": [],
    "weight": 0.0,
    "metric": "cosine",
    "batch_size": 128,
    "lr": None,
    "projection": True,
    "teacher_batch_size": 64,
}


def distillation_config(config: dict[str, Any]) -> dict[str, Any]:
    """The recipe's ``distillation`` section with defaults; a relative ``cache_dir`` is relative to the working
    directory (a rebuild reuses the teacher's vectors: :mod:`psp_st.distillation.teacher_cache`)."""
    section = dict(config.get("distillation") or {})
    unknown = set(section) - set(DISTILLATION_DEFAULTS)
    if unknown:
        raise ValueError(
            f"recipe: unknown distillation option(s) {sorted(unknown)} (allowed: {sorted(DISTILLATION_DEFAULTS)})"
        )
    section = {**DISTILLATION_DEFAULTS, **section}
    if section["weight"] < 0:
        raise ValueError(f"recipe: distillation.weight must be >= 0, got {section['weight']}")
    if section["weight"] > 0 and not section["sources"]:
        raise ValueError("recipe: distillation.weight > 0 needs distillation.sources (the sentences to distil on)")
    return section


def build_model(config: dict[str, Any], train_dataset, seed: int, timings: dict[str, float] | None = None):
    """Train the sentencepiece tokenizer on the training sentences and build a fresh model.

    ``model.init: teacher`` initialises the piece vectors from ``distillation.teacher``
    (:meth:`PSPEmbedding.from_teacher`, cached); the default ``random`` draws them from ``N(0, 1)``.
    ``timings`` (if given) receives ``tokenizer_seconds`` and ``teacher_pieces_seconds``.
    """
    import torch
    from sentence_transformers import SentenceTransformer
    from torch import nn

    from psp_st.modules.psp import PSPEmbedding
    from psp_st.modules.trusted import load_trusted

    timings = {} if timings is None else timings
    model_cfg = dict(config.get("model", {}))
    if model_cfg.get("init_from"):
        # start from an existing model folder (its tokenizer and weights), e.g. a cached initial model
        model = load_trusted(model_cfg["init_from"])
        for module in model.modules():
            for key in ("dropout", "word_dropout"):
                if key in model_cfg and hasattr(module, key) and not isinstance(getattr(module, key), nn.Module):
                    setattr(module, key, float(model_cfg[key]))
        return model
    kind = model_cfg.pop("type", "psp")
    if kind != "psp":
        raise ValueError(f"recipe: model.type {kind!r} is not supported by the recipe builder (only 'psp')")
    tok_cfg = dict(config.get("tokenizer", {}))
    init_std = float(model_cfg.pop("init_std", 1.0))
    init = model_cfg.pop("init", "random")
    if init not in ("random", "teacher"):
        raise ValueError(f"recipe: model.init must be 'random' or 'teacher', got {init!r}")
    texts = list(train_dataset["sentence1"]) + list(train_dataset["sentence2"])
    start = time.perf_counter()
    module = PSPEmbedding.from_texts(
        texts,
        vocab_size=tok_cfg.pop("vocab_size", 50_000),
        embedding_dim=model_cfg.pop("embedding_dim", 1024),
        lowercase=tok_cfg.pop("lowercase", True),
        seed=seed,
        **tok_cfg,
        **{k: model_cfg.pop(k) for k in list(model_cfg) if k in ("dropout", "word_dropout", "max_seq_length")},
    )
    timings["tokenizer_seconds"] = round(time.perf_counter() - start, 1)
    if model_cfg:
        raise ValueError(f"recipe: unknown model option(s) {sorted(model_cfg)}")
    if init == "teacher":
        distil = distillation_config(config)
        start = time.perf_counter()
        module = PSPEmbedding.from_teacher(
            distil["teacher"],
            module.tokenizer,
            embedding_dim=module.embedding_dim,
            seed=seed,
            cache_dir=distil["cache_dir"],
            teacher_name=distil["teacher"],
            max_seq_length=module.max_seq_length,
            dropout=module.dropout,
            word_dropout=module.word_dropout,
        )
        timings["teacher_pieces_seconds"] = round(time.perf_counter() - start, 1)
    if init_std != 1.0:
        with torch.no_grad():
            module.embedding.weight[: module.vocab_size].mul_(init_std)
    return SentenceTransformer(modules=[module], device="cpu")


def build_loss(config: dict[str, Any], model):
    """The loss named in ``loss.name`` (margin | mnrl | contrastive)."""
    loss_cfg = dict(config.get("loss", {"name": "margin"}))
    name = loss_cfg.pop("name", "margin")
    if name == "margin":
        from psp_st.losses import ParaphraseMarginLoss

        return ParaphraseMarginLoss(model, **loss_cfg)
    if name == "mnrl":
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

        return MultipleNegativesRankingLoss(model, **loss_cfg)
    if name == "contrastive":
        from psp_st.losses import CosineContrastiveLoss

        return CosineContrastiveLoss(model, **loss_cfg)
    raise ValueError(f"recipe: unknown loss.name {name!r} (margin | mnrl | contrastive)")


def sts_evaluator(path: str | os.PathLike, name: str):
    """ST's EmbeddingSimilarityEvaluator on an STS parquet file (scores 0-5 scaled to 0-1)."""
    import pandas as pd
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    frame = pd.read_parquet(resolve_data_path(path)[0])
    return EmbeddingSimilarityEvaluator(
        frame.sentence1.tolist(), frame.sentence2.tolist(), (frame.score / 5.0).tolist(), name=name
    )


def build_distillation(config: dict[str, Any], model, seed: int, timings: dict[str, float] | None = None):
    """The sentence-distillation objective of ``distillation`` (``None`` when its weight is 0).

    Teacher vectors come from :func:`psp_st.distillation.teacher_vectors` (cached per sentence; the teacher is
    loaded only when a sentence is missing). ``timings`` receives ``teacher_sentences_seconds``.
    """
    distil = distillation_config(config)
    if not distil["weight"]:
        return None
    from psp_st.distillation import distillation_sentences, teacher_vectors
    from psp_st.io.data_dir import default_data_dir
    from psp_st.losses import TeacherDistillationLoss
    from psp_st.mining.teacher import evaluation_sentences, load_teacher
    from psp_st.training.auxiliary import AuxiliaryObjective

    start = time.perf_counter()
    teacher = None

    def load(name: str):
        nonlocal teacher
        if teacher is None:
            teacher = load_teacher(name)
        return teacher

    parts = distillation_sentences(distil["sources"], seed=seed, exclude=evaluation_sentences(default_data_dir()))
    dataset = teacher_vectors(
        [text for _, texts in parts for text in texts],
        distil["teacher"],
        distil["cache_dir"],
        label="distillation sentences",
        load=load,
        batch_size=distil["teacher_batch_size"],
    )
    if timings is not None:
        timings["teacher_sentences_seconds"] = round(time.perf_counter() - start, 1)
    loss = TeacherDistillationLoss(
        model,
        teacher_dim=len(dataset[0]["embedding"]),
        metric=distil["metric"],
        projection=distil["projection"],
        seed=seed,
    )
    return AuxiliaryObjective(
        dataset, loss, weight=distil["weight"], batch_size=distil["batch_size"], seed=seed, lr=distil["lr"]
    )


def train_from_config(
    config: dict | str | os.PathLike,
    output_dir: str | os.PathLike | None = None,
    resume: bool = False,
    max_steps: int | None = None,
    overwrite: bool = False,
):
    """Train the model a recipe describes; returns the trained ``SentenceTransformer`` (saved to ``output_dir/final``).

    ``output_dir`` (default ``runs/<name>``) holds ``initial/`` (tokenizer + initial weights, so a resumed run
    rebuilds the very same model), ``checkpoint-*/`` and ``final/`` (with a model card). ``resume=True``
    continues from the last checkpoint with the same step count and data order. Without ``resume``, a non-empty
    ``output_dir`` is refused unless ``overwrite`` (:mod:`psp_st.io.output_policy`).
    """
    import torch
    from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments
    from transformers.trainer_utils import get_last_checkpoint

    from psp_st.io.output_policy import check_output
    from psp_st.losses import add_random_negatives
    from psp_st.modules.trusted import load_trusted
    from psp_st.training.megabatch import MegaBatchTrainer

    config_file = None if isinstance(config, dict) else config
    config = load_config(config)
    seed = int(config.get("seed", 42))
    output_dir = Path(output_dir or Path("runs") / config["name"])
    if not resume:
        check_output(output_dir, inputs=[config_file], overwrite=overwrite, folder=True)
    torch.manual_seed(seed)
    np.random.seed(seed)

    timings: dict[str, float] = {}
    start = time.perf_counter()
    pair_counts: dict[str, int] = {}
    train_dataset = load_recipe_pairs(config["data"], seed, counts=pair_counts)
    timings["data_seconds"] = round(time.perf_counter() - start, 1)

    initial = output_dir / "initial"
    checkpoint = get_last_checkpoint(str(output_dir)) if resume and output_dir.is_dir() else None
    if resume and checkpoint is None:
        logger.warning("--resume: no checkpoint in %s, starting from scratch", output_dir)
    if checkpoint is not None and initial.is_dir():
        model = load_trusted(initial)
    else:
        model = build_model(config, train_dataset, seed, timings)
        model.save(str(initial))
    auxiliary = build_distillation(config, model, seed, timings)

    loss_name = config.get("loss", {}).get("name", "margin")
    mega_cfg = dict(config.get("megabatch", {}))
    megabatch_size = mega_cfg.pop("size", 100) if loss_name == "margin" else None
    if loss_name == "contrastive":
        train_dataset = add_random_negatives(train_dataset, seed=seed)
    loss = build_loss(config, model)

    trainer_args = {**DEFAULT_TRAINER_ARGS, **config.get("trainer", {}), "output_dir": str(output_dir), "seed": seed}
    if max_steps is not None:
        trainer_args["max_steps"] = max_steps
    args = SentenceTransformerTrainingArguments(**trainer_args)
    eval_cfg = config.get("evaluation", {"sts_dev": "sts/stsbenchmark/dev.parquet"})
    evaluator = sts_evaluator(eval_cfg["sts_dev"], "sts-dev") if eval_cfg.get("sts_dev") else None

    model.model_card_data.model_name = config.get("description", config["name"])
    trainer = MegaBatchTrainer(
        model=model,
        args=args,
        train_dataset=train_dataset,
        loss=loss,
        evaluator=evaluator,
        megabatch_size=megabatch_size,
        anneal=mega_cfg.pop("anneal", 150),
        auxiliary=auxiliary,
        **mega_cfg,
    )
    start = time.perf_counter()
    output = trainer.train(resume_from_checkpoint=checkpoint)
    timings["training_seconds"] = round(time.perf_counter() - start, 1)
    final = output_dir / "final"
    model.save(str(final))
    metrics = {
        **output.metrics,
        "global_step": output.global_step,
        "train_pairs": len(train_dataset),
        "pairs_per_source": pair_counts,
        "stage_seconds": timings,
        "distillation": auxiliary.config() if auxiliary is not None else None,
    }
    (output_dir / "train_metrics.json").write_text(json.dumps(metrics, indent=2))
    logger.info("saved %s", final)
    return model
