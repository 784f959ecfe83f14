"""Corpus pairs mined by psp-en and verified by the teacher, as extra training pairs (issue 11, round 16: negative).

The unlabelled corpus holds the genres the training pairs lack (news, Wikipedia, questions, dialogue). Step 1 mines
paraphrase candidates from 800k of its sentences with the psp-en release (`psp-st mine`: FAISS IVF, ratio margin >=
1.1, length ratio <= 2, trigram overlap <= 0.7, evaluation text excluded); step 2 (this script) scores every mined
pair with all-MiniLM-L6-v2 (teacher cache) and writes the pairs at or above each teacher-cosine cut; step 3 adds one
file to the v6 recipe's pairs. Commands (from the repository root; the corpus paths are relative to the data folder):

    (cd ../shared/data/corpus && psp-st mine --model $PWD/psp-en --threads 2 --output $OUT/corpus_pairs.parquet \
        --exclude-data-dir .. --input english_sentences.parquet intent_queries_and_questions.parquet \
        nltk_corpora.parquet query_wellformedness_questions.parquet senteval_sentences.parquet \
        sgd_dialogue_utterances.parquet wikipedia_sentences.parquet)
    python benchmarks/psp_en_mined_pairs.py $OUT/corpus_pairs.parquet --cuts 0.7 0.8 --threads 2
    OMP_NUM_THREADS=1 python benchmarks/psp_en_ablation.py --row v6 --set model.init_from=<a v6 run>/initial \
        --set 'data.sources=[training_pairs/*.parquet, {path: $OUT/mined_t080.parquet, weight: 1}]' \
        --tag=-s18-mined080 --log benchmarks/results/psp_en_v16_runs.jsonl
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path, help="the Parquet file `psp-st mine` wrote")
    parser.add_argument("--cuts", type=float, nargs="+", default=[0.7, 0.8], help="teacher-cosine thresholds")
    parser.add_argument("--cache-dir", default="runs/teacher_cache", help="teacher cache (shared with the builds)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import numpy as np
    import pandas as pd
    import torch

    from psp_st.distillation.teacher_cache import teacher_vectors

    torch.set_num_threads(args.threads)
    pairs = pd.read_parquet(args.pairs)
    texts = list(dict.fromkeys([*pairs.sentence1, *pairs.sentence2]))
    vectors = np.asarray(teacher_vectors(texts, "all-MiniLM-L6-v2", args.cache_dir, label="mined")["embedding"])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    row = {text: i for i, text in enumerate(texts)}
    first, second = (vectors[[row[text] for text in pairs[column]]] for column in ("sentence1", "sentence2"))
    pairs["teacher_cosine"] = (first * second).sum(axis=1)
    for cut in args.cuts:
        kept = pairs[pairs.teacher_cosine >= cut][["sentence1", "sentence2"]]
        path = args.pairs.with_name(f"mined_t{round(cut * 100):03d}.parquet")
        kept.to_parquet(path, index=False)
        print(f"teacher cosine >= {cut}: {len(kept)} of {len(pairs)} pairs -> {path}")


if __name__ == "__main__":
    main()
