"""Shared fixtures: the shared data folder (the real ../shared/data, else the synthetic in-repo copy) and tiny models and trainers.

Unit tests read :data:`DATA_DIR`: ``PSP_ST_DATA_DIR`` or ../shared/data when that folder exists, otherwise
tests/fixtures/shared_data (same layout and columns, a few dozen synthetic rows per file; rebuilt by
tests/fixtures/make_shared_data.py). Tests that need the real files (their row counts, quality levels) carry
``@pytest.mark.shared_data`` and are skipped, with the reason, when only the fixture folder is there.
"""

from __future__ import annotations

import os
import re
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
REAL_DATA_DIR = Path(os.environ.get("PSP_ST_DATA_DIR", REPO.parent / "shared" / "data"))
FIXTURE_DATA_DIR = REPO / "tests" / "fixtures" / "shared_data"
#: True when the real shared data folder is present (tests marked ``shared_data`` run only then).
REAL_DATA = REAL_DATA_DIR.is_dir()
DATA_DIR = REAL_DATA_DIR if REAL_DATA else FIXTURE_DATA_DIR

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def run_cli_without_sentence_transformers(args: list[str]):
    """Run ``psp-st ARGS`` in a fresh process (one thread) and fail if it imported Sentence-Transformers; returns the
    completed process (its stdout, for the caller's checks)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom psp_st.cli import main\n"
        f"assert main({args!r}) == 0\n"
        "assert 'sentence_transformers' not in sys.modules, 'sentence_transformers imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    return run


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("shared_data") is not None and not REAL_DATA:
        pytest.skip(
            f"needs the real shared data folder {REAL_DATA_DIR} (set PSP_ST_DATA_DIR); "
            "the synthetic fixture folder is not enough for this test"
        )


def data_path(relative: str) -> Path:
    """Path of a file under :data:`DATA_DIR`; skips the test with a clear reason when it is missing."""
    path = DATA_DIR / relative
    if not path.exists():
        pytest.skip(f"shared data file {path} is absent (set PSP_ST_DATA_DIR to the shared/data folder)")
    return path


@pytest.fixture(scope="session", autouse=True)
def datasets_cache(tmp_path_factory) -> Iterator[Path]:
    """The datasets cache (the Arrow copy of every file a test loads) in this session's temp folder, here and in
    the CLI subprocesses: left at ~/.cache/huggingface/datasets, each run added ~120 folders there (T13-1)."""
    path = tmp_path_factory.mktemp("hf-datasets-cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("HF_DATASETS_CACHE", str(path))  # read when datasets is first imported (subprocesses)
    if (config := sys.modules.get("datasets.config")) is not None:  # already imported while collecting
        patch.setattr(config, "HF_DATASETS_CACHE", path)
    yield path
    patch.undo()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared data folder: the real one when present, else the synthetic fixture copy."""
    return DATA_DIR


@pytest.fixture(scope="session")
def caption_sentences() -> list[str]:
    """20,000 English captions (Flickr8k side 1 + side 2; synthetic ones from the fixture folder), for tokenizers."""
    import pandas as pd

    frame = pd.read_parquet(data_path("training_pairs/flickr8k_captions.parquet"), columns=["sentence1", "sentence2"])
    return frame.sentence1.tolist()[:10_000] + frame.sentence2.tolist()[:10_000]


@pytest.fixture(scope="session")
def sp_tokenizer(caption_sentences):
    """A small sentencepiece model trained on :func:`caption_sentences` (session-wide, ~0.5 s)."""
    from psp_st.tokenization import SentencePieceTokenizer

    return SentencePieceTokenizer.train(caption_sentences, vocab_size=2000, seed=0)


@pytest.fixture
def psp_module(sp_tokenizer):
    """A fresh, untrained PSPEmbedding of dimension 32 over the shared small tokenizer."""
    import torch

    from psp_st.modules.psp import PSPEmbedding

    torch.manual_seed(0)
    return PSPEmbedding(sp_tokenizer, embedding_dim=32)


