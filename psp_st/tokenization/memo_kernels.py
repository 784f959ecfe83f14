"""The compiled (numba) kernels of :mod:`psp_st.tokenization.word_memo`: imported only when numba is installed.

Module-level functions, so numba caches their machine code on disk (``cache=True``) and a new process loads them
instead of compiling again.
"""

from __future__ import annotations

import numba
import numpy as np

from psp_st.tokenization.word_memo import BOUNDARY_BYTE, FALLBACK, MISSING, OK, RAW, SENTENCEPIECE

u64 = np.uint64
#: 64-bit FNV-1a, the key of words and pieces (0 marks an empty hash-table slot, so a 0 key becomes 1).
FNV_OFFSET, FNV_PRIME = u64(0xCBF29CE484222325), u64(0x100000001B3)


@numba.njit(nogil=True, cache=True, inline="always")
def fold(code, lower):  # pragma: no cover - compiled
    if lower and 65 <= code <= 90:
        return code + 32
    return code


@numba.njit(nogil=True, cache=True)
def find_word(memo, key, text, start, stop, lower):  # pragma: no cover - compiled
    """Entry of the word ``text[start:stop]`` (``key``: its :func:`word_key`), or -1."""
    keys, slots, pool, pool_start, pool_len = memo[0], memo[1], memo[2], memo[3], memo[4]
    mask = len(keys) - 1
    slot = np.int64(key & u64(mask))
    width = stop - start
    while keys[slot] != 0:
        if keys[slot] == key:
            entry = slots[slot]
            if pool_len[entry] == width:
                base = pool_start[entry]
                same = True
                for k in range(width):
                    if pool[base + k] != fold(np.int64(text[start + k]), lower):
                        same = False
                        break
                if same:
                    return entry
        slot = (slot + 1) & mask
    return -1


@numba.njit(nogil=True, cache=True)
def word_key(text, start, stop, lower):  # pragma: no cover - compiled
    key = FNV_OFFSET
    for k in range(start, stop):
        key = (key ^ u64(fold(np.int64(text[k]), lower))) * FNV_PRIME
    return key if key != u64(0) else u64(1)


@numba.njit(nogil=True, cache=True)
def scan(
    text, starts, lengths, which, modes, lower, max_length, scale, memo, out, out_start, out_len, status, misses
):  # pragma: no cover - compiled
    """Pieces of texts ``which`` from the memo into ``out``; status per text; new words into ``miss_*``.

    ``modes[t]``: :data:`RAW` (printable ASCII, lower-cased here when ``lower``), :data:`NORMALIZED`
    (sentencepiece's normalized text, ``▁`` as space) or :data:`SENTENCEPIECE` (not for the memo).
    """
    id_pool, id_start, id_len, margin = memo[5], memo[6], memo[7], memo[8]
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
        bound = scale * (lengths[t] + 1)
        kept = 0
        while state != FALLBACK and position < end:
            if text[position] == 32:
                position += 1
                continue
            stop = position
            while stop < end and text[stop] != 32:
                if text[stop] < 33 or text[stop] > top:
                    state = FALLBACK
                    break
                stop += 1
            if state == FALLBACK:
                break
            entry = find_word(memo, word_key(text, position, stop, folding), text, position, stop, folding)
            if entry < 0:
                state = MISSING
                if missing < len(miss_start):
                    miss_start[missing] = position
                    miss_len[missing] = stop - position
                    miss_fold[missing] = folding
                    missing += 1
            elif margin[entry] <= bound * (stop - position + 1):
                state = FALLBACK
            elif state == OK:
                base = id_start[entry]
                for k in range(id_len[entry]):
                    if max_length >= 0 and kept >= max_length:
                        break
                    out[used] = id_pool[base + k]
                    used += 1
                    kept += 1
            position = stop
        if state != OK:
            used = first
        status[t] = state
        out_start[t] = first
        out_len[t] = used - first
    return used, missing


@numba.njit(nogil=True, cache=True)
def insert_slot(keys, slots, key, entry):  # pragma: no cover - compiled
    mask = len(keys) - 1
    slot = np.int64(key & u64(mask))
    while keys[slot] != 0:
        slot = (slot + 1) & mask
    keys[slot] = key
    slots[slot] = entry


@numba.njit(nogil=True, cache=True)
def rehash(keys, slots, old_keys, old_slots):  # pragma: no cover - compiled
    for slot in range(len(old_keys)):
        if old_keys[slot] != 0:
            insert_slot(keys, slots, old_keys[slot], old_slots[slot])


@numba.njit(nogil=True, cache=True)
def piece_at(words, start, k):  # pragma: no cover - compiled
    return BOUNDARY_BYTE if k == 0 else np.int64(words[start + k - 1])


