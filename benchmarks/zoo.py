"""The encoder zoo on one budget: WORD, TRIGRAM, LSTM, BLSTM, GRAN-LSTM, GRAN-GRU, WORD+TRIGRAM, GRAN-GRU+Morfessor.

Every encoder is trained on the same English pairs from ``shared/data/training_pairs/`` (one shuffled sample of
``--pairs`` pairs, one epoch, batch ``--batch-size``, Adam ``--lr``) with the ParaNMT recipe: the paraphrase
margin loss (delta 0.4) with hardest negatives mined over mega-batches (``MegaBatchTrainer``), scrambling 0.3
for the order-aware encoders. Then, on one thread: STS Benchmark test Spearman and SICK-R test Pearson of the
cosine similarity (x100), training pairs/s (mining included), encode sentences/s (``SentenceTransformer.encode``
on news/Brown sentences), parameter count.

    python benchmarks/zoo.py --out benchmarks/results/zoo.md
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from scipy.stats import pearsonr, spearmanr  # noqa: E402

DATA = Path(os.environ.get("PSP_ST_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
SOURCES = [
    "training_pairs/flickr30k_captions_multi30k.parquet",
    "training_pairs/flickr8k_captions.parquet",
    "training_pairs/coco_captions_val2017.parquet",
    "training_pairs/parasci.parquet",
    "training_pairs/wikiauto_gem_valid_simplification.parquet",
]
ALL_MODELS = ["WORD", "TRIGRAM", "LSTM", "BLSTM", "GRAN-LSTM", "GRAN-GRU", "WORD+TRIGRAM", "GRAN-GRU+Morfessor"]


def build(name: str, texts: list[str], args: argparse.Namespace) -> torch.nn.Module:
    """A fresh module ``name`` whose vocabulary (or Morfessor model) is built from ``texts``."""
    from psp_st.modules.averaging import TrigramAveraging, WordAveraging
    from psp_st.modules.combine import CombinedEncoder
    from psp_st.modules.recurrent import GRAN, LSTMAveraging

    dim, seed = args.dim, args.seed
    vocab = {"min_count": args.min_count, "max_size": args.max_vocab}
    recurrent = {"scramble": args.scramble, "max_seq_length": 64}
    builders: dict[str, Callable[[], torch.nn.Module]] = {
        "WORD": lambda: WordAveraging.from_texts(texts, dim, seed=seed, **vocab),
        "TRIGRAM": lambda: TrigramAveraging.from_texts(texts, dim, seed=seed, **vocab),
        "LSTM": lambda: LSTMAveraging.from_texts(texts, dim, seed=seed, **vocab, **recurrent),
        "BLSTM": lambda: LSTMAveraging.from_texts(
            texts, dim, seed=seed, bidirectional=True, combine="sum", **vocab, **recurrent
        ),
        "GRAN-LSTM": lambda: GRAN.from_texts(texts, dim, seed=seed, gate="lstm", **vocab, **recurrent),
        "GRAN-GRU": lambda: GRAN.from_texts(
            texts, dim, seed=seed, gate="gru", dropout=args.gru_dropout, **vocab, **recurrent
        ),
        "WORD+TRIGRAM": lambda: CombinedEncoder(
            [
                WordAveraging.from_texts(texts, dim, seed=seed, **vocab),
                TrigramAveraging.from_texts(texts, dim, seed=seed, **vocab),
            ],
            mode="concat",
        ),
        "GRAN-GRU+Morfessor": lambda: GRAN.from_texts(
            texts,
            dim,
            seed=seed,
            gate="gru",
            dropout=args.gru_dropout,
            tokenizer="morfessor",
            tokenizer_options={"max_words": args.morfessor_words, "seed": seed},
            **vocab,
            **recurrent,
        ),
    }
    return builders[name]()


def sts_scores(model, path: Path) -> tuple[np.ndarray, np.ndarray]:
    frame = pd.read_parquet(path, columns=["sentence1", "sentence2", "score"])
    a = model.encode(frame.sentence1.tolist(), batch_size=256, normalize_embeddings=True)
    b = model.encode(frame.sentence2.tolist(), batch_size=256, normalize_embeddings=True)
    return (a * b).sum(1), frame.score.to_numpy()


def run_one(name: str, train_dataset, texts: list[str], speed_texts: list[str], args: argparse.Namespace) -> dict:
    from sentence_transformers import SentenceTransformer

    from psp_st.losses import ParaphraseMarginLoss
    from psp_st.training import MegaBatchTrainer, PSPTrainingArguments

    start = time.perf_counter()
    module = build(name, texts, args)
    build_seconds = time.perf_counter() - start
    model = SentenceTransformer(modules=[module], device="cpu")
    params = sum(p.numel() for p in model.parameters())
    with tempfile.TemporaryDirectory() as out:
        targs = PSPTrainingArguments(
            output_dir=out,
            megabatch_size=args.megabatch,
            anneal=args.anneal,
            num_train_epochs=1,
            per_device_train_batch_size=args.batch_size,
            learning_rate=args.lr,
            lr_scheduler_type="constant",
            warmup_steps=0,
            max_grad_norm=1.0,
            save_strategy="no",
            logging_steps=max(1, len(train_dataset) // args.batch_size // 5),
            report_to="none",
            use_cpu=True,
            seed=args.seed,
            disable_tqdm=True,
        )
        trainer = MegaBatchTrainer(
            model=model,
            args=targs,
            train_dataset=train_dataset,
            loss=ParaphraseMarginLoss(model, margin=0.4),
        )
        start, cpu_start = time.perf_counter(), time.process_time()
        if not args.no_train:
            trainer.train()
        train_seconds, train_cpu = time.perf_counter() - start, time.process_time() - cpu_start
    model.eval()
    sts_pred, sts_gold = sts_scores(model, DATA / "sts/stsbenchmark/test.parquet")
    sick_pred, sick_gold = sts_scores(model, DATA / "sts/sick/test.parquet")
    model.encode(speed_texts[:256], batch_size=256)  # warm-up
    start, cpu_start = time.perf_counter(), time.process_time()
    model.encode(speed_texts, batch_size=256)
    encode_seconds, encode_cpu = time.perf_counter() - start, time.process_time() - cpu_start
    result = {
        "model": name,
        "stsb_spearman": 100 * spearmanr(sts_pred, sts_gold).statistic,
        "sickr_pearson": 100 * pearsonr(sick_pred, sick_gold).statistic,
        "train_pairs_per_s": len(train_dataset) / max(train_seconds, 1e-9),
        "encode_per_s": len(speed_texts) / encode_seconds,
        "train_pairs_per_cpu_s": len(train_dataset) / max(train_cpu, 1e-9),
        "encode_per_cpu_s": len(speed_texts) / encode_cpu,
        "params": params,
        "dim": module.get_sentence_embedding_dimension(),
        "build_s": build_seconds,
        "train_s": train_seconds,
    }
    print(result, file=sys.stderr, flush=True)
    return result


def table(results: list[dict]) -> str:
    lines = [
        "| model | dim | STSb test Spearman | SICK-R test Pearson | train pairs/s: CPU (wall) "
        "| encode sent/s, 1 thread: CPU (wall) | parameters | vocab/Morfessor build s | train s (wall) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['model']} | failed: {r['error']} |||||||")
            continue
        lines.append(
            f"| {r['model']} | {r['dim']} | {r['stsb_spearman']:.1f} | {r['sickr_pearson']:.1f} | "
            f"{r['train_pairs_per_cpu_s']:,.0f} ({r['train_pairs_per_s']:,.0f}) | "
            f"{r['encode_per_cpu_s']:,.0f} ({r['encode_per_s']:,.0f}) | {r['params']:,} | "
            f"{r['build_s']:.0f} | {r['train_s']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=ALL_MODELS, choices=ALL_MODELS)
    parser.add_argument("--pairs", type=int, default=20_000, help="training pairs (one epoch), same for every model")
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--megabatch", type=int, default=20, help="largest mega-batch size M (0: off)")
    parser.add_argument("--anneal", type=int, default=0, help="mini-batches between M increments (0: M from start)")
    parser.add_argument("--scramble", type=float, default=0.3, help="scrambling rate of the recurrent encoders")
    parser.add_argument("--gru-dropout", type=float, default=0.1, help="variational dropout of GRAN-GRU")
    parser.add_argument("--min-count", type=int, default=1)
    parser.add_argument("--max-vocab", type=int, default=50_000)
    parser.add_argument(
        "--morfessor-words", type=int, default=8_000, help="Morfessor trains on the most frequent words"
    )
    parser.add_argument("--encode-sentences", type=int, default=5_000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-train", action="store_true", help="evaluate the untrained (random init) encoders")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    logging.basicConfig(level=logging.WARNING)
    from psp_st.data import load_training_pairs

    train_dataset = load_training_pairs([str(DATA / s) for s in SOURCES], max_pairs=args.pairs, seed=args.seed)
    texts = list(train_dataset["sentence1"]) + list(train_dataset["sentence2"])
    corpus = pd.read_parquet(DATA / "corpus/english_sentences.parquet", columns=["sentence"]).sentence
    speed_texts = corpus.sample(n=args.encode_sentences, random_state=args.seed).tolist()
    print(f"{len(train_dataset)} training pairs, {len(speed_texts)} speed sentences", file=sys.stderr)

    command = "python " + " ".join(["benchmarks/zoo.py", *sys.argv[1:]])
    header = (
        f"Command: `{command}`\n\n{'UNTRAINED (no training step; speed columns meaningless). ' if args.no_train else ''}"
        f"{len(train_dataset):,} English training pairs (shuffled sample of "
        f"`shared/data/training_pairs/*.parquet`), one epoch, batch {args.batch_size}, Adam lr {args.lr}, "
        f"margin loss 0.4, mega-batch M={args.megabatch}, scrambling {args.scramble} (recurrent encoders), "
        f"dim {args.dim}, torch threads {args.threads}. CPU = process CPU time (one thread), wall = elapsed "
        f"time on a shared machine.\n\n"
    )
    results = []
    for name in args.models:
        torch.manual_seed(args.seed)
        try:
            results.append(run_one(name, train_dataset, texts, speed_texts, args))
        except Exception as error:  # keep the other models' rows
            logging.exception("model %s failed", name)
            results.append({"model": name, "error": f"{type(error).__name__}: {error}"[:200]})
        gc.collect()
        if args.out:  # rewrite after every model, so a partial table survives an interrupted run
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(header + table(results) + "\n", encoding="utf-8")
    print(header + table(results))


if __name__ == "__main__":
    main()
