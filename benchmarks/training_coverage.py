"""Vocabulary coverage: how far the piece vectors that STS-B uses moved during training (per genre).

python benchmarks/training_coverage.py runs/A/initial runs/A/final
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from safetensors.torch import load_file

from psp_st.io.data_dir import default_data_dir
from psp_st.tokenization import SentencePieceTokenizer


def main(initial: str, final: str) -> None:
    w0 = load_file(f"{initial}/model.safetensors")["embedding.weight"]
    w1 = load_file(f"{final}/model.safetensors")["embedding.weight"]
    moved = ((w1 - w0).norm(dim=1) / w0.norm(dim=1)).numpy()
    tokenizer = SentencePieceTokenizer.from_file(f"{final}/sentencepiece.model")
    for split in ("dev", "test"):
        frame = pd.read_parquet(default_data_dir() / "sts" / "stsbenchmark" / f"{split}.parquet")
        for genre in ["all", *sorted(frame.genre.unique())]:
            rows = frame if genre == "all" else frame[frame.genre == genre]
            flat, _ = tokenizer.encode_flat(rows.sentence1.tolist() + rows.sentence2.tolist())
            unknown = (flat == tokenizer.unk_id).mean()
            known = moved[flat[flat != tokenizer.unk_id]]
            print(
                f"{split} {genre}: unknown pieces {100 * unknown:.2f}%, pieces on rows moved < 10% of their norm "
                f"{100 * (known < 0.1).mean():.1f}%, median relative move {np.median(known):.2f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("initial", help="the run's initial/ folder")
    parser.add_argument("final", help="the run's final/ (or a checkpoint) folder")
    main(**vars(parser.parse_args()))
