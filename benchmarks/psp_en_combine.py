"""psp-en: free combinations of trained models, each evaluated like an ablation row (round 6 of the ablation).

* ``ensemble``: the cosine of each pair is the weighted mean of the models' cosines (``(1 - w)`` for the first
  model, ``w`` shared by the others); with one tokenizer this is one static model of the concatenated, per-model
  normalised vectors, so inference stays a single table lookup.
* ``average``: the element-wise mean of the models' piece vectors (checkpoints of one run).
* ``sif``: the first model's piece vectors times SIF's ``a / (a + p(piece))`` (piece frequencies of the
  ``training_pairs/`` text), folded after training instead of at initialisation.
* ``wise-ft``: the mean of the models' piece vectors (a soup, or one run) moved back towards ``--initial`` (the
  model the runs started from): ``initial + a * (mean - initial)`` for each ``--alphas`` a, as the recipe key
  ``wise_ft`` saves it (round 18). ``--train-splits`` adds STS-B train and SICK-R train Spearman (held out: no
  recipe trains or chooses on them). ``--toward OTHER --betas b ...`` adds ``b * (other - initial)`` to each
  (a plane through a third model, e.g. the initial vectors re-weighted or fitted: round 19). ``--genres`` adds,
  under each row, STS-B dev and test Spearman per source file (MSRpar, headlines, answers-forums / answer-answer,
  ...: where a change gains or loses; round 19). ``--common-from pairs|corpus|both --pcs K ...`` adds, under each
  ``a``, the model with the common component of its sentence vectors removed and folded into the piece table (the
  mean sentence vector subtracted from every row, then the top ``K`` principal directions projected out; fitted on
  60,000 random ``training_pairs/`` sentences, 60,000 of ``corpus/english_sentences.parquet``, or both: round 23).
  ``--gammas g ...`` adds, under each ``a``, the table with every row's norm raised to the power ``g``
  (``psp_st.training.norm_power.powered_row_norms``, the recipe key ``norm_power``; rounds 25-26).
* ``minmax``: the first model's cosine of mean-pooled vectors plus ``l`` times the mean of the cosines of its
  element-wise max- and min-pooled piece vectors, for each ``--lambdas`` l (concatenated power means, Rücklé et al.
  2018, probed after training: round 24).
* ``norm``: the first model's piece vectors with each row's norm raised to the power ``g`` for each ``--gammas`` g
  (``g < 1`` evens out how much the pieces weigh in the mean; a piece's norm is its weight; round 25).

Every model must share the first one's tokenizer (sentencepiece model). Numbers: STS-B dev/test and SICK-R dev
Spearman, SICK-R test Pearson, and the selection score (mean of the two dev columns), x100.

    python benchmarks/psp_en_combine.py ensemble MODEL MODEL [MODEL ...] --weights 0.3 0.5 0.7
    python benchmarks/psp_en_combine.py average MODEL MODEL [MODEL ...]
    python benchmarks/psp_en_combine.py sif MODEL --a 0.01 0.001
    python benchmarks/psp_en_combine.py minmax MODEL --lambdas 0.1 0.2 0.3 0.5
    python benchmarks/psp_en_combine.py norm MODEL --gammas 0.95 0.9 0.85 0.8
    python benchmarks/psp_en_combine.py wise-ft MODEL [MODEL ...] --initial RUN/initial --alphas 0.6 0.8
    python benchmarks/psp_en_combine.py wise-ft MODEL MODEL --initial RUN/initial --alphas 0.6 0.5 \\
        --common-from pairs corpus both --pcs 0 1 2 3 5
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: (name, load_local key) of the evaluated sets.
SETS = (("stsb_dev", "stsb-dev"), ("sick_dev", "sick-dev"), ("stsb_test", "stsb-test"), ("sick_test", "sick-test"))
#: Printed columns, in order.
COLUMNS = ("stsb_dev_spearman", "sick_dev_spearman", "selection", "stsb_test_spearman", "sick_test_pearson")
#: The held-out train splits ``--train-splits`` adds (Spearman).
TRAIN_SETS = (("stsb_train", "stsb-train"), ("sick_train", "sick-train"))


def scores(cosines: dict[str, object], gold: dict[str, object]) -> dict[str, float]:
    """The ablation's numbers from per-set cosines."""
    from scipy.stats import pearsonr, spearmanr

    out = {f"{name}_spearman": round(100 * spearmanr(cosines[name], gold[name])[0], 2) for name in cosines}
    out["sick_test_pearson"] = round(100 * pearsonr(cosines["sick_test"], gold["sick_test"])[0], 2)
    out["selection"] = round((out["stsb_dev_spearman"] + out["sick_dev_spearman"]) / 2, 2)
    return out


