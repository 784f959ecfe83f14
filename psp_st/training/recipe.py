"""A recipe (YAML; packaged ones in ``psp_st/resources/hub_configs/``) -> data, tokenizer, model, loss, trainer; train,
checkpoint, resume, save. Relative data paths resolve in the working directory, else in the data folder
(:func:`psp_st.io.data_dir.resolve_data_files`)."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from psp_st.io.extras import require_installed
from psp_st.io.model_names import BUILD_INFO_FILE, PACKAGED_RECIPES
from psp_st.training.schema import (
    DEFAULT_TRAINER_ARGS,
    DataSection,
    ModelSection,
    Recipe,
    TokenizerSection,
    loss_class,
    parse_recipe,
)

logger = logging.getLogger(__name__)


def find_recipe(name: str | os.PathLike) -> Path:
    """The recipe file of ``name``: a ``.yaml``/``.yml`` path, else ``hub_configs/<name>.yaml`` in the working
    directory, else the packaged one. A leading ``~`` is the home folder (``--config=~/r.yaml`` reaches no shell)."""
    candidate = Path(name).expanduser()
    if candidate.suffix in (".yaml", ".yml"):
        if candidate.is_file():
            return candidate
        raise FileNotFoundError(f"recipe file not found: {candidate}")
    searched = [Path.cwd() / "hub_configs" / f"{name}.yaml", PACKAGED_RECIPES / f"{name}.yaml"]
    for path in searched:
        if path.is_file():
            return path
    packaged = sorted(path.stem for path in PACKAGED_RECIPES.glob("*.yaml"))
    raise FileNotFoundError(
        f"no recipe for {os.fspath(name)!r}; looked in: {', '.join(str(p) for p in searched)} "
        f"(packaged recipes: {', '.join(packaged)})"
    )


#: Most values a YAML recipe or filters file may hold once its aliases are expanded (an alias of an alias of ...,
#: "billion laughs", makes a few hundred bytes hold billions: checking them would never end).
MAX_YAML_VALUES = 1_000_000


def _expanded_values(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """The values ``node`` holds with every alias expanded (each anchor's count computed once); a recursive alias
    or more than :data:`MAX_YAML_VALUES` is a ``ComposerError`` naming the line."""
    if id(node) in sizes:
        return sizes[id(node)]
    if id(node) in open_nodes:
        raise yaml.composer.ComposerError(
            None,
            None,
            "an alias refers to its own anchor (a recursive structure): write the values out",
            node.start_mark,
        )
    open_nodes.add(id(node))
    children = node.value if isinstance(node, yaml.SequenceNode) else []
    if isinstance(node, yaml.MappingNode):
        children = [item for pair in node.value for item in pair]
    size = 1
    for child in children:
        size += _expanded_values(child, sizes, open_nodes)
        if size > MAX_YAML_VALUES:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"more than {MAX_YAML_VALUES:,} values once its aliases are expanded (aliases of aliases): "
                "write the values out",
                node.start_mark,
            )
    open_nodes.discard(id(node))
    sizes[id(node)] = size
    return size


class RecipeLoader(yaml.SafeLoader):
    """YAML's safe loader refusing a duplicate key at any level (safe_load keeps the last one silently), a recursive
    alias, more than :data:`MAX_YAML_VALUES` values with aliases expanded, and nesting too deep for Python."""

    def get_single_node(self) -> yaml.Node | None:
        try:
            node = super().get_single_node()
            if node is not None:
                _expanded_values(node, {}, set())
        except RecursionError:
            raise yaml.composer.ComposerError(
                None, None, "nested too deeply to read (thousands of brackets): flatten it", self.get_mark()
            ) from None
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key_node.tag != "tag:yaml.org,2002:merge" and isinstance(key, Hashable):
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (merge the two into one)", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep)


def load_config(config: dict | str | os.PathLike) -> dict[str, Any]:
    """A recipe dict, name (:func:`find_recipe`) or YAML file, checked by
    :func:`~psp_st.training.schema.parse_recipe`; ``name`` defaults to the file's stem."""
    if not isinstance(config, dict):
        path = find_recipe(config)
        try:
            with open(path, encoding="utf-8") as handle:
                config = yaml.load(handle, Loader=RecipeLoader)
        except UnicodeDecodeError as error:
            raise ValueError(f"recipe {path}: not a UTF-8 text file ({error.reason} at byte {error.start})") from None
        if not isinstance(config, dict):
            raise ValueError(f"recipe {path}: expected a YAML mapping at the top level")
        config.setdefault("name", path.stem)
    config = dict(config)
    recipe = parse_recipe(config)
    config["data"] = {**config["data"], "sources": recipe.data.sources}
    return config


#: File beside a cached pair dataset with the pairs kept per ``data.sources`` entry.
PAIR_COUNTS_FILE = "pair_counts.json"
#: Folder in a run folder with the tokenizer and initial weights (a resume starts from it).
INITIAL_FOLDER = "initial"
#: File in a run folder with the sha1 of the data it trains on (a resume must see the same).
DATA_FILE = "training_data.json"
#: File beside a finished soup member's ``final/``: its step count and metrics, and the ``max_steps`` it ran under
#: (a resume reuses the member only under the same ``max_steps``: recipe and data are checked for the whole run).
MEMBER_FILE = "member.json"


def finished_member(folder: Path, max_steps: int | None) -> dict | None:
    """The record of the soup member in ``folder`` if it finished under ``max_steps`` (``final/`` and
    :data:`MEMBER_FILE` saved), else ``None``: a member killed before its record is trained again."""
    record = folder / MEMBER_FILE
    if not (folder / "final").is_dir() or not record.is_file():
        return None
    try:
        info = json.loads(record.read_text(encoding="utf-8"))
    except (ValueError, RecursionError):  # damaged: train the member again rather than trust it
        return None
    return info if isinstance(info, dict) and info.get("max_steps", -1) == max_steps else None


def data_digest(table, texts: Sequence[str] = ()) -> str:
    """sha1 of the rows of the Arrow ``table`` (the training pairs, in 64k-row batches: bounded memory) and of
    ``texts`` (the distillation sentences), in order."""
    import hashlib

    digest = hashlib.sha1()
    for batch in table.to_batches(max_chunksize=65_536):
        for column in batch.columns:
            digest.update("\0".join(map(str, column.to_pylist())).encode() + b"\1")
    digest.update("\0".join(texts).encode())
    return digest.hexdigest()


def load_recipe_pairs(
    data: DataSection | dict[str, Any],
    seed: int,
    counts: dict[str, int] | None = None,
    data_dir: str | os.PathLike | None = None,
):
    """The recipe's training pairs (:func:`psp_st.data.load_training_pairs`), fewer than 2 distinct ones an error;
    with ``data.cache_dir`` saved once as Arrow and memory-mapped after, until a matched file changes (size or
    mtime) or psp-st's version does (its reading and filtering rules may have changed). ``counts`` (if given)
    receives the pairs per source entry."""
    import hashlib

    import pyarrow.compute as pc
    from datasets import load_from_disk

    import psp_st
    from psp_st.data.loaders import local_files
    from psp_st.data.sources import PairSource, load_training_pairs
    from psp_st.io.atomic import atomic_directory
    from psp_st.io.data_dir import data_folder

    if isinstance(data, dict):
        data = DataSection(**data)
    options = {key: value for key, value in vars(data).items() if key != "cache_dir"}  # load_training_pairs' own
    cache = None
    if data.cache_dir:
        folder = str(data_folder(data_dir).resolve())
        paths = [local_files(PairSource.parse(entry).path, data_dir) or [] for entry in data.sources]
        stats = {path: os.stat(path) for path in sum(paths, [])}
        files = [(path, stat.st_size, stat.st_mtime_ns) for path, stat in stats.items()]  # a changed file: a new key
        # psp-st's version: an upgrade's data fixes apply to the pairs, not to a cache of the old reading
        payload = json.dumps([options, seed, folder, files, psp_st.__version__], sort_keys=True)
        key = hashlib.sha1(payload.encode()).hexdigest()[:16]
        cache = Path(data.cache_dir) / f"pairs-{key}"
        if cache.is_dir() and (cache / PAIR_COUNTS_FILE).is_file():
            logger.info("training pairs: memory-mapping the cached %s", cache)
            if counts is not None:
                counts.update(json.loads((cache / PAIR_COUNTS_FILE).read_text(encoding="utf-8")))
            return load_from_disk(str(cache))
    found: dict[str, int] = {}
    dataset = load_training_pairs(**options, seed=seed, counts=found, data_dir=data_dir, cache_dir=datasets_cache(data))
    table = dataset.with_format("arrow")[:]
    if max(pc.count_distinct(table.column(name)).as_py() for name in ("sentence1", "sentence2")) < 2:
        raise ValueError(
            f"recipe: data.sources give {len(dataset)} pair(s), fewer than 2 distinct ones: no pair can be another's "
            "negative and the loss would be constant; add pairs"
        )
    if counts is not None:
        counts.update(found)
    if cache is not None:
        # renamed into place: a run memory-mapping the cache never sees it rewritten in place (a SIGBUS)
        with atomic_directory(cache) as temporary:
            dataset.save_to_disk(str(temporary))
            (temporary / PAIR_COUNTS_FILE).write_text(json.dumps(found, indent=2), encoding="utf-8")
        dataset = load_from_disk(str(cache))
    return dataset


def datasets_cache(data: DataSection) -> Path | None:
    """Where datasets keeps the Arrow copies and filter results of a recipe's pair files (``data.cache_dir``)."""
    return None if data.cache_dir is None else Path(data.cache_dir) / "datasets"


def _recipe(config: Recipe | dict[str, Any]) -> Recipe:
    return config if isinstance(config, Recipe) else parse_recipe(config)


def _recorded_norm_power(name: str) -> float | None:
    """The ``norm_power`` the build record of the model ``name`` (a release, its ``trainable/`` or a ``psp-st train``
    run's ``final/``) says its table was raised to, else ``None``."""
    from psp_st.inference.load import model_folder
    from psp_st.io.model_names import TRAINABLE_SUBFOLDER, read_build_record

    folder = model_folder(name)
    record = read_build_record(folder)
    if record is None and folder.name == TRAINABLE_SUBFOLDER:
        record = read_build_record(folder.parent)
    training = (record or {}).get("training")
    power = training.get("norm_power") if isinstance(training, dict) else None
    return float(power) if isinstance(power, (int, float)) and not isinstance(power, bool) else None


def build_model(
    config: Recipe | dict[str, Any],
    train_dataset,
    seed: int,
    timings: dict[str, float] | None = None,
    data_dir: str | os.PathLike | None = None,
    sample: list | None = None,
):
    """Train the sentencepiece tokenizer on the training sentences (and, with ``tokenizer.distillation_text``, the
    distillation sentences) and build a fresh model (or load ``model.init_from``). ``timings`` (if given) receives
    ``tokenizer_seconds`` and ``teacher_pieces_seconds``; ``sample`` (if given) receives the distillation sentences
    drawn for the tokenizer, for :func:`build_distillation` to reuse."""
    import torch
    from sentence_transformers import SentenceTransformer
    from torch import nn

    from psp_st.inference.load import load
    from psp_st.io.model_names import TRAINABLE_SUBFOLDER, resolve_model_name
    from psp_st.modules.psp import PSPEmbedding

    recipe = _recipe(config)
    timings = {} if timings is None else timings
    model_cfg = recipe.model
    if model_cfg.init_from:
        trainable = Path(resolve_model_name(model_cfg.init_from)) / TRAINABLE_SUBFOLDER
        model = load(trainable if trainable.is_dir() else model_cfg.init_from, trainable=True)
        if model_cfg.max_seq_length is not None:
            model.max_seq_length = model_cfg.max_seq_length
        dropout = model_cfg.dropout
        for module in model.modules():
            if dropout is not None and hasattr(module, "dropout") and not isinstance(module.dropout, nn.Module):
                module.dropout = float(dropout)  # type: ignore[assignment]  # psp-st modules keep a float
        model_defaults, tokenizer_defaults = ModelSection(), TokenizerSection()
        ignored = [
            *(
                f"model.{key}"
                for key in ("embedding_dim", "init", "init_sif")
                if getattr(model_cfg, key) != getattr(model_defaults, key)
            ),
            *(
                f"tokenizer.{key}"
                for key, value in vars(recipe.tokenizer).items()
                if value != getattr(tokenizer_defaults, key)
            ),
        ]
        if ignored:
            logger.warning(
                "recipe: %s ignored: model.init_from keeps the tokenizer, size and weights of %s (%s); only "
                "model.dropout and model.max_seq_length apply",
                ", ".join(ignored),
                model_cfg.init_from,
                model[0],
            )
        earlier = _recorded_norm_power(model_cfg.init_from)
        if earlier and recipe.norm_power != 1:
            logger.warning(
                "recipe: norm_power %s raises the piece norms again after training: %s was built with norm_power %s "
                "(its %s), so a piece training leaves alone ends at the power %s of its norm before that build's; "
                "set norm_power: 1 to keep the norms as they are and as fine-tuning moves them",
                recipe.norm_power,
                model_cfg.init_from,
                earlier,
                BUILD_INFO_FILE,
                round(earlier * recipe.norm_power, 6),
            )
        return model
    if recipe.tokenizer.language_temperature is not None:
        from psp_st.tokenization.multilingual import language_balanced_texts

        if "lang" not in train_dataset.column_names:
            raise ValueError(
                "recipe: tokenizer.language_temperature needs a 'lang' column in the training pairs (a bitext "
                "source keeps its language column; map one with columns: {lang: <column>})"
            )
        columns = train_dataset["sentence1"][:], train_dataset["lang"][:], train_dataset["sentence2"][:]
        texts = language_balanced_texts(*columns, recipe.tokenizer.language_temperature, seed=seed)
    else:
        texts = train_dataset["sentence1"][:] + train_dataset["sentence2"][:]
    start = time.perf_counter()
    extra = []
    if recipe.tokenizer.distillation_text:
        drawn = distillation_sample(recipe, seed, data_dir)
        if sample is not None:
            sample[:] = drawn
        extra = [text for _, part, _ in drawn for text in part]
    module = PSPEmbedding.from_texts(
        texts + extra,
        vocab_size=recipe.tokenizer.vocab_size,
        embedding_dim=model_cfg.embedding_dim,
        lowercase=recipe.tokenizer.lowercase,
        seed=seed,
        **model_cfg.module_options(),
        **recipe.tokenizer.options(),
    )
    timings["tokenizer_seconds"] = round(time.perf_counter() - start, 1)
    if model_cfg.init == "teacher":
        distil = recipe.distillation
        start = time.perf_counter()
        module = PSPEmbedding.from_teacher(
            distil.teacher,
            module.tokenizer,
            embedding_dim=module.embedding_dim,
            seed=seed,
            cache_dir=distil.cache_dir,
            teacher_name=distil.teacher,
            max_seq_length=module.max_seq_length,
            dropout=module.dropout,
        )
        timings["teacher_pieces_seconds"] = round(time.perf_counter() - start, 1)
    if model_cfg.init_sif is not None:
        from psp_st.distillation.piece_weights import piece_counts, sif_weights

        weights = sif_weights(piece_counts(module.tokenizer, texts), model_cfg.init_sif)
        with torch.no_grad():
            module.embedding.weight[: module.vocab_size].mul_(torch.from_numpy(weights).float().unsqueeze(1))
    return SentenceTransformer(modules=[module], device="cpu")


def build_loss(config: Recipe | dict[str, Any], model):
    """The loss named in ``loss.name`` (:data:`psp_st.training.schema.LOSSES`) with the section's other keys."""
    recipe = _recipe(config)
    return loss_class(recipe.loss["name"])(model, **recipe.loss_options())


def distillation_sample(recipe: Recipe, seed: int, data_dir: str | os.PathLike | None = None) -> list:
    """The recipe's distillation sentences (:func:`psp_st.distillation.distillation_sentences` of
    ``distillation.sources`` at ``seed``, the evaluation sets' sentences excluded): what the distillation term trains
    on and, with ``tokenizer.distillation_text``, what sentencepiece reads besides the pairs."""
    from psp_st.distillation import distillation_sentences
    from psp_st.evaluation.decontamination import evaluation_sentences
    from psp_st.io.data_dir import data_folder

    distil = recipe.distillation
    folder = data_folder(data_dir)
    return distillation_sentences(  # in the training pairs' datasets cache: bitext sources reuse their filter results
        distil.sources,
        seed=seed,
        exclude=evaluation_sentences(folder),
        data_dir=folder,
        cache_dir=datasets_cache(recipe.data),
        max_words=distil.max_words,
    )


def build_distillation(
    config: Recipe | dict[str, Any],
    model,
    seed: int,
    timings: dict[str, float] | None = None,
    data_dir: str | os.PathLike | None = None,
    sample: list | None = None,
):
    """The sentence-distillation objective of ``distillation`` (``None`` when its weight is 0), teacher vectors
    from :func:`psp_st.distillation.teacher_vectors`. ``timings`` receives ``teacher_sentences_seconds``; ``sample``:
    the :func:`distillation_sample` already drawn (by :func:`build_model`), else drawn here."""
    recipe = _recipe(config)
    distil = recipe.distillation
    if not distil.weight:
        return None
    from psp_st.distillation import teacher_vectors
    from psp_st.losses import TeacherDistillationLoss
    from psp_st.training.auxiliary import AuxiliaryObjective

    start = time.perf_counter()
    parts = sample or distillation_sample(recipe, seed, data_dir)
    if not any(texts for _, texts, _ in parts):
        raise ValueError(
            "recipe: distillation.sources give no sentence (after de-duplication, the evaluation sentences, exclude, "
            "filters and max_words): add sentences, or set distillation.weight: 0"
        )
    teachers = [text for _, _, texts in parts for text in texts]
    dataset = teacher_vectors(teachers, distil.teacher, distil.cache_dir, label="distillation sentences")
    students = [text for _, texts, _ in parts for text in texts]
    if students != dataset["sentence"]:  # teacher_column rows: the student reads the text, not its translation
        dataset = dataset.remove_columns("sentence").add_column("sentence", students)
    if timings is not None:
        timings["teacher_sentences_seconds"] = round(time.perf_counter() - start, 1)
    loss = TeacherDistillationLoss(model, teacher_dim=len(dataset[0]["embedding"]), seed=seed)
    return AuxiliaryObjective(
        dataset, loss, weight=distil.weight, batch_size=distil.batch_size, seed=seed, lr=distil.lr
    )


#: Recipe keys a resumed run may change (``section`` or ``section.key``): labels, caches, the progress display and
#: how far to train; any other difference is refused (:func:`recipe_changes`).
RESUMABLE_KEYS = (
    "name",
    "description",
    "release",
    "data.cache_dir",
    "distillation.cache_dir",
    "trainer.max_steps",
    "trainer.disable_tqdm",
)


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):  # an empty section adds no key
        return {key: inner for name, item in value.items() for key, inner in _flat(item, f"{prefix}{name}.").items()}
    return {prefix[:-1]: value}


