"""Word-memo insert speed: seconds spent in the compiled ``insert`` kernel (certify + store every new word) during
a cold pass over the first ``--sentences`` English corpus sentences, and the whole cold pass, on one thread.

Each ``--checkout`` (a folder holding a ``psp_st`` package, e.g. ``git worktree add`` of two commits) runs in its own
fresh subprocess, the checkouts interleaved round by round (the machine may be shared); each subprocess reports the
best and median of 5 cold passes and whether the ids equal sentencepiece's.

    python benchmarks/memo_insert_speed.py --tokenizer sp.model --checkout ../base ../after --rounds 3 \\
        --out benchmarks/results/memo_insert_speed.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

WORKER = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import pyarrow.parquet as pq
from psp_st.tokenization import word_memo
from psp_st.tokenization.sentencepiece import SentencePieceTokenizer

texts = pq.read_table(sys.argv[3]).column("sentence").to_pylist()[: int(sys.argv[4])]
tokenizer = SentencePieceTokenizer.from_file(sys.argv[2], num_threads=1)
word_memo.WordMemo(tokenizer).encode_flat(texts[:1000])  # compile, or load numba's cache
kernels = word_memo.memo_kernels()
original, spent = kernels.insert, [0.0]

def timed(*args):
    start = time.perf_counter()
    original(*args)
    spent[0] += time.perf_counter() - start

kernels.insert = timed
inserts, totals = [], []
for _ in range(5):
    spent[0] = 0.0
    memo = word_memo.WordMemo(tokenizer, prefill=False)
    start = time.perf_counter()
    flat, lengths = memo.encode_flat(texts)
    totals.append(time.perf_counter() - start)
    inserts.append(spent[0])
reference, reference_lengths = tokenizer.encode_flat(texts, drop_unknown=True, memo=False, num_threads=1)
print(json.dumps({
    "checkout": sys.argv[1], "insert_best_s": min(inserts), "insert_median_s": float(np.median(inserts)),
    "cold_pass_best_s": min(totals), "cold_pass_median_s": float(np.median(totals)), "words": len(memo),
    "same_ids_as_sentencepiece": bool(np.array_equal(reference, flat) and np.array_equal(reference_lengths, lengths)),
}))
"""


def main() -> None:
    from psp_st.io.data_dir import default_data_dir

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", required=True, help="sentencepiece .model file")
    parser.add_argument("--checkout", nargs="+", required=True, help="folders holding the psp_st package to compare")
    parser.add_argument("--corpus", default=str(default_data_dir() / "corpus" / "english_sentences.parquet"))
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="fresh subprocesses per checkout, interleaved")
    parser.add_argument("--out", type=Path, default=None, help="append the rows as JSON lines here")
    args = parser.parse_args()
    rows = []
    for round_index in range(args.rounds):
        for checkout in args.checkout:
            command = [sys.executable, "-c", WORKER, checkout, args.tokenizer, args.corpus, str(args.sentences)]
            start = time.perf_counter()
            row = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            row.update(round=round_index, wall_s=time.perf_counter() - start)
            rows.append(row)
            print(json.dumps(row))
    if args.out is not None:
        with args.out.open("a", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)


if __name__ == "__main__":
    main()
