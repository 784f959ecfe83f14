"""One-thread ``PSPEmbedding.embed`` speed of built releases, measured alternately (median of 5 passes).

On a shared machine a single pass is noisy (other jobs come and go); alternating the releases pass by pass and
taking the median compares them under the same conditions.

    OMP_NUM_THREADS=1 python benchmarks/release_fast_path_speed.py runs/release/psp-en /work/models/psp-en-v1
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("releases", nargs="+")
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import pandas as pd
    import torch

    from psp_st.inference.load import load

    torch.set_num_threads(1)
    sentences = pd.read_parquet(args.data_dir / "corpus/english_sentences.parquet").sentence.tolist()[: args.sentences]
    modules = {release: load(release, trainable=True)[0] for release in args.releases}
    for module in modules.values():
        module.tokenizer.num_threads = 1
        module.embed(sentences[:500])  # warm-up
    speeds: dict[str, list[float]] = {release: [] for release in modules}
    for _ in range(args.passes):
        for release, module in modules.items():
            start = time.perf_counter()
            module.embed(sentences, batch_size=1024)
            speeds[release].append(len(sentences) / (time.perf_counter() - start))
    for release, values in speeds.items():
        print(
            f"{release}: median {statistics.median(values):,.0f} sentences/s "
            f"(passes: {', '.join(f'{v:,.0f}' for v in values)})"
        )


if __name__ == "__main__":
    main()
