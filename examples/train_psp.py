"""Train a P-SP model on the shared training pairs with annealed mega-batching; print STS Benchmark test Spearman.

python examples/train_psp.py                       # the packaged psp-en recipe
python examples/train_psp.py --max-steps 500       # a quick run
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
    args = parser.parse_args()

    import pandas as pd
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    from psp_st.io.data_dir import default_data_dir
    from psp_st.training.recipe import train_from_config

    model = train_from_config(args.config, output_dir=args.output, max_steps=args.max_steps)
    test = pd.read_parquet(default_data_dir() / "sts" / "stsbenchmark" / "test.parquet")
    evaluator = EmbeddingSimilarityEvaluator(
        test.sentence1.tolist(), test.sentence2.tolist(), (test.score / 5).tolist(), name="sts-test"
    )
    spearman = evaluator(model)["sts-test_spearman_cosine"]
    print(f"STS Benchmark test Spearman: {100 * spearman:.2f}")


if __name__ == "__main__":
    main()
