"""psp-en: does a linear map of a release's vectors into the teacher's space, folded into its piece vectors, help?

The map ``W`` (ridge regression of the teacher's unit vectors on the release's unit vectors, over every sentence of
the teacher cache) is folded into the release's matrix (``E @ W``: mean pooling commutes with a linear map, so
inference cost is unchanged), then the copy is evaluated like an ablation row (selection = mean of STS-B dev and
SICK-R trial Spearman; test columns reported only). One JSON line per ``--ridge`` value.

    python benchmarks/psp_en_posthoc_map.py --release psp-en --teacher-cache runs/teacher_cache --ridge 0 0.01 0.1 1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from psp_en_ablation import evaluate  # noqa: E402  (the ablation's dev/test numbers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", required=True, help="a psp-en release folder (its root StaticEmbedding)")
    parser.add_argument("--teacher-cache", required=True, help="a teacher cache folder (runs/teacher_cache)")
    parser.add_argument("--teacher", default="all-MiniLM-L6-v2")
    parser.add_argument("--ridge", type=float, nargs="+", default=[0.0, 0.01, 0.1, 1.0])
    args = parser.parse_args()

    import numpy as np
    from datasets import concatenate_datasets, load_from_disk
    from safetensors.numpy import load_file, save_file
    from sentence_transformers import SentenceTransformer

    from psp_st.distillation.teacher_cache import cache_folder

    shards = sorted(cache_folder(args.teacher_cache, args.teacher).glob("shard-*"))
    table = concatenate_datasets([load_from_disk(str(p)) for p in shards if not p.name.endswith(".tmp")])
    teacher = np.asarray(table.with_format("numpy")["embedding"], dtype=np.float32)
    model = SentenceTransformer(args.release, device="cpu")
    student = model.encode(table["sentence"], batch_size=1024, convert_to_numpy=True)
    keep = np.linalg.norm(student, axis=1) > 0  # the root gives zeros for a text of unknown pieces only
    s = student[keep] / np.linalg.norm(student[keep], axis=1, keepdims=True)
    t = teacher[keep] / np.linalg.norm(teacher[keep], axis=1, keepdims=True)
    gram, cross = s.T @ s, s.T @ t
    matrix = load_file(str(Path(args.release) / "model.safetensors"))["embedding.weight"]
    print(json.dumps({"ridge": None, "sentences": int(keep.sum()), **evaluate(model)}), flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        for ridge in args.ridge:
            w = np.linalg.solve(gram + ridge * len(s) / len(gram) * np.eye(len(gram)), cross)
            out = Path(scratch) / f"ridge-{ridge}"
            shutil.copytree(args.release, out, ignore=shutil.ignore_patterns("trainable"))
            save_file({"embedding.weight": (matrix @ w).astype(np.float32)}, str(out / "model.safetensors"))
            mapped = SentenceTransformer(str(out), device="cpu")
            print(json.dumps({"ridge": ridge, "sentences": int(keep.sum()), **evaluate(mapped)}), flush=True)


if __name__ == "__main__":
    main()
