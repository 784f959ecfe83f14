"""psp-en rounds 19, 20, 23 and 27: the inputs of their probes, made from the shared data (19-23 negative; 27 led to v10).

* ``subset``: the rows of a corpus file whose ``source`` starts with one of ``--source-prefix``, as a new Parquet
  file (e.g. only the WMT news sentences of ``corpus/english_sentences.parquet``), which a distillation-sources
  override then samples from like any data file.
* ``sif-recount``: an initial model (a build's ``initial/`` folder: teacher-initialised piece vectors times SIF
  weights counted on the ``training_pairs/`` text) with its SIF weights counted on other text instead: ``pairs``,
  ``distil`` (the recipe's distillation sample) or ``pairs+distil``. The teacher vectors are recovered exactly by
  dividing out the old weights (``sif_weights`` has no zero), then multiplied by the new ones.
* ``whitening``: an initial model whose teacher PCA columns keep part of the teacher's variance spectrum instead
  of being standardised: column ``j`` times ``s_j ** (1 - w)``, rescaled so the columns' mean variance stays 1
  (``s_j``: the std of the teacher piece vectors' ``j``-th principal component; ``--strength w``: 1 is the
  package's standardisation, 0 plain PCA; columns beyond the teacher's numerical rank, which it never varies in, go
  to ~0 below 1). The teacher piece vectors come from the teacher cache; the script checks that the initial model's
  columns within that rank are their standardised PCA times one weight per row before it rescales.
* ``tokenizer-text``: psp-en's initial model with its sentencepiece model trained on the pairs and the recipe's
  distillation sample (round 27; ``--text pairs --vocab-size 32000`` is the v9 recipe's own initial model).
* ``contextual-sums``: per piece id, the sum of the teacher's last-layer token vectors over the piece's occurrences in
  sentences of the recipe's distillation sample (a piece's vector there: the mean of the teacher tokens its characters
  overlap), saved as ``.npz``; ``contextual``: an initial model from them (round 23: contextual vectors, each mixed
  with the piece alone by ``n / (n + shrink)``, then the package's PCA and standardisation and the initial model's
  SIF weights, checked as ``whitening`` checks them; ``--same-basis``: on the initial model's own PCA columns).

    python benchmarks/psp_en_probe_inputs.py subset corpus/english_sentences.parquet --source-prefix wmt-testsets \\
        --out runs/round19/wmt_news_sentences.parquet
    python benchmarks/psp_en_probe_inputs.py subset corpus/nltk_corpora.parquet --source-prefix nltk:webtext \\
        nltk:nps_chat --out runs/round19/forum_sentences.parquet
    python benchmarks/psp_en_probe_inputs.py sif-recount --initial runs/ablation/v6-s17-base/initial \\
        --counts pairs+distil --out runs/round19/init-sif-pairs-distil
    python benchmarks/psp_en_probe_inputs.py whitening --initial runs/ablation/v6-s17-base/initial --strength 0 \\
        --teacher-cache runs/teacher_cache --out runs/round20/init-white0
    python benchmarks/psp_en_probe_inputs.py contextual-sums --initial runs/ablation/v6-s24-base-order42/initial \\
        --sentences 60000 --sums runs/round23/ctx60k.npz
    python benchmarks/psp_en_probe_inputs.py tokenizer-text --text pairs+distil --vocab-size 32000 [--seed 7] \\
        --out runs/round27/init-distil-32k
    python benchmarks/psp_en_probe_inputs.py contextual --initial runs/ablation/v6-s24-base-order42/initial \\
        --sums runs/round23/ctx60k.npz --shrink 0 --teacher-cache runs/teacher_cache --out runs/round23/init-ctx-k0

Numbers: ``benchmarks/results/psp_en_v3_ablation.md`` (rounds 19, 20, 23 and 27), raw logs ``psp_en_v19_runs.jsonl``,
``psp_en_v20_runs.jsonl``, ``psp_en_v23_runs.jsonl``, ``psp_en_v27_runs.jsonl``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: The texts ``sif-recount`` can count pieces on.
COUNTS = ("pairs", "distil", "pairs+distil")


def subset(path: str, prefixes: list[str], out: str, data_dir: str | None) -> None:
    """Write the rows of ``path`` whose ``source`` starts with one of ``prefixes`` to ``out``."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from psp_st.io.data_dir import resolve_data_files

    (file,) = resolve_data_files(path, data_dir)
    table = pq.read_table(file)
    if "source" not in table.column_names:
        raise SystemExit(f"{file} has no 'source' column (columns: {table.column_names})")
    keep = pc.starts_with(table["source"], prefixes[0])
    for prefix in prefixes[1:]:
        keep = pc.or_(keep, pc.starts_with(table["source"], prefix))
    chosen = table.filter(keep)
    if not chosen.num_rows:
        raise SystemExit(f"no row of {file} has a source starting with {prefixes}")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    pq.write_table(chosen, out)
    print(f"{out}: {chosen.num_rows:,} of {table.num_rows:,} rows")


