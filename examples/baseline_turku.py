"""Train the Turku multi-output classifier (base label + flags) and print Table-4-style scores.

No Turku training split exists in the shared data: we train on the OPUS/Parsebank dev file plus release-1 dev
folds 80-84 (`turku-train`) and score on release-1 dev folds 85-89 (`turku-eval`). The backbone,
all-MiniLM-L6-v2, is English-only (no Finnish or multilingual encoder is available offline). Command-line
equivalent: `psp-st baseline turku --max-steps 120 --results turku.json`.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from psp_st.baselines import TurkuClassifier, format_turku_table, turku_scores
from psp_st.baselines.pair_data import load_pair_frame

STEPS = 50
torch.set_num_threads(1)

train = load_pair_frame("turku-train")
model = TurkuClassifier.from_backbone("all-MiniLM-L6-v2", max_length=96)
print(model.fit(list(train.sentence1), list(train.sentence2), list(train.label_str), max_steps=STEPS))
model.save("models/turku-minilm")

model = TurkuClassifier.load("models/turku-minilm")
test = load_pair_frame("turku-eval")
predicted = model.predict(list(zip(test.sentence1, test.sentence2, strict=True)), show_progress_bar=True)
print(predicted[:10])  # full labels such as '4', '3', '4>i'
print(format_turku_table(turku_scores(list(test.label_str), predicted)))
