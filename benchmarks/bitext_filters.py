"""How many X-English bitext pairs each filter drops, per language (FLORES-200 devtest rows excluded first).

    python benchmarks/bitext_filters.py --data-dir ../shared/data --output benchmarks/results/bitext_filters.md

Filters (psp_st.data; each counted on all non-FLORES pairs independently, then all together):

* language id on both sides (``LanguageFilter(sentence1=<lang>, sentence2="en")``, py3langid argmax), once over
  py3langid's 97 languages and once restricted to the 11 bitext languages (``candidates``);
* length ratio in characters, unscaled (``LengthRatioFilter(2.0)``) and scaled by the language's median
  English/foreign character ratio (``LengthRatioFilter(2.0, sentence1_scale=median_length_ratio(...))``);
* the P-SP bitext length filter (3..100 whitespace tokens per side, paper 002 footnote 5; counted here only: a
  Chinese sentence is one "token" without spaces, so this filter is not usable for zh as written).

Writes the markdown table and a JSON file beside it (same stem) with every count and the command.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

LANGS = ("ar", "cs", "de", "es", "fi", "fr", "ru", "sv", "tr", "zh")
FLORES = "flores200-devtest"


def main() -> int:
    from psp_st.io.data_dir import default_data_dir

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--max-ratio", type=float, default=2.0)
    args = parser.parse_args()

    import numpy as np
    import pandas as pd

    from psp_st.data.filters import LengthRatioFilter, median_length_ratio
    from psp_st.data.language import LanguageFilter

    start = time.perf_counter()
    candidates = (*LANGS, "en")
    rows = []
    for lang in LANGS:
        path = args.data_dir / "bitext" / f"{lang}-en.parquet"
        frame = pd.read_parquet(path)
        frame = frame[frame.corpus != FLORES]
        batch = {"sentence1": frame.source.tolist(), "sentence2": frame.target.tolist()}
        row: dict = {"lang": lang, "pairs": len(frame)}
        if not len(frame):
            rows.append(row)
            continue
        scale = median_length_ratio(batch["sentence1"], batch["sentence2"])
        masks = {
            "langid_x": LanguageFilter(sentence1=lang).keep(batch),
            "langid_en": LanguageFilter(sentence2="en").keep(batch),
            "langid_x_restricted": LanguageFilter(sentence1=lang, candidates=candidates).keep(batch),
            "langid_en_restricted": LanguageFilter(sentence2="en", candidates=candidates).keep(batch),
            "ratio_unscaled": LengthRatioFilter(args.max_ratio).keep(batch),
            "ratio_scaled": LengthRatioFilter(args.max_ratio, sentence1_scale=scale).keep(batch),
        }
        masks["length_3_100"] = [
            3 <= len(a.split()) <= 100 and 3 <= len(b.split()) <= 100
            for a, b in zip(batch["sentence1"], batch["sentence2"], strict=True)
        ]
        arrays = {name: np.asarray(mask, dtype=bool) for name, mask in masks.items()}
        langid = arrays["langid_x_restricted"] & arrays["langid_en_restricted"]
        row.update({f"dropped_{name}": int((~mask).sum()) for name, mask in arrays.items()})
        row["dropped_langid_both_restricted"] = int((~langid).sum())
        row["dropped_recommended"] = int((~(langid & arrays["ratio_scaled"])).sum())
        row["median_en_per_x_chars"] = round(scale, 3)
        dropped = frame[~(langid & arrays["ratio_scaled"])]
        row["examples_dropped"] = dropped.head(3)[["source", "target"]].to_dict("records")
        rows.append(row)
    seconds = time.perf_counter() - start

    command = "python " + " ".join(shlex.quote(arg) for arg in sys.argv)
    columns = [
        ("pairs", "pairs (no FLORES)"),
        ("median_en_per_x_chars", "en chars per x char"),
        ("dropped_langid_x", "langid x side (97 langs)"),
        ("dropped_langid_en", "langid en side (97 langs)"),
        ("dropped_langid_x_restricted", "langid x side (11 langs)"),
        ("dropped_langid_en_restricted", "langid en side (11 langs)"),
        ("dropped_ratio_unscaled", f"ratio > {args.max_ratio} unscaled"),
        ("dropped_ratio_scaled", f"ratio > {args.max_ratio} scaled"),
        ("dropped_length_3_100", "3-100 tokens per side"),
        ("dropped_recommended", "langid (11) + scaled ratio"),
    ]
    lines = [
        "# Bitext filters: pairs dropped per language",
        "",
        "```bash",
        command,
        "```",
        "",
        f"Non-FLORES rows of `bitext/<lang>-en.parquet` (FLORES-200 devtest is the dev set). Each column counts the "
        f"pairs one filter drops on its own; the last column is the recommended combination. {seconds:.0f} s.",
        "",
        "| lang | " + " | ".join(label for _, label in columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    for row in rows:
        cells = []
        for key, _ in columns:
            value = row.get(key)
            if value is None:
                cells.append("-")
            elif key.startswith("dropped_") and row["pairs"]:
                cells.append(f"{value:,} ({100 * value / row['pairs']:.1f}%)")
            else:
                cells.append(f"{value:,}" if isinstance(value, int) else f"{value}")
        lines.append(f"| {row['lang']} | " + " | ".join(cells) + " |")
    total = {key: sum(row.get(key, 0) for row in rows) for key, _ in columns if key != "median_en_per_x_chars"}
    lines.append(
        "| all | "
        + " | ".join("" if key == "median_en_per_x_chars" else f"{total[key]:,}" for key, _ in columns)
        + " |"
    )
    lines += ["", "First dropped pairs (recommended filters) per language:", ""]
    for row in rows:
        for example in row.get("examples_dropped", []):
            lines.append(f"- {row['lang']}: `{example['source'][:90]}` / `{example['target'][:90]}`")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args.output.with_suffix(".json").write_text(
        json.dumps({"command": command, "seconds": seconds, "rows": rows}, indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    print("\n".join(lines[:30]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
