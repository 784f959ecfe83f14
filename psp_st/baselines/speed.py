"""Speed of the baselines: pairs scored per second on one thread, and one interleaved pass over saved models.

``psp-st baseline speed`` measures every model in one process, round by round (``repeats`` rounds over all
models, the median kept), so a busy moment of the shared machine hits every model alike.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from psp_st.baselines.pair_data import load_pair_frame

#: Model kinds :func:`speed_scorer` can load.
SPEED_KINDS = ("sbert", "cross-encoder", "turku")


def measure_pairs_per_second(
    score_pairs: Callable[[list[tuple[str, str]]], Any], pairs: Sequence[tuple[str, str]], threads: int = 1
) -> float:
    """Pairs per second of ``score_pairs`` over ``pairs`` with ``torch`` limited to ``threads`` (after a warm-up)."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        score_pairs(list(pairs[:32]))
        start = time.perf_counter()
        score_pairs(list(pairs))
        return len(pairs) / (time.perf_counter() - start)
    finally:
        torch.set_num_threads(previous)


def speed_pairs(data_dir: str | os.PathLike | None = None, n: int = 1000) -> list[tuple[str, str]]:
    """The first ``n`` STS Benchmark test pairs: the speed-test input shared by every baseline."""
    frame = load_pair_frame("stsb-test", data_dir, limit=n)
    return list(zip(frame.sentence1, frame.sentence2, strict=True))


def speed_scorer(kind: str, path: str) -> Callable[[list[tuple[str, str]]], Any]:
    """A function that scores a list of pairs with the saved model of ``kind`` at ``path``."""
    if kind == "sbert":
        from psp_st.baselines.bi_encoder import build_bi_encoder

        model = build_bi_encoder(path)

        def score(pairs: list[tuple[str, str]]) -> None:
            model.encode([a for a, _ in pairs], batch_size=32, show_progress_bar=False)
            model.encode([b for _, b in pairs], batch_size=32, show_progress_bar=False)

        return score
    if kind == "cross-encoder":
        from sentence_transformers.cross_encoder import CrossEncoder

        cross = CrossEncoder(path, device="cpu")
        return lambda pairs: cross.predict(pairs, batch_size=32, show_progress_bar=False)
    if kind == "turku":
        from psp_st.baselines.turku_classifier import TurkuClassifier

        turku = TurkuClassifier.load(path)
        return lambda pairs: turku.predict(pairs, batch_size=32)
    raise ValueError(f"unknown model kind {kind!r}; expected one of {', '.join(SPEED_KINDS)}")


def parse_model_spec(spec: str) -> tuple[str, str, str]:
    """``NAME=KIND:PATH`` -> ``(name, kind, path)``; a clear error otherwise."""
    name, _, rest = spec.partition("=")
    kind, _, path = rest.partition(":")
    if not (name and path) or kind not in SPEED_KINDS:
        raise ValueError(f"bad model spec {spec!r}: expected NAME=sbert|cross-encoder|turku:PATH")
    return name, kind, path


def compare_speed(
    specs: Sequence[str],
    data_dir: str | os.PathLike | None = None,
    pairs: int = 1000,
    repeats: int = 3,
    threads: int = 1,
    output: str | os.PathLike | None = None,
    command: str | None = None,
) -> dict[str, float]:
    """Median pairs/s of each ``NAME=KIND:PATH`` model over ``repeats`` interleaved rounds on the first ``pairs``
    STSb test pairs; prints them and writes ``{"pairs_per_second": ..., "runs": ...}`` to ``output`` if given."""
    import json

    from psp_st.baselines.report import write_record
    from psp_st.baselines.runner import setup_threads

    setup_threads(threads)
    parsed = [parse_model_spec(spec) for spec in specs]
    scorers = {name: speed_scorer(kind, path) for name, kind, path in parsed}
    inputs = speed_pairs(data_dir, n=pairs)
    runs: dict[str, list[float]] = {name: [] for name in scorers}
    for _ in range(repeats):
        for name, scorer in scorers.items():
            runs[name].append(measure_pairs_per_second(scorer, inputs, threads=threads))
    result = {name: statistics.median(values) for name, values in runs.items()}
    for name, value in result.items():
        print(f"{name}: {value:.1f} pairs/s")
    if output:
        write_record(
            output,
            {
                "pairs_per_second": result,
                "runs": runs,
                "pairs": len(inputs),
                "threads": threads,
                "command": command,
                "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            },
        )
        print(json.dumps(result))
    return result
