"""Train a CrossEncoder binary paraphrase classifier (MSRPC train + PAWS-X en dev) and score it.

PAWS-X has no training split here: we train on its dev file and score on its test file. Command-line
equivalent: `psp-st baseline cross-encoder --max-steps 150 --results ce.json`.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from datasets import Dataset

from psp_st.baselines import build_cross_encoder, train_cross_encoder
from psp_st.baselines.evaluate import score_cross_encoder
from psp_st.baselines.pair_data import load_pair_frame

STEPS = 50
torch.set_num_threads(1)

sets = {
    name: Dataset.from_pandas(load_pair_frame(name)[["sentence1", "sentence2", "label"]])
    for name in ("msrpc-train", "pawsx-en-dev")
}
model = build_cross_encoder("all-MiniLM-L6-v2", max_length=128)
print(train_cross_encoder(model, sets, output_dir="models/ce-minilm", max_steps=STEPS))
print(model.predict([("A man is playing a guitar.", "Someone plays the guitar.")]))
print(score_cross_encoder(model))
