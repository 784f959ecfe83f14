"""A deterministic stand-in for a sentence-encoder teacher (no download): text -> seeded vector, call log."""

from __future__ import annotations

import zlib

import numpy as np
import pytest


class StubTeacher:
    """``encode`` maps each text to a fixed pseudo-random unit vector (seeded by its CRC32) and logs the calls."""

    def __init__(self, dim: int = 8, fail_after: int | None = None) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []
        self.fail_after = fail_after

    def vector(self, text: str) -> np.ndarray:
        vector = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(self.dim)
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    def encode(self, texts, batch_size: int = 32, convert_to_numpy: bool = True, **kwargs) -> np.ndarray:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("stub teacher interrupted")
        self.calls.append(list(texts))
        return np.stack([self.vector(text) for text in texts])


@pytest.fixture
def stub_teacher():
    """A :class:`StubTeacher` factory: ``stub_teacher(dim=8, fail_after=None)``."""
    return StubTeacher
