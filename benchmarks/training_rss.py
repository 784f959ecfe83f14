"""Peak RSS of mega-batch training from a memory-mapped on-disk pair dataset of a given size.

python benchmarks/training_rss.py --pairs 5000000 --steps 300 --model runs/E/initial   # builds the dataset once
python benchmarks/training_rss.py --pairs 50000 --steps 300 --model runs/E/initial

``--model``: the ``initial/`` folder of a ``psp-st train`` run; the dataset is the real pairs repeated.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def build(pairs: int, folder: Path) -> None:
    """Write ``pairs`` rows (the real training pairs repeated, group ids offset per copy) as Arrow, in chunks."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import Dataset

    from psp_st.data import load_training_pairs

    base = load_training_pairs(["training_pairs/*.parquet"], shared_sentence_groups=False).with_format("arrow")[:]
    groups = base.column("group_id").to_numpy()
    tmp = folder.with_suffix(".parquet")
    with pq.ParquetWriter(tmp, base.schema) as writer:
        copy, written = 0, 0
        while written < pairs:
            take = min(len(base), pairs - written)
            table = base.slice(0, take).set_column(2, "group_id", pa.array(groups[:take] + copy * (groups.max() + 1)))
            writer.write_table(table)
            written, copy = written + take, copy + 1
    Dataset.from_parquet(str(tmp)).save_to_disk(str(folder))
    tmp.unlink()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, required=True)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--model", required=True, help="model folder, e.g. the initial/ of a psp-st train run")
    parser.add_argument("--cache", default="runs/cache")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    from datasets import load_from_disk

    from psp_st.losses import ParaphraseMarginLoss
    from psp_st.modules.trusted import load_trusted
    from psp_st.training import MegaBatchTrainer, PSPTrainingArguments

    folder = Path(args.cache) / f"rss-pairs-{args.pairs}"
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        build(args.pairs, folder)
    dataset = load_from_disk(str(folder))  # memory-mapped Arrow: nothing is read into RAM up front
    model = load_trusted(args.model)
    start = time.perf_counter()
    trainer = MegaBatchTrainer(
        model=model,
        train_dataset=dataset,
        loss=ParaphraseMarginLoss(model),
        args=PSPTrainingArguments(
            output_dir=f"/tmp/rss-{args.pairs}",
            megabatch_size=100,
            anneal=150,
            max_steps=args.steps,
            per_device_train_batch_size=128,
            learning_rate=0.05,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            disable_tqdm=True,
            logging_steps=1000,
        ),
    )
    trainer.train()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    # file-backed pages of the memory-mapped Arrow file count in RSS but are page cache, reclaimable
    now = {key: round(int(status[key].split()[0]) / 1024) for key in ("RssAnon", "RssFile") if key in status}
    print(
        json.dumps(
            {
                "pairs": len(dataset),
                "steps": args.steps,
                "peak_rss_mb": round(peak_mb),
                "rss_anon_mb_at_end": now.get("RssAnon"),
                "rss_file_mb_at_end": now.get("RssFile"),
                "seconds": round(time.perf_counter() - start, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
