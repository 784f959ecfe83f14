"""Annealed mega-batching inside ``SentenceTransformerTrainer`` (Wieting & Gimpel 2018; Wieting et al., P-SP)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from sentence_transformers import SentenceTransformerTrainer
from torch import nn
from torch.utils.data import DataLoader, IterableDataset
from transformers.trainer import TRAINER_STATE_NAME, TrainerState
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, TrainOutput, get_last_checkpoint

from psp_st.io.atomic import atomic_write_json
from psp_st.losses.hard_negatives import mine_hardest_negatives, text_ids
from psp_st.training.arguments import PSPTrainingArguments
from psp_st.training.auxiliary import AuxiliaryObjective
from psp_st.training.finite import FiniteGuard, first_non_finite_parameter, non_finite_error
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
    """Check the state files a resume reads from ``checkpoint`` (its JSON, ``torch.load`` and safetensors files) and return its
    mined negatives (``None``: none saved; ``mining``: a mega-batching run, they must be there); a damaged or missing
    file is a ``ValueError`` naming it and the checkpoint to resume from instead."""
    from safetensors import safe_open
    from transformers.trainer_pt_utils import safe_globals

    folder = Path(checkpoint)
    for name in (TRAINER_STATE_NAME, *([MINING_STATE_FILE] if mining else [])):
        if not (folder / name).is_file():  # the trainer writes its state last: a save that was cut short
            raise ValueError(f"{folder / name} is missing: {_damaged(folder)}")
    negatives = None
    for file in sorted(folder.iterdir()):
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
    hint = (
        f"delete (or move away) {folder} and --resume continues from "
        f"{folder.parent / f'{PREFIX_CHECKPOINT_DIR}-{earlier[-1]}'}"
        if earlier
        else "there is no earlier checkpoint: train again without --resume (with --overwrite)"
    )
    return f"the checkpoint is damaged (an interrupted save, or a file the trainer did not write); {hint}"


class MegaBatchStream(IterableDataset):
    """One epoch of training mini-batches with negatives mined over annealed mega-batches.

    Per mega-batch of M mini-batches: fetch the rows (one Arrow ``take``), embed both sides with the current
    model in eval mode without gradient, mine for every pair the hardest opposite-side sentence of the whole
    mega-batch except its partner (and same-group / same-text sentences), then yield the M mini-batches one
    by one: rows of the mega-batch's features, with two extra columns :data:`NEGATIVE_COLUMNS`.

    The data order is a pure function of ``(seed, epoch)`` and M of the global mini-batch index, so a resumed
    run sees the same batches: the stream asks ``global_step()`` where training stands when an epoch starts,
    and yields ``None`` placeholders for the mini-batches the trainer skips (it drops exactly those).
    """

    def __init__(
        self,
        dataset,
        columns: tuple[str, str],
        args: PSPTrainingArguments,
        schedule: MegaBatchSchedule,
        preprocess: Callable[[list[str]], dict[str, Any]],
        embed: Callable[[dict[str, Any]], torch.Tensor],
        global_step: Callable[[], int],
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
        self.batch_size = args.train_batch_size
        self.group_column = args.group_column if args.group_column in dataset.column_names else None
        self.mining_dtype = getattr(torch, args.mining_dtype)
        self.current_megabatch_size = schedule.size_at(0)
        #: The negatives of the last mined mega-batch, saved with each checkpoint (``MINING_STATE_FILE``).
        self.mined: dict[str, Any] | None = None
        #: Negatives saved with the checkpoint a run resumes from, reused inside that mega-batch: mining again would
        #: see weights that changed since, so reusing them keeps a resumed run bit-identical to an uninterrupted one.
        self.restored: dict[str, Any] | None = None

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.args.dataloader_drop_last else -(-n // self.batch_size)

    def batches(self, epoch: int) -> list[np.ndarray]:
        """Row indices of every mini-batch of ``epoch`` (deterministic in ``seed`` and ``epoch``)."""
        order = np.random.default_rng([self.args.seed, epoch]).permutation(len(self.dataset))
        return [
            order[start : start + self.batch_size] for start in range(0, len(self) * self.batch_size, self.batch_size)
        ]

    def position(self) -> tuple[int, int]:
        """``(epoch, mini-batches already trained in it)`` from the trainer's global step."""
        updates_per_epoch = max(-(-len(self) // self.args.gradient_accumulation_steps), 1)
        step = self.global_step()
        epoch = step // updates_per_epoch
        return epoch, (step - epoch * updates_per_epoch) * self.args.gradient_accumulation_steps

    def __iter__(self) -> Iterator[dict[str, Any] | None]:
        epoch, skip = self.position()
        batches = self.batches(epoch)
        for start, end in self.schedule.boundaries(epoch * len(self), len(batches)):
            if end <= skip:
                yield from [None] * (end - start)
                continue
            self.current_megabatch_size = end - start
            yield from self._megabatch(batches[start:end], skip=max(skip - start, 0), key=(epoch, start))

    def _negatives(self, key: tuple[int, int], rows: int, mine: Callable[[], tuple[torch.Tensor, torch.Tensor]]):
        restored, self.restored = self.restored, None
        if restored is not None and tuple(restored["key"]) == key and len(restored["anchor"]) == rows:
            pair = torch.as_tensor(restored["anchor"]), torch.as_tensor(restored["positive"])
        else:
            pair = mine()
        self.mined = {"key": list(key), "anchor": pair[0].tolist(), "positive": pair[1].tolist()}
        return pair

    def _megabatch(
        self, batches: list[np.ndarray], skip: int, key: tuple[int, int] = (0, 0)
    ) -> Iterator[dict[str, Any] | None]:
        indices = np.concatenate(batches)
        rows = self.dataset[indices]
        first, second = (self._texts(rows, column, indices) for column in self.columns)
        groups = None
        if self.group_column is not None:
            groups = torch.as_tensor(np.asarray(rows[self.group_column], dtype=np.int64))
        anchor_languages = None
        if self.language_column is not None:  # the language of each first sentence (the second side: one language)
            codes, _ = pd.factorize(pd.Series(rows[self.language_column], dtype=object).fillna(""))
            anchor_languages = torch.from_numpy(codes.astype(np.int64))
        anchor_ids = positive_ids = None
        if self.args.text_guard:
            anchor_ids, positive_ids = text_ids(first, second)
        # tokenize each side of the mega-batch once; mini-batches (and their negatives) are row selections
        features = [self.preprocess(first), self.preprocess(second)]
        for side in features:
            if not _row_indexable(side, len(indices)):
                raise TypeError(
                    "mega-batching takes mini-batches as rows of the mega-batch's features: the model's preprocess "
                    f"must give one row per text (right-padded, with an attention_mask), got {sorted(side)}"
                )

        def mine() -> tuple[torch.Tensor, torch.Tensor]:
            return mine_hardest_negatives(
                self.embed(features[0]),
                self.embed(features[1]),
                groups,
                anchor_ids,
                positive_ids,
                self.args.mining_chunk_size,
                self.mining_dtype,
                anchor_languages=anchor_languages,
            )

        negative_of_anchor, negative_of_positive = self._negatives(key, len(indices), mine)
        columns = (self.columns[0], self.columns[1]) + NEGATIVE_COLUMNS
        offset = 0
        for number, batch in enumerate(batches):
            span = torch.arange(offset, offset + len(batch))
            offset += len(batch)
            if number < skip:  # trained before the checkpoint this run resumed from
                yield None
                continue
            parts = (
                (features[0], span),
                (features[1], span),
                (features[1], negative_of_anchor[span]),
                (features[0], negative_of_positive[span]),
            )
            yield {
                f"{column}_{key}": value
                for column, (feature, rows_) in zip(columns, parts, strict=True)
                for key, value in take_rows(feature, rows_).items()
            }

    @staticmethod
    def _texts(rows: dict[str, list], column: str, indices: np.ndarray) -> list[str]:
        texts = rows[column]
        bad = [i for i, text in enumerate(texts) if not isinstance(text, str) or not text.strip()]
        if bad:
            row = int(indices[bad[0]])
            raise ValueError(
                f"training dataset row {row}, column {column!r}: expected a non-empty string, got "
                f"{texts[bad[0]]!r} ({len(bad)} bad value(s) in this mega-batch); filter the dataset "
                "first (psp_st.data validation drops and counts such rows)"
            )
        return texts


class MegaBatchTrainer(SentenceTransformerTrainer):
    """``SentenceTransformerTrainer`` whose train dataloader mines hardest negatives over annealed mega-batches.

    Faithful to the reference P-SP / ParaNMT code: M mini-batches are embedded together with no gradient and
    dropout off; each pair's negative is the most similar *opposite-side* sentence of the mega-batch except its
    partner; then training proceeds mini-batch by mini-batch (M optimizer steps), re-embedding the negatives
    with gradient (use :class:`~psp_st.losses.ParaphraseMarginLoss`, which reads the 4 columns). M starts at 1
    and grows by 1 every ``anneal`` mini-batches up to ``megabatch_size``; the growth carries across epochs
    and checkpoint/resume (:class:`~psp_st.training.schedule.MegaBatchSchedule`). Checkpointing, evaluation,
    logging (plus ``megabatch_size``) and multiple epochs are ST's own.

    Differences from the reference code, on purpose: a group guard (``group_column``: pairs of one group,
    e.g. captions of one image, are never negatives of each other) and a text guard (a sentence equal to the
    anchor or its partner is never its negative), and with ``args.language_guard`` a language guard (a negative
    always has the language of the sentence it stands in for); mining is matrix ops over the whole mega-batch.

    Args:
        args: :class:`~psp_st.training.PSPTrainingArguments` (the mega-batch options are its fields).
        auxiliary: an :class:`~psp_st.training.auxiliary.AuxiliaryObjective` (e.g. sentence distillation)
            added to every training step's loss; it never enters the mega-batch stream, so mining sees pairs only.
        *others: as :class:`~sentence_transformers.SentenceTransformerTrainer`.

    Single process only (CPU or one GPU): the mega-batch stream is not sharded across processes.
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
        group_column = self.args.group_column
        columns = getattr(self.train_dataset, "column_names", None) or []
        if self.schedule is None and self.train_dataset is not None:
            # without mega-batching the collator would tokenize the group ids and languages as text
            dropped = [name for name in (group_column, *METADATA_COLUMNS) if name and name in columns]
            if dropped:
                dataset: Any = self.train_dataset  # a datasets Dataset/DatasetDict (it has column_names)
                self.train_dataset = dataset.remove_columns(dropped)
        if self.args.sparse_embeddings:
            for module in self.model.modules():
                if isinstance(module, (nn.Embedding, nn.EmbeddingBag)):
                    module.sparse = True

    def add_model_card_callback(self, default_args_dict: dict[str, Any]) -> None:
        """ST's card callback, shown the training set without :data:`METADATA_COLUMNS`: its statistics tokenize
        every string column, and a ``lang`` column is not text (it is null for pairs without a language)."""
        dataset: Any = self.train_dataset
        metadata = [name for name in METADATA_COLUMNS if name in (getattr(dataset, "column_names", None) or [])]
        if not metadata:
            return super().add_model_card_callback(default_args_dict)
        self.train_dataset = dataset.remove_columns(metadata)
        try:
            super().add_model_card_callback(default_args_dict)
        finally:
            self.train_dataset = dataset

    # -- data ---------------------------------------------------------------------------------------------
    def get_train_dataloader(self) -> DataLoader:
        if self.schedule is None:
            return super().get_train_dataloader()
        from datasets import Dataset

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
                chunk = take_rows(features, torch.arange(start, min(start + step, n)))
                chunk = {k: v.to(model.device) if isinstance(v, torch.Tensor) else v for k, v in chunk.items()}
                chunks.append(model(chunk)["sentence_embedding"].float())
            return torch.cat(chunks)
        finally:
            model.train(was_training)

    def num_examples(self, dataloader: DataLoader) -> int:
        stream = getattr(dataloader, "dataset", None)
        if isinstance(stream, MegaBatchStream):
            return len(stream.dataset)  # pairs, not mini-batches
        return super().num_examples(dataloader)

    # -- training step ------------------------------------------------------------------------------------
    def training_step(self, model, inputs, *args: Any, **kwargs: Any) -> torch.Tensor:
        loss = super().training_step(model, inputs, *args, **kwargs)
        if not bool(torch.isfinite(loss).all()):
            raise non_finite_error("the loss", self.state.global_step + 1, self.args.output_dir or "")
        return loss

    def train(self, resume_from_checkpoint: str | bool | None = None, *args: Any, **kwargs: Any):
        """ST's ``train``; a resumed run first checks the checkpoint and reads its mined negatives (exact
        mid-mega-batch resume). A checkpoint at ``max_steps`` resumes with zero steps (transformers trains one)."""
        checkpoint = resume_from_checkpoint
        if checkpoint is True:
            checkpoint = get_last_checkpoint(self.args.output_dir or "")
        if isinstance(checkpoint, str):
            self._restored_mining = read_checkpoint_state(checkpoint, mining=self.schedule is not None)
            if self.auxiliary is not None:
                self.auxiliary.load(checkpoint, self.model)
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
        name = first_non_finite_parameter(self.model)
        if name is not None:
            raise non_finite_error(f"weight '{name}'", self.state.global_step, self.args.output_dir or "")
        return output

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        """The trainer's save; a checkpoint also gets the negatives of the mega-batch in progress, written before
        the trainer's state (its last file), so a checkpoint with a state is whole (:func:`read_checkpoint_state`)."""
        super().save_model(output_dir, _internal_call=_internal_call)
        mined = self._stream.mined if self._stream is not None else None
        if _internal_call and output_dir and self.args.should_save:
            if mined is not None:
                atomic_write_json(os.path.join(output_dir, MINING_STATE_FILE), mined)
            if self.auxiliary is not None:
                self.auxiliary.save(output_dir, self.model)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss = super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)
        if self.auxiliary is None or self.auxiliary.weight == 0 or not model.training:
            return loss
        # a (loss, outputs) tuple exactly when return_outputs
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
            parameters: list[nn.Parameter] | list[dict[str, Any]] = (
                [p for p in self.loss.parameters() if p.requires_grad]
                if isinstance(self.loss, nn.Module)
                else [p for p in self.model.parameters() if p.requires_grad]
            )
            if self.auxiliary is not None and self.auxiliary.parameters(self.model):
                groups: list[dict[str, Any]] = [
                    {"params": parameters},
                    {
                        "params": self.auxiliary.parameters(self.model),
                        "lr": self.auxiliary.lr if self.auxiliary.lr is not None else self.args.learning_rate,
                    },
                ]
                parameters = groups
            self.optimizer = SparseDenseAdam(
                parameters,
                lr=self.args.learning_rate,
                betas=(self.args.adam_beta1, self.args.adam_beta2),
                eps=self.args.adam_epsilon,
                weight_decay=self.args.weight_decay,
            )
        return self.optimizer

    # Private overrides kept on purpose: transformers clips and measures the gradient norm through accelerate's
    # clip_grad_norm_, which cannot read sparse gradients, and offers no public hook or argument to replace it
    # (the norm is computed on every step even with max_grad_norm=0).
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
    """Select ``rows`` of padded features and trim the padding columns no selected row needs.

    Works for any module whose ``preprocess`` emits right-padded ``(n, length)`` tensors plus an
    ``attention_mask`` (psp-st encoders, HF transformers): no re-tokenization, no knowledge of pad ids.
    """
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
