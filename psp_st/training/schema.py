"""The typed recipe schema: one dataclass per section; an unknown key or a bad value is an error naming the key.

    recipe: megabatch.sise is not a known key (did you mean size?); known: anneal, ...
    recipe: trainer.learning_rate must be > 0, got -0.1

:func:`parse_recipe` checks a recipe mapping (a YAML recipe, e.g. the packaged ``psp-en``) into a :class:`Recipe`; the trainer and
megabatch sections become one :class:`~psp_st.training.PSPTrainingArguments` (:meth:`Recipe.training_arguments`).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from psp_st.arguments import check_keys
from psp_st.training.arguments import MINING_DTYPES


def _option(
    default: Any,
    kind: type | tuple[type, ...],
    low: float | None = None,
    high: float | None = None,
    positive: bool = False,
    choices: tuple[str, ...] = (),
) -> Any:
    """A schema field: its default and the check its value gets (type, range, choices)."""
    checks = {"kind": kind, "low": low, "high": high, "positive": positive, "choices": choices}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=checks)
    return field(default=default, metadata=checks)


def _check_value(where: str, value: Any, checks: dict[str, Any]) -> None:
    if value is None:
        return
    kind, integer = checks["kind"], checks["kind"] is int
    if kind in (int, float) and (isinstance(value, bool) or not isinstance(value, int if integer else (int, float))):
        hint = " (YAML reads 1e-3 as text: write 1.0e-3)" if isinstance(value, str) else ""
        raise ValueError(f"{where} must be {'an integer' if integer else 'a number'}, got {value!r}{hint}")
    if kind not in (int, float) and not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ValueError(f"{where} must be a {names}, got {value!r}")
    if checks["positive"] and value <= 0:
        raise ValueError(f"{where} must be > 0, got {value!r}")
    low, high = checks["low"], checks["high"]
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{where} must be in [{low}, {high}], got {value!r}")
    if checks["choices"] and value not in checks["choices"]:
        raise ValueError(f"{where} must be one of {list(checks['choices'])}, got {value!r}")


def _section(cls: type, values: Any, where: str) -> Any:
    """``cls`` built from the mapping ``values`` (None: all defaults), every key and value checked."""
    values = {} if values is None else values
    if not isinstance(values, dict):
        raise ValueError(f"{where} must be a mapping, got {values!r}")
    known = {item.name: item for item in fields(cls)}
    check_keys(where, values, known)
    for key, value in values.items():
        _check_value(f"{where}.{key}", value, dict(known[key].metadata))
    missing = [name for name, item in known.items() if item.default is MISSING and item.default_factory is MISSING]
    missing = [name for name in missing if name not in values]
    if missing:
        raise ValueError(f"{where}.{missing[0]} is required")
    return cls(**values)


@dataclass
class DataSection:
    """``data``: the training pairs (:func:`psp_st.data.load_training_pairs`)."""

    sources: list = _option([], list)
    shared_sentence_groups: bool = _option(True, bool)
    max_pairs: int | None = _option(None, int, positive=True)
    filters: dict | None = _option(None, dict)
    cache_dir: str | None = _option(None, str)


@dataclass
class TokenizerSection:
    """``tokenizer``: the sentencepiece model trained on the training sentences."""

    vocab_size: int = _option(50_000, int, positive=True)
    lowercase: bool = _option(True, bool)
    input_sentence_size: int | None = _option(None, int, positive=True)
    character_coverage: float | None = _option(None, float, 0.9, 1.0)
    model_type: str | None = _option(None, str, choices=("unigram", "bpe"))
    byte_fallback: bool | None = _option(None, bool)
    max_sentence_length: int | None = _option(None, int, positive=True)

    def options(self) -> dict[str, Any]:
        """The set keys besides ``vocab_size``/``lowercase`` (passed on to sentencepiece's trainer)."""
        skip = ("vocab_size", "lowercase")
        return {key: value for key, value in vars(self).items() if value is not None and key not in skip}


@dataclass
class ModelSection:
    """``model``: a fresh P-SP module, or ``init_from`` an existing model folder."""

    type: str = _option("psp", str, choices=("psp",))
    embedding_dim: int = _option(1024, int, positive=True)
    dropout: float | None = _option(None, float, 0.0, 1.0)  # None: the module's default (0), or init_from's own
    word_dropout: float | None = _option(None, float, 0.0, 1.0)
    max_seq_length: int | None = _option(None, int, positive=True)

    def module_options(self) -> dict[str, Any]:
        """The module options the recipe sets (``dropout``, ``word_dropout``, ``max_seq_length``)."""
        names = ("dropout", "word_dropout", "max_seq_length")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}

    init: str = _option("random", str, choices=("random", "teacher"))
    init_std: float = _option(1.0, float, positive=True)
    init_from: str | None = _option(None, str)


