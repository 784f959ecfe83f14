"""STS Benchmark dev/test Spearman per genre (news, captions, forum) or per source file (MSRpar, headlines, ...)
for trained model folders.

python benchmarks/training_genres.py runs/A/final runs/B/final [--by source_file]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from psp_st.io.data_dir import default_data_dir
from psp_st.io.model_names import resolve_model_name
from psp_st.modules.trusted import load_trusted


def spearman_by(cosine: np.ndarray, gold: np.ndarray, groups: np.ndarray) -> dict[str, float]:
    """Spearman of ``cosine`` with ``gold`` over all rows (``all``) and within each value of ``groups``, x100."""
    scores = {"all": spearmanr(cosine, gold)[0]}
    for group in sorted(set(groups)):
        rows = groups == group
        scores[group] = spearmanr(cosine[rows], gold[rows])[0]
    return {name: 100 * float(value) for name, value in scores.items()}


def main(paths: list[str], by: str = "genre") -> None:
    models = {path: load_trusted(resolve_model_name(path)) for path in paths}  # all-MiniLM-L6-v2 etc. by name
    for split in ("dev", "test"):
        frame = pd.read_parquet(default_data_dir() / "sts" / "stsbenchmark" / f"{split}.parquet")
        for path, model in models.items():
            a = model.encode(frame.sentence1.tolist(), normalize_embeddings=True)
            b = model.encode(frame.sentence2.tolist(), normalize_embeddings=True)
            scores = spearman_by((a * b).sum(1), frame.score.to_numpy(), frame[by].to_numpy())
            print(split, path, {k: round(v, 1) for k, v in scores.items()})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", help="model folders or names (e.g. all-MiniLM-L6-v2)")
    parser.add_argument("--by", choices=("genre", "source_file"), default="genre", help="the STS-B column to group by")
    main(**vars(parser.parse_args()))
