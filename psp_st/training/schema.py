"""The typed recipe schema, one dataclass per section: :func:`parse_recipe` checks a recipe mapping into a
:class:`Recipe`; an unknown key or a bad value is an error naming the key (``recipe: trainer.learning_rate ...``).
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from dataclasses import dataclass, field, fields
from typing import Any

from psp_st.arguments import Check, check_keys
from psp_st.distillation import parse_source
from psp_st.modules.folder_format import PSP_WEIGHTS_DTYPES


def _option(default: Any, *check: Any, **options: Any) -> Any:
    """A schema field with its default and its :class:`Check`."""
    metadata = {"check": Check(*check, **options)}
    if isinstance(default, list):
        return field(default_factory=list, metadata=metadata)
    return field(default=default, metadata=metadata)


def _checked(values: Any, where: str, checks: dict[str, Check | None]) -> dict[str, Any]:
    """``values`` (a mapping; None: empty) with every key known and every value passing its check."""
    values = {} if values is None else values
    if not isinstance(values, dict):
        raise ValueError(f"{where} must be a mapping, got {values!r}")
    check_keys(where, values, checks)
    for key, value in values.items():
        if checks[key] is not None:
            checks[key](f"{where}.{key}", value)  # type: ignore[misc]
    return dict(values)


#: Keys earlier recipes held, each with the one value psp-st still trains with: that value is accepted and does nothing
#: (the psp_recipe.yaml of a psp-en v2/v3 release, which holds them, rebuilds); another value is refused.
RETIRED_KEYS: dict[str, dict[str, Any]] = {
    "recipe: distillation": {"metric": "cosine", "projection": True},
    "recipe: model": {"word_dropout": 0.0},
}


def _section(cls: type, values: Any, where: str) -> Any:
    retired = RETIRED_KEYS.get(where, {})
    if isinstance(values, dict) and retired.keys() & values.keys():
        for key in retired.keys() & values.keys():
            if values[key] != retired[key]:
                raise ValueError(
                    f"{where}.{key} was removed from psp-st, which trains with {key}: {retired[key]!r} only (got "
                    f"{values[key]!r}); delete the key, or run the recipe with the psp-st that wrote it"
                )
        values = {key: value for key, value in values.items() if key not in retired}
    return cls(**_checked(values, where, {item.name: item.metadata["check"] for item in fields(cls)}))


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
    #: sentencepiece's range: its trainer refuses less than 0.98 (checked here, before any data loads).
    character_coverage: float | None = _option(None, float, 0.98, 1.0)
    model_type: str | None = _option(None, str, choices=("unigram", "bpe"))
    #: Train on a language-balanced sample (:func:`~psp_st.tokenization.multilingual.language_balanced_texts`).
    language_temperature: float | None = _option(None, float, 0.0, 1.0)
    #: sentencepiece's training threads: its model depends on their number, so a recipe pins it (not the machine's
    #: cores); 2, the count every packaged release was built with.
    num_threads: int = _option(2, int, positive=True)
    #: Train sentencepiece on the distillation sentences too (``distillation.sources``' sample, besides the pairs'
    #: text): pieces for the words of the genres the pairs lack (news, questions, dialogue). SIF stays counted on the
    #: pairs.
    distillation_text: bool = _option(False, bool)

    def options(self) -> dict[str, Any]:
        """The set keys passed on to sentencepiece's trainer."""
        own = ("vocab_size", "lowercase", "language_temperature", "distillation_text")
        return {k: v for k, v in vars(self).items() if v is not None and k not in own}


@dataclass
class ModelSection:
    """``model``: a fresh P-SP module, or ``init_from`` an existing model folder."""

    type: str = _option("psp", str, choices=("psp",))
    embedding_dim: int = _option(1024, int, positive=True)
    dropout: float | None = _option(None, float, 0.0, 1.0)  # None: the module's default, or init_from's own
    max_seq_length: int | None = _option(None, int, positive=True)
    init: str = _option("random", str, choices=("random", "teacher"))
    init_sif: float | None = _option(None, float, positive=True)  # SIF a: piece rows x a/(a+p), mean 1
    init_from: str | None = _option(None, str)

    def module_options(self) -> dict[str, Any]:
        """The module options the recipe sets (``dropout``, ``max_seq_length``)."""
        return {name: getattr(self, name) for name in ("dropout", "max_seq_length") if getattr(self, name) is not None}


@dataclass
class DistillationSection:
    """``distillation``: teacher piece vectors (``model.init: teacher``) and the sentence-distillation term."""

    teacher: str = _option("all-MiniLM-L6-v2", str)
    cache_dir: str = _option("runs/teacher_cache", str)
    sources: list = _option([], list)
    weight: float = _option(0.0, float, low=0.0)
    batch_size: int = _option(128, int, positive=True)
    lr: float | None = _option(None, float, positive=True)
    max_words: int | None = _option(None, int, positive=True)


