"""Teacher pass speed on a sample of a teacher cache's sentences: batch sizes, max_seq_length 128, int8 dynamic.

Each variant encodes the same random sample and is compared with the cached float32 vectors (cosine). The batch
sizes run first (float32); the other variants use batch 64.

    OMP_NUM_THREADS=1 python benchmarks/teacher_pass_speed.py --teacher-cache runs/teacher_cache --sentences 1500
    OMP_NUM_THREADS=2 python benchmarks/teacher_pass_speed.py --teacher-cache runs/teacher_cache --sentences 3000 \
        --threads 2 --batch-sizes 8 16 32 64 128 --batch-sizes-only

``--shards 6`` times the build's own pass instead: whole cached shards (4,096 sentences each) in cache order, batch
32, the same call the teacher cache makes. Run it on the same cache at two times to see how far this machine's
speed drifts (the README's build time depends on it; the README's figures are shard 6 of a psp-en v4 build's cache):

    OMP_NUM_THREADS=2 python benchmarks/teacher_pass_speed.py --teacher-cache runs/teacher_cache --threads 2 --shards 6

``--pool 2`` adds a row for Sentence-Transformers' multi-process pool (2 processes x 1 thread, chunks of 256
sentences, longest first) next to the one-process rows, to see whether processes beat threads on this CPU.

``--onnx DIR`` adds a row for ONNX Runtime running the teacher's transformer (exported to ``DIR/teacher.onnx`` with
torch's TorchScript-based exporter, graph optimisations on; mean pooling and normalisation as the teacher's own
modules do), batch 32, the texts longest first like the teacher's ``encode`` (needs ``pip install onnx
onnxruntime``):

    OMP_NUM_THREADS=2 python benchmarks/teacher_pass_speed.py --teacher-cache runs/teacher_cache --sentences 3000 \
        --threads 2 --batch-sizes 32 --batch-sizes-only --onnx runs/onnx
"""

from __future__ import annotations

import argparse
import os
import random
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--teacher-cache", required=True)
    parser.add_argument("--teacher", default="all-MiniLM-L6-v2")
    parser.add_argument("--sentences", type=int, default=1500)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-sizes", type=int, nargs="*", default=[], help="float32 rows at these batch sizes")
    parser.add_argument("--batch-sizes-only", action="store_true", help="skip the max_seq_length and int8 rows")
    parser.add_argument("--shards", type=int, nargs="*", default=[], help="time whole cached shards (batch 32) only")
    parser.add_argument("--pool", type=int, default=0, help="also time a pool of this many 1-thread processes")
    parser.add_argument("--onnx", default=None, help="also time ONNX Runtime (the export goes to this folder)")
    args = parser.parse_args()

    import numpy as np
    import torch
    from datasets import concatenate_datasets, load_from_disk

    from psp_st.distillation.teacher_cache import cache_folder
    from psp_st.modules.teacher_init import load_teacher

    torch.set_num_threads(args.threads)
    shards = sorted(p for p in cache_folder(args.teacher_cache, args.teacher).glob("shard-*") if p.suffix != ".tmp")
    if args.shards:
        teacher = load_teacher(args.teacher)
        for index in args.shards:
            sentences = load_from_disk(str(shards[index]))["sentence"]
            start = time.perf_counter()
            teacher.encode(sentences, batch_size=32, convert_to_numpy=True)
            seconds = time.perf_counter() - start
            print(
                f"shard {index} ({len(sentences)} sentences), {args.threads} thread(s): {len(sentences) / seconds:.1f}/s"
            )
        return
    table = concatenate_datasets([load_from_disk(str(p)) for p in shards])
    sample = table.select(random.Random(0).sample(range(len(table)), args.sentences))
    sentences = sample["sentence"]
    cached = np.asarray(sample.with_format("numpy")["embedding"], dtype=np.float32)
    teacher = load_teacher(args.teacher)
    lengths = np.array([len(teacher.tokenizer(text)["input_ids"]) for text in sentences])
    print(
        f"max_seq_length {teacher.max_seq_length}; tokens mean {lengths.mean():.1f}, > 128: {(lengths > 128).mean():.3f}"
    )

    def run(name: str, model, batch_size: int = 64, **kwargs) -> None:
        start = time.perf_counter()
        vectors = model.encode(sentences, batch_size=batch_size, convert_to_numpy=True, **kwargs)
        seconds = time.perf_counter() - start
        cosine = (vectors * cached).sum(1) / np.linalg.norm(vectors, axis=1) / np.linalg.norm(cached, axis=1)
        print(
            f"{name}: {len(sentences) / seconds:.1f} sentences/s, cosine to the cache min {cosine.min():.4f} "
            f"mean {cosine.mean():.5f}",
            flush=True,
        )

    for batch_size in args.batch_sizes:
        run(f"float32, batch {batch_size}, {args.threads} thread(s)", teacher, batch_size)
    if args.pool:
        order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
        sentences, cached = [sentences[i] for i in order], cached[order]
        os.environ["OMP_NUM_THREADS"] = "1"  # read by each spawned worker's torch
        pool = teacher.start_multi_process_pool(["cpu"] * args.pool)
        teacher.encode(sentences[:64], batch_size=32, pool=pool)  # the workers load torch and the model first
        run(f"float32, batch 32, pool of {args.pool} x 1 thread", teacher, 32, pool=pool, chunk_size=256)
        teacher.stop_multi_process_pool(pool)
    if args.onnx:
        run(f"onnxruntime, batch 32, {args.threads} thread(s)", OnnxTeacher(teacher, args.onnx, args.threads), 32)
    if args.batch_sizes_only:
        return
    run("float32", teacher)
    teacher.max_seq_length = 128
    run("float32, max_seq_length 128", teacher)
    teacher.max_seq_length = 256
    run("int8 dynamic", torch.ao.quantization.quantize_dynamic(teacher, {torch.nn.Linear}, dtype=torch.qint8))