@pytest.fixture
def psp_model(psp_module):
    """A SentenceTransformer holding :func:`psp_module` (CPU)."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(modules=[psp_module], device="cpu")


@pytest.fixture
def caption_pairs(caption_sentences):
    """40 real caption pairs with group ids (4 pairs per group)."""
    from datasets import Dataset

    return Dataset.from_dict(
        {
            "sentence1": caption_sentences[:40],
            "sentence2": caption_sentences[10_000:10_040],
            "group_id": [i // 4 for i in range(40)],
        }
    )


@pytest.fixture
def make_trainer(tmp_path):
    """Build a MegaBatchTrainer over a fresh dim-32 model; records every training batch it computes a loss on.

    Keyword options that are PSPTrainingArguments fields (``megabatch_size``, ``anneal``, ...) go to the arguments,
    like ``args={...}``; the others (``auxiliary``) to the trainer.
    """
    from dataclasses import fields

    from sentence_transformers import SentenceTransformer

    from psp_st.losses import ParaphraseMarginLoss
    from psp_st.training import MegaBatchTrainer, PSPTrainingArguments

    class RecordingTrainer(MegaBatchTrainer):
        def compute_loss(self, model, inputs, *args, **kwargs):
            self.seen.append({k: v.clone() for k, v in inputs.items() if k.endswith("input_ids")})
            return super().compute_loss(model, inputs, *args, **kwargs)

    def build(module, dataset, output_dir=None, callbacks=None, **options):
        model = SentenceTransformer(modules=[module], device="cpu")
        trainer_args = {
            "output_dir": str(output_dir or tmp_path / "run"),
            "per_device_train_batch_size": 4,
            "num_train_epochs": 2,
            "learning_rate": 0.05,
            "report_to": "none",
            "use_cpu": True,
            "save_strategy": "steps",
            "save_steps": 4,
            "logging_steps": 100,
            "seed": 3,
            "disable_tqdm": True,
        }
        trainer_args.update(options.pop("args", {}))
        trainer_args.update(
            {field.name: options.pop(field.name) for field in fields(PSPTrainingArguments) if field.name in options}
        )
        trainer = RecordingTrainer(
            model=model,
            args=PSPTrainingArguments(**trainer_args),
            train_dataset=dataset,
            loss=ParaphraseMarginLoss(model),
            callbacks=callbacks,
            **options,
        )
        trainer.seen = []
        return trainer

    return build


@pytest.fixture
def psp_model_dir(psp_model, tmp_path) -> Path:
    """:func:`psp_model` saved as a model folder (what the CLI and the sharded jobs open by path)."""
    path = tmp_path / "psp-model"
    psp_model.save(str(path))
    return path


@pytest.fixture(scope="session")
def distinct_captions(caption_sentences) -> list[str]:
    """:func:`caption_sentences` without repeats up to case and punctuation (``psp-st mine`` collapses those)."""
    first: dict[str, str] = {}
    for text in caption_sentences:
        first.setdefault(" ".join(re.findall(r"\w+", text.lower())), text)
    return list(first.values())


@pytest.fixture
def caption_file(distinct_captions, tmp_path) -> Path:
    """800 distinct real Flickr8k captions, one per line (several per image, so the file holds paraphrases)."""
    path = tmp_path / "captions.txt"
    path.write_text("\n".join(distinct_captions[:800]) + "\n", encoding="utf-8")
    return path


class StubTeacher:
    """A deterministic stand-in for a sentence-encoder teacher (no download): ``encode`` maps each text to a fixed
    pseudo-random unit vector (seeded by its CRC32) and logs the calls."""

    def __init__(self, dim: int = 8, fail_after: int | None = None) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []
        self.fail_after = fail_after

    def vector(self, text: str) -> np.ndarray:
        vector = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(self.dim)
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    def encode(self, texts, batch_size: int = 32, convert_to_numpy: bool = True, **kwargs) -> np.ndarray:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("stub teacher interrupted")
        self.calls.append(list(texts))
        return np.stack([self.vector(text) for text in texts])


@pytest.fixture
def stub_teacher():
    """A :class:`StubTeacher` factory: ``stub_teacher(dim=8, fail_after=None)``."""
    return StubTeacher
