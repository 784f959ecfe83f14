"""STS Benchmark dev/test Spearman per genre for trained model folders.

python benchmarks/training_genres.py runs/A/final runs/B/final
"""

from __future__ import annotations

import argparse

import pandas as pd
from scipy.stats import spearmanr

from psp_st.io.data_dir import default_data_dir
from psp_st.modules.trusted import load_trusted


def main(paths: list[str]) -> None:
    for split in ("dev", "test"):
        frame = pd.read_parquet(default_data_dir() / "sts" / "stsbenchmark" / f"{split}.parquet")
        for path in paths:
            model = load_trusted(path)
            a = model.encode(frame.sentence1.tolist(), normalize_embeddings=True)
            b = model.encode(frame.sentence2.tolist(), normalize_embeddings=True)
            cosine = (a * b).sum(1)
            scores = {"all": spearmanr(cosine, frame.score)[0]}
            for genre in sorted(frame.genre.unique()):
                rows = (frame.genre == genre).to_numpy()
                scores[genre] = spearmanr(cosine[rows], frame.score[rows])[0]
            print(split, path, {k: round(100 * float(v), 1) for k, v in scores.items()})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", help="trained model folders")
    main(**vars(parser.parse_args()))
