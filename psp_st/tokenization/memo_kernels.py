"""The numba kernels of :mod:`psp_st.tokenization.word_memo`. The memo's state, in the kernels' tuple order:

* ``table``: int64 open-addressing hash table (linear probing, at most half full): per slot, the high 32 bits
  of the word's key, then ``entry + 1`` in the low 32 bits (0: empty); small enough to stay in cache;
* ``records``: ``(words, 4)`` int64, per entry ``[word_start, id_start, word_len | id_len << 32, max_text]``:
  the longest text (in bytes) the word's certificate covers (-1: never served from the memo);
* ``word_pool``: uint8, the words' bytes; ``id_pool``: int32, their piece ids (unknown pieces already dropped).
Module-level functions, so numba caches their machine code on disk (``cache=True``): a new process loads it.
"""

from __future__ import annotations

import numba
import numpy as np

from psp_st.tokenization.word_memo import (
    BOUNDARY_BYTE,
    FALLBACK,
    FNV_OFFSET,
    FNV_PRIME,
    MISSING,
    OK,
    RAW,
    SENTENCEPIECE,
)

#: ``max_text`` of a word whose segmentation has no rival (any text length is safe).
ALWAYS = np.int64(1) << np.int64(62)


@numba.njit(nogil=True, cache=True, inline="always")
def fold(code, lower):  # pragma: no cover - compiled
    """ASCII lower-casing of one byte (when ``lower``)."""
    if lower and 65 <= code <= 90:
        return code + 32
    return code


#: The slot bits holding the key's high half, and ``entry + 1``.
TAG = np.int64(-(1 << 32))
ENTRY = np.int64(0xFFFFFFFF)


@numba.njit(nogil=True, cache=True)
def find(table, records, word_pool, key, text, start, stop, lower):  # pragma: no cover - compiled
    """Entry of ``text[start:stop]`` (``key``: FNV-1a of its folded bytes) in a memo or piece table, or -1."""
    mask = len(table) - 1
    slot = key & mask
    tag = key & TAG
    width = stop - start
    value = table[slot]
    while value != 0:
        if value & TAG == tag:
            entry = (value & ENTRY) - 1
            if records[entry, 2] & 0xFFFFFFFF == width:
                base = records[entry, 0]
                same = True
                for k in range(width):
                    if word_pool[base + k] != fold(np.int64(text[start + k]), lower):
                        same = False
                        break
                if same:
                    return entry
        slot = (slot + 1) & mask
        value = table[slot]
    return -1


@numba.njit(nogil=True, cache=True)
def put(table, key, entry):  # pragma: no cover - compiled
    """Add ``key -> entry`` to an open-addressing table (the caller keeps it at most half full)."""
    mask = len(table) - 1
    slot = key & mask
    while table[slot] != 0:
        slot = (slot + 1) & mask
    table[slot] = (key & TAG) | (entry + 1)


@numba.njit(nogil=True, cache=True)
def word_key(words, start, stop):  # pragma: no cover - compiled
    """The table key of ``words[start:stop]``: FNV-1a, 0 mapped to 1."""
    key = FNV_OFFSET
    for k in range(start, stop):
        key = (key ^ np.int64(words[k])) * FNV_PRIME
    return key if key != 0 else 1


@numba.njit(nogil=True, cache=True)
def rehash(table, records, word_pool, count):  # pragma: no cover - compiled
    """Put the first ``count`` entries into an empty ``table`` (keys recomputed from the words' bytes)."""
    for entry in range(count):
        start = records[entry, 0]
        put(table, word_key(word_pool, start, start + (records[entry, 2] & 0xFFFFFFFF)), entry)


@numba.njit(nogil=True, cache=True)
def scan(
    text, starts, lengths, which, modes, lower, max_length, memo, out, out_start, out_len, status, misses
):  # pragma: no cover - compiled
    """Pieces of texts ``which`` from the memo into ``out``; status per text; new words into ``misses``.

    ``modes[t]``: :data:`RAW` (printable ASCII, lower-cased when ``lower``), ``NORMALIZED`` or ``SENTENCEPIECE``.
    """
    table, records, word_pool, id_pool = memo
    miss_start, miss_len, miss_fold = misses
    used = 0
    missing = 0
    for t in which:
        first = used
        mode = modes[t]
        state = FALLBACK if mode == SENTENCEPIECE else OK
        top = 126 if mode == RAW else 255
        folding = lower and mode == RAW
        position = starts[t]
        end = position + lengths[t]
        kept = 0
        while state != FALLBACK and position < end:
            if text[position] == 32:
                position += 1
                continue
            stop = position
            key = FNV_OFFSET
            while stop < end:
                code = np.int64(text[stop])
                if code == 32:
                    break
                if code < 33 or code > top:
                    state = FALLBACK
                    break
                key = (key ^ fold(code, folding)) * FNV_PRIME
                stop += 1
            if state == FALLBACK:
                break
            entry = find(table, records, word_pool, key if key != 0 else 1, text, position, stop, folding)
            if entry < 0:
                state = MISSING
                if missing < len(miss_start):
                    miss_start[missing] = position
                    miss_len[missing] = stop - position
                    miss_fold[missing] = folding
                    missing += 1
            elif lengths[t] > records[entry, 3]:
                state = FALLBACK
            elif state == OK:
                base = records[entry, 1]
                count = records[entry, 2] >> 32
                if max_length >= 0:
                    count = min(count, max_length - kept)
                for k in range(count):
                    out[used + k] = id_pool[base + k]
                used += count
                kept += count
            position = stop
        if state != OK:
            used = first
        status[t] = state
        out_start[t] = first
        out_len[t] = used - first
    return used, missing