#: ``loss.name`` -> the loss class path (its constructor's arguments are the section's other keys).
LOSSES: dict[str, str] = {
    "margin": "psp_st.losses.ParaphraseMarginLoss",
    "contrastive": "psp_st.losses.CosineContrastiveLoss",
    "mnrl": "sentence_transformers.sentence_transformer.losses.MultipleNegativesRankingLoss",
}


def loss_class(name: str) -> type:
    """The loss class of ``loss.name``."""
    import importlib

    if name not in LOSSES:
        raise ValueError(f"recipe: loss.name must be one of {list(LOSSES)}, got {name!r}")
    module, _, attribute = LOSSES[name].rpartition(".")
    return getattr(importlib.import_module(module), attribute)


@dataclass
class DistillationSection:
    """``distillation``: teacher piece vectors (``model.init: teacher``) and the sentence-distillation term."""

    teacher: str = _option("all-MiniLM-L6-v2", str)
    cache_dir: str = _option("runs/teacher_cache", str)
    sources: list = _option([], list)
    weight: float = _option(0.0, float, low=0.0)
    metric: str = _option("cosine", str, choices=("cosine", "mse", "similarity"))
    batch_size: int = _option(128, int, positive=True)
    lr: float | None = _option(None, float, positive=True)
    projection: bool = _option(True, bool)
    teacher_batch_size: int = _option(64, int, positive=True)


#: The STS file a recipe without an ``evaluation`` section evaluates on during training.
STS_DEV = "sts/stsbenchmark/dev.parquet"


@dataclass
class EvaluationSection:
    """``evaluation``: the STS file evaluated during training (relative to the data folder; no section: STS-B dev)."""

    sts_dev: str | None = _option(None, str)


@dataclass
class ReleaseSection:
    """``release``: how ``psp-st build`` writes the release."""

    dtype: str = _option("float32", str, choices=("float32", "float16"))


#: ``megabatch`` key -> :class:`~psp_st.training.PSPTrainingArguments` field.
MEGABATCH_KEYS = {
    "size": "megabatch_size",
    "anneal": "anneal",
    "group_column": "group_column",
    "text_guard": "text_guard",
    "sparse_embeddings": "sparse_embeddings",
    "mining_chunk_size": "mining_chunk_size",
    "mining_dtype": "mining_dtype",
    "encode_batch_size": "encode_batch_size",
}

#: Defaults of the recipe's trainer section (any other SentenceTransformerTrainingArguments field may be set).
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

#: Checks of the trainer numbers the recipes set (transformers checks the rest when the arguments are built).
TRAINER_CHECKS: dict[str, dict[str, Any]] = {
    name: {"kind": kind, "low": low, "high": high, "positive": low is None, "choices": ()}
    for name, kind, low, high in (
        ("learning_rate", float, None, None),
        ("num_train_epochs", float, None, None),
        ("per_device_train_batch_size", int, None, None),
        ("gradient_accumulation_steps", int, None, None),
        ("save_steps", float, None, None),
        ("eval_steps", float, None, None),
        ("logging_steps", float, None, None),
        ("weight_decay", float, 0.0, math.inf),
        ("max_grad_norm", float, 0.0, math.inf),
        ("warmup_ratio", float, 0.0, 1.0),
    )
}

MEGABATCH_CHECKS: dict[str, dict[str, Any]] = {
    "size": {"kind": int, "low": 0, "high": None, "positive": False, "choices": ()},
    "anneal": {"kind": int, "low": 0, "high": None, "positive": False, "choices": ()},
    "mining_dtype": {"kind": str, "low": None, "high": None, "positive": False, "choices": MINING_DTYPES},
}


