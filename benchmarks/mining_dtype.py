"""Mega-batch mining cost per dtype: one :func:`~psp_st.losses.hard_negatives.mine_hardest_negatives` call over a
full psp-en mega-batch (M = 100 mini-batches of 128 pairs = 12,800 pairs), float32 versus bfloat16, on one thread.

bfloat16 matmuls are fast only on CPUs with native bf16 instructions (AMX / AVX512-BF16); this prints the CPU
capability torch sees, so a run says which case it measured.

    python benchmarks/mining_dtype.py --dims 384 1024 --out benchmarks/results/mining_dtype.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from psp_st.losses.hard_negatives import mine_hardest_negatives


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=12_800, help="pairs in the mega-batch")
    parser.add_argument("--dims", type=int, nargs="+", default=[384, 1024])
    parser.add_argument("--groups", type=int, default=5_000, help="distinct group ids (the group guard's work)")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    rows = []
    for dim in args.dims:
        anchors = torch.randn(args.pairs, dim, generator=generator)
        positives = torch.randn(args.pairs, dim, generator=generator)
        groups = torch.randint(0, args.groups, (args.pairs,), generator=generator)
        seconds = {}
        for dtype in (torch.float32, torch.bfloat16):
            start = time.perf_counter()
            mine_hardest_negatives(anchors, positives, groups, dtype=dtype)
            seconds[str(dtype).removeprefix("torch.")] = round(time.perf_counter() - start, 2)
        rows.append({"pairs": args.pairs, "dim": dim, "seconds": seconds})
        print(f"d={dim}: " + ", ".join(f"{k} {v} s" for k, v in seconds.items()), flush=True)
    record = {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "torch": torch.__version__, "rows": rows}
    print(f"torch CPU capability: {record['cpu_capability']}")
    if args.out:
        args.out.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
