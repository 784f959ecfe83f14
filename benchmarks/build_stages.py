"""Time a build's data stages without the teacher: the training pairs, then the distillation sentences.

Both run cold, as in a fresh ``psp-st build``: a new temporary datasets cache (``HF_DATASETS_CACHE``) and the
recipe's ``data.cache_dir`` in a new temporary folder. Prints one JSON line with the seconds of each stage and a
hash of the distillation sentences, so two checkouts can be compared (run each with its code on the path)::

    PYTHONPATH=<old checkout> python benchmarks/build_stages.py psp-multi --data-dir ../shared/data
    PYTHONPATH=. python benchmarks/build_stages.py psp-multi --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe", help="a packaged recipe name or a recipe file")
    parser.add_argument("--data-dir", default=None, help="the shared data folder (default: psp-st's default)")
    parser.add_argument("--seed", type=int, default=None, help="default: the recipe's")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="build-stages-") as folder:
        os.environ["HF_DATASETS_CACHE"] = os.path.join(folder, "hf")  # before datasets is imported: a cold cache
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import psp_st
        from psp_st.distillation import distillation_sentences
        from psp_st.evaluation.decontamination import evaluation_sentences
        from psp_st.io.data_dir import default_data_dir
        from psp_st.training.recipe import load_config, load_recipe_pairs

        config = load_config(args.recipe)
        seed = config.get("seed", 42) if args.seed is None else args.seed
        data_dir = args.data_dir or default_data_dir()
        cache = os.path.join(folder, "cache")
        start = time.perf_counter()
        pairs = load_recipe_pairs({**config["data"], "cache_dir": cache}, seed, data_dir=data_dir)
        pairs_seconds, pair_count = time.perf_counter() - start, len(pairs)
        options = {}
        if "cache_dir" in inspect.signature(distillation_sentences).parameters:  # what a build passes since 9603e16
            options["cache_dir"] = os.path.join(cache, "datasets")
        distillation = config.get("distillation", {})
        if distillation.get("max_words") is not None:  # a recipe key since psp-en v5
            options["max_words"] = distillation["max_words"]
        start = time.perf_counter()
        parts = distillation_sentences(
            distillation.get("sources", []),
            seed=seed,
            exclude=evaluation_sentences(data_dir),
            data_dir=data_dir,
            **options,
        )
        sentences_seconds = time.perf_counter() - start
    record = {
        "recipe": args.recipe,
        "code": os.path.dirname(psp_st.__file__),
        "pairs": pair_count,
        "pairs_seconds": round(pairs_seconds, 1),
        "distillation_sentences": sum(len(texts) for _, texts, _ in parts),
        "distillation_sentences_seconds": round(sentences_seconds, 1),
        "distillation_sentences_sha1": hashlib.sha1(json.dumps(parts).encode()).hexdigest()[:12],
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()
