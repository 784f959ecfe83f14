"""The d=1024 speed-test model of ``benchmarks/encode_speed.py``: an untrained P-SP over a 16k-piece vocabulary
trained on the shared English pairs (speed does not depend on the weights' values), saved in both forms.
``--from RELEASE`` instead re-saves an existing release's trainable model (same tokenizer, same weights), e.g. with
``--dtype float16`` as ``psp-st build --dtype float16`` writes a release.

    python benchmarks/speed_model.py runs/speed-model1024    # then: encode_speed.py --model runs/speed-model1024
    python benchmarks/speed_model.py runs/speed-model1024-f16 --from runs/speed-model1024 --dtype float16
"""

from __future__ import annotations

import argparse
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--vocab-size", type=int, default=16_000)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--from", dest="source", type=Path, help="re-save this release's trainable/ model instead")
    parser.add_argument("--dtype", choices=["float32", "float16"], default="float32", help="release weights dtype")
    args = parser.parse_args()

    import pyarrow.parquet as pq
    from sentence_transformers import SentenceTransformer

    from psp_st import PSPEmbedding
    from psp_st.modules.trusted import load_trusted

    texts: list[str] = []
    if args.source is not None:
        module = load_trusted(str(args.source / "trainable"))[0]
        args.dim = module.embedding_dim
    else:
        for path in sorted((args.data_dir / "training_pairs").glob("*.parquet")):
            table = pq.read_table(path, columns=["sentence1", "sentence2"])
            texts += table.column("sentence1").to_pylist() + table.column("sentence2").to_pylist()
        module = PSPEmbedding.from_texts(texts, vocab_size=args.vocab_size, embedding_dim=args.dim)
    module.weights_dtype = args.dtype
    module.export_static(args.output)
    SentenceTransformer(modules=[module]).save(str(args.output / "trainable"))
    print(
        f"{args.output}: {module.tokenizer.vocab_size} pieces, d={args.dim}, {args.dtype}, "
        f"from {args.source or f'{len(texts):,} sentences'}"
    )


if __name__ == "__main__":
    main()
