"""psp-en with the teacher's own WordPiece vocabulary instead of a sentencepiece vocabulary trained on the pairs
(issue 11, round 15: a negative result).

The v6 tokenizer is trained on the training pairs (88% image captions); all-MiniLM-L6-v2 reads text through a
30,522-token WordPiece vocabulary built on general text. This script writes that vocabulary as a sentencepiece
unigram model (so the whole fast path, the word memo and the static export, stay as they are): a word-initial token
``dog`` becomes the piece ``▁dog``, a continuation ``##ing`` the piece ``ing``; with ``--bare all`` every
word-initial token also gets a bare copy (``dog``, used after punctuation: ``(dog`` -> ``▁(`` + ``dog``, as BERT
splits punctuation off; with ``--bare punct`` only single punctuation characters get one). The scores make the
Viterbi segmentation use the fewest pieces, the longest first (WordPiece's greedy longest match). Then v6's
initialisation: each piece through the teacher (PCA to 384, standardised; teacher cache), SIF a = 0.001 on the
training pairs' piece counts. The folder it writes is an initial model for an ablation row:

    OMP_NUM_THREADS=1 python benchmarks/psp_en_wordpiece_init.py --out runs/initial-wordpiece --bare all
    OMP_NUM_THREADS=1 python benchmarks/psp_en_ablation.py --row v6 --set model.init_from=runs/initial-wordpiece \
        --tag=-s17-wordpiece --log benchmarks/results/psp_en_v15_runs.jsonl
"""

from __future__ import annotations

import argparse
import io
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def wordpiece_as_sentencepiece(tokens: list[str], bare: str) -> bytes:
    """A unigram sentencepiece model (serialized) whose pieces are the WordPiece ``tokens``."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    # a throwaway model supplies the normalizer (nmt_nfkc, its compiled character map) and the special pieces
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(["a b c d e f g h i j k l m n o p q r s t u v w x y z"] * 10),
        model_writer=model,
        vocab_size=30,
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    del proto.pieces[3:]  # keep <unk>, <s>, </s>

    scores: dict[str, float] = {}

    def add(piece: str, penalty: float = 0.0) -> None:
        text = piece.lstrip("\u2581")
        score = -10.0 + 0.001 * len(text) ** 2 - penalty  # fewest pieces first, then the longest first piece
        if piece and scores.get(piece, -1e9) < score:
            scores[piece] = score

    scores["\u2581"] = -30.0
    words = [token for token in tokens if not token.startswith("##")]
    for token in tokens:
        add(token[2:] if token.startswith("##") else "\u2581" + token)
    for token in words:
        if token not in scores and (bare == "all" or (len(token) == 1 and not token.isalnum())):
            add(token, penalty=0.5)
    for piece, score in scores.items():
        entry = proto.pieces.add()
        entry.piece, entry.score, entry.type = piece, score, 1
    proto.trainer_spec.vocab_size = len(proto.pieces)
    return proto.SerializeToString()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="where to save the initial model")
    parser.add_argument("--bare", choices=["all", "punct"], default="all", help="which tokens get a bare copy")
    parser.add_argument("--teacher", default="all-MiniLM-L6-v2")
    parser.add_argument("--teacher-cache", default="runs/teacher_cache")
    parser.add_argument("--embedding-dim", type=int, default=384)
    parser.add_argument("--sif", type=float, default=0.001, help="SIF a of the v6 recipe")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    import pandas as pd
    import torch
    from sentence_transformers import SentenceTransformer

    from psp_st.distillation.piece_weights import piece_counts, sif_weights
    from psp_st.io.data_dir import resolve_data_files
    from psp_st.modules.psp import PSPEmbedding
    from psp_st.modules.teacher_init import load_teacher
    from psp_st.tokenization.sentencepiece import SentencePieceTokenizer

    vocabulary = load_teacher(args.teacher).tokenizer.get_vocab()
    tokens = [token for token, _ in sorted(vocabulary.items(), key=lambda item: item[1])]
    tokens = [token for token in tokens if not (token.startswith("[") and token.endswith("]"))]
    tokenizer = SentencePieceTokenizer(wordpiece_as_sentencepiece(tokens, args.bare), lowercase=True)
    print(f"{len(tokens):,} WordPiece tokens -> {tokenizer.vocab_size:,} pieces", flush=True)
    start = time.perf_counter()
    module = PSPEmbedding.from_teacher(
        args.teacher,
        tokenizer,
        embedding_dim=args.embedding_dim,
        seed=args.seed,
        cache_dir=args.teacher_cache,
        teacher_name=args.teacher,
    )
    print(f"teacher piece vectors: {time.perf_counter() - start:.0f} s", flush=True)
    texts: list[str] = []
    for path in resolve_data_files("training_pairs/*.parquet"):
        frame = pd.read_parquet(path, columns=["sentence1", "sentence2"])
        texts += frame["sentence1"].tolist() + frame["sentence2"].tolist()
    counts = piece_counts(module.tokenizer, texts)
    print(f"{len(texts):,} pair texts; {int((counts > 0).sum()):,} pieces occur", flush=True)
    weights = torch.from_numpy(sif_weights(counts, args.sif)).float().unsqueeze(1)
    with torch.no_grad():
        module.embedding.weight[: module.vocab_size].mul_(weights)
    SentenceTransformer(modules=[module], device="cpu").save(args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