@numba.njit(nogil=True, cache=True)
def find_piece(pieces, key, words, start, lo, hi):  # pragma: no cover - compiled
    """Id of the piece ``(▁ + word)[lo:hi]`` (``key``: its FNV-1a hash), or -1."""
    piece_keys, piece_slots, piece_pool, piece_start, piece_len = (
        pieces[0], pieces[1], pieces[2], pieces[3], pieces[4]
    )  # fmt: skip
    mask = len(piece_keys) - 1
    slot = np.int64(key & u64(mask))
    while piece_keys[slot] != 0:
        if piece_keys[slot] == key:
            piece = piece_slots[slot]
            if piece_len[piece] == hi - lo:
                base = piece_start[piece]
                same = True
                for k in range(lo, hi):
                    if piece_pool[base + k - lo] != piece_at(words, start, k):
                        same = False
                        break
                if same:
                    return piece
        slot = (slot + 1) & mask
    return -1


@numba.njit(nogil=True, cache=True)
def certify(words, start, stop, sp_ids, pieces, max_piece, unk_id, unk_score, work):  # pragma: no cover - compiled
    """Margin of ``▁word``'s best segmentation over the next one, or -1 if it is not sentencepiece's ``sp_ids``.

    One lattice node per UTF-8 character (``▁`` is one byte here), as sentencepiece builds it."""
    best, second, back_pos, back_id, path = work
    scores = pieces[5]
    size = stop - start + 1  # bytes of ▁word
    for e in range(size + 1):
        best[e] = -np.inf
        second[e] = -np.inf
    best[0] = 0.0
    for s in range(size):
        lead = piece_at(words, start, s)
        if best[s] == -np.inf or 128 <= lead < 192:  # no node starts inside a UTF-8 character
            continue
        width = 1 if lead < 128 else (2 if lead < 224 else (3 if lead < 240 else 4))
        key = FNV_OFFSET
        single = False
        for e in range(s + 1, min(size, s + max_piece) + 1):
            key = (key ^ u64(piece_at(words, start, e - 1))) * FNV_PRIME
            piece = find_piece(pieces, key if key != u64(0) else u64(1), words, start, s, e)
            if piece < 0:
                continue
            if e == s + width:
                single = True
            via_best, via_second = best[s] + scores[piece], second[s] + scores[piece]
            if via_best > best[e]:
                second[e] = max(best[e], via_second)
                best[e] = via_best
                back_pos[e] = s
                back_id[e] = piece
            else:
                second[e] = max(second[e], via_best)
        if not single and s + width <= size:  # sentencepiece's unknown node: one character, min score - 10
            e = s + width
            via_best, via_second = best[s] + unk_score, second[s] + unk_score
            if via_best > best[e]:
                second[e] = max(best[e], via_second)
                best[e] = via_best
                back_pos[e] = s
                back_id[e] = unk_id
            else:
                second[e] = max(second[e], via_best)
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
    words,
    word_offsets,
    trusted,
    sp_ids,
    sp_offsets,
    pieces,
    max_piece,
    unk_id,
    boundary_id,
    unk_score,
    memo,
    counts,
):  # pragma: no cover - compiled
    """Certify and add each new word (already-present words are skipped); ``counts``: words, bytes, ids used."""
    longest = 0
    for i in range(len(word_offsets) - 1):
        longest = max(longest, word_offsets[i + 1] - word_offsets[i])
    keys, slots, word_pool, word_start, word_len = memo[0], memo[1], memo[2], memo[3], memo[4]
    id_pool, id_start, id_len, margin = memo[5], memo[6], memo[7], memo[8]
    size = longest + 2
    work = (
        np.empty(size),
        np.empty(size),
        np.empty(size, np.int64),
        np.empty(size, np.int64),
        np.empty(size, np.int64),
    )
    for i in range(len(word_offsets) - 1):
        start, stop = word_offsets[i], word_offsets[i + 1]
        key = word_key(words, start, stop, False)
        if find_word(memo, key, words, start, stop, False) >= 0:
            continue
        ids = sp_ids[sp_offsets[i] : sp_offsets[i + 1]]
        entry = counts[0]
        margin[entry] = -1.0
        if trusted[i]:
            margin[entry] = certify(words, start, stop, ids, pieces, max_piece, unk_id, unk_score, work)
        word_start[entry] = counts[1]
        word_len[entry] = stop - start
        for k in range(start, stop):
            word_pool[counts[1]] = words[k]
            counts[1] += 1
        id_start[entry] = counts[2]
        for k in range(len(ids)):  # unknown pieces dropped, with a bare ▁ right before one
            if ids[k] == unk_id or (ids[k] == boundary_id and k + 1 < len(ids) and ids[k + 1] == unk_id):
                continue
            id_pool[counts[2]] = ids[k]
            counts[2] += 1
        id_len[entry] = counts[2] - id_start[entry]
        insert_slot(keys, slots, key, entry)
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