@dataclass
class Recipe:
    """A checked recipe (see ``psp_st/resources/hub_configs/psp-en.yaml``); built by :func:`parse_recipe`."""

    name: str
    data: DataSection
    seed: int = 42
    description: str | None = None
    tokenizer: TokenizerSection = field(default_factory=TokenizerSection)
    model: ModelSection = field(default_factory=ModelSection)
    loss: dict[str, Any] = field(default_factory=lambda: {"name": "margin"})
    megabatch: dict[str, Any] = field(default_factory=dict)
    trainer: dict[str, Any] = field(default_factory=dict)
    evaluation: EvaluationSection = field(default_factory=EvaluationSection)
    distillation: DistillationSection = field(default_factory=DistillationSection)
    release: ReleaseSection = field(default_factory=ReleaseSection)

    def loss_options(self) -> dict[str, Any]:
        """The loss section without ``name``: the loss constructor's keyword arguments."""
        return {key: value for key, value in self.loss.items() if key != "name"}

    def training_arguments(self, output_dir: str, max_steps: int | None = None):
        """The trainer and megabatch sections as :class:`~psp_st.training.PSPTrainingArguments` (the recipe's seed;
        no mega-batching unless the loss is the margin loss)."""
        from psp_st.training.arguments import PSPTrainingArguments

        values = {**DEFAULT_TRAINER_ARGS, **self.trainer, "output_dir": output_dir, "seed": self.seed}
        values.update({MEGABATCH_KEYS[key]: value for key, value in self.megabatch.items()})
        if self.loss.get("name", "margin") != "margin":
            values["megabatch_size"] = None
        if max_steps is not None:
            values["max_steps"] = max_steps
        return PSPTrainingArguments(**values)


def _walk_finite(value: Any, key: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"recipe: {key} is {value}; it must be a finite number")
    if isinstance(value, dict):
        for name, inner in value.items():
            _walk_finite(inner, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            _walk_finite(inner, f"{key}[{index}]")


def _checked_mapping(values: Any, where: str, known: Any, checks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    values = {} if values is None else values
    if not isinstance(values, dict):
        raise ValueError(f"{where} must be a mapping, got {values!r}")
    check_keys(where, values, known)
    for key, value in values.items():
        if key in checks:
            _check_value(f"{where}.{key}", value, checks[key])
    return dict(values)


def parse_recipe(config: dict[str, Any]) -> Recipe:
    """Check a recipe mapping and return it typed; errors name the key (``recipe: section.key ...``)."""
    from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

    if not isinstance(config, dict):
        raise ValueError(f"recipe: expected a mapping at the top level, got {type(config).__name__}")
    _walk_finite(config, "")
    check_keys("recipe:", config, [item.name for item in fields(Recipe)])
    seed = config.get("seed", 42)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"recipe: seed must be an integer, got {seed!r}")
    data = dict(config.get("data") or {})
    if not data.get("sources"):
        raise ValueError("recipe: data.sources (a list of pair files/globs or {path: ...} entries) is required")
    if isinstance(data["sources"], str):  # one source written without brackets: a one-element list
        data["sources"] = [data["sources"]]
    if not isinstance(data["sources"], list) or not all(
        isinstance(entry, str) or (isinstance(entry, dict) and "path" in entry) for entry in data["sources"]
    ):
        raise ValueError(
            f"recipe: data.sources must be a list of file paths/globs or {{path: ...}} entries, got {data['sources']!r}"
        )
    loss = dict(config.get("loss") or {"name": "margin"})
    loss.setdefault("name", "margin")
    parameters = inspect.signature(loss_class(loss["name"])).parameters
    check_keys("recipe: loss", loss, ["name", *(name for name in parameters if name not in ("self", "model"))])
    trainer_known = [item.name for item in fields(SentenceTransformerTrainingArguments)]
    recipe = Recipe(
        name=str(config.get("name", "recipe")),
        data=_section(DataSection, data, "recipe: data"),
        seed=seed,
        description=config.get("description"),
        tokenizer=_section(TokenizerSection, config.get("tokenizer"), "recipe: tokenizer"),
        model=_section(ModelSection, config.get("model"), "recipe: model"),
        loss=loss,
        megabatch=_checked_mapping(config.get("megabatch"), "recipe: megabatch", MEGABATCH_KEYS, MEGABATCH_CHECKS),
        trainer=_checked_mapping(config.get("trainer"), "recipe: trainer", trainer_known, TRAINER_CHECKS),
        evaluation=_section(EvaluationSection, config.get("evaluation", {"sts_dev": STS_DEV}), "recipe: evaluation"),
        distillation=_section(DistillationSection, config.get("distillation"), "recipe: distillation"),
        release=_section(ReleaseSection, config.get("release"), "recipe: release"),
    )
    distil = recipe.distillation
    if distil.weight > 0 and not distil.sources:
        raise ValueError("recipe: distillation.weight > 0 needs distillation.sources (the sentences to distil on)")
    return recipe