def sif_recount(initial: str, counts_of: str, out: str, a: float, data_dir: str | None) -> None:
    """Save ``initial`` with its SIF weights counted on ``counts_of`` text instead of the ``training_pairs/`` text."""
    import numpy as np
    import torch

    from psp_st.data.loaders import read_texts
    from psp_st.distillation import distillation_sentences
    from psp_st.distillation.piece_weights import piece_counts, sif_weights
    from psp_st.evaluation.decontamination import evaluation_sentences
    from psp_st.io.data_dir import default_data_dir, resolve_data_files
    from psp_st.modules.trusted import load_trusted
    from psp_st.training.recipe import load_config
    from psp_st.training.schema import parse_recipe

    folder = data_dir or default_data_dir()
    model = load_trusted(initial)
    module = model[0]
    vocab = module.vocab_size
    pairs = read_texts(resolve_data_files("training_pairs/*.parquet", folder), ["sentence1", "sentence2"])
    counts = {"pairs": piece_counts(module.tokenizer, pairs)}
    if "distil" in counts_of:
        distil = parse_recipe(load_config("psp-en")).distillation
        parts = distillation_sentences(
            distil.sources, seed=42, exclude=evaluation_sentences(folder), data_dir=folder, max_words=distil.max_words
        )
        counts["distil"] = piece_counts(module.tokenizer, [text for _, texts, _ in parts for text in texts])
    new = sum(counts[name] for name in counts_of.split("+"))
    ratio = sif_weights(new, a) / sif_weights(counts["pairs"], a)
    with torch.no_grad():
        module.embedding.weight[:vocab] *= torch.from_numpy(ratio.astype(np.float32)).unsqueeze(1)
    model.save(out)
    print(f"{out}: SIF weights counted on {counts_of} text (a = {a})")


def teacher_initial(initial: str, teacher_cache: str, teacher: str) -> tuple[Any, Any, Any, Any, Any]:
    """``(model, raw, singular, rank, rows)`` of a build's ``initial/`` folder: the teacher piece vectors (from the
    cache), their PCA singular values, numerical rank, and each row's SIF weight, after checking that the model's
    columns within that rank are the standardised teacher PCA times one weight per row."""
    import numpy as np

    from psp_st.distillation.teacher_cache import teacher_vectors
    from psp_st.modules.teacher_init import distilled_piece_vectors, numerical_rank
    from psp_st.modules.trusted import load_trusted

    model = load_trusted(initial)
    module = model[0]
    vocab, dim = module.vocab_size, module.embedding_dim
    raw = teacher_vectors(module.tokenizer.token_texts(), teacher, teacher_cache, label="pieces")
    raw = np.asarray(raw.with_format("numpy")["embedding"], dtype=np.float64)
    if dim > raw.shape[1]:
        raise SystemExit(f"{initial}: {dim} dimensions, more than the teacher's {raw.shape[1]} principal components")
    singular = np.linalg.svd(raw - raw.mean(0, keepdims=True), compute_uv=False)[:dim]
    rank = numerical_rank(singular, raw.shape)  # the columns the check can hold to (the rest is seeded or noise)
    standardised = distilled_piece_vectors(raw, dim).astype(np.float64)[:, :rank]
    weights = module.embedding.weight[:vocab].detach().double().numpy()
    rows = (weights[:, :rank] * standardised).sum(1) / (standardised**2).sum(1)
    if np.abs(weights[:, :rank] - rows[:, None] * standardised).max() > 1e-4 * np.abs(weights).max():  # float32
        raise SystemExit(f"{initial} is not the standardised teacher PCA times one weight per row (another teacher?)")
    return model, raw, singular, rank, rows


def whitening(initial: str, strength: float, teacher_cache: str, teacher: str, out: str) -> None:
    """Save ``initial`` with its standardised teacher PCA columns rescaled to ``std_j ** (1 - strength)``."""
    import numpy as np
    import torch

    model, _, singular, _, _ = teacher_initial(initial, teacher_cache, teacher)
    module = model[0]
    vocab = module.vocab_size
    scale = (singular / singular.mean()) ** (1.0 - strength)
    scale /= np.sqrt(np.mean(scale**2))
    with torch.no_grad():
        module.embedding.weight[:vocab] *= torch.from_numpy(scale.astype(np.float32)).unsqueeze(0)
    model.save(out)
    print(f"{out}: PCA columns at whitening strength {strength} (column stds {scale.max():.2f} to {scale.min():.3f})")


