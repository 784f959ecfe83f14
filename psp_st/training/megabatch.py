"""Annealed mega-batching inside ``SentenceTransformerTrainer`` (Wieting & Gimpel 2018; Wieting et al., P-SP)."""

from __future__ import annotations

import functools
import json
import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import safe_open
from sentence_transformers import SentenceTransformerTrainer
from sentence_transformers.util import batch_to_device
from torch import nn
from torch.utils.data import DataLoader, IterableDataset
from transformers.trainer import TRAINER_STATE_NAME, TrainerState
from transformers.trainer_pt_utils import safe_globals
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, TrainOutput, get_last_checkpoint
from transformers.utils import check_torch_load_is_safe

from psp_st.io.atomic import atomic_write_json
from psp_st.losses.hard_negatives import mine_hardest_negatives, text_ids
from psp_st.losses.margin import ParaphraseMarginLoss
from psp_st.training.arguments import PSPTrainingArguments
from psp_st.training.auxiliary import (
    LOSS_STATE_FILE,
    AuxiliaryObjective,
    load_parameters,
    own_parameters,
    save_parameters,
)
from psp_st.training.finite import FiniteGuard, check_weights, non_finite_error
from psp_st.training.optimizer import SparseDenseAdam, clip_grad_norm_sparse
from psp_st.training.schedule import MegaBatchSchedule

logger = logging.getLogger(__name__)

#: File in a checkpoint folder holding the negatives of the mega-batch in progress (exact mid-mega-batch resume).
MINING_STATE_FILE = "megabatch_negatives.json"

#: Column names of the mined negatives, in the order ParaphraseMarginLoss reads them.
NEGATIVE_COLUMNS = ("anchor_negative", "positive_negative")

#: Columns of a training set that are neither text nor group (kept for the record, never fed to the model).
METADATA_COLUMNS = ("lang",)


def read_checkpoint_state(checkpoint: str | os.PathLike, mining: bool = False) -> dict[str, Any] | None:
    """Check the files a resume reads from ``checkpoint`` (JSON, ``torch.load``, safetensors) and return its mined
    negatives (``None``: none saved; ``mining``: they must be there); a damaged or missing file is a ``ValueError``
    naming it and the checkpoint to resume from instead."""
    folder = Path(checkpoint)
    for name in (TRAINER_STATE_NAME, *([MINING_STATE_FILE] if mining else [])):
        if not (folder / name).is_file():  # the trainer writes its state last: a save that was cut short
            raise ValueError(f"{folder / name} is missing: {_damaged(folder)}")
    negatives = None
    files = sorted(folder.iterdir())
    if any(file.suffix in (".pt", ".pth") for file in files):
        check_torch_load_is_safe()  # before torch 2.6 a crafted file runs code even with weights_only (transformers')
    for file in files:
        try:
            if file.name in (TRAINER_STATE_NAME, MINING_STATE_FILE):
                content = json.loads(file.read_text(encoding="utf-8"))
                negatives = content if file.name == MINING_STATE_FILE else negatives
            elif file.suffix in (".pt", ".pth"):
                with safe_globals():
                    torch.load(file, map_location="cpu", weights_only=True, mmap=True)
            elif file.suffix == ".safetensors":
                safe_open(file, "pt").keys()
        except Exception as error:  # torch, pickle and json raise many types; the file is what matters
            detail = " ".join(str(error).split())[:200]
            raise ValueError(f"{file} is unreadable ({type(error).__name__}: {detail}): {_damaged(folder)}") from error
    return negatives


def _damaged(folder: Path) -> str:
    current = folder.name.rpartition("-")[2]
    steps = [p.name.rpartition("-")[2] for p in folder.parent.glob(f"{PREFIX_CHECKPOINT_DIR}-*")]
    earlier = sorted(int(n) for n in steps if n.isdigit() and current.isdigit() and int(n) < int(current))
    hint = "there is no earlier checkpoint: train again without --resume (with --overwrite)"
    if earlier:
        previous = folder.parent / f"{PREFIX_CHECKPOINT_DIR}-{earlier[-1]}"
        hint = f"delete (or move away) {folder} and --resume continues from {previous}"
    return f"the checkpoint is damaged (an interrupted save, or a file the trainer did not write); {hint}"