def recipe_changes(before: Recipe, after: Recipe) -> list[str]:
    """``key: old -> new`` for every key (defaults filled in) that differs, besides :data:`RESUMABLE_KEYS`."""
    from dataclasses import asdict

    old, new = (_flat({**asdict(r), "trainer": {**DEFAULT_TRAINER_ARGS, **r.trainer}}) for r in (before, after))
    return [
        f"{key}: {repr(old.get(key))[:80]} -> {repr(new.get(key))[:80]}"
        for key in sorted(old.keys() | new.keys())
        if old.get(key) != new.get(key) and not any(key == k or key.startswith(f"{k}.") for k in RESUMABLE_KEYS)
    ]


def _train_run(
    recipe: Recipe,
    model,
    folder: Path,
    checkpoint: str | None,
    seed: int,
    train_dataset,
    evaluator,
    auxiliary,
    max_steps: int | None,
):
    """Train ``model`` (the only run or a soup member) in ``folder`` from ``checkpoint`` (or the start) at ``seed``;
    returns the trainer's output. ``auxiliary`` is bound to the recipe's first model: another member gets the same
    sentences with its own projection and batch order."""
    from transformers.trainer_utils import get_last_checkpoint

    from psp_st.losses import TeacherDistillationLoss
    from psp_st.training.megabatch import MegaBatchTrainer, read_checkpoint_state

    if auxiliary is not None and seed != recipe.seed:
        auxiliary = auxiliary.with_loss(TeacherDistillationLoss(model, auxiliary.labels.shape[1], seed=seed), seed)
    trainer = MegaBatchTrainer(
        model=model,
        args=recipe.training_arguments(str(folder), max_steps=max_steps, seed=seed),
        train_dataset=train_dataset,
        loss=build_loss(recipe, model),
        evaluator=evaluator,
        auxiliary=auxiliary,
    )
    try:
        return trainer.train(resume_from_checkpoint=checkpoint)
    except KeyboardInterrupt:
        last = get_last_checkpoint(str(folder))
        again = "--resume keeps the finished soup members and starts this one again" if recipe.soup > 1 else None
        where = (
            f"{last} is the last checkpoint: --resume continues from it" if last else again or "--resume starts again"
        )
        if last:
            try:
                read_checkpoint_state(last)
            except ValueError as error:  # interrupted while the trainer was writing it: --resume would refuse it
                where = str(error)
        raise KeyboardInterrupt(f"training interrupted at step {trainer.state.global_step}; {where}") from None