def contextual_sums(initial: str, teacher: str, sentences: int, seed: int, sums: str, data_dir: str | None) -> None:
    """Sum, per piece id, the teacher's last-layer token vectors over each occurrence of the piece in ``sentences``
    sentences drawn from the recipe's distillation sample (a piece's vector: the mean of the teacher tokens its
    characters overlap); saved to ``sums`` (``.npz``: ``sums`` and ``counts``) for :func:`contextual`."""
    import numpy as np
    import torch
    from tqdm import tqdm

    from psp_st.distillation import distillation_sentences
    from psp_st.evaluation.decontamination import evaluation_sentences
    from psp_st.io.data_dir import default_data_dir
    from psp_st.modules.teacher_init import load_teacher
    from psp_st.modules.trusted import load_trusted
    from psp_st.training.recipe import load_config
    from psp_st.training.schema import parse_recipe

    folder = data_dir or default_data_dir()
    module = load_trusted(initial)[0]
    distil = parse_recipe(load_config("psp-en")).distillation
    parts = distillation_sentences(
        distil.sources, seed=42, exclude=evaluation_sentences(folder), data_dir=folder, max_words=distil.max_words
    )
    pool = [text for _, texts, _ in parts for text in texts]
    order = np.random.default_rng(seed).permutation(len(pool))[:sentences]
    texts = sorted((pool[i] for i in order if len(pool[i].lower()) == len(pool[i])), key=len)  # little padding
    model = load_teacher(teacher)
    transformer, hf_tokenizer = model[0].auto_model.eval(), model.tokenizer
    processor = module.tokenizer.processor  # the sentencepiece model, for each piece's character offsets
    dim = transformer.config.hidden_size
    total = np.zeros((module.vocab_size, dim), dtype=np.float64)
    counts = np.zeros(module.vocab_size, dtype=np.int64)
    skipped = 0
    batch = 64
    with torch.inference_mode():
        for start in tqdm(range(0, len(texts), batch), desc="teacher tokens", unit="batch"):
            chunk = texts[start : start + batch]
            encoded = hf_tokenizer(
                chunk, padding=True, truncation=True, max_length=256, return_offsets_mapping=True, return_tensors="pt"
            )
            offsets = encoded.pop("offset_mapping").numpy()
            hidden = transformer(**encoded).last_hidden_state.numpy()
            ids_flat, lengths = module.tokenizer.encode_flat(chunk)
            ends = np.cumsum(lengths)
            for row, text in enumerate(chunk):
                proto = processor.encode(text.lower(), return_type="proto")
                ids = [piece.id for piece in proto.pieces]
                if ids != list(ids_flat[ends[row] - lengths[row] : ends[row]]):
                    skipped += 1
                    continue
                to_char = np.cumsum([0] + [len(ch.encode("utf-8")) for ch in text.lower()])
                begin = np.searchsorted(to_char, [piece.begin for piece in proto.pieces])
                end = np.searchsorted(to_char, [piece.end for piece in proto.pieces])
                keep = encoded["attention_mask"][row].numpy().astype(bool) & (offsets[row, :, 1] > offsets[row, :, 0])
                token_start, token_end = offsets[row, keep, 0], offsets[row, keep, 1]
                vectors = hidden[row, keep]
                overlap = (token_start[None, :] < end[:, None]) & (token_end[None, :] > begin[:, None])
                found = overlap.sum(1)
                has = found > 0
                means = (overlap[has] @ vectors) / found[has, None]
                np.add.at(total, np.asarray(ids)[has], means)
                np.add.at(counts, np.asarray(ids)[has], 1)
    os.makedirs(os.path.dirname(os.path.abspath(sums)), exist_ok=True)
    np.savez(sums, sums=total, counts=counts)
    print(
        f"{sums}: {len(texts) - skipped:,} sentences, {int(counts.sum()):,} piece occurrences, "
        f"{int((counts > 0).sum()):,} of {module.vocab_size:,} pieces seen ({skipped} sentences skipped)"
    )


