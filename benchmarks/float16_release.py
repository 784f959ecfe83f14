"""STS Benchmark test (and the rest of the quick suite) of a release written with float32 and with float16 weights.

Re-exports the release's trainable weights with ``weights_dtype`` float32 and float16 (root + ``trainable/``, as
``psp-st build --dtype`` writes them), runs the quick evaluation suite on the root (ST StaticEmbedding, which
computes in the stored dtype) and on ``trainable/`` (PSPEmbedding: the evaluation cache runs psp-st's engine,
float32 math), and writes ``benchmarks/results/float16_release.md`` with the file sizes and the changes.

    python benchmarks/float16_release.py --model ../models/psp-en-v1 [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    from psp_st.io.data_dir import default_data_dir

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="release folder (with trainable/)")
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    args = parser.parse_args()

    import torch

    from psp_st.evaluation import run_suite
    from psp_st.modules.trusted import load_trusted

    torch.set_num_threads(1)
    trainable = load_trusted(Path(args.model) / "trainable")
    module = trainable[0]
    rows, metrics = [], {}
    with tempfile.TemporaryDirectory(prefix="psp_st_f16_") as tmp:
        for dtype in ("float32", "float16"):
            module.weights_dtype = dtype
            root = Path(tmp) / dtype
            module.export_static(root)
            trainable.save(str(root / "trainable"))
            size = (root / "trainable" / "model.safetensors").stat().st_size
            for form, path in (("root (StaticEmbedding)", root), ("trainable/ (engine)", root / "trainable")):
                model = load_trusted(path)
                summary = run_suite(model, suite="quick", data_dir=str(args.data_dir))["summary"]
                metrics[(dtype, form)] = {f"{r['task']} / {r['metric']}": float(r["value"]) for r in summary}
                rows.append((dtype, form, size))
    keys = list(metrics[rows[0][:2]])
    lines = [
        "# float16 release weights: size and quick-suite change",
        "",
        f"Command: `python benchmarks/float16_release.py {shlex.join(sys.argv[1:])}`",
        "",
        "| weights | form | model.safetensors bytes | " + " | ".join(keys) + " |",
        "|---|---|---|" + "---|" * len(keys),
    ]
    for dtype, form, size in rows:
        lines.append(
            f"| {dtype} | {form} | {size:,} | " + " | ".join(f"{metrics[(dtype, form)][k]:.2f}" for k in keys) + " |"
        )
    for form in ("root (StaticEmbedding)", "trainable/ (engine)"):
        changes = {k: metrics[("float16", form)][k] - metrics[("float32", form)][k] for k in keys}
        worst = max(changes, key=lambda k: abs(changes[k]))
        stsb = [k for k in keys if k.startswith("stsb-test")]
        lines.append(
            f"\n- {form}: float16 - float32 on "
            + ", ".join(f"{k} {changes[k]:+.3f}" for k in stsb)
            + f" points; largest change over the suite: {worst} {changes[worst]:+.3f}."
        )
    text = "\n".join(lines) + "\n"
    (REPO / "benchmarks" / "results" / "float16_release.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