class OnnxTeacher:
    """The teacher's transformer in ONNX Runtime, with the teacher's mean pooling and normalisation."""

    def __init__(self, teacher, folder: str, threads: int) -> None:
        import onnxruntime
        import torch

        self.tokenizer, self.max_length = teacher.tokenizer, teacher.max_seq_length
        self.dim = teacher.get_embedding_dimension()
        path = os.path.join(folder, "teacher.onnx")
        if not os.path.exists(path):
            os.makedirs(folder, exist_ok=True)
            transformer = teacher[0].auto_model.eval()

            class Hidden(torch.nn.Module):  # keyword arguments: BertModel's positional order changes across versions
                def __init__(self) -> None:
                    super().__init__()
                    self.transformer = transformer

                def forward(self, input_ids, attention_mask, token_type_ids):
                    return self.transformer(
                        input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                    ).last_hidden_state

            names = ["input_ids", "attention_mask", "token_type_ids"]
            example = self.tokenizer(["an example", "another example sentence"], padding=True, return_tensors="pt")
            with torch.no_grad():
                torch.onnx.export(
                    Hidden(),
                    tuple(example[name] for name in names),
                    path,
                    input_names=names,
                    output_names=["hidden"],
                    dynamic_axes={name: {0: "batch", 1: "tokens"} for name in [*names, "hidden"]},
                    opset_version=17,
                    dynamo=False,
                )
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        self.session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])

    def encode(self, sentences, batch_size: int = 32, **_):
        import numpy as np

        order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            batch = self.tokenizer(
                [sentences[i] for i in rows],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="np",
            )
            feeds = {name: batch[name].astype(np.int64) for name in ("input_ids", "attention_mask", "token_type_ids")}
            hidden = self.session.run(None, feeds)[0]
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            mean = (hidden * mask).sum(1) / mask.sum(1)
            out[rows] = mean / np.linalg.norm(mean, axis=1, keepdims=True)
        return out


if __name__ == "__main__":
    main()
