"""psp-en: start training from piece vectors fitted to the teacher's sentence vectors (a negative result, round 6).

Takes an initial model (the recipe's tokenizer + teacher-initialised, SIF-weighted piece vectors: a build's
``initial`` folder) and the teacher vectors of the recipe's distillation sample (from the teacher cache), and fits
the piece vectors so that the mean of a sentence's piece vectors points where the teacher's sentence vector points
(cosine, minibatch Adam, the way model2vec's tokenlearn fits static vectors to a transformer). 5% of the sentences
are held out; each epoch prints the held-out cosine loss and the fitted vectors' STS-B dev / SICK-R trial Spearman.
The result is saved as a new initial model, which an ablation row then trains from:

    OMP_NUM_THREADS=1 python benchmarks/psp_en_fit_init.py --init runs/initial-v3 --teacher-cache runs/teacher_cache \
        --out runs/initial-v3-fit --epochs 4 --lr 0.02
    OMP_NUM_THREADS=1 python benchmarks/psp_en_ablation.py --row v3 --set model.init_from=runs/initial-v3-fit --tag=-fitA
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", required=True, help="initial model folder (tokenizer + piece vectors)")
    parser.add_argument("--teacher-cache", required=True, help="teacher cache holding the distillation sample")
    parser.add_argument("--out", required=True, help="where to save the fitted initial model")
    parser.add_argument("--recipe", default="psp-en", help="recipe whose distillation sample is fitted")
    parser.add_argument("--data-dir", default=None, help="shared data folder (default: $PSP_ST_DATA_DIR)")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--batch-size", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import numpy as np
    import torch

    from psp_st.distillation import distillation_sentences, teacher_vectors
    from psp_st.evaluation import STSEvaluator, load_local
    from psp_st.evaluation.decontamination import evaluation_sentences
    from psp_st.inference.engine import PSPEngine
    from psp_st.io.data_dir import default_data_dir
    from psp_st.modules.trusted import load_trusted
    from psp_st.training.recipe import load_config
    from psp_st.training.schema import parse_recipe

    data_dir = args.data_dir or default_data_dir()
    distil = parse_recipe(load_config(args.recipe)).distillation
    parts = distillation_sentences(  # the sample the recipe distils on (max_words: the kept ones are cached)
        distil.sources,
        seed=42,
        exclude=evaluation_sentences(data_dir),
        data_dir=data_dir,
        max_words=distil.max_words,
    )
    students = [text for _, texts, _ in parts for text in texts]
    teacher_texts = [text for _, _, texts in parts for text in texts]
    cached = teacher_vectors(teacher_texts, distil.teacher, args.teacher_cache, show_progress_bar=False)
    targets = np.asarray(cached.with_format("numpy")["embedding"], dtype=np.float32)
    targets = torch.from_numpy(targets / np.linalg.norm(targets, axis=1, keepdims=True))

    model = load_trusted(args.init)
    module = model[0]
    flat, lengths = module.encode_flat(students)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    rng = np.random.default_rng(args.seed)
    held = rng.random(len(students)) < 0.05
    train_rows, held_rows = np.flatnonzero(~held & (lengths > 0)), np.flatnonzero(held & (lengths > 0))
    vocab = module.vocab_size
    weights = module.embedding.weight[:vocab].detach().clone().requires_grad_(True)
    optimizer = torch.optim.Adam([weights], lr=args.lr)
    dev = STSEvaluator({"stsb_dev": load_local("stsb-dev"), "sick_dev": load_local("sick-dev")})

    def loss_of(rows: np.ndarray) -> torch.Tensor:
        ids = np.concatenate([flat[starts[i] : starts[i + 1]] for i in rows]).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths[rows])[:-1]]).astype(np.int64)
        pooled = torch.nn.functional.embedding_bag(
            torch.from_numpy(ids), weights, torch.from_numpy(offsets), mode="mean"
        )
        return 1 - torch.nn.functional.cosine_similarity(pooled, targets[rows], dim=1).mean()

    def report(label: str) -> None:
        with torch.no_grad():
            engine = PSPEngine(weights.detach().numpy(), module.tokenizer, threads=1)
            scores = dev(engine)
            print(
                f"{label}: held-out cosine loss {loss_of(held_rows).item():.4f}, STS-B dev "
                f"{100 * scores['stsb_dev_spearman']:.2f}, SICK-R trial {100 * scores['sick_dev_spearman']:.2f}",
                flush=True,
            )

    report(f"initial ({len(students)} sentences)")
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(train_rows)
        for first in range(0, len(order), args.batch_size):
            optimizer.zero_grad()
            loss_of(order[first : first + args.batch_size]).backward()
            optimizer.step()
        report(f"epoch {epoch} ({time.perf_counter() - start:.0f} s)")
    with torch.no_grad():
        module.embedding.weight[:vocab] = weights.detach()
    model.save(args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
