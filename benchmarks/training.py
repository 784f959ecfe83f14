"""Train a recipe, then report STS Benchmark dev/test Spearman, wall time and pairs/s (one JSON line).

python benchmarks/training.py psp-en --output runs/psp-en [--set megabatch.size=1 ...]   # a recipe name or .yaml file
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def set_key(config: dict, dotted: str) -> None:
    import yaml

    key, value = dotted.split("=", 1)
    *parents, leaf = key.split(".")
    node = config
    for parent in parents:
        node = node.setdefault(parent, {})
    node[leaf] = yaml.safe_load(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("config")
    parser.add_argument("--output", required=True)
    parser.add_argument("--set", action="append", default=[], help="override a recipe key, e.g. loss.margin=0.3")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--untrained", action="store_true", help="evaluate the initial model only")
    parser.add_argument("--log", default="benchmarks/results/training_runs.jsonl")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from psp_st.evaluation import STSEvaluator, load_local
    from psp_st.training.recipe import load_config, train_from_config

    config = load_config(args.config)
    for item in args.set:
        set_key(config, item)
    start = time.perf_counter()
    if args.untrained:
        from psp_st.modules.trusted import load_trusted

        model = load_trusted(config["model"]["init_from"])
        train_seconds, pairs = 0.0, 0
    else:
        model = train_from_config(config, output_dir=args.output, max_steps=args.max_steps)
        metrics = json.loads((Path(args.output) / "train_metrics.json").read_text())
        train_seconds = metrics["train_runtime"]
        pairs = metrics["global_step"] * config.get("trainer", {}).get("per_device_train_batch_size", 128)
    scores = STSEvaluator({name: load_local(name) for name in ("stsb-dev", "stsb-test")})(model)
    dev, test = scores["stsb-dev_spearman"], scores["stsb-test_spearman"]
    record = {
        "config": args.config,
        "overrides": args.set,
        "max_steps": args.max_steps,
        "threads": args.threads,
        "stsb_dev_spearman": round(100 * dev, 2),
        "stsb_test_spearman": round(100 * test, 2),
        "train_seconds": round(train_seconds, 1),
        "pairs": pairs,
        "pairs_per_second": round(pairs / train_seconds, 1) if train_seconds else None,
        "wall_seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(record))
    Path(args.log).parent.mkdir(parents=True, exist_ok=True)
    with open(args.log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
