"""How often the mined negative is more similar than the partner (likely a false negative), by mega-batch size.

python benchmarks/training_false_negatives.py runs/A/final [pairs-arrow-folder]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch


def main(model_path: str, pairs: str | None = None) -> None:
    torch.set_num_threads(1)
    from psp_st.data import load_training_pairs
    from psp_st.losses import mine_hardest_negatives, text_ids
    from psp_st.modules.trusted import load_trusted

    if pairs:
        from datasets import load_from_disk

        dataset = load_from_disk(pairs)
    else:
        dataset = load_training_pairs(["training_pairs/*.parquet"])
    model = load_trusted(model_path)
    rng = np.random.default_rng(0)
    for m in (1, 26, 100):
        rows = dataset[rng.permutation(len(dataset))[: 128 * m]]
        s, t, groups = rows["sentence1"], rows["sentence2"], torch.tensor(rows["group_id"])
        es = torch.tensor(model.encode(s, normalize_embeddings=True))
        et = torch.tensor(model.encode(t, normalize_embeddings=True))
        s_ids, t_ids = text_ids(s, t)
        raw, _ = mine_hardest_negatives(es, et)
        guarded, _ = mine_hardest_negatives(es, et, groups, s_ids, t_ids)
        partner = (es * et).sum(1)
        raw_score, guarded_score = (es * et[raw]).sum(1), (es * et[guarded]).sum(1)
        print(
            f"M={m}: unguarded negative in the same group {100 * (groups[raw] == groups).float().mean():.1f}%; "
            f"negative more similar than the partner: unguarded {100 * (raw_score > partner).float().mean():.1f}%, "
            f"guarded {100 * (guarded_score > partner).float().mean():.1f}%; mean cos partner "
            f"{partner.mean():.3f}, guarded negative {guarded_score.mean():.3f}"
        )
        if m == 100:
            for i in torch.nonzero(guarded_score > partner).view(-1)[:4].tolist():
                print(f"    {s[i]!r} | partner: {t[i]!r} | negative: {t[guarded[i]]!r}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_path", help="trained model folder (e.g. runs/A/final)")
    parser.add_argument("pairs", nargs="?", help="pairs saved as an Arrow folder (default: training_pairs/*.parquet)")
    main(**vars(parser.parse_args()))
