"""Where the zoo's training time goes, piece by piece, on one thread (process CPU time, median of repeats).

1. One LSTM direction, forward + backward, on 400 real caption sentences (packed, d = 300): ``nn.LSTM``'s own
   forward versus :func:`psp_st.modules.fused_recurrence.lstm_layer` (same parameters, hand-written backward).
2. A margin-loss training step's encoder work for each zoo encoder: the four columns (4 x 100 sentences) in four
   forwards versus one merged forward (what ``ParaphraseMarginLoss`` does since it uses ST's ``embed_columns``).
3. Mega-batch mining's no-gradient forward over 2,000 sentences, per encoder.
4. The mining similarity matmul (2,000 x 2,000 at d = 300) in float32 versus bfloat16 (``MegaBatchTrainer``'s
   ``mining_dtype``).

    python benchmarks/zoo_speed.py --out benchmarks/results/zoo_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402


def cpu_seconds(function: Callable[[], object], repeats: int) -> float:
    """Median process CPU seconds of ``function`` over ``repeats`` calls, after one warm-up call."""
    function()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    import pandas as pd
    from torch.nn.utils.rnn import PackedSequence

    from psp_st.io.data_dir import default_data_dir
    from psp_st.modules.averaging import TrigramAveraging, WordAveraging
    from psp_st.modules.fused_recurrence import lstm_layer
    from psp_st.modules.packing import PackedTokens
    from psp_st.modules.recurrent import GRAN, LSTMAveraging, lstm_weights
    from psp_st.tokenization.words import TrigramTokenizer, WordTokenizer

    frame = pd.read_parquet(Path(default_data_dir()) / "training_pairs/flickr30k_captions_multi30k.parquet")
    frame = frame.sample(n=2000, random_state=0)
    texts = frame.sentence1.tolist() + frame.sentence2.tolist()
    words, trigrams = WordTokenizer.train(texts), TrigramTokenizer.train(texts)
    dim = args.dim
    results: dict[str, dict[str, float]] = {}

    # 1. one LSTM direction
    torch.manual_seed(0)
    encoder = LSTMAveraging(words, dim, max_seq_length=64)
    features = encoder.preprocess(texts[:400])
    packed = PackedTokens.from_mask(features["attention_mask"].bool())
    inputs = encoder.embedding(packed.gather(features["input_ids"])).detach()
    weights = torch.randn(len(inputs), dim)

    sequence = PackedSequence(inputs, packed.batch_sizes, packed.order, torch.argsort(packed.order))

    def native() -> None:
        encoder.zero_grad()
        (encoder.lstm(sequence)[0].data * weights).sum().backward()

    def fused() -> None:
        encoder.zero_grad()
        (lstm_layer(inputs, lstm_weights(encoder.lstm), packed.batch_sizes.tolist()) * weights).sum().backward()

    results["lstm direction fwd+bwd, 400 sentences"] = {
        "nn.LSTM s": cpu_seconds(native, args.repeats),
        "lstm_layer s": cpu_seconds(fused, args.repeats),
        "tokens": len(inputs),
    }

    # 2-3. the encoders
    builders: dict[str, Callable[[], torch.nn.Module]] = {
        "WORD": lambda: WordAveraging(words, dim),
        "TRIGRAM": lambda: TrigramAveraging(trigrams, dim),
        "LSTM": lambda: LSTMAveraging(words, dim, max_seq_length=64),
        "BLSTM": lambda: LSTMAveraging(words, dim, bidirectional=True, max_seq_length=64),
        "GRAN-LSTM": lambda: GRAN(words, dim, gate="lstm", max_seq_length=64),
        "GRAN-GRU": lambda: GRAN(words, dim, gate="gru", dropout=0.1, max_seq_length=64),
    }
    for name, make in builders.items():
        torch.manual_seed(0)
        module = make()
        module.embedding.sparse = True  # as MegaBatchTrainer trains it (PSPTrainingArguments.sparse_embeddings)
        columns = [module.preprocess(texts[i * 100 : (i + 1) * 100]) for i in range(4)]
        merged = module.preprocess(texts[:400])
        mining = module.preprocess(texts)

        def separate(module=module, columns=columns) -> None:
            module.train().zero_grad()
            sum(module(dict(column))["sentence_embedding"].sum() for column in columns).backward()

        def together(module=module, merged=merged) -> None:
            module.train().zero_grad()
            module(dict(merged))["sentence_embedding"].sum().backward()

        def mine(module=module, mining=mining) -> None:
            with torch.no_grad():
                module.eval()(dict(mining))

        results[name] = {
            "4 forwards of 100 + backward s": cpu_seconds(separate, args.repeats),
            "1 merged forward of 400 + backward s": cpu_seconds(together, args.repeats),
            "mining forward of 2000 s": cpu_seconds(mine, args.repeats),
        }

    # 4. the mining similarity
    a, b = torch.randn(2000, dim), torch.randn(2000, dim)
    results["mining similarity 2000 x 2000"] = {
        f"{str(dtype).removeprefix('torch.')} s": cpu_seconds(
            lambda dtype=dtype: (a.to(dtype) @ b.to(dtype).T).float(), args.repeats
        )
        for dtype in (torch.float32, torch.bfloat16)
    }
    record = {"command": "python " + " ".join(["benchmarks/zoo_speed.py", *sys.argv[1:]]), "results": results}
    text = json.dumps(record, indent=1)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