def train_from_config(
    config: dict | str | os.PathLike,
    output_dir: str | os.PathLike | None = None,
    resume: bool = False,
    max_steps: int | None = None,
    overwrite: bool = False,
    data_dir: str | os.PathLike | None = None,
    output_option: str = "--output",
):
    """Train the model a recipe describes; returns the trained ``SentenceTransformer`` (saved to ``output_dir/final``).

    ``output_dir`` (default ``runs/<name>``) holds ``initial/`` (what a resume rebuilds from), the recipe,
    ``checkpoint-*/`` and ``final/``. ``resume=True`` continues from the last checkpoint with the same data order;
    it refuses a folder holding no run and a changed recipe (:func:`recipe_changes`) or data. ``output_option``:
    the caller's name for ``output_dir`` in errors (``psp-st build`` trains in its ``--work-dir``).

    Like transformers' ``Trainer``, it seeds the process's global generators (``random``, ``numpy.random``,
    ``torch``) with the recipe's ``seed`` and leaves them there: seed again afterwards if your script draws more.
    """
    require_installed(("datasets", "accelerate", "pyarrow", "scipy"), "train", "train_from_config")
    import torch
    from transformers.trainer_utils import get_last_checkpoint

    from psp_st.arguments import check_int
    from psp_st.data.sources import pairs_per_language
    from psp_st.io.atomic import atomic_directory, atomic_write_bytes, atomic_write_json
    from psp_st.io.model_names import RECIPE_FILE
    from psp_st.io.output_policy import check_output
    from psp_st.losses import add_random_negatives
    from psp_st.modules.trusted import load_trusted
    from psp_st.training.norm_power import raise_row_norms
    from psp_st.training.soup import add_to_soup
    from psp_st.training.wise_ft import interpolate_from_initial

    if max_steps is not None:
        check_int("max_steps", max_steps)
    config_file = None if isinstance(config, dict) else find_recipe(config)
    config = load_config(config)
    recipe = parse_recipe(config)
    if recipe.megabatch.get("negative_guide"):  # a wrong name fails now, not after the teacher pass
        from psp_st.inference.load import open_model

        open_model(recipe.megabatch["negative_guide"], engine=True)  # threads None: torch's stay the run's
    if recipe.distillation.weight:  # a missing file fails now, not after the data, tokenizer and teacher pieces
        from psp_st.distillation.sentences import parse_source
        from psp_st.io.data_dir import resolve_data_files

        for number, entry in enumerate(recipe.distillation.sources):
            where = f"recipe: distillation.sources[{number}]"
            try:
                resolve_data_files(parse_source(entry, where)["path"], data_dir)
            except FileNotFoundError as error:
                raise FileNotFoundError(f"{where}: {error}") from None
    seed = recipe.seed
    output_dir = Path(output_dir or Path("runs") / recipe.name)
    initial, recorded = output_dir / INITIAL_FOLDER, output_dir / RECIPE_FILE
    if resume and output_dir.is_dir() and any(output_dir.iterdir()) and not initial.is_dir():
        raise ValueError(
            f"--resume: {output_dir} holds no psp-st run (no initial/ folder); give the --output of an earlier "
            "psp-st train, or drop --resume"
        )
    check_output(
        output_dir, inputs=[config_file, data_dir], overwrite=overwrite or resume, folder=True, option=output_option
    )
    members = [output_dir] if recipe.soup == 1 else [output_dir / "soup" / str(i) for i in range(recipe.soup)]
    checkpoints = [get_last_checkpoint(str(m)) if resume and m.is_dir() else None for m in members]
    checkpoint = next((c for c in checkpoints if c), None)
    # a member that finished without checkpoints (save_strategy "no") is kept, not trained again
    finished = [
        finished_member(m, max_steps) if resume and recipe.soup > 1 and c is None else None
        for m, c in zip(members, checkpoints, strict=True)
    ]
    going_on = "--resume" if output_option == "--output" else f"going on in the same {output_option}"  # build: no flag
    if resume and checkpoint is None and not any(finished):
        logger.warning("%s: no checkpoint in %s, starting from scratch", going_on, output_dir)
    if (checkpoint is not None or any(finished)) and recorded.is_file():
        try:
            started_with = parse_recipe(load_config(recorded))
        except ValueError as error:  # e.g. a key a newer psp-st knows
            raise ValueError(
                f"{going_on}: {recorded}, the recipe {output_dir} was started with, is not one this psp-st reads "
                f"({error}); go on with the psp-st that started the run, or start a new run (another {output_option}, "
                "or --overwrite)"
            ) from error
        changes = recipe_changes(started_with, recipe)
        if changes:
            raise ValueError(
                f"{going_on}: the recipe differs from the one {output_dir} was started with ({recorded}): "
                f"{'; '.join(changes)}; resume with that recipe, or start a new run (another {output_option}, or --overwrite)"
            )
    elif checkpoint is not None:  # an older psp-st recorded neither the recipe nor the data digest
        logger.warning(
            "%s: %s holds no %s (started by an older psp-st): its recipe and training data cannot be checked; go on "
            "only with the ones it was started with",
            going_on,
            output_dir,
            RECIPE_FILE,
        )
    evaluator = None
    if recipe.evaluation.sts_dev:  # read now: a bad file fails before the tokenizer, teacher pass and initial/
        from psp_st.data.loaders import load_table
        from psp_st.evaluation.loaders import STS_COLUMNS
        from psp_st.evaluation.sts import STSEvaluator

        try:
            dev = load_table(recipe.evaluation.sts_dev, STS_COLUMNS, STS_COLUMNS[:2], data_dir=data_dir)
        except (ValueError, OSError) as error:
            kind = FileNotFoundError if isinstance(error, FileNotFoundError) else ValueError
            raise kind(f"recipe: evaluation.sts_dev: {error}") from None
        evaluator = STSEvaluator({"sts-dev": dev})
    torch.manual_seed(seed)
    np.random.seed(seed)

    timings: dict[str, float] = {}
    start = time.perf_counter()
    pair_counts: dict[str, int] = {}
    train_dataset = load_recipe_pairs(recipe.data, seed, counts=pair_counts, data_dir=data_dir)
    timings["data_seconds"] = round(time.perf_counter() - start, 1)
    if recipe.megabatch.get("language_guard") and "lang" not in train_dataset.column_names:
        raise ValueError(
            "recipe: megabatch.language_guard needs a 'lang' column in the training pairs (a bitext source keeps its "
            "language column; map one with columns: {lang: <column>}), or drop language_guard"
        )

    batch = recipe.trainer.get("per_device_train_batch_size", DEFAULT_TRAINER_ARGS["per_device_train_batch_size"])
    if recipe.trainer.get("dataloader_drop_last") and len(train_dataset) < batch:
        raise ValueError(
            f"recipe: trainer.dataloader_drop_last drops the only mini-batch: {len(train_dataset)} pairs, fewer than "
            f"per_device_train_batch_size {batch}; lower the batch size or drop dataloader_drop_last"
        )
    resumed = (checkpoint is not None or any(finished)) and initial.is_dir()
    latest = next((c for c in reversed(checkpoints) if c), None)  # where the training went on
    if latest is None and any(finished):
        latest = str(members[max(i for i, info in enumerate(finished) if info)] / "final")
    resumed_from = Path(latest).relative_to(output_dir).as_posix() if resumed and latest else None
    sample: list = []  # drawn once: sentencepiece (tokenizer.distillation_text) and the distillation term read it
    model = load_trusted(initial) if resumed else build_model(recipe, train_dataset, seed, timings, data_dir, sample)
    auxiliary = build_distillation(recipe, model, seed, timings, data_dir=data_dir, sample=sample)
    digest = data_digest(train_dataset.with_format("arrow")[:], auxiliary.texts if auxiliary else ())
    if (
        resumed
        and (output_dir / DATA_FILE).is_file()
        and json.loads((output_dir / DATA_FILE).read_text(encoding="utf-8")) != digest
    ):
        raise ValueError(
            f"{going_on}: the training pairs or distillation sentences differ from those {output_dir} was trained on "
            f"({DATA_FILE}): a data file changed; restore it, or start a new run (another {output_option}, or --overwrite)"
        )
    if not resumed:  # once the teacher pass is done: a run that fails before leaves no initial/ to --overwrite
        model.save(str(initial))
    atomic_write_bytes(recorded, yaml.safe_dump(config, sort_keys=False, allow_unicode=True).encode())
    atomic_write_json(output_dir / DATA_FILE, digest)
    if recipe.loss["name"] == "contrastive":
        train_dataset = add_random_negatives(train_dataset, seed=seed)
    model.model_card_data.model_name = recipe.description or recipe.name
    souped = recipe.soup > 1
    soup: dict[str, torch.Tensor] = {}
    timings["training_seconds"] = 0.0
    last: dict = {}  # the last member's step count and metrics
    for index, (folder, checkpoint, done) in enumerate(zip(members, checkpoints, finished, strict=True)):
        older = not (folder / MEMBER_FILE).is_file()  # older psp-st wrote no record: kept only beside a checkpoint
        if done or (souped and resumed and checkpoint is None and (folder / "final").is_dir() and older):
            member = load_trusted(folder / "final")
            last = done or last
        else:
            member = model if index == 0 else load_trusted(initial)
            start = time.perf_counter()
            output = _train_run(
                recipe, member, folder, checkpoint, seed + index, train_dataset, evaluator, auxiliary, max_steps
            )
            last = {"global_step": output.global_step, "metrics": output.metrics, "max_steps": max_steps}
            timings["training_seconds"] = round(timings["training_seconds"] + time.perf_counter() - start, 1)
            if souped:
                with atomic_directory(folder / "final") as temporary:
                    member.save(str(temporary))
                atomic_write_json(folder / MEMBER_FILE, last)  # after final/: a kill between trains it again
        if souped:
            add_to_soup(soup, member, recipe.soup)
    if souped:
        model.load_state_dict(soup)
    if recipe.wise_ft != 1:
        interpolate_from_initial(model, load_trusted(initial), recipe.wise_ft)
    if recipe.norm_power != 1:
        raise_row_norms(model[0].embedding, recipe.norm_power)
    final = output_dir / "final"
    with atomic_directory(final) as temporary:  # a crash leaves no partial final/
        model.save(str(temporary))
    model.model_card_data.save_dir = str(final)
    metrics = {
        **last["metrics"],
        "global_step": last["global_step"],
        "train_pairs": len(train_dataset),
        "pairs_per_source": pair_counts,
        **({"pairs_per_language": pairs_per_language(train_dataset)} if "lang" in train_dataset.column_names else {}),
        "stage_seconds": timings,
        "distillation": auxiliary.config() if auxiliary is not None else None,
    }
    if resumed_from:  # this process's times only: the build record says so
        metrics["resumed_from"] = resumed_from
    if souped:
        metrics["soup"] = {"members": recipe.soup, "seeds": [seed + i for i in range(recipe.soup)]}
    if recipe.wise_ft != 1:
        metrics["wise_ft"] = recipe.wise_ft
    if recipe.norm_power != 1:
        metrics["norm_power"] = recipe.norm_power
    atomic_write_json(output_dir / "train_metrics.json", metrics)
    logger.info("saved %s", final)
    return model
