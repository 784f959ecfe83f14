"""psp-en variants outside the recipe schema, screened on dev with ``psp_en_ablation.py`` (round 7 of issue 11).

Two ideas the package does not implement, tried by wrapping the recipe pipeline here (nothing in ``psp_st`` changes):

- ``bigrams``: a vocabulary of the ``--bigrams`` most frequent piece bigrams (seen at least ``--bigram-min`` times
  in the training pairs and the distillation sentences), each a row of the embedding table whose id is appended to
  the text's pieces, so the sentence vector averages pieces and known bigrams (a word-order signal at the cost of
  a bag lookup). Bigram rows start at zero (``--bigram-init zero``: the initial model is unchanged) or at the mean
  of their two pieces (``mean``).
- ``self-filter``: drop the ``--drop`` fraction of training pairs that a trained model (``--scorer``, e.g. the
  psp-en release) finds least similar (cosine), i.e. the noisiest caption pairs, and train on the rest.

Run from a folder whose ``runs/teacher_cache`` holds the psp-en teacher vectors (a psp-en build's work folder), with
``PSP_ST_DATA_DIR`` set; everything after ``--`` goes to ``psp_en_ablation.py``::

    OMP_NUM_THREADS=1 python benchmarks/psp_en_variants.py bigrams --bigrams 30000 -- --row v3 --tag=-bigrams30k \\
        --log benchmarks/results/psp_en_v7_runs.jsonl
    OMP_NUM_THREADS=1 python benchmarks/psp_en_variants.py self-filter --drop 0.05 --scorer psp-en -- --row v3 \\
        --tag=-self-filter05 --log benchmarks/results/psp_en_v7_runs.jsonl
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import psp_en_ablation  # noqa: E402  (the harness: recipe row, training, dev/test evaluation, log)

import psp_st.training.recipe as recipe  # noqa: E402
from psp_st.modules.psp import PSPEmbedding  # noqa: E402


def bigram_keys(flat: np.ndarray, lengths: np.ndarray, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """``first * vocab_size + second`` of every pair of neighbouring pieces in a text, and that text's row."""
    rows = np.repeat(np.arange(len(lengths)), lengths)
    same_text = rows[1:] == rows[:-1]
    keys = flat[:-1].astype(np.int64) * vocab_size + flat[1:].astype(np.int64)
    return keys[same_text], rows[:-1][same_text]


def append_bigrams(
    flat: np.ndarray, lengths: np.ndarray, table: np.ndarray, vocab_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each text's pieces followed by the ids of its known bigrams (``vocab_size + 1 + position in table``)."""
    if len(flat) < 2 or len(table) == 0:
        return flat, lengths
    keys, key_rows = bigram_keys(flat, lengths, vocab_size)
    position = np.minimum(np.searchsorted(table, keys), len(table) - 1)
    known = table[position] == keys
    ids = (vocab_size + 1 + position[known]).astype(flat.dtype)
    rows = np.concatenate([np.repeat(np.arange(len(lengths)), lengths), key_rows[known]])
    order = np.argsort(rows, kind="stable")
    added = np.bincount(key_rows[known], minlength=len(lengths)).astype(lengths.dtype)
    return np.concatenate([flat, ids])[order], lengths + added


class BigramPSP(PSPEmbedding):
    """PSPEmbedding whose texts also carry their known bigrams (evaluated through ``SentenceTransformer.encode``)."""

    bigram_table: np.ndarray

    def encode_flat(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        flat, lengths = super().encode_flat(texts)
        return append_bigrams(flat, lengths, self.bigram_table, self.vocab_size)


def use_bigrams(size: int, min_count: int, init: str) -> None:
    import torch
    from datasets import load_from_disk
    from torch import nn

    build_model = recipe.build_model

    def build_with_bigrams(config, train_dataset, seed, timings=None):
        model = build_model(config, train_dataset, seed, timings)
        module = model[0]
        vocab = module.vocab_size
        texts = train_dataset["sentence1"][:] + train_dataset["sentence2"][:]
        for shard in sorted(Path("runs/teacher_cache/all-MiniLM-L6-v2").glob("shard-*")):
            texts += load_from_disk(str(shard))["sentence"]  # the distillation sentences (and the pieces)
        keys = []
        for start in range(0, len(texts), 50_000):
            flat, lengths = module.encode_flat(texts[start : start + 50_000])
            keys.append(bigram_keys(flat, lengths, vocab)[0])
        table, counts = np.unique(np.concatenate(keys), return_counts=True)
        table, counts = table[counts >= min_count], counts[counts >= min_count]
        if len(table) > size:
            table = np.sort(table[np.argsort(-counts, kind="stable")[:size]])
        print(f"bigrams: {len(table):,} (at least {min_count} times, at most {size:,}) from {len(texts):,} texts")
        old = module.embedding.weight.detach()
        weight = torch.zeros(vocab + 1 + len(table), old.shape[1])
        weight[: vocab + 1] = old
        if init == "mean":
            first, second = torch.from_numpy(table // vocab), torch.from_numpy(table % vocab)
            weight[vocab + 1 :] = (old[first] + old[second]) / 2
        module.embedding = nn.Embedding(weight.shape[0], weight.shape[1], padding_idx=vocab, _weight=weight)
        module.__class__ = BigramPSP
        module.bigram_table = table
        return model

    recipe.build_model = build_with_bigrams


def use_self_filter(drop: float, scorer: str) -> None:
    load_recipe_pairs = recipe.load_recipe_pairs

    def load_filtered(data, seed, counts=None, data_dir=None):
        from psp_st.inference.engine import load_engine

        pairs = load_recipe_pairs(data, seed, counts=counts, data_dir=data_dir)
        engine = load_engine(scorer, threads=1)
        first = engine.encode(pairs["sentence1"][:], normalize=True)
        second = engine.encode(pairs["sentence2"][:], normalize=True)
        similarity = (first * second).sum(1)
        cut = np.quantile(similarity, drop)
        keep = np.flatnonzero(similarity >= cut)
        print(f"self-filter: {scorer} cosine >= {cut:.3f} keeps {len(keep):,} of {len(pairs):,} pairs")
        return pairs.select(keep).flatten_indices()

    recipe.load_recipe_pairs = load_filtered


def main() -> None:
    split = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
    own, harness = sys.argv[1:split], sys.argv[split + 1 :]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variant", choices=["bigrams", "self-filter"])
    parser.add_argument("--bigrams", type=int, default=30_000, help="bigram vocabulary size")
    parser.add_argument("--bigram-min", type=int, default=3, help="minimum count of a kept bigram")
    parser.add_argument("--bigram-init", choices=["zero", "mean"], default="zero")
    parser.add_argument("--drop", type=float, default=0.05, help="fraction of pairs dropped")
    parser.add_argument("--scorer", default="psp-en", help="the model that scores the pairs (a folder)")
    args = parser.parse_args(own)
    if args.variant == "bigrams":
        use_bigrams(args.bigrams, args.bigram_min, args.bigram_init)
    else:
        use_self_filter(args.drop, args.scorer)
    sys.argv = [sys.argv[0], *harness]
    psp_en_ablation.main()


if __name__ == "__main__":
    main()
