"""Vocabulary reduction by Morfessor Baseline segmentation, as in Table 8 of Sjöblom et al. (W-NUT 2018).

Counts the distinct lower-cased word types of a corpus (no segmentation) and the distinct morphs after
segmenting every word with a Morfessor Baseline model trained on that corpus's words, for the Finnish (and,
with ``--sides source target``, English) side of ``shared/data/bitext/fi-en.parquet``.

    python benchmarks/morfessor_vocab.py --out benchmarks/results/morfessor_fi.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from psp_st.tokenization.morfessor import MorfessorSegmenter
from psp_st.tokenization.words import WordTokenizer

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "bitext" / "fi-en.parquet"
#: Table 8 of the paper (2 million Opusparcus phrase pairs): word types and Morfessor morph types.
PAPER = {"fi": (130_879, 33_513), "en": (56_571, 15_295)}


def measure(sentences: list[str], count_modifier: str, corpus_weight: float) -> dict[str, float]:
    words = WordTokenizer.count_tokens(sentences)
    start = time.perf_counter()
    segmenter = MorfessorSegmenter.train(words, count_modifier=count_modifier, corpus_weight=corpus_weight)
    seconds = time.perf_counter() - start
    morph_tokens = sum(count * len(segmenter.segment(word)) for word, count in words.items())
    morphs = {morph for word in words for morph in segmenter.segment(word)}
    return {
        "sentences": len(sentences),
        "word_tokens": sum(words.values()),
        "word_types": len(words),
        "morph_tokens": morph_tokens,
        "morph_types": len(morphs),
        "train_seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--sides",
        nargs="+",
        default=["source"],
        choices=["source", "target"],
        help="source = Finnish, target = English",
    )
    parser.add_argument("--count-modifier", default="log", choices=["log", "types", "tokens"])
    parser.add_argument("--corpus-weight", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=None, help="write the markdown table here too")
    args = parser.parse_args()

    frame = pd.read_parquet(args.data, columns=["source", "target"])
    rows = []
    for side in args.sides:
        lang = "fi" if side == "source" else "en"
        result = measure(frame[side].tolist(), args.count_modifier, args.corpus_weight)
        rows.append((lang, result))
        print(lang, result, file=sys.stderr)

    lines = [
        f"Morfessor Baseline vocabulary reduction (cf. Sjöblom et al. 2018, Table 8) on `{args.data.name}`",
        "",
        "Command: `python " + " ".join(["benchmarks/morfessor_vocab.py", *sys.argv[1:]]) + "`",
        "",
        f"Morfessor Baseline (recursive batch training, count modifier `{args.count_modifier}`, corpus weight "
        f"{args.corpus_weight}) trained on the lower-cased word types of the same text it segments; words split by "
        "psp-st's WordTokenizer (punctuation marks are tokens).",
        "",
        "| lang | sentences | word tokens | no segmentation (word types) | Morfessor (morph types) | reduction | "
        "morphs per word | Morfessor training s (wall, shared machine) | paper: no segm. | paper: Morfessor | paper reduction |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for lang, r in rows:
        paper_words, paper_morphs = PAPER[lang]
        lines.append(
            f"| {lang} | {r['sentences']:,} | {r['word_tokens']:,} | {r['word_types']:,} | {r['morph_types']:,} | "
            f"{1 - r['morph_types'] / r['word_types']:.1%} | {r['morph_tokens'] / r['word_tokens']:.2f} | "
            f"{r['train_seconds']:.0f} | {paper_words:,} | {paper_morphs:,} | {1 - paper_morphs / paper_words:.1%} |"
        )
    lines += [
        "",
        "The paper's counts are for 2 million Opusparcus subtitle phrase pairs (both sides); ours for "
        f"{rows[0][1]['sentences']:,} news/FLORES sentences, so absolute sizes differ; compare the reduction.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
