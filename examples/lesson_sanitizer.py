"""Lesson: a race the CPU hides, caught by the sanitizer, and fixed.

A learner's block-sum: each thread puts its value in shared memory and thread 0 adds them
up.  Without a barrier between the writes and thread 0's reads, thread 0 may read a slot
before its owner wrote it: on the H200 the sum is sometimes wrong.  A simulator that runs
every instruction for all threads before the next one gets it right every time -- the bug
hides.  ``check=True`` runs compute-sanitizer's tools on the model and names both lines
and both threads.  The fix (``cuda.syncthreads()``) gives an empty summary.

The second bug reads a slot nobody wrote (the last block has fewer values): shared memory
starts poisoned (NaN for floats), so the sum is visibly NaN, and initcheck names the read.

    python examples/lesson_sanitizer.py
    simgpu sanitize examples/lesson_sanitizer.py::block_sum_racy --grid 4 --block 64
"""
import numpy as np

import simgpu
from simgpu import cuda

BLOCK = 64
N = 4 * BLOCK


def block_sum_racy(x, out):
    vals = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    vals[t] = x[cuda.grid(1)]
    if t == 0:                              # no barrier: thread 0 may read before the others wrote
        acc = np.float32(0)
        for k in range(BLOCK):
            acc += vals[k]
        out[cuda.blockIdx.x] = acc


def block_sum(x, out):
    vals = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    vals[t] = x[cuda.grid(1)]
    cuda.syncthreads()                      # the fix: every write lands before thread 0 reads
    if t == 0:
        acc = np.float32(0)
        for k in range(BLOCK):
            acc += vals[k]
        out[cuda.blockIdx.x] = acc


def block_sum_guarded(x, out, n):
    vals = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < n:
        vals[t] = x[i]                      # the last block's tail writes nothing ...
    cuda.syncthreads()
    if t == 0:
        acc = np.float32(0)
        for k in range(BLOCK):
            acc += vals[k]                  # ... and thread 0 reads it all
        out[cuda.blockIdx.x] = acc


def args_block_sum_racy():
    return np.arange(N, dtype=np.float32), np.zeros(N // BLOCK, np.float32)


def main(executor="auto"):
    x, out = args_block_sum_racy()
    want = x.reshape(-1, BLOCK).sum(axis=1)

    rep = simgpu.launch(block_sum_racy, N // BLOCK, BLOCK, (x, out), executor=executor, timing=False)
    print(f"1. the racy kernel, no sanitizer: sums {out} -- {'right' if np.allclose(out, want) else 'wrong'} "
          "(the model runs every write before the read)")
    rep = simgpu.launch(block_sum_racy, N // BLOCK, BLOCK, (x, out), executor=executor, timing=False,
                        check=True)
    print("2. with check=True:")
    print(rep.sanitizer.summary())
    race = rep.sanitizer.findings

    rep = simgpu.launch(block_sum, N // BLOCK, BLOCK, (x, out), executor=executor, timing=False, check=True)
    print("3. with cuda.syncthreads() between the writes and the reads:")
    print(rep.sanitizer.summary())
    fixed = rep.sanitizer.findings

    n = N - 10
    out2 = np.zeros(N // BLOCK, np.float32)
    rep = simgpu.launch(block_sum_guarded, N // BLOCK, BLOCK, (x, out2, np.int64(n)), executor=executor,
                        timing=False, check=True)
    print(f"4. reading slots nobody wrote: sums {out2} (shared memory starts as NaN)")
    print(rep.sanitizer.summary())
    return {"race": race, "fixed": fixed, "uninit": rep.sanitizer.findings, "sums": out2}


if __name__ == "__main__":
    main()
