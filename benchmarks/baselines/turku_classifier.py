"""The Turku multi-output paraphrase classifier: one transformer pass over a pair, four prediction heads.

Written here rather than as a Sentence-Transformers ``CrossEncoder`` because the CrossEncoder has one score
head and losses that see one score per pair, while this model needs five pooled states, four heads and a loss
whose flag terms exist only for base-label-4 rows. It still saves like a CrossEncoder folder: the transformer
with ``save_pretrained`` (``config.json`` + ``model.safetensors`` + tokenizer files), plus
``turku_config.json`` and ``turku_heads.safetensors`` for the heads. Nothing is ever unpickled.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from psp_st.evaluation.turku_labels import BASE_LABELS, FLAGGED_BASE, TurkuLabel, parse_labels
from psp_st.io.atomic import atomic_directory

if TYPE_CHECKING:
    from transformers import PreTrainedModel

#: Version of the folder layout written by :meth:`TurkuClassifier.save`.
TURKU_FORMAT_VERSION = 1
#: Classes of the subsumption head ("" = no flag), the style head and the minor-deviation head (trained on
#: base label FLAGGED_BASE only).
SUBSUMPTION_CLASSES: tuple[str, ...] = ("", "<", ">")
STYLE_CLASSES: tuple[str, ...] = ("", "s")
MINOR_CLASSES: tuple[str, ...] = ("", "i")
#: The heads in output order, with their classes.
HEADS: dict[str, tuple[str, ...]] = {
    "base": BASE_LABELS,
    "subsumption": SUBSUMPTION_CLASSES,
    "style": STYLE_CLASSES,
    "minor": MINOR_CLASSES,
}


def _check_pairs(sentences1: Sequence[str], sentences2: Sequence[str]) -> None:
    if len(sentences1) != len(sentences2):
        raise ValueError(f"got {len(sentences1)} first sentences but {len(sentences2)} second sentences")
    for column, texts in (("sentence1", sentences1), ("sentence2", sentences2)):
        for row, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"{column}, row {row}: expected a string, got {type(text).__name__}")
            if not text.strip():
                raise ValueError(f"{column}, row {row}: empty sentence")


class TurkuClassifier(nn.Module):
    """Pairwise paraphrase classifier predicting a full Turku label (base label plus flags).

    The pair is encoded as ``[CLS] A [SEP] B [SEP]``. From the last layer, five states are concatenated: the
    ``[CLS]`` state, the two ``[SEP]`` states, and the mean of A's and of B's token states. Four linear heads
    read that vector (after dropout): the base label (1/2/3/4), subsumption (none/``<``/``>``), style
    (none/``s``) and minor deviation (none/``i``). The flag heads are trained only on rows whose gold base label
    is 4 (no gradient otherwise), and at prediction time they are read only when the predicted base label is 4.

    Args:
        transformer: a Hugging Face encoder (``AutoModel``) whose output has ``last_hidden_state``.
        tokenizer: its fast tokenizer (pair encoding with ``sequence_ids``).
        max_length: maximum tokens of a pair (longest sequence truncated first).
        dropout: dropout on the concatenated features during training.

    References:
        Kanerva et al., "Towards Diverse and Contextually Anchored Paraphrase Modeling: A Dataset and Baselines
        for Finnish", Natural Language Engineering (2023), section 7.1.

    Example:
        ::

            from . import TurkuClassifier

            model = TurkuClassifier.from_backbone("all-MiniLM-L6-v2")
            model.fit(["Hän lähti."], ["Hän meni pois."], ["4"], epochs=1)
            model.predict([("Hän lähti.", "Hän meni pois.")])  # ['4']
    """

    config_file_name = "turku_config.json"
    heads_file_name = "turku_heads.safetensors"

    def __init__(
        self, transformer: PreTrainedModel, tokenizer: Any, max_length: int = 128, dropout: float = 0.1
    ) -> None:
        super().__init__()
        if not getattr(tokenizer, "is_fast", False):
            raise TypeError("TurkuClassifier needs a fast (Rust) tokenizer: it locates A and B with sequence_ids")
        self.transformer = transformer
        self.tokenizer = tokenizer
        self.max_length = int(max_length)
        self.dropout = nn.Dropout(dropout)
        hidden = int(transformer.config.hidden_size)
        self.feature_dim = 5 * hidden
        self.heads = nn.ModuleDict({name: nn.Linear(self.feature_dim, len(classes)) for name, classes in HEADS.items()})

    # ----------------------------------------------------------------------------------------------------------
    # Construction and persistence
    # ----------------------------------------------------------------------------------------------------------
    @classmethod
    def from_backbone(cls, model_name_or_path: str, max_length: int = 128, dropout: float = 0.1, seed: int = 0):
        """A new classifier over a pretrained transformer (a folder, a Hub name, or ``all-MiniLM-L6-v2``)."""
        from transformers import AutoModel, AutoTokenizer

        from psp_st.io.model_names import resolve_model_name

        path = resolve_model_name(model_name_or_path)
        torch.manual_seed(seed)
        return cls(AutoModel.from_pretrained(path), AutoTokenizer.from_pretrained(path), max_length, dropout)

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "format_version": TURKU_FORMAT_VERSION,
            "max_length": self.max_length,
            "dropout": self.dropout.p,
            "heads": {name: list(classes) for name, classes in HEADS.items()},
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the folder atomically: transformer + tokenizer (safetensors), heads, ``turku_config.json``."""
        from safetensors.torch import save_file

        with atomic_directory(path) as tmp:
            self.transformer.save_pretrained(tmp, safe_serialization=True)
            self.tokenizer.save_pretrained(tmp)
            heads = {key: value.detach().cpu().contiguous() for key, value in self.heads.state_dict().items()}
            save_file(heads, str(tmp / self.heads_file_name))
            with open(tmp / self.config_file_name, "w", encoding="utf-8") as handle:
                json.dump(self.get_config_dict(), handle, indent=2)

    @classmethod
    def load(cls, path: str | os.PathLike, device: str = "cpu") -> TurkuClassifier:
        """Open a folder written by :meth:`save`; a missing or mismatched file is reported by name."""
        from safetensors.torch import load_file
        from transformers import AutoModel, AutoTokenizer

        path = Path(path)
        config_path, heads_path = path / cls.config_file_name, path / cls.heads_file_name
        for required in (config_path, heads_path, path / "config.json"):
            if not required.is_file():
                raise FileNotFoundError(f"{required} is missing: {path} is not a TurkuClassifier folder")
        with open(config_path, encoding="utf-8") as handle:
            config = json.load(handle)
        if config.get("format_version") != TURKU_FORMAT_VERSION:
            raise ValueError(f"{config_path}: format_version {config.get('format_version')!r} is not supported")
        saved_heads = {name: tuple(classes) for name, classes in config.get("heads", {}).items()}
        if saved_heads != HEADS:
            raise ValueError(f"{config_path}: heads {saved_heads} differ from this version's {HEADS}")
        model = cls(
            AutoModel.from_pretrained(path),
            AutoTokenizer.from_pretrained(path),
            max_length=config["max_length"],
            dropout=config["dropout"],
        )
        state = load_file(str(heads_path))
        expected = set(model.heads.state_dict())
        if set(state) != expected:
            raise ValueError(f"{heads_path}: tensors {sorted(state)} do not match the heads {sorted(expected)}")
        model.heads.load_state_dict(state)
        return model.to(device).eval()

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    # ----------------------------------------------------------------------------------------------------------
    # Encoding
    # ----------------------------------------------------------------------------------------------------------
    def tokenize(self, sentences1: Sequence[str], sentences2: Sequence[str]) -> dict[str, torch.Tensor]:
        """Encode pairs; adds ``a_mask``/``b_mask`` (tokens of A / B) and the two separator positions."""
        _check_pairs(sentences1, sentences2)
        encoding = self.tokenizer(
            list(sentences1),
            list(sentences2),
            truncation="longest_first",
            max_length=self.max_length,
            padding=True,
            return_tensors="pt",
        )
        width = encoding["input_ids"].shape[1]
        sequence_ids = np.array(
            [[-1 if s is None else s for s in encoding.sequence_ids(i)] for i in range(len(sentences1))], dtype=np.int64
        ).reshape(len(sentences1), width)
        a_mask = torch.from_numpy(sequence_ids == 0)
        b_mask = torch.from_numpy(sequence_ids == 1)
        positions = torch.arange(width).expand(len(sentences1), width)
        last_a = torch.where(a_mask, positions, torch.zeros_like(positions)).max(dim=1).values
        last_token = encoding["attention_mask"].sum(dim=1) - 1
        features = {key: value for key, value in encoding.items()}
        features.update(a_mask=a_mask, b_mask=b_mask, sep1_index=last_a + 1, sep2_index=last_token)
        return features

    def forward(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Logits of the four heads, ``{"base": (n, 4), "subsumption": (n, 3), "style": (n, 2), "minor": (n, 2)}``."""
        inputs = {key: features[key] for key in ("input_ids", "attention_mask", "token_type_ids") if key in features}
        hidden = self.transformer(**inputs).last_hidden_state
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        pooled = [hidden[:, 0], hidden[rows, features["sep1_index"]], hidden[rows, features["sep2_index"]]]
        for key in ("a_mask", "b_mask"):
            mask = features[key].to(hidden.dtype).unsqueeze(-1)
            pooled.append((hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0))
        vector = self.dropout(torch.cat(pooled, dim=-1))
        return {name: head(vector) for name, head in self.heads.items()}

    # ----------------------------------------------------------------------------------------------------------
    # Loss, training and prediction
    # ----------------------------------------------------------------------------------------------------------
    @staticmethod
    def label_targets(labels: Sequence[TurkuLabel]) -> dict[str, torch.Tensor]:
        """Class indices per head; ``flagged`` marks the rows (gold base label 4) that train the flag heads."""
        return {
            "base": torch.tensor([BASE_LABELS.index(label.base) for label in labels]),
            "subsumption": torch.tensor([SUBSUMPTION_CLASSES.index(label.subsumption) for label in labels]),
            "style": torch.tensor([STYLE_CLASSES.index(label.style) for label in labels]),
            "minor": torch.tensor([MINOR_CLASSES.index(label.minor) for label in labels]),
            "flagged": torch.tensor([label.base == FLAGGED_BASE for label in labels]),
        }

    @staticmethod
    def compute_loss(logits: dict[str, torch.Tensor], targets: dict[str, torch.Tensor]) -> torch.Tensor:
        """Cross-entropy of the base head plus, on flagged rows only, of each flag head.

        Rows whose base label is not 4 are left out of the flag terms (not multiplied by zero), so a batch
        without a base-4 row gives the flag heads no gradient at all.
        """
        loss = nn.functional.cross_entropy(logits["base"], targets["base"])
        flagged = targets["flagged"]
        if bool(flagged.any()):
            for name in ("subsumption", "style", "minor"):
                loss = loss + nn.functional.cross_entropy(logits[name][flagged], targets[name][flagged])
        return loss

    def fit(
        self,
        sentences1: Sequence[str],
        sentences2: Sequence[str],
        labels: Sequence[object],
        epochs: float = 1.0,
        batch_size: int = 16,
        learning_rate: float = 5e-5,
        warmup_ratio: float = 0.1,
        max_steps: int | None = None,
        seed: int = 0,
        show_progress_bar: bool = True,
        label_source: str = "labels",
    ) -> dict[str, float]:
        """Train with AdamW and a linear warm-up/decay schedule; returns ``{"steps", "seconds", "loss"}``.

        ``labels`` are Turku label strings (parsed strictly: a bad one raises ``ValueError`` naming its row in
        ``label_source``). A plain loop rather than a ``Trainer``: the loss needs the parsed multi-head targets
        and flag masks, which the Trainer's collators and loss contract do not carry.
        """
        from tqdm.auto import tqdm
        from transformers import get_linear_schedule_with_warmup

        parsed = parse_labels(labels, source=label_source)
        _check_pairs(sentences1, sentences2)
        if len(parsed) != len(sentences1):
            raise ValueError(f"got {len(parsed)} labels for {len(sentences1)} pairs")
        n = len(parsed)
        steps_per_epoch = math.ceil(n / batch_size)
        total = max_steps if max_steps is not None else max(1, math.ceil(epochs * steps_per_epoch))
        generator = torch.Generator().manual_seed(seed)
        optimizer = torch.optim.AdamW(self.parameters(), lr=learning_rate, weight_decay=0.01)
        scheduler = get_linear_schedule_with_warmup(optimizer, int(warmup_ratio * total), total)
        self.train()
        start, step, running = time.perf_counter(), 0, float("nan")
        with tqdm(total=total, desc="turku fit", disable=not show_progress_bar) as bar:
            while step < total:
                for batch in torch.randperm(n, generator=generator).split(batch_size):
                    if step >= total:
                        break
                    index = batch.tolist()
                    features = self.tokenize([sentences1[i] for i in index], [sentences2[i] for i in index])
                    features = {key: value.to(self.device) for key, value in features.items()}
                    targets = {k: v.to(self.device) for k, v in self.label_targets([parsed[i] for i in index]).items()}
                    loss = self.compute_loss(self(features), targets)
                    if not torch.isfinite(loss):
                        raise FloatingPointError(f"loss became {loss.item()} at step {step}")
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(self.parameters(), 1.0)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
                    running = loss.item() if math.isnan(running) else 0.98 * running + 0.02 * loss.item()
                    step += 1
                    bar.update(1)
                    bar.set_postfix(loss=f"{running:.3f}")
        self.eval()
        return {"steps": step, "seconds": time.perf_counter() - start, "loss": running}

    @torch.inference_mode()
    def predict_heads(
        self, pairs: Sequence[tuple[str, str]], batch_size: int = 64, show_progress_bar: bool = False
    ) -> dict[str, np.ndarray]:
        """Per-head class indices (argmax), each an array of shape ``(n,)``."""
        from tqdm.auto import tqdm

        self.eval()
        out: dict[str, list[np.ndarray]] = {name: [] for name in HEADS}
        for begin in tqdm(range(0, len(pairs), batch_size), desc="turku predict", disable=not show_progress_bar):
            chunk = pairs[begin : begin + batch_size]
            features = self.tokenize([a for a, _ in chunk], [b for _, b in chunk])
            logits = self({key: value.to(self.device) for key, value in features.items()})
            for name in HEADS:
                out[name].append(logits[name].argmax(dim=-1).cpu().numpy())
        return {name: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64) for name, parts in out.items()}

    def predict_labels(self, pairs: Sequence[tuple[str, str]], **kwargs) -> list[TurkuLabel]:
        """Parsed predictions: flags are set only where the predicted base label is 4."""
        heads = self.predict_heads(pairs, **kwargs)
        labels = []
        for i in range(len(pairs)):
            base = BASE_LABELS[heads["base"][i]]
            flags = [HEADS[head][heads[head][i]] for head in ("subsumption", "minor", "style")]
            labels.append(TurkuLabel(base, *flags) if base == FLAGGED_BASE else TurkuLabel(base))
        return labels

    def predict(self, pairs: Sequence[tuple[str, str]], **kwargs) -> list[str]:
        """Full label strings such as ``'4>i'`` or ``'2'``."""
        return [str(label) for label in self.predict_labels(pairs, **kwargs)]
