"""STS Benchmark dev/test Spearman per genre (news, captions, forum) or per source file (MSRpar, headlines, ...)
for trained model folders.

python benchmarks/training_genres.py runs/A/final runs/B/final [--by source_file]
"""

from __future__ import annotations

import argparse

import pandas as pd
from scipy.stats import spearmanr

from psp_st.io.data_dir import default_data_dir
from psp_st.io.model_names import resolve_model_name
from psp_st.modules.trusted import load_trusted


def main(paths: list[str], by: str = "genre") -> None:
    for split in ("dev", "test"):
        frame = pd.read_parquet(default_data_dir() / "sts" / "stsbenchmark" / f"{split}.parquet")
        for path in paths:
            model = load_trusted(resolve_model_name(path))  # all-MiniLM-L6-v2 etc. from the installed package
            a = model.encode(frame.sentence1.tolist(), normalize_embeddings=True)
            b = model.encode(frame.sentence2.tolist(), normalize_embeddings=True)
            cosine = (a * b).sum(1)
            scores = {"all": spearmanr(cosine, frame.score)[0]}
            for genre in sorted(frame[by].unique()):
                rows = (frame[by] == genre).to_numpy()
                scores[genre] = spearmanr(cosine[rows], frame.score[rows])[0]
            print(split, path, {k: round(100 * float(v), 1) for k, v in scores.items()})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", help="model folders or names (e.g. all-MiniLM-L6-v2)")
    parser.add_argument("--by", choices=("genre", "source_file"), default="genre", help="the STS-B column to group by")
    main(**vars(parser.parse_args()))