@dataclass
class EvaluationSection:
    """``evaluation``: the STS file evaluated during training (no section: STS Benchmark dev)."""

    sts_dev: str | None = _option(None, str)


@dataclass
class ReleaseSection:
    """``release``: how ``psp-st build`` writes the release."""

    dtype: str = _option("float32", str, choices=PSP_WEIGHTS_DTYPES)
    suite: str = _option("quick", str)  # the evaluation suite of the card (e.g. xling for a multilingual model)
    #: The model card's ``license`` (a Hub licence id: ``cc-by-nc-4.0``, ``other``, ...); None: apache-2.0, the code's.
    license: str | None = _option(None, str)
    #: With ``license: other`` (Hugging Face's card spec): the licence's id and a link to its text (a file in the
    #: model repo, e.g. ``README.md`` for the card's License section, or a URL).
    license_name: str | None = _option(None, str)
    license_link: str | None = _option(None, str)


#: The STS file a recipe without an ``evaluation`` section evaluates on during training.
STS_DEV = "sts/stsbenchmark/dev.parquet"

#: ``loss.name`` -> the loss class (its constructor's arguments are the section's other keys).
LOSSES = {
    "margin": "psp_st.losses.ParaphraseMarginLoss",
    "contrastive": "psp_st.losses.CosineContrastiveLoss",
    "mnrl": "sentence_transformers.sentence_transformer.losses.MultipleNegativesRankingLoss",
}

#: Defaults of the trainer section (any other SentenceTransformerTrainingArguments field may be set).
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

#: Checks of the trainer numbers recipes set (transformers checks the rest when the arguments are built).
TRAINER_CHECKS = {
    **{name: Check(float, positive=True) for name in ("learning_rate", "num_train_epochs", "save_steps")},
    **{name: Check(float, positive=True) for name in ("eval_steps", "logging_steps")},
    **{name: Check(int, positive=True) for name in ("per_device_train_batch_size", "gradient_accumulation_steps")},
    "max_steps": Check(int, positive=True),  # transformers reads 0 as one step and < 0 as unset
    "weight_decay": Check(float, 0.0, math.inf),
    "max_grad_norm": Check(float, 0.0, math.inf),
    "warmup_ratio": Check(float, 0.0, 1.0),
}


def loss_class(name: str) -> type:
    """The loss class of ``loss.name``."""
    if name not in LOSSES:
        raise ValueError(f"recipe: loss.name must be one of {list(LOSSES)}, got {name!r}")
    module, _, attribute = LOSSES[name].rpartition(".")
    return getattr(importlib.import_module(module), attribute)


@dataclass
class Recipe:
    """A checked recipe (see ``psp_st/resources/hub_configs/psp-en.yaml``); built by :func:`parse_recipe`."""

    name: str
    data: DataSection
    seed: int = 42
    soup: int = 1  # runs from one initial model at seeds seed, seed + 1, ...; their weights averaged (a model soup)
    wise_ft: float = 1.0  # the saved weights: initial + wise_ft * (trained - initial) (WiSE-FT); 1 = the trained ones
    norm_power: float = 1.0  # then every piece vector's norm raised to this power (direction kept); 1 = unchanged
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

    def training_arguments(self, output_dir: str, max_steps: int | None = None, seed: int | None = None):
        """The trainer and megabatch sections as ``PSPTrainingArguments`` (mega-batching with the margin loss only);
        ``seed``: the data order's (default: the recipe's)."""
        from psp_st.training.arguments import PSPTrainingArguments

        values = {**DEFAULT_TRAINER_ARGS, **self.trainer, "output_dir": output_dir, "seed": self.seed}
        if seed is not None:
            values["seed"] = seed
        if not self.evaluation.sts_dev:  # nothing to evaluate (parse_recipe refuses an explicit strategy)
            values["eval_strategy"] = "no"
        values.update({("megabatch_size" if key == "size" else key): value for key, value in self.megabatch.items()})
        if self.loss["name"] != "margin":
            values["megabatch_size"] = None
        if max_steps is not None:
            values["max_steps"] = max_steps
        return PSPTrainingArguments(**values)


#: The recipe's top-level numbers and what each must be (a key given with no value is an error, not the default).
TOP_LEVEL_NUMBERS = {
    "seed": "an integer in [0, 2^32 - 1]",
    "soup": "a number of runs, 1 or more",
    "wise_ft": "a number in (0, 1]",
    "norm_power": "a number in (0, 1]",
}

#: Trainer keys psp-st sets itself, refused in a recipe; so are ``push_to_hub`` and ``hub_*``: a run never uploads.
TRAINER_OVERRIDES = {"seed": "use the top-level seed", "output_dir": "use --output (train_from_config's output_dir)"}
PUBLISH = "a run uploads nothing; publish its model with `psp-st push`, which checks what it uploads"


