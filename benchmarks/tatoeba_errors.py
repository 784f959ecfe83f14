"""Where a model's Tatoeba errors are (issue 12): error by sentence length, and how much of the test's vocabulary
the training bitext holds. Diagnosis only: Tatoeba is a test set and chooses nothing.

For one language it embeds the Tatoeba source and target sides, takes the nearest target of each source (cosine,
x -> en), and prints the error overall and by the source's length in words, the share of the source's words (and
of its sentences with at least one word) that never occur in the foreign side of the training bitext (FLORES
devtest rows excluded, as the recipes do), and a sample of errors:

    OMP_NUM_THREADS=1 python benchmarks/tatoeba_errors.py --model /path/to/psp-multi --lang fra
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: Tatoeba language code -> the bitext file's language
BITEXT = {"deu": "de", "fra": "fr"}
LENGTH_BINS = [0, 4, 6, 8, 12, 10_000]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a model folder (psp-multi release)")
    parser.add_argument("--lang", choices=sorted(BITEXT), default="fra")
    parser.add_argument("--examples", type=int, default=10, help="errors to print")
    args = parser.parse_args()

    import numpy as np
    import pandas as pd
    import regex

    from psp_st.io.data_dir import resolve_data_files
    from psp_st.modules.trusted import load_trusted

    words = regex.compile(r"\w+")
    tatoeba = pd.read_parquet(resolve_data_files(f"bitext_mining/tatoeba/{args.lang}-eng.parquet")[0])
    bitext = pd.read_parquet(resolve_data_files(f"bitext/{BITEXT[args.lang]}-en.parquet")[0])
    bitext = bitext[bitext["corpus"] != "flores200-devtest"]
    seen = collections.Counter(word for text in bitext["source"] for word in words.findall(text.lower()))

    model = load_trusted(args.model)
    source = model.encode(tatoeba["source"].tolist(), normalize_embeddings=True)
    target = model.encode(tatoeba["target"].tolist(), normalize_embeddings=True)
    predicted = (source @ target.T).argmax(1)
    wrong = predicted != np.arange(len(tatoeba))

    source_words = [words.findall(text.lower()) for text in tatoeba["source"]]
    lengths = np.array([len(item) for item in source_words])
    all_words = [word for item in source_words for word in item]
    by_length = {}
    for low, high in itertools.pairwise(LENGTH_BINS):
        rows = (lengths > low) & (lengths <= high)
        by_length[f"{low + 1}-{high} words" if high < 10_000 else f">{low} words"] = {
            "sentences": int(rows.sum()),
            "error": round(100 * float(wrong[rows].mean()), 1) if rows.any() else None,
        }
    report = {
        "lang": args.lang,
        "error": round(100 * float(wrong.mean()), 1),
        "by_length": by_length,
        "bitext_pairs": len(bitext),
        "unseen_word_share": round(100 * sum(seen[word] == 0 for word in all_words) / len(all_words), 1),
        "sentences_with_unseen_word": round(
            100 * sum(any(seen[word] == 0 for word in item) for item in source_words) / len(tatoeba), 1
        ),
        "error_with_unseen_word": round(
            100 * float(wrong[[any(seen[word] == 0 for word in item) for item in source_words]].mean()), 1
        ),
    }
    print(json.dumps(report, indent=1))
    for index in np.flatnonzero(wrong)[: args.examples]:
        print(
            f"{tatoeba['source'][index]!r} -> {tatoeba['target'][predicted[index]]!r} (gold {tatoeba['target'][index]!r})"
        )


if __name__ == "__main__":
    main()
