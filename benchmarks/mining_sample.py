"""Render a mined-pairs file (``psp-st mine`` output + its ``.json`` report) as Markdown: filter counts and a sample.

    OMP_NUM_THREADS=1 python -m psp_st mine --model /work/models/psp-en-v1 \\
        --input ../shared/data/corpus/english_sentences.parquet --output /tmp/psp-en-mine/pairs.parquet \\
        --lang en --exclude-data-dir ../shared/data --index ivf-sq8 --nprobe 16    # default --min-margin 1.1
    python benchmarks/mining_sample.py /tmp/psp-en-mine/pairs.parquet --output benchmarks/results/mining_sample.md

The sample is seeded: ``--per-band`` pairs from each margin band, so that the table shows what each margin looks like.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

BANDS = [(float("-inf"), 1.1), (1.1, 1.15), (1.15, 1.2), (1.2, 1.3), (1.3, 1.5), (1.5, float("inf"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--per-band", type=int, default=6)
    parser.add_argument("--command", default=None, help="the psp-st mine command that produced the file")
    args = parser.parse_args()

    import pandas as pd

    pairs = pd.read_parquet(args.pairs)
    report = json.loads(args.pairs.with_suffix(".json").read_text())
    recall = report["recall"]
    inputs = ", ".join(Path(p).name for p in report["source"] + (report.get("target") or []))
    lines = [f"# `psp-st mine` of `{inputs}` with `{Path(report['model']).name}`", ""]
    if args.command:
        lines += ["```", args.command, "```", ""]
    lines += [
        f"Model `{report['model']}`; input {report['source_rows']:,} sentences "
        f"(`{', '.join(Path(p).name for p in report['source'])}`); index `{report['index']}`; "
        f"k = {report['config']['k']}, strategy `{report['config']['strategy']}`, min margin "
        f"{report['config']['min_margin']}; ANN recall@{recall['k']} against exact search on {recall['queries']} "
        f"sampled queries: {recall['recall']:.4f} ({recall.get('recall_with_ties', float('nan')):.4f} counting ties). "
        f"Stage seconds: `{json.dumps(report['seconds'])}`.",
        "",
        "## Filter counts",
        "",
        "Each step sees the pairs the previous one kept (`candidates` = distinct neighbour pairs).",
        "",
        "| step | kept | dropped |",
        "| --- | ---: | ---: |",
        *[f"| {step['filter']} | {step['kept']:,} | {step['dropped']:,} |" for step in report["filters"]],
        "",
        f"**{len(pairs):,} pairs written.** Margin quantiles (10/50/90%): "
        + " / ".join(f"{pairs.score.quantile(q):.3f}" for q in (0.1, 0.5, 0.9))
        + ".",
        "",
        "## Sample (seeded, by margin band)",
        "",
        "| margin | cosine | sentence1 | sentence2 |",
        "| ---: | ---: | --- | --- |",
    ]
    for low, high in BANDS:
        band = pairs[(pairs.score >= low) & (pairs.score < high)]
        if band.empty:
            continue
        for row in band.sample(min(args.per_band, len(band)), random_state=0).sort_values("score").itertuples():
            one, two = (text.replace("|", "\\|") for text in (row.sentence1, row.sentence2))
            lines.append(f"| {row.score:.3f} | {row.cosine:.3f} | {one} | {two} |")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
