"""Dump the training pairs a recipe loads (pairs, order, group ids, per-source counts), or compare two dumps.

Run with one checkout of psp-st on the path to dump what *its* data path loads, then with another, then compare:

    PYTHONPATH=/work/main python benchmarks/pair_loading_check.py dump psp_st/resources/hub_configs/psp-en.yaml runs/old.parquet
    PYTHONPATH=. python benchmarks/pair_loading_check.py dump psp_st/resources/hub_configs/psp-en.yaml runs/new.parquet
    python benchmarks/pair_loading_check.py compare runs/old.parquet runs/new.parquet

``--set data.sources=[...]`` overrides the recipe's data section (YAML values) to check other source mixes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from training import set_key  # noqa: E402  (benchmarks/training.py: the one recipe-override helper)


def dump(config_path: str, output: str, overrides: list[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import yaml

    from psp_st.training.recipe import load_recipe_pairs

    config = yaml.safe_load(Path(config_path).read_text(encoding="utf-8"))
    for item in overrides:
        set_key(config, item)
    data = {key: value for key, value in config["data"].items() if key != "cache_dir"}
    counts: dict[str, int] = {}
    pairs = load_recipe_pairs(data, int(config.get("seed", 42)), counts=counts)
    table = pa.table({name: pairs[name][:] for name in ("sentence1", "sentence2", "group_id")})
    pq.write_table(table.replace_schema_metadata({"counts": json.dumps(counts), "data": json.dumps(data)}), output)
    print(f"{output}: {len(table):,} pairs, {len(set(table.column('group_id').to_pylist())):,} groups, counts {counts}")


def compare(first: str, second: str) -> int:
    import pyarrow.parquet as pq

    one, two = pq.read_table(first), pq.read_table(second)
    counts = [json.loads(table.schema.metadata[b"counts"]) for table in (one, two)]
    checks = {
        "rows": len(one) == len(two),
        "sentence1 (order included)": one.column("sentence1").equals(two.column("sentence1")),
        "sentence2 (order included)": one.column("sentence2").equals(two.column("sentence2")),
        "group_id": one.column("group_id").to_pylist() == two.column("group_id").to_pylist(),
        "pairs per source": counts[0] == counts[1],
    }
    for name, same in checks.items():
        print(f"{name}: {'identical' if same else 'DIFFERENT'}")
    print(f"rows {len(one):,} vs {len(two):,}; counts {counts[0]} vs {counts[1]}")
    return 0 if all(checks.values()) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump")
    dumping.add_argument("config")
    dumping.add_argument("output")
    dumping.add_argument("--set", action="append", default=[], help="override a recipe key, e.g. data.max_pairs=1000")
    comparing = commands.add_parser("compare")
    comparing.add_argument("first")
    comparing.add_argument("second")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.config, args.output, args.set)
        return 0
    return compare(args.first, args.second)


if __name__ == "__main__":
    raise SystemExit(main())