class MegaBatchStream(IterableDataset):
    """One epoch of mini-batches, with the negatives (:data:`NEGATIVE_COLUMNS`) mined over annealed mega-batches.

    The order depends on ``(seed, epoch)`` and the global step only, so a resumed run sees the same batches; the
    mini-batches the trainer skips are ``None``.
    """

    def __init__(
        self,
        dataset,
        columns: tuple[str, str],
        args: PSPTrainingArguments,
        schedule: MegaBatchSchedule,
        preprocess: Callable[..., dict[str, Any]],
        embed: Callable[[dict[str, Any]], torch.Tensor],
        global_step: Callable[[], int],
        guide: Callable[[list[str]], np.ndarray] | None = None,
        prompts: tuple[str | None, str | None] = (None, None),
    ) -> None:
        super().__init__()
        self.language_column = METADATA_COLUMNS[0] if args.language_guard else None
        missing = [c for c in (*columns, self.language_column) if c and c not in dataset.column_names]
        if missing:
            raise ValueError(
                f"mega-batching: the training dataset has no column(s) {missing} (columns: {dataset.column_names})"
            )
        self.dataset = dataset
        self.columns = columns
        self.args = args
        self.schedule = schedule
        self.preprocess = preprocess
        self.embed = embed
        self.global_step = global_step
        #: Embeds texts with ``args.negative_guide`` (unit vectors) for the false-negative filter; None: no guide.
        self.guide = guide
        #: The prompt of each text column (``args.prompts``), given to ``preprocess`` as ST's data collator does.
        self.prompts = prompts
        self.batch_size = args.train_batch_size
        self.group_column = args.group_column if args.group_column in dataset.column_names else None
        self.mining_dtype = getattr(torch, args.mining_dtype)
        self.current_megabatch_size = schedule.size_at(0)
        #: The negatives of the last mined mega-batch, saved with each checkpoint (``MINING_STATE_FILE``).
        self.mined: dict[str, Any] | None = None
        #: Negatives of the checkpoint a run resumes from, reused in that mega-batch: mining again would see later
        #: weights, reusing them keeps a resumed run bit-identical.
        self.restored: dict[str, Any] | None = None

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.args.dataloader_drop_last else -(-n // self.batch_size)

    def batches(self, epoch: int) -> list[np.ndarray]:
        """Row indices of every mini-batch of ``epoch`` (deterministic in ``seed`` and ``epoch``)."""
        order = np.random.default_rng([self.args.seed, epoch]).permutation(len(self.dataset))
        return [order[i * self.batch_size : (i + 1) * self.batch_size] for i in range(len(self))]

    def position(self) -> tuple[int, int]:
        """``(epoch, mini-batches already trained in it)`` from the trainer's global step."""
        updates_per_epoch = max(-(-len(self) // self.args.gradient_accumulation_steps), 1)
        epoch, updates = divmod(self.global_step(), updates_per_epoch)
        return epoch, updates * self.args.gradient_accumulation_steps

    def __iter__(self) -> Iterator[dict[str, Any] | None]:
        epoch, skip = self.position()
        batches = self.batches(epoch)
        for start, end in self.schedule.boundaries(epoch * len(self), len(batches)):
            if end <= skip:
                yield from [None] * (end - start)
                continue
            self.current_megabatch_size = end - start
            yield from self._megabatch(batches[start:end], skip=max(skip - start, 0), key=(epoch, start))

    def _megabatch(
        self, batches: list[np.ndarray], skip: int, key: tuple[int, int] = (0, 0)
    ) -> Iterator[dict[str, Any] | None]:
        indices = np.concatenate(batches)
        rows = self.dataset[indices]
        first, second = (self._texts(rows, column, indices) for column in self.columns)
        groups = None if self.group_column is None else torch.from_numpy(_group_ids(rows[self.group_column]))
        anchor_languages = None
        if self.language_column is not None:  # the language of each first sentence (the second side: one language)
            import pandas as pd  # here, not at the top: a model card imports psp_st.training (push needs no pandas)

            codes, _ = pd.factorize(pd.Series(rows[self.language_column], dtype=object).fillna(""))
            anchor_languages = torch.from_numpy(codes.astype(np.int64))
        anchor_ids, positive_ids = text_ids(first, second) if self.args.text_guard else (None, None)
        # tokenize each side of the mega-batch once; mini-batches (and their negatives) are row selections
        features = [
            self.preprocess(texts, prompt=prompt) if prompt else self.preprocess(texts)
            for texts, prompt in zip((first, second), self.prompts, strict=True)
        ]
        for side in features:
            if not _row_indexable(side, len(indices)):
                raise TypeError(
                    "mega-batching takes mini-batches as rows of the mega-batch's features: the model's preprocess "
                    f"must give one row per text (right-padded, with an attention_mask), got {sorted(side)}"
                )
        restored, self.restored = self.restored, None
        if restored is not None and tuple(restored["key"]) == key and len(restored["anchor"]) == len(indices):
            negatives = torch.as_tensor(restored["anchor"]), torch.as_tensor(restored["positive"])
        else:
            guide = (
                None
                if self.guide is None
                else (torch.from_numpy(self.guide(first)), torch.from_numpy(self.guide(second)))
            )
            negatives = mine_hardest_negatives(
                self.embed(features[0]),
                self.embed(features[1]),
                groups,
                anchor_ids,
                positive_ids,
                self.args.mining_chunk_size,
                self.mining_dtype,
                anchor_languages=anchor_languages,
                guide=guide,
                guide_margin=self.args.guide_margin,
            )
        self.mined = {"key": list(key), "anchor": negatives[0].tolist(), "positive": negatives[1].tolist()}
        columns = (*self.columns, *NEGATIVE_COLUMNS)
        offset = 0
        for number, batch in enumerate(batches):
            span = torch.arange(offset, offset + len(batch))
            offset += len(batch)
            if number < skip:  # trained before the checkpoint this run resumed from
                yield None
                continue
            sides = (features[0], features[1], features[1], features[0])
            selections = (span, span, negatives[0][span], negatives[1][span])
            yield {
                f"{column}_{key}": value
                for column, side, selection in zip(columns, sides, selections, strict=True)
                for key, value in take_rows(side, selection).items()
            }

    @staticmethod
    def _texts(rows: dict[str, list], column: str, indices: np.ndarray) -> list[str]:
        texts = rows[column]
        bad = [i for i, text in enumerate(texts) if not isinstance(text, str) or not text.strip()]
        if bad:
            raise ValueError(
                f"training dataset row {int(indices[bad[0]])}, column {column!r}: expected a non-empty string, got "
                f"{texts[bad[0]]!r} ({len(bad)} bad value(s) in this mega-batch); filter the dataset "
                "first (psp_st.data validation drops and counts such rows)"
            )
        return texts


class MegaBatchTrainer(SentenceTransformerTrainer):
    """``SentenceTransformerTrainer`` whose train dataloader mines hardest negatives over annealed mega-batches.

    As the reference P-SP / ParaNMT code: M mini-batches are embedded together (no gradient, dropout off), each
    pair's negative is the most similar *opposite-side* sentence of the mega-batch but its partner, then M steps
    re-embed the negatives with gradient (:class:`~psp_st.losses.ParaphraseMarginLoss`). Beyond the reference, on
    purpose: group, text and language guards. ``auxiliary``: an :class:`~psp_st.training.auxiliary.AuxiliaryObjective`
    added to every step's loss (mining never sees it). Single process only: the stream is not sharded.
    """

    args: PSPTrainingArguments
    #: ST's default arguments (no ``args``), the required type, and the card's non-default hyperparameters
    training_args_class = PSPTrainingArguments

    def __init__(self, *others: Any, auxiliary: AuxiliaryObjective | None = None, **kwargs: Any) -> None:
        self.auxiliary = auxiliary
        self._stream: MegaBatchStream | None = None
        self._restored_mining: dict[str, Any] | None = None
        super().__init__(*others, **kwargs)
        self.schedule = (
            MegaBatchSchedule(self.args.megabatch_size, self.args.anneal) if self.args.megabatch_size else None
        )
        self.add_callback(FiniteGuard())
        self.guide = self._load_guide()
        if self.schedule is None and self.train_dataset is not None:
            if isinstance(self.loss, ParaphraseMarginLoss):  # its in-batch mining reads ST's labels as group ids
                self.train_dataset = _groups_as_labels(self.train_dataset, self.args.group_column)
            # without mega-batching the collator would tokenize the group ids and languages as text
            self.train_dataset = _without_columns(self.train_dataset, (self.args.group_column, *METADATA_COLUMNS))
        # evaluation batches go through ST's collator: it would tokenize the group ids and languages as text
        self.eval_dataset = _without_columns(self.eval_dataset, (self.args.group_column, *METADATA_COLUMNS))
        if self.args.sparse_embeddings:
            for module in self.model.modules():
                if isinstance(module, (nn.Embedding, nn.EmbeddingBag)):
                    module.sparse = True

    def _load_guide(self) -> Callable[[list[str]], np.ndarray] | None:
        """``args.negative_guide`` as a function of texts to unit vectors, loaded before training so a wrong name
        fails at once (a P-SP model runs on the torch-free engine, any other model through ST)."""
        if self.args.negative_guide is None:
            return None
        if self.schedule is None:
            raise ValueError(
                "negative_guide filters mined negatives: it needs mega-batching (megabatch_size, a recipe's megabatch.size)"
            )
        from psp_st.inference.encode import encode_texts
        from psp_st.inference.load import open_model

        threads = torch.get_num_threads()
        model = open_model(self.args.negative_guide, threads=1, engine=True)
        torch.set_num_threads(threads)  # a non-P-SP guide set the process's torch threads: training keeps its own
        return functools.partial(encode_texts, model, normalize=True)

    def add_model_card_callback(self, default_args_dict: dict[str, Any]) -> None:
        """ST's card callback, shown the training set without the group column and :data:`METADATA_COLUMNS` (its
        statistics and widget take every string column for text; group ids and ``lang`` are not)."""
        dataset = self.train_dataset
        self.train_dataset = _without_columns(dataset, (self.args.group_column, *METADATA_COLUMNS))
        try:
            super().add_model_card_callback(default_args_dict)
        finally:
            self.train_dataset = dataset

    def get_train_dataloader(self) -> DataLoader:
        if self.schedule is None:
            return super().get_train_dataloader()
        from datasets import Dataset

        if isinstance(self.train_dataset, dict):  # ST's multi-dataset training (DatasetDict included)
            raise TypeError(
                f"mega-batching mines negatives over one dataset, got a dict of datasets {list(self.train_dataset)}: "
                "join them (datasets.concatenate_datasets) into one, or set megabatch_size (a recipe's "
                "megabatch.size) to 0 for ST's multi-dataset training"
            )
        if not isinstance(self.train_dataset, Dataset):
            raise TypeError(
                "MegaBatchTrainer needs a map-style datasets.Dataset (memory-mapped Arrow is fine) to "
                f"mine over mega-batches, got {type(self.train_dataset).__name__}"
            )
        group_column = self.args.group_column
        text_columns = [c for c in self.train_dataset.column_names if c not in (group_column, *METADATA_COLUMNS)]
        if len(text_columns) != 2:
            raise ValueError(
                f"mega-batching expects exactly two text columns plus optional {group_column!r} and "
                f"{list(METADATA_COLUMNS)} columns, got {self.train_dataset.column_names}"
            )
        self._stream = MegaBatchStream(
            self.train_dataset,
            columns=(text_columns[0], text_columns[1]),
            args=self.args,
            schedule=self.schedule,
            preprocess=self.model.preprocess,
            embed=self.embed_for_mining,
            global_step=lambda: self.state.global_step,
            guide=self.guide,
            prompts=(
                column_prompt(self.args.prompts, text_columns[0]),
                column_prompt(self.args.prompts, text_columns[1]),
            ),
        )
        self._stream.restored, self._restored_mining = self._restored_mining, None
        # batch_size=None: the stream yields finished batches; the trainer's resume skip drops the first ones
        return DataLoader(self._stream, batch_size=None, collate_fn=_identity, num_workers=0)

    @torch.no_grad()
    def embed_for_mining(self, features: dict[str, Any]) -> torch.Tensor:
        """Embed preprocessed ``features`` with the current model in eval mode (dropout off), no gradient."""
        model = self.model
        was_training = model.training
        model.eval()
        try:
            n = next(v.shape[0] for v in features.values() if isinstance(v, torch.Tensor))
            chunks = []
            step = self.args.encode_batch_size
            for start in range(0, n, step):
                chunk = batch_to_device(take_rows(features, torch.arange(start, min(start + step, n))), model.device)
                chunks.append(model(chunk)["sentence_embedding"].float())
            return torch.cat(chunks)
        finally:
            model.train(was_training)

    def num_examples(self, dataloader: DataLoader) -> int:
        stream = getattr(dataloader, "dataset", None)
        if isinstance(stream, MegaBatchStream):
            return len(stream.dataset)  # pairs, not mini-batches
        return super().num_examples(dataloader)

    def training_step(self, model, inputs, *args: Any, **kwargs: Any) -> torch.Tensor:
        loss = super().training_step(model, inputs, *args, **kwargs)
        if not bool(torch.isfinite(loss).all()):
            raise non_finite_error("the loss", self.state.global_step + 1, self.args.output_dir or "")
        return loss

    def train(self, resume_from_checkpoint: str | bool | None = None, *args: Any, **kwargs: Any):
        """ST's ``train``; a resume first checks the checkpoint and reads its mined negatives. A checkpoint at
        ``max_steps`` resumes with zero steps (transformers would train one)."""
        last = resume_from_checkpoint is True
        checkpoint = get_last_checkpoint(self.args.output_dir or "") if last else resume_from_checkpoint
        if isinstance(checkpoint, str):
            self._restored_mining = read_checkpoint_state(checkpoint, mining=self.schedule is not None)
            if self.auxiliary is not None:
                self.auxiliary.load(checkpoint, self.model)
            path = os.path.join(checkpoint, LOSS_STATE_FILE)
            load_parameters(path, own_parameters(self.loss, self.model), "loss parameters (e.g. a projection)")
            state = TrainerState.load_from_json(os.path.join(checkpoint, TRAINER_STATE_NAME))
            if 0 < self.args.max_steps < state.global_step:
                raise ValueError(
                    f"{checkpoint} is at step {state.global_step}, past max_steps {self.args.max_steps}: resume "
                    f"with max_steps >= {state.global_step} (--max-steps), or train a new run"
                )
            if self.args.max_steps == state.global_step:  # finished: the weights it ended with, no step more
                self._load_from_checkpoint(checkpoint)  # ST's loader of resumed weights
                self.state = state
                return TrainOutput(state.global_step, 0.0, {})
        output = super().train(resume_from_checkpoint, *args, **kwargs)
        check_weights(self.model, self.state.global_step, self.args.output_dir)
        return output

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        """The trainer's save; a checkpoint also gets the negatives of the mega-batch in progress, written before the
        trainer's state (its last file), so a checkpoint with a state is whole."""
        super().save_model(output_dir, _internal_call=_internal_call)
        mined = self._stream.mined if self._stream is not None else None
        if _internal_call and output_dir and self.args.should_save:
            if mined is not None:
                atomic_write_json(os.path.join(output_dir, MINING_STATE_FILE), mined)
            if self.auxiliary is not None:
                self.auxiliary.save(output_dir, self.model)
            save_parameters(os.path.join(output_dir, LOSS_STATE_FILE), own_parameters(self.loss, self.model))

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss = super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)
        if self.auxiliary is None or self.auxiliary.weight == 0 or not model.training:
            return loss
        main, outputs = loss if isinstance(loss, tuple) else (loss, None)
        extra = self.auxiliary(self.model, self.state.global_step)
        self.track_loss_components({"pairs": main, "auxiliary": extra})
        return (main + extra, outputs) if isinstance(loss, tuple) else main + extra

    def create_optimizer(self, model=None):
        if not self.args.sparse_embeddings:
            if self.auxiliary is not None and self.auxiliary.parameters(self.model):
                raise ValueError(
                    "an auxiliary objective with its own parameters (e.g. a distillation projection) "
                    "needs sparse_embeddings=True (MegaBatchTrainer's optimizer trains them)"
                )
            return super().create_optimizer()
        if self.optimizer is None:
            # the losses hold the model and their own parameters (a projection); a dict of losses: all of them, as ST
            losses = nn.Sequential(OrderedDict(self.loss)) if isinstance(self.loss, dict) else self.loss
            owner = losses if isinstance(losses, nn.Module) else self.model
            groups: list[dict[str, Any]] = [{"params": [p for p in owner.parameters() if p.requires_grad]}]
            if self.auxiliary is not None and self.auxiliary.parameters(self.model):
                lr = self.auxiliary.lr if self.auxiliary.lr is not None else self.args.learning_rate
                groups.append({"params": self.auxiliary.parameters(self.model), "lr": lr})
            self.optimizer = SparseDenseAdam(
                groups,
                lr=self.args.learning_rate,
                betas=(self.args.adam_beta1, self.args.adam_beta2),
                eps=self.args.adam_epsilon,
                weight_decay=self.args.weight_decay,
            )
        return self.optimizer

    # Private overrides: transformers clips and measures the gradient norm (every step, even with max_grad_norm=0)
    # with accelerate's clip_grad_norm_, which cannot read sparse gradients, and has no public hook to replace it.
    def _clip_grad_norm(self, model):
        if not self.args.sparse_embeddings:
            return super()._clip_grad_norm(model)
        return clip_grad_norm_sparse(model.parameters(), self.args.max_grad_norm)

    def _get_grad_norm(self, model, grad_norm=None):
        if not self.args.sparse_embeddings:
            return super()._get_grad_norm(model, grad_norm)
        return float(grad_norm if grad_norm is not None else clip_grad_norm_sparse(model.parameters(), 0.0))

    def log(self, logs: dict[str, float], *args: Any, **kwargs: Any) -> None:
        if self._stream is not None and "loss" in logs:
            logs["megabatch_size"] = self._stream.current_megabatch_size
        return super().log(logs, *args, **kwargs)


def _without_columns(dataset: Any, names: tuple[str | None, ...]) -> Any:
    """``dataset`` (a datasets Dataset, or a dict of them) without those of ``names`` among its columns."""
    if isinstance(dataset, dict):  # DatasetDict included: each of its datasets has its own columns
        return type(dataset)({key: _without_columns(value, names) for key, value in dataset.items()})
    present = [name for name in names if name and name in (getattr(dataset, "column_names", None) or [])]
    return dataset.remove_columns(present) if present else dataset


def _groups_as_labels(dataset: Any, column: str | None) -> Any:
    """``dataset`` with its group id ``column`` as ST's ``label`` column (int64 ids coded as mega-batching codes them),
    which :class:`~psp_st.losses.ParaphraseMarginLoss` reads as group ids; unchanged without that column, with a
    ``label`` column already, or for a dict of datasets."""
    names = getattr(dataset, "column_names", None)
    if not column or not isinstance(names, list) or column not in names or "label" in names:
        return dataset
    return dataset.remove_columns(column).add_column("label", _group_ids(dataset[column][:]))


def _group_ids(values: list[Any]) -> np.ndarray:
    """int64 group ids of a mega-batch's rows: integer ids as they are (``-1``: none); other values (the shared data's
    image file names, ...) coded by :func:`~psp_st.data.groups.group_keys` (equal value, one group; missing: none)."""
    from psp_st.data.groups import group_keys

    array = np.asarray(values)
    return array.astype(np.int64) if array.dtype.kind in "iu" else group_keys(values)


def column_prompt(prompts: Any, column: str) -> str | None:
    """The prompt of text ``column`` in the training arguments' ``prompts`` (a str: every column; a dict: by column
    name), as ST's data collator reads them; a dict by dataset name needs a dict of datasets, which mega-batching
    does not take."""
    if isinstance(prompts, str):
        return prompts or None
    if isinstance(prompts, dict) and any(isinstance(value, dict) for value in prompts.values()):
        raise ValueError(
            f"prompts {prompts!r} map dataset names to prompts, but mega-batching trains one dataset: map its "
            "column names to prompts, e.g. {'sentence1': 'query: '}"
        )
    return prompts.get(column) if isinstance(prompts, dict) else None


def _identity(batch: Any) -> Any:
    return batch


def _row_indexable(features: dict[str, Any], n: int) -> bool:
    """Every tensor is per row (first dim ``n``) and 2-D ones come with an attention mask (right padding)."""
    tensors = [v for v in features.values() if isinstance(v, torch.Tensor)]
    return (
        bool(tensors)
        and all(v.ndim >= 1 and v.shape[0] == n for v in tensors)
        and (all(v.ndim == 1 for v in tensors) or isinstance(features.get("attention_mask"), torch.Tensor))
    )


def take_rows(features: dict[str, Any], rows: torch.Tensor) -> dict[str, Any]:
    """Select ``rows`` of right-padded features (with an ``attention_mask``) and trim the padding no row needs: no
    re-tokenization, no knowledge of pad ids."""
    mask = features.get("attention_mask")
    width = padded = None
    if isinstance(mask, torch.Tensor) and mask.ndim == 2:
        padded = mask.shape[1]
        width = max(int(mask[rows].sum(1).max()) if len(rows) else 1, 1)
    out = {}
    for key, value in features.items():
        if isinstance(value, torch.Tensor):
            value = value[rows]
            if width is not None and value.ndim >= 2 and value.shape[1] == padded:
                value = value[:, :width]
        out[key] = value
    return out
