"""`psp-st build` of a multilingual recipe: bitext sources with languages, the xling suite, the card's languages."""

from __future__ import annotations

import json
from pathlib import Path

#: The synthetic fixture data (always: the counts and notes below need its tiny bitext).
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "shared_data"

RECIPE = """\
name: tiny-multi
seed: 3
data:
  sources:
    - {path: bitext/de-en.parquet, weight: 0.5, columns: {sentence1: source, sentence2: target},
       exclude: {corpus: flores200-devtest}}
    - {path: bitext/zh-en.parquet, weight: 2.0, columns: {sentence1: source, sentence2: target},
       exclude: {corpus: flores200-devtest}, filters: {length_ratio: {max: 10.0, sentence1_scale: 3.5}}}
    - {path: training_pairs/coco_captions_val2017.parquet, max_pairs: 50}
tokenizer: {vocab_size: 300, language_temperature: 0.5}
model: {type: psp, embedding_dim: 16}
loss: {name: margin, margin: 0.4}
megabatch: {size: 2, anneal: 2, language_guard: true}
trainer: {per_device_train_batch_size: 16, eval_strategy: "no", save_strategy: "no", disable_tqdm: true}
evaluation: {}
release: {suite: xling}
"""


def test_multilingual_build_records_languages_and_the_card_lists_them_with_dev_numbers(tmp_path):
    import pandas as pd

    from psp_st.cli import main

    data_dir = FIXTURE
    recipe = tmp_path / "tiny-multi.yaml"
    recipe.write_text(RECIPE, encoding="utf-8")
    out = tmp_path / "tiny-multi"
    args = ["build", str(recipe), "--max-steps", "2", "--data-dir", str(data_dir), "--output", str(out)]
    assert main([*args, "--no-progress"]) == 0
    info = json.loads((out / "psp_build.json").read_text())
    assert info["evaluation"]["suite"] == "xling"  # the recipe's release.suite
    distinct = {
        lang: len(frame[frame.corpus != "flores200-devtest"][["source", "target"]].drop_duplicates())
        for lang in ("de", "zh")
        for frame in [pd.read_parquet(data_dir / "bitext" / f"{lang}-en.parquet")]
    }
    counts = info["training"]["pairs_per_language"]
    # weight 0.5 keeps half of the German pairs, weight 2 repeats every Chinese pair
    assert counts["de"] == {"pairs": round(0.5 * distinct["de"]), "distinct": round(0.5 * distinct["de"])}
    assert counts["zh"] == {"pairs": 2 * distinct["zh"], "distinct": distinct["zh"]}
    assert counts["-"] == {"pairs": 50, "distinct": 50}  # the English pairs have no language
    card = (out / "README.md").read_text()
    metrics = info["evaluation"]["metrics"]
    for lang in ("de", "zh"):
        x2en, en2x = metrics[f"flores-{lang} / x->en error %"], metrics[f"flores-{lang} / en->x error %"]
        row = f"| {lang} | {counts[lang]['distinct']:,} | {counts[lang]['pairs']:,} | {x2en:.1f} | {en2x:.1f} |"
        assert row in card
        assert f"- {lang}: only {counts[lang]['distinct']:,} distinct training pairs" in card  # small: named
    assert "- fr: no training pairs" in card  # evaluated on FLORES, never trained
    assert "language:\n- de\n- en\n- zh\n" in card