def common_component_removed(weights, tokenizer, texts: list[str], pcs: int):
    """``weights`` with the mean of ``texts``' sentence vectors subtracted from every row and the top ``pcs``
    principal directions of the centred vectors projected out: for mean pooling, the same as doing it to every
    sentence vector, so it folds into the table."""
    import numpy as np

    from psp_st.inference.engine import PSPEngine

    vectors = PSPEngine(weights, tokenizer, threads=1).encode(texts).astype(np.float64)
    centre = vectors.mean(0)
    folded = weights.astype(np.float64) - centre
    if pcs:
        directions = np.linalg.svd(vectors - centre, full_matrices=False)[2][:pcs]
        folded -= (folded @ directions.T) @ directions
    return folded.astype(np.float32)


def extreme_pooled(weights, tokenizer, texts: list[str], reduce):
    """Unit rows of the element-wise ``reduce`` (``np.maximum`` or ``np.minimum``) of each text's piece vectors, the
    pieces the engine pools (unknown ones dropped)."""
    import numpy as np

    flat, lengths = tokenizer.encode_flat(list(texts), drop_unknown=True)
    if (lengths == 0).any():
        raise SystemExit("minmax: a text has no known piece (max/min pooling of nothing)")
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rows = reduce.reduceat(np.asarray(weights, dtype=np.float64)[flat], starts, axis=0)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("ensemble", "average", "sif", "wise-ft", "minmax", "norm"))
    parser.add_argument("models", nargs="+", help="model folders (a release root, trainable/ or a checkpoint)")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.3, 0.5, 0.7], help="ensemble weights")
    parser.add_argument("--a", type=float, nargs="+", default=[0.01, 0.003, 0.001], help="SIF constants")
    parser.add_argument(
        "--lambdas", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.5], help="minmax: weights of the max/min cosines"
    )
    parser.add_argument("--gammas", type=float, nargs="+", default=[], help="norm, wise-ft: powers of the rows' norms")
    parser.add_argument("--initial", default=None, help="wise-ft: the model the runs started from (RUN/initial)")
    parser.add_argument("--alphas", type=float, nargs="+", default=[0.6, 0.7, 0.8, 0.9], help="wise-ft: a values")
    parser.add_argument("--toward", default=None, help="wise-ft: a third model, added as b * (toward - initial)")
    parser.add_argument("--betas", type=float, nargs="+", default=[0.0], help="wise-ft: b values for --toward")
    parser.add_argument(
        "--common-from",
        choices=("pairs", "corpus", "both"),
        nargs="+",
        default=[],
        help="wise-ft: also remove the common component fitted on this text",
    )
    parser.add_argument("--pcs", type=int, nargs="+", default=[0], help="--common-from: principal directions removed")
    parser.add_argument("--train-splits", action="store_true", help="also STS-B train and SICK-R train Spearman")
    parser.add_argument("--genres", action="store_true", help="also STS-B dev/test Spearman per source file")
    parser.add_argument("--data-dir", default=None, help="shared data folder (default: $PSP_ST_DATA_DIR)")
    args = parser.parse_args()
    if args.mode == "wise-ft" and not args.initial:
        parser.error("wise-ft needs --initial (the initial/ folder of the runs)")
    if args.mode == "norm" and not args.gammas:
        parser.error("norm needs --gammas (the powers of the rows' norms)")
    if args.betas != [0.0] and not args.toward:
        parser.error("--betas needs --toward (the third model)")

    import numpy as np
    import pandas as pd
    from training_genres import spearman_by

    from psp_st.distillation.piece_weights import piece_counts, sif_weights
    from psp_st.evaluation import load_local
    from psp_st.evaluation.loaders import local_path
    from psp_st.inference.engine import PSPEngine, load_engine
    from psp_st.io.data_dir import default_data_dir
    from psp_st.training.norm_power import powered_row_norms

    engines = [load_engine(path, threads=1) for path in args.models]
    first = engines[0]
    sets = SETS + (TRAIN_SETS if args.train_splits else ())
    columns = COLUMNS + tuple(f"{name}_spearman" for name, _ in TRAIN_SETS if args.train_splits)
    pairs = {name: load_local(key, args.data_dir) for name, key in sets}
    gold = {name: np.asarray(data["score"], dtype=np.float64) for name, data in pairs.items()}

    def cosines(engine) -> dict[str, np.ndarray]:
        return {
            name: (
                engine.encode(list(data["sentence1"]), normalize=True)
                * engine.encode(list(data["sentence2"]), normalize=True)
            ).sum(1)
            for name, data in pairs.items()
        }

    sources = {  # STS-B rows' source files (load_local keeps only the scored columns), in load_local's row order
        name: pd.read_parquet(local_path(key, args.data_dir), columns=["source_file"])["source_file"].to_numpy()
        for name, key in SETS
        if args.genres and name.startswith("stsb")
    }
    if any(len(source) != len(gold[name]) for name, source in sources.items()):
        raise SystemExit("STS-B's source_file column does not line up with the loaded rows")

    def fit_texts(name: str) -> list[str]:
        folder = Path(args.data_dir or default_data_dir())
        texts: list[str] = []
        if name in ("pairs", "both"):
            pair_texts: list[str] = []
            for path in sorted(glob.glob(str(folder / "training_pairs" / "*.parquet"))):
                frame = pd.read_parquet(path, columns=["sentence1", "sentence2"])
                pair_texts += frame["sentence1"].tolist() + frame["sentence2"].tolist()
            texts += [pair_texts[i] for i in np.random.default_rng(0).permutation(len(pair_texts))[:60000]]
        if name in ("corpus", "both"):
            corpus = pd.read_parquet(folder / "corpus" / "english_sentences.parquet", columns=["sentence"])
            texts += corpus["sentence"].sample(60000, random_state=0).tolist()
        return texts

    def show(label: str, numbers: dict[str, float], cosine: dict[str, np.ndarray] | None = None) -> None:
        print(f"| {label} | " + " | ".join(f"{numbers[key]:.2f}" for key in columns) + " |", flush=True)
        for name, source in sources.items() if cosine is not None else ():
            by_source = spearman_by(cosine[name], gold[name], source)
            parts = [f"{file} {value:.2f}" for file, value in by_source.items() if file != "all"]
            print(f"|   {name} by source: " + ", ".join(parts) + " |" + " |" * (len(columns) - 1), flush=True)

    print("| model | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    single = [cosines(engine) for engine in engines]
    for path, result in zip(args.models, single, strict=True):
        show(path, scores(result, gold), result)
    if args.mode == "ensemble":
        for weight in args.weights:
            mixed = {
                name: (1 - weight) * single[0][name] + weight * np.mean([c[name] for c in single[1:]], axis=0)
                for name, _ in sets
            }
            show(f"ensemble, weight {weight} on the others", scores(mixed, gold))
    elif args.mode == "average":
        mean = np.mean([engine.weights for engine in engines], axis=0)
        show("mean of the piece vectors", scores(cosines(PSPEngine(mean, first.tokenizer, threads=1)), gold))
    elif args.mode == "wise-ft":
        mean = np.mean([engine.weights.astype(np.float64) for engine in engines], axis=0)
        initial = load_engine(args.initial, threads=1).weights.astype(np.float64)
        toward = load_engine(args.toward, threads=1).weights.astype(np.float64) if args.toward else initial
        for alpha in dict.fromkeys([1.0, *args.alphas]):  # the plain soup first, once
            for beta in args.betas:
                mixed = (initial + alpha * (mean - initial) + beta * (toward - initial)).astype(np.float32)
                result = cosines(PSPEngine(mixed, first.tokenizer, threads=1))
                label = f"wise-ft a = {alpha}" + (f", b = {beta}" if args.toward else "")
                show(label, scores(result, gold), result)
                for gamma in args.gammas:
                    powered = powered_row_norms(mixed, gamma)
                    result = cosines(PSPEngine(powered, first.tokenizer, threads=1))
                    show(f"{label}, norms to the power {gamma}", scores(result, gold), result)
                for fit_name in args.common_from:
                    for pcs in args.pcs:
                        fitted = common_component_removed(mixed, first.tokenizer, fit_texts(fit_name), pcs)
                        result = cosines(PSPEngine(fitted, first.tokenizer, threads=1))
                        show(f"{label}, common component of {fit_name} text, {pcs} PCs", scores(result, gold), result)
    elif args.mode == "minmax":
        extremes = {
            name: np.mean(
                [
                    (
                        extreme_pooled(first.weights, first.tokenizer, data["sentence1"], f)
                        * extreme_pooled(first.weights, first.tokenizer, data["sentence2"], f)
                    ).sum(1)
                    for f in (np.maximum, np.minimum)
                ],
                axis=0,
            )
            for name, data in pairs.items()
        }
        for weight in args.lambdas:
            mixed = {name: single[0][name] + weight * extremes[name] for name in pairs}
            show(f"mean + {weight} x max/min pooling", scores(mixed, gold))
    elif args.mode == "norm":
        for gamma in args.gammas:
            result = cosines(PSPEngine(powered_row_norms(first.weights, gamma), first.tokenizer, threads=1))
            show(f"norms to the power {gamma}", scores(result, gold), result)
    else:
        folder = Path(args.data_dir or default_data_dir())
        texts: list[str] = []
        for path in sorted(glob.glob(str(folder / "training_pairs" / "*.parquet"))):
            frame = pd.read_parquet(path, columns=["sentence1", "sentence2"])
            texts += frame["sentence1"].tolist() + frame["sentence2"].tolist()
        counts = piece_counts(first.tokenizer, texts)
        for a in args.a:
            weighted = first.weights * sif_weights(counts, a)[:, None].astype(np.float32)
            show(f"SIF a = {a} after training", scores(cosines(PSPEngine(weighted, first.tokenizer, threads=1)), gold))


if __name__ == "__main__":
    main()
