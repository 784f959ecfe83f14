"""Train a P-SP model on the shared training pairs with annealed mega-batching; print STS Benchmark test Spearman.

python examples/train_psp.py                       # the packaged psp-en recipe
python examples/train_psp.py --max-steps 500       # a quick run: 500 steps for each of psp-en's 4 soup members (its
                                                   # teacher pass comes first: ~10 min uncached)
python examples/train_psp.py --resume              # continue the run in --output (or --overwrite: start again)
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="psp-en", help="a packaged recipe name or a recipe .yaml file")
    parser.add_argument("--output", default="runs/example-psp")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--resume", action="store_true", help="continue from the last checkpoint in --output")
    parser.add_argument("--overwrite", action="store_true", help="start again in a non-empty --output")
    args = parser.parse_args()

    import pandas as pd
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    from psp_st.io.data_dir import default_data_dir
    from psp_st.training.recipe import train_from_config

    try:
        model = train_from_config(
            args.config, args.output, resume=args.resume, max_steps=args.max_steps, overwrite=args.overwrite
        )
    except (ValueError, OSError) as error:  # a bad recipe, a missing file, an output that exists: one line
        parser.error(str(error))
    test = pd.read_parquet(default_data_dir() / "sts" / "stsbenchmark" / "test.parquet")
    evaluator = EmbeddingSimilarityEvaluator(
        test.sentence1.tolist(), test.sentence2.tolist(), (test.score / 5).tolist(), name="sts-test"
    )
    spearman = evaluator(model)["sts-test_spearman_cosine"]
    print(f"STS Benchmark test Spearman: {100 * spearman:.2f}")


if __name__ == "__main__":
    main()
