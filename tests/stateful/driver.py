"""Plays sequences on both sides, compares the answers step by step, and shrinks a
sequence that differs to a short one that still differs.

A batch of sequences is one program per side (interpreter.py with the batch appended),
run by support/difftest.run_program: one reference subprocess per batch, never one per
step. A side that dies in the middle of a batch (libpcp aborts, a timeout) loses the
batch; the batch is then played one sequence at a time, so that the culprit shows as a
crash of that sequence alone.

Run ``python -m stateful.driver SEED [COUNT]`` from tests/ (the venv interpreter) to
explore seeds by hand: it prints each shrunk difference as a corpus entry.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, List, Optional, Tuple

from support import difftest

_INTERPRETER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interpreter.py")
MAX_SHRINK_RUNS = 40
SECONDS_PER_SEQUENCE = 5
BATCH_SIZE = 80


def _program(batch: List[dict]) -> str:
    with open(_INTERPRETER, encoding="utf-8") as stream:
        source = stream.read()
    return source + "\nmain(%r)\n" % json.dumps(batch)


def _crashed(answer: Any) -> bool:
    return isinstance(answer, dict) and "__crash__" in answer


def _play_side(batch: List[dict], ours: bool, alone: bool = False) -> Tuple[List[Any], bool]:
    """One side's answers to batch, and whether it was played one sequence a process
    (a side that dies in a batch, or alone asked for)."""
    if alone and len(batch) > 1:
        return [_play_side([sequence], ours)[0][0] for sequence in batch], True
    timeout = SECONDS_PER_SEQUENCE * len(batch) + 10
    try:
        answer = difftest.run_program(_program(batch), ours=ours, timeout=timeout)
    except subprocess.TimeoutExpired:
        answer = {"__crash__": "timed out after %ds" % timeout}
    if not _crashed(answer):
        return answer, False
    if len(batch) == 1:
        return [{"crash": answer["__crash__"]}], True
    return _play_side(batch, ours, alone=True)


def _play_chunk(pool: Optional[ThreadPoolExecutor], chunk: List[dict]
                ) -> Tuple[List[Any], List[Any]]:
    """Both sides' answers to one chunk, at the same time when pool is given. When one
    side had to play it one sequence a process, so does the other: what a process
    keeps from sequence to sequence (the global derived metrics and their pmids) must
    be the same on both sides."""
    if pool is None:
        (ours, ours_alone), (ref, ref_alone) = _play_side(chunk, True), _play_side(chunk, False)
    else:
        mine, theirs = pool.submit(_play_side, chunk, True), pool.submit(_play_side, chunk, False)
        (ours, ours_alone), (ref, ref_alone) = mine.result(), theirs.result()
    if ours_alone and not ref_alone:
        ref = _play_side(chunk, False, alone=True)[0]
    elif ref_alone and not ours_alone:
        ours = _play_side(chunk, True, alone=True)[0]
    return ours, ref


def play_both(batch: List[dict]) -> Tuple[List[Any], List[Any]]:
    """(ours, reference): the answers of every sequence of batch on each side, the two
    sides run at the same time, BATCH_SIZE sequences a subprocess (a program is one
    command-line argument, which Linux limits to 128 KiB). Sequences that store into
    pmcd ("stores") are played one side after the other, so that neither side sees
    the other's stores."""
    ours, ref = [], []
    with ThreadPoolExecutor(2) as pool:
        for first in range(0, len(batch), BATCH_SIZE):
            chunk = batch[first:first + BATCH_SIZE]
            stores = any(sequence.get("stores") for sequence in chunk)
            mine, theirs = _play_chunk(None if stores else pool, chunk)
            ours += mine
            ref += theirs
    return ours, ref


def first_difference(ours: List[Any], ref: List[Any]) -> Optional[int]:
    """The index of the first step whose answers differ (None when all agree)."""
    for index, (mine, theirs) in enumerate(zip(ours, ref)):
        if mine != theirs:
            return index
    if len(ours) != len(ref):
        return min(len(ours), len(ref))
    return None


def _differs(sequence: dict) -> Optional[int]:
    ours, ref = play_both([sequence])
    return first_difference(ours[0], ref[0])


def shrink(sequence: dict, index: int) -> dict:
    """The shortest prefix that still differs (through its step `index`), then steps
    dropped one at a time while it still differs; at most MAX_SHRINK_RUNS plays."""
    steps = sequence["steps"][:index + 1] if index < len(sequence["steps"]) else \
        list(sequence["steps"])
    runs = 0
    position = len(steps) - 2          # the differing last step stays
    while position >= 0 and runs < MAX_SHRINK_RUNS:
        candidate = steps[:position] + steps[position + 1:]
        runs += 1
        found = _differs(dict(sequence, steps=candidate))
        if found is not None:
            steps = candidate[:found + 1]
            position = min(position, len(steps) - 1) - 1
        else:
            position -= 1
    return dict(sequence, steps=steps)


def explore(seeds: range, targets: List[str], length: int = 12) -> List[dict]:
    """Play every seed on every target, and the targeted shapes; the shrunk sequences
    that differ, each with the two answers of its last step."""
    from stateful import sequences
    batch = [sequences.generate(seed, target, length) for seed in seeds for target in targets]
    batch += [sequence for seed in seeds for sequence in sequences.targeted(seed)]
    return explain(batch)


def explain(batch: List[dict]) -> List[dict]:
    """Play batch; the shrunk sequences that differ, each with the two answers of its
    last step."""
    ours, ref = play_both(batch)
    found = []
    for sequence, mine, theirs in zip(batch, ours, ref):
        index = first_difference(mine, theirs)
        if index is None:
            continue
        small = shrink(sequence, index)
        small_ours, small_ref = play_both([small])
        found.append({"sequence": small, "ours": small_ours[0][-1:],
                      "reference": small_ref[0][-1:]})
    return found


if __name__ == "__main__":
    from stateful import sequences
    first = int(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    for case in explore(range(first, first + count), sequences.targets(more=True)):
        print(json.dumps(case))
