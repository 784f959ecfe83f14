"""Do two builds of a recipe give the same vectors? Compares the model folders on STS Benchmark sentences.

    psp-st build psp-en --output /tmp/build_a && psp-st build psp-en --output /tmp/build_b --no-eval
    python benchmarks/compare_builds.py /tmp/build_a /tmp/build_b

Prints the largest absolute difference of the embeddings, the smallest cosine between the two builds' vectors of
the same sentence, whether the weight files are byte-identical, and STS-B dev Spearman of both.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rowwise_cosine(a, b):
    import numpy as np

    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args()

    import numpy as np
    import pandas as pd
    from scipy.stats import spearmanr
    from sentence_transformers import SentenceTransformer

    from psp_st.io.data_dir import default_data_dir

    dev = pd.read_parquet(default_data_dir() / "sts" / "stsbenchmark" / "dev.parquet")
    sentences = dev.sentence1.tolist() + dev.sentence2.tolist()
    vectors, spearman = [], []
    for folder in (args.first, args.second):
        model = SentenceTransformer(str(folder), device="cpu")
        emb = model.encode(sentences, batch_size=1024, convert_to_numpy=True, normalize_embeddings=False)
        vectors.append(emb)
        cosine = rowwise_cosine(emb[: len(dev)], emb[len(dev) :])
        spearman.append(round(100 * spearmanr(dev.score, cosine).statistic, 4))
    first, second = vectors
    cosine = rowwise_cosine(first, second)
    weights = sorted(p.relative_to(args.first) for p in args.first.rglob("*.safetensors"))
    report = {
        "sentences": len(sentences),
        "max_abs_difference": float(np.abs(first - second).max()),
        "min_cosine_between_builds": float(cosine.min()),
        "identical_weight_files": {str(w): sha256(args.first / w) == sha256(args.second / w) for w in weights},
        "stsb_dev_spearman": spearman,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