@numba.njit(nogil=True, cache=True, inline="always")
def relax(work, s, e, piece, score):  # pragma: no cover - compiled
    """Viterbi step: the edge ``s -> e`` (``piece``, ``score``) updates node ``e``'s best and second-best."""
    best, second, back_pos, back_id = work[0], work[1], work[2], work[3]
    via_best, via_second = best[s] + score, second[s] + score
    if via_best > best[e]:
        second[e] = max(best[e], via_second)
        best[e] = via_best
        back_pos[e] = s
        back_id[e] = piece
    else:
        second[e] = max(second[e], via_best)


@numba.njit(nogil=True, cache=True)
def certify(words, start, stop, sp_ids, pieces, max_piece, unk_id, unk_score, work):  # pragma: no cover - compiled
    """Margin of ``▁word``'s best segmentation over the next one, or -1 if it is not sentencepiece's ``sp_ids``
    (sentencepiece's lattice: an unknown node per UTF-8 character without a one-character piece)."""
    best, second, back_pos, back_id, path, lattice = work
    table, records, pool, scores = pieces
    size = stop - start + 1  # bytes of ▁word
    lattice[0] = BOUNDARY_BYTE
    lattice[1:size] = words[start:stop]
    for e in range(size + 1):
        best[e] = -np.inf
        second[e] = -np.inf
    best[0] = 0.0
    for s in range(size):
        lead = lattice[s]
        if best[s] == -np.inf or 128 <= lead < 192:  # no node starts inside a UTF-8 character
            continue
        width = 1 if lead < 128 else (2 if lead < 224 else (3 if lead < 240 else 4))
        key = FNV_OFFSET
        single = False
        for e in range(s + 1, min(size, s + max_piece) + 1):
            key = (key ^ np.int64(lattice[e - 1])) * FNV_PRIME
            piece = find(table, records, pool, key if key != 0 else 1, lattice, s, e, False)
            if piece < 0:
                continue
            if e == s + width:
                single = True
            relax(work, s, e, piece, scores[piece])
        if not single and s + width <= size:
            relax(work, s, s + width, unk_id, unk_score)
    if best[size] == -np.inf:
        return -1.0
    count = 0
    e = size
    while e > 0:
        path[count] = back_id[e]
        count += 1
        e = back_pos[e]
    # compare with sentencepiece's ids from the end, merging consecutive unknown pieces as it does
    position = len(sp_ids)
    for k in range(count):
        if path[k] == unk_id and k + 1 < count and path[k + 1] == unk_id:
            continue  # the earlier unknown of a run stands for the whole run
        position -= 1
        if position < 0 or path[k] != sp_ids[position]:
            return -1.0
    if position != 0:
        return -1.0
    return best[size] - second[size]


@numba.njit(nogil=True, cache=True)
def insert(
    words, word_offsets, trusted, sp_ids, sp_offsets, pieces, model, memo, counts
):  # pragma: no cover - compiled
    """Certify and add each new word (present ones are skipped); ``counts``: words, bytes, ids used. A word of
    ``w`` bytes with margin ``m`` is served for texts of ``n`` bytes while ``m > scale * (n + 1) * (w + 1)``."""
    max_piece, unk_id, boundary_id, unk_score, scale = model
    table, records, word_pool, id_pool = memo
    longest = 0
    for i in range(len(word_offsets) - 1):
        longest = max(longest, word_offsets[i + 1] - word_offsets[i])
    size = longest + 2
    work = (
        np.empty(size),
        np.empty(size),
        np.empty(size, np.int64),
        np.empty(size, np.int64),
        np.empty(size, np.int64),
        np.empty(size, np.uint8),  # the lattice's bytes: ▁ (BOUNDARY_BYTE) + word
    )
    for i in range(len(word_offsets) - 1):
        start, stop = word_offsets[i], word_offsets[i + 1]
        key = word_key(words, start, stop)
        if find(table, records, word_pool, key, words, start, stop, False) >= 0:
            continue
        ids = sp_ids[sp_offsets[i] : sp_offsets[i + 1]]
        margin = certify(words, start, stop, ids, pieces, max_piece, unk_id, unk_score, work) if trusted[i] else -1.0
        entry = counts[0]
        if margin < 0:
            records[entry, 3] = -1
        else:
            limit = margin / (scale * (stop - start + 1))  # safe while text bytes + 1 < limit
            records[entry, 3] = ALWAYS if limit > 1e18 else np.int64(np.ceil(limit)) - 2
        records[entry, 0] = counts[1]
        for k in range(start, stop):
            word_pool[counts[1]] = words[k]
            counts[1] += 1
        records[entry, 1] = counts[2]
        for k in range(len(ids)):  # unknown pieces dropped, with a bare ▁ right before one
            if ids[k] == unk_id or (ids[k] == boundary_id and k + 1 < len(ids) and ids[k + 1] == unk_id):
                continue
            id_pool[counts[2]] = ids[k]
            counts[2] += 1
        records[entry, 2] = (stop - start) | ((counts[2] - records[entry, 1]) << 32)
        put(table, key, entry)
        counts[0] += 1


@numba.njit(nogil=True, cache=True)
def gather(first, second, third, kinds, starts, lengths, out):  # pragma: no cover - compiled
    """Concatenate each text's ids from its source buffer (``kinds[t]``: 0 first, 1 second, 2 third)."""
    used = 0
    for t in range(len(kinds)):
        source = first if kinds[t] == 0 else (second if kinds[t] == 1 else third)
        base = starts[t]
        for k in range(lengths[t]):
            out[used] = source[base + k]
            used += 1
