"""Which language do the mined negatives have? One full mega-batch of a multilingual mix, with and without the
language guard (``mine_hardest_negatives(anchor_languages=...)``, ``MegaBatchTrainer(language_column=...)``).

    python benchmarks/megabatch_languages.py --model <trained probe>/train/final --data /work/scratch-xling/probe-data \\
        --english-pairs 100000 --output benchmarks/results/megabatch_languages.md

The mix is the probes' (``benchmarks/psp_multi_probes.py``): sentence1 = the foreign side of every language's
bitext, or the first sentence of an English paraphrase pair; sentence2 = English. One mega-batch of
``--megabatch`` x 128 pairs is drawn at random (seeded), embedded by the model, and mined as the trainer does.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections import Counter
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--english-pairs", type=int, default=100000)
    parser.add_argument("--megabatch", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()

    import numpy as np
    import pandas as pd
    import torch

    from psp_st.data import load_training_pairs
    from psp_st.inference.encode import encode_texts
    from psp_st.inference.load import load
    from psp_st.losses.hard_negatives import mine_hardest_negatives, text_ids

    torch.set_num_threads(1)
    frames = [
        pd.read_parquet(path).assign(lang=path.stem.removeprefix("bitext-"))
        for path in sorted(args.data.glob("bitext-*.parquet"))
    ]
    english = load_training_pairs(
        [{"path": "training_pairs/*.parquet", "max_pairs": args.english_pairs}], seed=args.seed
    ).to_pandas()
    frames.append(english[["sentence1", "sentence2"]].assign(lang="en"))
    pairs = pd.concat(frames, ignore_index=True)
    rng = np.random.default_rng(args.seed)
    batch = pairs.iloc[rng.choice(len(pairs), size=args.megabatch * 128, replace=False)].reset_index(drop=True)
    model = load(args.model)
    first = torch.from_numpy(encode_texts(model, batch.sentence1.tolist()))
    second = torch.from_numpy(encode_texts(model, batch.sentence2.tolist()))
    anchor_ids, positive_ids = text_ids(batch.sentence1.tolist(), batch.sentence2.tolist())
    codes = torch.from_numpy(pd.factorize(batch.lang)[0].astype(np.int64))
    langs = batch.lang.to_numpy()
    rows = []
    for guard in (False, True):
        _, negative_of_positive = mine_hardest_negatives(
            first, second, None, anchor_ids, positive_ids, anchor_languages=codes if guard else None
        )
        picked = langs[negative_of_positive.numpy()]
        same = picked == langs
        per_language = {}
        for lang in sorted(set(langs)):
            mask = langs == lang
            per_language[lang] = {
                "pairs": int(mask.sum()),
                "same_language_share": round(float(same[mask].mean()), 4),
                "negative_languages": dict(Counter(picked[mask]).most_common(3)),
            }
        rows.append({"guard": guard, "same_language_share": round(float(same.mean()), 4), "per_language": per_language})
    command = "python " + " ".join(shlex.quote(arg) for arg in sys.argv)
    lines = [
        "# Mega-batch negatives of the English side: which language stands in for the partner?",
        "",
        "```bash",
        command,
        "```",
        "",
        f"One mega-batch of {len(batch):,} pairs. For each pair (s, t), t is English and its negative s' is mined "
        "from the first side, which mixes all languages and English (paraphrase pairs). 'same' = s' has the "
        "language of s, the sentence it stands in for.",
        "",
        "| first-side language | pairs | same language, sides only | same language, with the guard | "
        "most frequent negative languages (sides only) |",
        "|---|---:|---:|---:|---|",
    ]
    for lang, stats in rows[0]["per_language"].items():
        guarded = rows[1]["per_language"][lang]["same_language_share"]
        common = ", ".join(f"{k} {v}" for k, v in stats["negative_languages"].items())
        lines.append(
            f"| {lang} | {stats['pairs']:,} | {100 * stats['same_language_share']:.1f}% | {100 * guarded:.1f}% "
            f"| {common} |"
        )
    lines.append(
        f"| all | {len(batch):,} | {100 * rows[0]['same_language_share']:.1f}% | "
        f"{100 * rows[1]['same_language_share']:.1f}% | |"
    )
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args.output.with_suffix(".json").write_text(json.dumps({"command": command, "rows": rows}, indent=2) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