def contextual(
    initial: str, sums: str, shrink: float, teacher_cache: str, teacher: str, out: str, same_basis: bool = False
) -> None:
    """Save ``initial`` with its teacher piece vectors replaced by ``w * contextual + (1 - w) * alone`` (both
    unit-normalised; ``w = n / (n + shrink)`` for a piece seen ``n`` times), then the package's PCA and
    standardisation and the initial model's own SIF weight per row. ``same_basis``: projected on the initial model's
    own PCA columns and scaled by their stds (not a new PCA), so the result lives in the initial model's coordinates
    and the WiSE-FT line of runs trained from ``initial`` can end at it."""
    import numpy as np
    import torch

    from psp_st.modules.teacher_init import distilled_piece_vectors

    model, raw, _, rank, rows = teacher_initial(initial, teacher_cache, teacher)
    module = model[0]
    vocab, dim = module.vocab_size, module.embedding_dim
    loaded = np.load(sums)
    counts = loaded["counts"].astype(np.float64)
    context = loaded["sums"] / np.maximum(counts, 1)[:, None]
    context /= np.maximum(np.linalg.norm(context, axis=1, keepdims=True), 1e-12)
    alone = raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-12)
    w = (counts / (counts + shrink))[:, None] if shrink > 0 else (counts > 0).astype(np.float64)[:, None]
    mixed = w * context + (1 - w) * alone
    if same_basis:
        centre = raw.mean(0, keepdims=True)
        _, _, components = np.linalg.svd(raw - centre, full_matrices=False)
        components = components[:rank]
        components *= np.sign(components[np.arange(rank), np.abs(components).argmax(1)])[:, None]
        scale = ((raw - centre) @ components.T).std(0, keepdims=True)
        new = distilled_piece_vectors(raw, dim).astype(np.float64)  # the seeded columns beyond the rank kept
        new[:, :rank] = ((mixed - centre) @ components.T) / scale
        new = (new * rows[:, None]).astype(np.float32)
    else:
        new = distilled_piece_vectors(mixed, dim) * rows[:, None].astype(np.float32)
    with torch.no_grad():
        module.embedding.weight[:vocab] = torch.from_numpy(new.astype(np.float32))
    model.save(out)
    print(f"{out}: contextual piece vectors, shrink {shrink} (mean weight {float(w.mean()):.3f})")