def _check_loss(cls: type, options: dict[str, Any]) -> None:
    """The loss class's own checks, built without a model: key by key (the error names the key), then together."""
    for key, values in [*((key, {key: value}) for key, value in options.items()), (None, options)]:
        try:
            cls(None, **values)
        except (TypeError, ValueError) as error:
            text = str(error)
            if key is None:
                raise ValueError(f"recipe: loss: {text}") from None
            raise ValueError(
                f"recipe: loss.{text}" if text.startswith(f"{key} ") else f"recipe: loss.{key}: {text}"
            ) from None


def _check_release_license(release: ReleaseSection) -> None:
    """The card's licence fields as the Hub takes them (it refuses a push whose ``license`` is no licence id): an id
    such as ``cc-by-nc-4.0``; ``license_name`` and ``license_link`` with ``license: other`` and only then."""
    hub_ids = "https://huggingface.co/docs/hub/repositories-licenses"
    if release.license is not None and not re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", release.license):
        raise ValueError(
            f"recipe: release.license must be a Hugging Face licence id (lower case, e.g. apache-2.0, cc-by-nc-4.0, "
            f"other: {hub_ids}), got {release.license!r}"
        )
    named = [key for key in ("license_name", "license_link") if getattr(release, key)]
    if release.license == "other" and len(named) < 2:
        raise ValueError(
            "recipe: release.license: other needs license_name (an id for the licence, e.g. my-terms-1.0) and "
            "license_link (a URL, or a file of the model repo such as README.md), which the Hub shows as the licence"
        )
    if release.license != "other" and named:
        raise ValueError(
            f"recipe: release.{' and '.join(named)} go with license: other only (beside license: "
            f"{release.license or 'apache-2.0, the default'} the card would name two licences): set license: other, "
            "or remove them"
        )


def _check_trainer(recipe: Recipe) -> None:
    """The trainer section through transformers' own checks (a scheduler name, ``warmup_steps >= 0``, ...), now and
    not after the tokenizer is trained; the error names the first key refused on its own (else the section)."""
    from psp_st.training.arguments import PSPTrainingArguments

    try:
        recipe.training_arguments("recipe-check")  # builds the arguments only: nothing is written
    except (TypeError, ValueError) as error:
        for key, value in recipe.trainer.items():
            try:
                PSPTrainingArguments(**{**DEFAULT_TRAINER_ARGS, key: value, "output_dir": "recipe-check"})
            except (TypeError, ValueError):
                raise ValueError(f"recipe: trainer.{key}: {error}") from None
        raise ValueError(f"recipe: trainer: {error}") from None


def _finite(value: Any, key: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"recipe: {key} is {value}; it must be a finite number")
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for name, inner in items:
        _finite(inner, f"{key}[{name}]" if isinstance(value, list) else f"{key}.{name}" if key else str(name))