def tokenizer_text(text: str, vocab_size: int, out: str, data_dir: str | None, seed: int = 42) -> None:
    """Save psp-en's initial model (the packaged recipe's ``build_model`` at ``seed``: teacher piece vectors, SIF
    weights counted on the training pairs) with its sentencepiece model trained on the pairs' text plus more: ``distil``
    (the recipe's distillation sample, seed 42's as ``--fixed-sample-seed 42`` keeps it) at ``vocab_size`` pieces.
    Not ``build_model`` with ``tokenizer.distillation_text`` (the recipe key round 27 led to, which gives the same
    model at seed 42): that draws the sample at the recipe's seed, and the round's other draws kept seed 42's. ``text`` ``pairs`` at 32,000 pieces is the recipe's own
    initial model (the check that this function builds it as ``build_model`` does)."""
    import torch
    from sentence_transformers import SentenceTransformer

    from psp_st.distillation import distillation_sentences
    from psp_st.distillation.piece_weights import piece_counts, sif_weights
    from psp_st.evaluation.decontamination import evaluation_sentences
    from psp_st.io.data_dir import default_data_dir
    from psp_st.modules.psp import PSPEmbedding
    from psp_st.training.recipe import load_config, load_recipe_pairs
    from psp_st.training.schema import parse_recipe

    folder = data_dir or default_data_dir()
    recipe = parse_recipe({**load_config("psp-en"), "seed": seed})
    pairs = load_recipe_pairs(recipe.data, recipe.seed, data_dir=folder)
    pair_texts = pairs["sentence1"][:] + pairs["sentence2"][:]
    texts = list(pair_texts)
    if text == "pairs+distil":
        distil = recipe.distillation
        parts = distillation_sentences(
            distil.sources, seed=42, exclude=evaluation_sentences(folder), data_dir=folder, max_words=distil.max_words
        )
        texts += [sentence for _, part, _ in parts for sentence in part]
    model_cfg, distil = recipe.model, recipe.distillation
    module = PSPEmbedding.from_texts(
        texts,
        vocab_size=vocab_size,
        embedding_dim=model_cfg.embedding_dim,
        lowercase=recipe.tokenizer.lowercase,
        seed=recipe.seed,
        **model_cfg.module_options(),
        **recipe.tokenizer.options(),
    )
    module = PSPEmbedding.from_teacher(
        distil.teacher,
        module.tokenizer,
        embedding_dim=module.embedding_dim,
        seed=recipe.seed,
        cache_dir=distil.cache_dir,
        teacher_name=distil.teacher,
        max_seq_length=module.max_seq_length,
        dropout=module.dropout,
    )
    weights = sif_weights(piece_counts(module.tokenizer, pair_texts), model_cfg.init_sif)
    with torch.no_grad():
        module.embedding.weight[: module.vocab_size].mul_(torch.from_numpy(weights).float().unsqueeze(1))
    SentenceTransformer(modules=[module], device="cpu").save(out)
    print(f"{out}: {module.vocab_size:,} pieces trained on {len(texts):,} texts ({text}); SIF counted on the pairs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("subset", help="the rows of a corpus file from some sources")
    one.add_argument("path", help="a corpus file (relative to the data folder or the working directory)")
    one.add_argument("--source-prefix", nargs="+", required=True, help="keep rows whose source starts with one")
    one.add_argument("--out", required=True)
    two = commands.add_parser("sif-recount", help="an initial model with SIF weights counted on other text")
    two.add_argument("--initial", required=True, help="a build's initial/ folder (SIF counted on training_pairs/)")
    two.add_argument("--counts", choices=COUNTS, required=True)
    two.add_argument("--a", type=float, default=0.001, help="SIF constant (the recipe's model.init_sif)")
    two.add_argument("--out", required=True)
    three = commands.add_parser("whitening", help="an initial model with partly standardised teacher PCA columns")
    three.add_argument("--initial", required=True, help="a build's initial/ folder (teacher init, standardised)")
    three.add_argument("--strength", type=float, required=True, help="1: standardised (as built), 0: plain PCA")
    three.add_argument("--teacher-cache", required=True, help="the build's distillation.cache_dir")
    three.add_argument("--teacher", default="all-MiniLM-L6-v2", help="the teacher the initial model came from")
    three.add_argument("--out", required=True)
    four = commands.add_parser("contextual-sums", help="per-piece sums of the teacher's contextual token vectors")
    four.add_argument("--initial", required=True, help="a build's initial/ folder (its tokenizer)")
    four.add_argument("--teacher", default="all-MiniLM-L6-v2")
    four.add_argument("--sentences", type=int, default=50000, help="drawn from the recipe's distillation sample")
    four.add_argument("--seed", type=int, default=0)
    four.add_argument("--sums", required=True, help="the .npz to write")
    five = commands.add_parser("contextual", help="an initial model from contextual piece vectors")
    five.add_argument("--initial", required=True, help="a build's initial/ folder (teacher init, standardised)")
    five.add_argument("--sums", required=True, help="contextual-sums' .npz")
    five.add_argument("--shrink", type=float, default=0.0, help="w = n / (n + shrink); 0: contextual wherever seen")
    five.add_argument("--teacher-cache", required=True, help="the build's distillation.cache_dir")
    five.add_argument("--teacher", default="all-MiniLM-L6-v2", help="the teacher the initial model came from")
    five.add_argument("--same-basis", action="store_true", help="the initial model's PCA columns, not a new PCA")
    five.add_argument("--out", required=True)
    six = commands.add_parser("tokenizer-text", help="psp-en's initial model, its tokenizer trained on more text")
    six.add_argument("--text", choices=("pairs", "pairs+distil"), required=True)
    six.add_argument("--vocab-size", type=int, required=True, help="sentencepiece's piece count (an upper bound)")
    six.add_argument("--seed", type=int, default=42, help="the recipe's seed (tokenizer sample, data order)")
    six.add_argument("--out", required=True)
    for command in (one, two, four, six):
        command.add_argument("--data-dir", default=None, help="shared data folder (default: $PSP_ST_DATA_DIR)")
    args = parser.parse_args()
    if args.command == "subset":
        subset(args.path, args.source_prefix, args.out, args.data_dir)
    elif args.command == "contextual-sums":
        contextual_sums(args.initial, args.teacher, args.sentences, args.seed, args.sums, args.data_dir)
    elif args.command == "contextual":
        contextual(args.initial, args.sums, args.shrink, args.teacher_cache, args.teacher, args.out, args.same_basis)
    elif args.command == "tokenizer-text":
        tokenizer_text(args.text, args.vocab_size, args.out, args.data_dir, args.seed)
    elif args.command == "whitening":
        whitening(args.initial, args.strength, args.teacher_cache, args.teacher, args.out)
    else:
        sif_recount(args.initial, args.counts, args.out, args.a, args.data_dir)


if __name__ == "__main__":
    main()