def parse_recipe(config: dict[str, Any]) -> Recipe:
    """Check a recipe mapping and return it typed; errors name the key (``recipe: section.key ...``)."""
    from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

    from psp_st.data.sources import PairSource
    from psp_st.evaluation.suite import SUITES
    from psp_st.training.arguments import MEGABATCH_CHECKS, PSPTrainingArguments

    if not isinstance(config, dict):
        raise ValueError(f"recipe: expected a mapping at the top level, got {type(config).__name__}")
    _finite(config, "")
    check_keys("recipe:", config, [item.name for item in fields(Recipe)])
    for key, wanted in TOP_LEVEL_NUMBERS.items():  # `seed:` with no value: the trainer would fail late
        if key in config and config[key] is None:
            default = getattr(Recipe, key)
            raise ValueError(f"recipe: {key} has no value; give {wanted} or leave the key out ({default})")
    Check(int, 0, 2**32 - 1)("recipe: seed", config.get("seed"))  # numpy's seed range
    Check(int, 1, 2**32 - config.get("seed", 42))("recipe: soup", config.get("soup"))  # the last member's seed too
    Check(float, 0.0, 1.0, positive=True)("recipe: wise_ft", config.get("wise_ft"))
    Check(float, 0.0, 1.0, positive=True)("recipe: norm_power", config.get("norm_power"))
    Check(str)("recipe: description", config.get("description"))
    name = config.get("name", "recipe")  # the default release folder (./NAME) and the build record's short name
    if not isinstance(name, str) or not re.fullmatch(r"[^\W_][\w.-]*", name):
        raise ValueError(f"recipe: name must be a folder name (letters, digits, '-', '_', '.'; no '/'), got {name!r}")
    data = config.get("data") or {}
    if not isinstance(data, dict):
        raise ValueError(f"recipe: data must be a mapping, got {data!r}")
    data = dict(data)
    if isinstance(data.get("sources"), str):  # one source written without brackets: a one-element list
        data["sources"] = [data["sources"]]
    sources = data.get("sources")
    if not sources:
        raise ValueError("recipe: data.sources (a list of pair files/globs or {path: ...} entries) is required")
    if not isinstance(sources, list) or not all(
        isinstance(s, str) or (isinstance(s, dict) and "path" in s) for s in sources
    ):
        raise ValueError(
            f"recipe: data.sources must be a list of file paths/globs or {{path: ...}} entries, got {sources!r}"
        )
    loss = {"name": "margin", **(config.get("loss") or {})}
    parameters = inspect.signature(loss_class(loss["name"])).parameters
    checks: dict[str, Check | None] = {"name": None}
    for key, parameter in parameters.items():  # a parameter with a bool or number default takes one of its kind
        default = parameter.default
        if key not in ("self", "model"):
            numeric = isinstance(default, (int, float)) and not isinstance(default, bool)
            checks[key] = Check(bool) if isinstance(default, bool) else Check(float) if numeric else None
    loss = _checked(loss, "recipe: loss", checks)
    trainer_keys = {item.name: TRAINER_CHECKS.get(item.name) for item in fields(SentenceTransformerTrainingArguments)}
    trainer = _checked(config.get("trainer"), "recipe: trainer", trainer_keys)
    for key in trainer:
        why = TRAINER_OVERRIDES.get(key) or (PUBLISH if key == "push_to_hub" or key.startswith("hub_") else None)
        if why:
            raise ValueError(f"recipe: trainer.{key} is set by psp-st: {why}")
    recipe = Recipe(
        name=name,
        data=_section(DataSection, data, "recipe: data"),
        seed=config.get("seed", 42),
        soup=config.get("soup", 1),
        wise_ft=float(config.get("wise_ft", 1.0)),
        norm_power=float(config.get("norm_power", 1.0)),
        description=config.get("description"),
        tokenizer=_section(TokenizerSection, config.get("tokenizer"), "recipe: tokenizer"),
        model=_section(ModelSection, config.get("model"), "recipe: model"),
        loss=loss,
        megabatch=_checked(
            config.get("megabatch"),
            "recipe: megabatch",
            {k.removeprefix("megabatch_"): c for k, c in MEGABATCH_CHECKS.items()},
        ),
        trainer=trainer,
        evaluation=_section(EvaluationSection, config.get("evaluation", {"sts_dev": STS_DEV}), "recipe: evaluation"),
        distillation=_section(DistillationSection, config.get("distillation"), "recipe: distillation"),
        release=_section(ReleaseSection, config.get("release"), "recipe: release"),
    )
    if recipe.distillation.weight > 0 and not recipe.distillation.sources:
        raise ValueError("recipe: distillation.weight > 0 needs distillation.sources (the sentences to distil on)")
    if recipe.tokenizer.distillation_text and not recipe.distillation.sources:
        raise ValueError(
            "recipe: tokenizer.distillation_text trains sentencepiece on the distillation sentences too: it needs "
            "distillation.sources"
        )
    _check_loss(loss_class(recipe.loss["name"]), recipe.loss_options())
    _check_trainer(recipe)
    if not recipe.evaluation.sts_dev and str(trainer.get("eval_strategy", "no")) != "no":
        raise ValueError("recipe: trainer.eval_strategy needs evaluation.sts_dev (the file to evaluate on)")
    size = recipe.megabatch.get("size", PSPTrainingArguments.megabatch_size)
    if recipe.megabatch.get("negative_guide") and not (recipe.loss["name"] == "margin" and size):
        raise ValueError(
            "recipe: megabatch.negative_guide filters mined negatives: it needs mega-batching (the margin loss with "
            "megabatch.size >= 1)"
        )
    megabatch = size or 1
    single = {"margin": megabatch < 2, "mnrl": True}.get(recipe.loss["name"], False)
    if single and trainer.get("per_device_train_batch_size", DEFAULT_TRAINER_ARGS["per_device_train_batch_size"]) < 2:
        raise ValueError(
            "recipe: trainer.per_device_train_batch_size 1 gives no negative (a constant loss, no gradient) "
            f"{'with megabatch.size < 2' if recipe.loss['name'] == 'margin' else 'with the mnrl loss'}: use 2 or more"
        )
    Check(str, choices=SUITES)("recipe: release.suite", recipe.release.suite)
    _check_release_license(recipe.release)
    for number, entry in enumerate(recipe.data.sources):  # a bad entry (or data.filters) fails here, not in training
        PairSource.parse(entry, recipe.data.filters, where=f"recipe: data.sources[{number}]")
    for number, source in enumerate(recipe.distillation.sources):
        parse_source(source, f"recipe: distillation.sources[{number}]")
    return recipe
